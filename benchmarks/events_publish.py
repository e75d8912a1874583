"""Publisher benchmark: drain a backlog of N events to ActiveMQ over STOMP on loopback.

    python benchmarks/events_publish.py --count 100000 [--broker stomp://127.0.0.1:61613]
                                        [--json out.json]

Fills the change feed of a new repository with N events (real outbox entries, as
a create writes them) while no publisher runs, then times the publisher draining
them: the backlog drain time and the sustained rate (events/s), with every event
acknowledged by the broker (receipts) and counted by a subscriber. Without
``--broker`` it starts an ActiveMQ of its own (Debian's ``activemq`` package, the
launcher of the test suite) on free loopback ports, and stops it at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import stomp

from lakesuperior import Repository
from lakesuperior.bench.activemq import Broker, available
from lakesuperior.config import broker_address
from lakesuperior.messaging.publisher import BATCH, Publisher
from lakesuperior.model import events
from lakesuperior.model.interaction import BASIC_CONTAINER, MODEL_TYPES

FILL_BATCH = 10_000


class Counter(stomp.ConnectionListener):
    def __init__(self) -> None:
        self.n = 0
        self.cond = threading.Condition()

    def on_message(self, frame: Any) -> None:
        with self.cond:
            self.n += 1
            self.cond.notify_all()


def fill(repo: Repository, count: int) -> None:
    """``count`` create events for /bench/r{i}, as the model writes them."""
    types = [t[1:-1] for t in MODEL_TYPES[BASIC_CONTAINER]]
    ms = int(datetime.now(UTC).timestamp() * 1000)
    done = 0
    while done < count:
        n = min(FILL_BATCH, count - done)
        entries = [events.encode(events.Pending("create", types, "admin", repo.base_uri, ms),
                                 f"/bench/r{done + i}") for i in range(n)]
        with repo.store.write() as txn:
            txn.outbox_append(entries)
        done += n


def run(count: int, broker_url: str, batch: int) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix="lsup-events-bench-")
    destination = f"/topic/lsup-bench-{os.getpid()}"
    counter = Counter()
    host, port = broker_address(broker_url)
    sub = stomp.Connection12([(host, port)])
    sub.set_listener("c", counter)
    sub.connect(wait=True)
    sub.subscribe(destination, id="1", ack="auto")
    repo = Repository(tmp, sync=False, messaging_broker_url=broker_url,
                      messaging_destination=destination)
    try:
        fill(repo, count)
        assert repo.feed_state()["seq"] - repo.feed_state()["published"] == count
        pub = Publisher(repo, repo.config, batch=batch)
        pub.broker.connect()
        t0 = time.perf_counter()
        sent = 0
        while sent < count:
            sent += pub.drain_once()
        pub.mark()
        drain_s = time.perf_counter() - t0
        pub.broker.close()
        deadline = time.monotonic() + 120
        with counter.cond:
            while counter.n < count and time.monotonic() < deadline:
                counter.cond.wait(1)
        return {"benchmark": "events_publish", "events": count, "batch": batch,
                "drain_seconds": round(drain_s, 3),
                "events_per_second": round(count / drain_s, 1),
                "received_by_subscriber": counter.n,
                "backlog_after": repo.feed_state()["seq"] - repo.feed_state()["published"]}
    finally:
        repo.close()
        sub.disconnect()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100_000, help="backlog size (events)")
    ap.add_argument("--broker", metavar="stomp://HOST:PORT",
                    help="an ActiveMQ to use (default: start one on loopback)")
    ap.add_argument("--batch", type=int, default=BATCH, help="events per publisher round")
    ap.add_argument("--json", metavar="FILE", help="write the result as JSON")
    args = ap.parse_args(argv)
    if args.count < 1:
        ap.error("--count must be positive")
    own = None
    url = args.broker
    if url is None:
        if not available():
            ap.error("no --broker given and ActiveMQ is not installed (apt-get install "
                     "activemq)")
        own = Broker(Path(tempfile.mkdtemp(prefix="lsup-bench-amq-"))).start()
        url = own.stomp_url
    try:
        res = run(args.count, url, args.batch)
    finally:
        if own is not None:
            own.stop()
            shutil.rmtree(own.base, ignore_errors=True)
    print(f"{res['events']:,} events drained in {res['drain_seconds']:.2f} s: "
          f"{res['events_per_second']:,.0f} events/s; the subscriber got "
          f"{res['received_by_subscriber']:,}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0 if res["received_by_subscriber"] == res["events"] else 1


if __name__ == "__main__":
    sys.exit(main())
