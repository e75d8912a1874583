"""One STOMP 1.2 connection to the broker: send events and wait for their receipts.

Each event is one SEND frame to the configured destination, with Fedora 6's
``org.fcrepo.jms.*`` headers, ``persistent:true`` and ``amq-msg-type:text`` (so
that JMS consumers get a ``TextMessage``), and a ``receipt`` header. ``send``
returns the longest prefix of the batch the broker has acknowledged: the
publisher marks only those as published (at-least-once delivery).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import stomp
from stomp.exception import StompException

from lakesuperior.config import Config, broker_address
from lakesuperior.exceptions import BrokerError
from lakesuperior.messaging import fedora
from lakesuperior.model.events import Change

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5.0
RECEIPT_TIMEOUT = 30.0


class _Receipts(stomp.ConnectionListener):
    """Collects receipts and errors of one connection."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.received: set[str] = set()
        self.error: str | None = None

    def on_receipt(self, frame: Any) -> None:
        with self.cond:
            self.received.add(frame.headers.get("receipt-id", ""))
            self.cond.notify_all()

    def on_error(self, frame: Any) -> None:
        with self.cond:
            self.error = frame.headers.get("message") or (frame.body or "error")[:200]
            self.cond.notify_all()

    def on_disconnected(self) -> None:
        with self.cond:
            self.error = self.error or "the broker closed the connection"
            self.cond.notify_all()


class BrokerConnection:
    """A connection to the broker of ``config`` (``messaging.*``)."""

    def __init__(self, config: Config):
        self.host, self.port = broker_address(config.messaging_broker_url)
        self.destination = config.messaging_destination
        self._user = config.messaging_user
        self._password = config.messaging_password
        self._conn: Any = None
        self._listener = _Receipts()

    def __repr__(self) -> str:      # never the password
        return f"BrokerConnection(stomp://{self.host}:{self.port}{self.destination})"

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.is_connected()

    def connect(self) -> None:
        """Connect (a no-op when connected); ``BrokerError`` when the broker cannot
        be reached or refuses the login."""
        if self.connected:
            return
        self.close()
        self._listener = _Receipts()
        conn = stomp.Connection12([(self.host, self.port)], reconnect_attempts_max=1,
                                  timeout=CONNECT_TIMEOUT, heartbeats=(0, 0))
        conn.set_listener("lsup", self._listener)
        try:
            conn.connect(self._user or None, self._password or None, wait=True,
                         headers={"client-id": f"lakesuperior-{id(self):x}"})
        except (StompException, OSError) as e:
            _quiet_close(conn)
            raise BrokerError(f"Cannot connect to the broker at {self.host}:{self.port}: "
                              f"{e or type(e).__name__}") from None
        if not conn.is_connected():
            _quiet_close(conn)
            raise BrokerError(f"The broker at {self.host}:{self.port} refused the "
                              f"connection: {self._listener.error or 'no CONNECTED frame'}")
        self._conn = conn

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            _quiet_close(conn)

    def send(self, changes: Sequence[Change], timeout: float = RECEIPT_TIMEOUT) -> int:
        """Send ``changes`` (in order); return how many of them, from the first, the
        broker acknowledged. ``BrokerError`` if none could be sent."""
        if not changes:
            return 0
        self.connect()
        lis = self._listener
        ids = [f"r{c.seq}-{id(self):x}" for c in changes]
        sent = 0
        try:
            for rid, change in zip(ids, changes, strict=True):
                headers = fedora.headers(change)
                headers.update({"persistent": "true", "amq-msg-type": "text",
                                "receipt": rid})
                self._conn.send(self.destination, fedora.body(change),
                                content_type="application/ld+json", headers=headers)
                sent += 1
        except (StompException, OSError) as e:
            log.warning("Sending to the broker failed after %d of %d events: %s",
                        sent, len(changes), e)
            self.close()
        deadline = time.monotonic() + timeout
        with lis.cond:
            while True:
                acked = 0
                for rid in ids[:sent]:
                    if rid not in lis.received:
                        break
                    acked += 1
                if acked == sent or lis.error is not None:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                lis.cond.wait(left)
            lis.received.difference_update(ids[:acked])
            error = lis.error
        if error is not None:
            self.close()
        if acked == 0:
            raise BrokerError(f"The broker did not acknowledge the events: "
                              f"{error or 'no receipt in time'}")
        return acked


def probe(config: Config) -> str:
    """``'up'``, ``'off'`` (no broker configured) or ``'down: why'``."""
    if not config.messaging_broker_url:
        return "off"
    conn = BrokerConnection(config)
    try:
        conn.connect()
    except BrokerError as e:
        return f"down: {e}"
    finally:
        conn.close()
    return "up"


def _quiet_close(conn: Any) -> None:
    try:
        if conn.is_connected():
            conn.disconnect()
    except (StompException, OSError):
        pass
    try:
        conn.transport.stop()
    except (StompException, OSError, AttributeError):
        pass
