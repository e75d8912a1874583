"""Denial-of-service load on a real lsup-server: password guessing and slow headers.

Starts ``lsup-server`` (default workers and threads, authentication on, a free
port of 127.0.0.1, a temporary data directory with one user ``alice``) and
measures, while an anonymous client GETs ``/rest/`` every ``--probe-every``
seconds:

1. ``baseline``: nothing else running;
2. ``guessing``: 16 connections from 127.0.0.1 sending wrong passwords for
   ``alice`` as fast as the server answers (keep-alive), for ``--seconds``: the
   answers per second, and the guesses the server actually verified (401) per
   second, besides those refused without verifying (429, 503);
3. ``guessing_spread``: the same from 16 addresses (127.0.0.10 to .25), one
   connection each, as a guesser spread over many addresses;
4. ``slow_headers``: 100 connections sending a request header one byte a
   second, never finishing it (reconnecting when closed), for ``--seconds``.

Prints one line per phase and writes JSON (``--output``); the load average of
the machine at the start and the end is recorded (a shared machine changes
every figure)::

    python benchmarks/security_load.py --seconds 15 --output security_load.json
"""
from __future__ import annotations

import argparse
import base64
import http.client
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lakesuperior.auth.users import UserDB
from lakesuperior.bench.figures import machine, summarize, write_json
from lakesuperior.bench.ports import free_port
from lakesuperior.bench.serving import lsup_server

USER = "alice"
PASSWORD = "a-long-enough-password"
SLOW_HEAD = b"GET /rest/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nX-Padding: "


@contextmanager
def server(root: str) -> Iterator[int]:
    """``lsup-server`` on a free loopback port with its data in ``root``; its port."""
    data = os.path.join(root, "data")
    os.makedirs(data)
    UserDB(data).add(USER, PASSWORD)
    port = free_port()

    def answers() -> bool:
        try:
            return get(port)[0] == 200
        except OSError:
            return False

    with lsup_server(data, port, Path(root) / "server.log", ready=answers):
        yield port


def get(port: int, timeout: float = 60) -> tuple[int, float]:
    """One anonymous GET of /rest/ on a new connection: (status, milliseconds)."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/rest/")
        r = conn.getresponse()
        r.read()
        return r.status, (time.perf_counter() - start) * 1e3
    finally:
        conn.close()


class Probe:
    """Anonymous GETs every ``every`` seconds, in a thread, until stopped."""

    def __init__(self, port: int, every: float):
        self.port, self.every = port, every
        self.ms: list[float] = []
        self.failed = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                status, ms = get(self.port)
                if status == 200:
                    self.ms.append(ms)
                else:
                    self.failed += 1
            except OSError:
                self.failed += 1
            self.stop.wait(self.every)

    def result(self) -> dict[str, Any]:
        self.stop.set()
        self.thread.join(120)
        out: dict[str, Any] = {"gets": len(self.ms), "failed": self.failed,
                               **summarize(self.ms)}
        out["max"] = round(max(self.ms), 4) if self.ms else None
        for key in ("first_1k_median", "last_1k_median"):
            out.pop(key, None)
        return out


def guess(port: int, seconds: float, sources: list[str]) -> dict[str, Any]:
    """One guessing thread per source address (a keep-alive connection each)."""
    token = base64.b64encode(f"{USER}:wrong".encode()).decode()
    headers = {"Authorization": f"Basic {token}"}
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def run(source: str) -> None:
        conn: http.client.HTTPConnection | None = None
        seen: Counter[int] = Counter()
        while time.monotonic() < deadline:
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                                      source_address=(source, 0))
                conn.request("GET", "/rest/", headers=headers)
                r = conn.getresponse()
                r.read()
                seen[r.status] += 1
                if r.will_close:
                    conn.close()
                    conn = None
            except OSError:
                seen[0] += 1
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()
        with lock:
            statuses.update(seen)

    start = time.monotonic()
    threads = [threading.Thread(target=run, args=(s,)) for s in sources]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - start
    answered = sum(n for status, n in statuses.items() if status)
    return {"connections": len(sources), "seconds": round(took, 2),
            "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "answers_per_s": round(answered / took, 2),
            "verified_guesses_per_s": round(statuses[401] / took, 3)}


def trickle(port: int, seconds: float, n: int) -> dict[str, Any]:
    """``n`` connections sending a header one byte a second, for ``seconds``."""
    socks: list[socket.socket | None] = [None] * n
    sent = reconnects = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for i in range(n):
            try:
                sock = socks[i]
                if sock is None:
                    sock = socks[i] = socket.create_connection(("127.0.0.1", port), timeout=5)
                    reconnects += 1
                sock.send(SLOW_HEAD[sent % len(SLOW_HEAD):][:1] or b"a")
            except OSError:
                if socks[i] is not None:
                    socks[i].close()     # type: ignore[union-attr]
                socks[i] = None
        sent += 1
        time.sleep(1.0)
    for sock in socks:
        if sock is not None:
            sock.close()
    return {"connections": n, "seconds": seconds, "bytes_each": sent,
            "connections_opened": reconnects}


def line(name: str, probe: dict[str, Any], extra: str = "") -> str:
    def ms(key: str) -> str:
        v = probe.get(key)
        return "-" if v is None else f"{v:.1f}"
    return (f"{name:16s} anonymous GET ms: median {ms('median')}, p95 {ms('p95')}, "
            f"max {ms('max')} ({probe['gets']} ok, {probe['failed']} failed){extra}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=15.0, help="length of each phase")
    ap.add_argument("--probe-every", type=float, default=0.2,
                    help="seconds between two anonymous GETs")
    ap.add_argument("--slow", type=int, default=100, help="slow-header connections")
    ap.add_argument("--output", default="security_load.json", help="JSON file")
    args = ap.parse_args(argv)
    results: dict[str, Any] = {"machine": machine(), "load_start": os.getloadavg(),
                               "seconds": args.seconds}
    root = tempfile.mkdtemp(prefix="lsup-security-")
    try:
        with server(root) as port:
            probe = Probe(port, args.probe_every)
            time.sleep(min(args.seconds, 5.0))
            results["baseline"] = {"probe": probe.result()}
            print(line("baseline", results["baseline"]["probe"]), flush=True)

            for name, sources in (("guessing", ["127.0.0.1"] * 16),
                                  ("guessing_spread", [f"127.0.0.{10 + i}" for i in range(16)])):
                probe = Probe(port, args.probe_every)
                flood = guess(port, args.seconds, sources)
                results[name] = {"attack": flood, "probe": probe.result()}
                print(line(name, results[name]["probe"],
                           f"; {flood['answers_per_s']} answers/s, "
                           f"{flood['verified_guesses_per_s']} verified guesses/s, "
                           f"statuses {flood['statuses']}"), flush=True)

            probe = Probe(port, args.probe_every)
            slow = trickle(port, args.seconds, args.slow)
            results["slow_headers"] = {"attack": slow, "probe": probe.result()}
            print(line("slow_headers", results["slow_headers"]["probe"],
                       f"; {args.slow} connections, {slow['connections_opened']} opened"),
                  flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results["load_end"] = os.getloadavg()
    print(f"load average (1, 5, 15 min): start {results['load_start']}, "
          f"end {results['load_end']}; {results['machine']['cores']} cores")
    write_json(args.output, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
