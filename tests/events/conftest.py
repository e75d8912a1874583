"""Fixtures of the events tests: one real ActiveMQ for the session (``broker.py``),
a STOMP subscriber that collects messages, and a unique destination per test."""
from __future__ import annotations

import gc
import json
import threading
import time
import uuid
from typing import Any

import pytest
import stomp

from lakesuperior.bench.activemq import Broker, available

WAIT = 60.0    # seconds a test waits for messages it expects (not a timing assertion)


@pytest.fixture(autouse=True, scope="module")
def _collect_garbage():
    """Collect the module's dead connections and threads here, not in a later test's
    thread (tests that interrupt threads see their weakref callbacks otherwise)."""
    yield
    gc.collect()


@pytest.fixture(scope="session")
def broker(tmp_path_factory) -> Broker:
    """ActiveMQ on free loopback ports, started once for the session."""
    if not available():
        pytest.fail("ActiveMQ is not installed: `make test` installs Debian's activemq "
                    "package (apt-get install activemq)")
    b = Broker(tmp_path_factory.mktemp("activemq")).start()
    yield b
    b.stop()


@pytest.fixture
def running_broker(broker) -> Broker:
    """The session's broker, started again if an earlier test stopped it."""
    if broker.proc is None:
        broker.start()
    return broker


@pytest.fixture
def topic() -> str:
    return f"/topic/fedora-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def queue() -> str:
    return f"/queue/fedora-{uuid.uuid4().hex[:12]}"


class Collector(stomp.ConnectionListener):
    """Messages of one subscription: ``(headers, body)`` in arrival order."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.messages: list[tuple[dict[str, str], dict[str, Any]]] = []

    def on_message(self, frame: Any) -> None:
        with self.cond:
            self.messages.append((dict(frame.headers), json.loads(frame.body)))
            self.cond.notify_all()

    def wait_for(self, pred, timeout: float = WAIT) -> list:
        """Wait until ``pred(messages)`` holds (or ``timeout``); return the messages."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred(self.messages) and time.monotonic() < deadline:
                self.cond.wait(0.2)
            return list(self.messages)


class Subscriber:
    def __init__(self, broker: Broker, destination: str):
        self.collector = Collector()
        self.conn = stomp.Connection12([("127.0.0.1", broker.stomp_port)])
        self.conn.set_listener("c", self.collector)
        self.conn.connect(wait=True)
        self.conn.subscribe(destination, id="1", ack="auto")
        # A receipt for a frame sent after SUBSCRIBE: the subscription is in place.
        self.conn.send(destination="/queue/lsup-test-sync", body="x", receipt="sync",
                       headers={})
        time.sleep(0.2)

    def wait_for(self, pred, timeout: float = WAIT) -> list:
        return self.collector.wait_for(pred, timeout)

    def close(self) -> None:
        try:
            self.conn.disconnect()
        except Exception:
            pass


@pytest.fixture
def subscribe(running_broker):
    """``subscribe(destination)``: a STOMP subscriber collecting its messages."""
    subs: list[Subscriber] = []

    def make(destination: str) -> Subscriber:
        s = Subscriber(running_broker, destination)
        subs.append(s)
        return s

    yield make
    for s in subs:
        s.close()


def messaging(broker: Broker, destination: str, **more: Any) -> dict[str, Any]:
    """Repository overrides for messaging to ``broker``'s ``destination``."""
    return {"messaging_broker_url": broker.stomp_url, "messaging_destination": destination,
            **more}


