"""The background indexer under a real gunicorn with 2 workers: exactly one worker
indexes (the holder of ``ldprs/indexer.lock``); when it is SIGKILLed another takes
over and resumes from the log; SPARQL answers every acknowledged write meanwhile."""
from __future__ import annotations

import http.client
import json
import os
import signal
import time
import urllib.parse
from pathlib import Path

from lakesuperior.store.quadstore import QuadStore
from tests.servers import child_pids, lsup_server

WAIT = 60.0
COUNT = ("PREFIX ldp: <http://www.w3.org/ns/ldp#> "
         "SELECT (COUNT(?s) AS ?c) WHERE { ?s a ldp:Container }")


def _lock_holders(lock: Path) -> set[int]:
    """Pids holding an flock on ``lock`` (from /proc/locks)."""
    if not lock.exists():
        return set()
    ino = os.stat(lock).st_ino
    holders = set()
    with open("/proc/locks") as fh:
        for line in fh:
            parts = line.split()
            if "->" in parts:          # a waiter, not a holder
                continue
            if parts[1] == "FLOCK" and int(parts[5].rsplit(":", 1)[1]) == ino:
                holders.add(int(parts[4]))
    return holders


def _wait_for(what, deadline_s: float = WAIT):
    deadline = time.monotonic() + deadline_s
    while True:
        got = what()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def _put(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("PUT", path, body=b"", headers={"Content-Type": "text/turtle"})
        return conn.getresponse().status
    finally:
        conn.close()


def _containers(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/query/sparql?query=" + urllib.parse.quote(COUNT),
                     headers={"Accept": "application/sparql-results+json"})
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200, body
        return int(json.loads(body)["results"]["bindings"][0]["c"]["value"])
    finally:
        conn.close()


def _pending(store_dir: Path) -> int:
    with QuadStore(str(store_dir), readonly=True) as st:
        applied, last = st.index_state()
        return last - applied


def test_one_indexer_among_two_workers_and_a_killed_one_is_replaced(tmp_path):
    store_dir = tmp_path / "data" / "ldprs"
    lock = store_dir / "indexer.lock"
    with lsup_server(tmp_path, {"LSUP_SERVER_WORKERS": "2"}) as (proc, port, _log):
        workers = _wait_for(lambda: set(child_pids(proc.pid)) if len(
            child_pids(proc.pid)) == 2 else set())
        assert len(workers) == 2
        holders = _wait_for(lambda: _lock_holders(lock))
        assert len(holders) == 1 and holders <= workers     # one indexer, a worker
        assert all(_put(port, f"/rest/a{i}") == 201 for i in range(30))
        assert _containers(port) == 31                        # root + 30, at once
        assert _wait_for(lambda: _pending(store_dir) == 0)
        old = holders.pop()
        os.kill(old, signal.SIGKILL)
        assert all(_put(port, f"/rest/b{i}") == 201 for i in range(30))
        assert _containers(port) == 61
        new = _wait_for(lambda: _lock_holders(lock) - {old})
        assert len(new) == 1 and new <= set(child_pids(proc.pid))
        assert _wait_for(lambda: _pending(store_dir) == 0)
        assert _lock_holders(lock) == new
