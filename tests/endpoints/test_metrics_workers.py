"""``/metrics`` of a real ``lsup-server`` with two gunicorn workers: every scrape,
whichever worker answers it, counts the requests of both (prometheus_client's
multiprocess mode in ``DATA_DIR/metrics``, emptied at each start), files sent
by the server itself (``wsgi.file_wrapper``) included; and ``/health``."""
from __future__ import annotations

import http.client
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.servers import child_pids, lsup_server

pytestmark = pytest.mark.slow

BURST = 20


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """One request on a connection of its own (so any worker may take it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Connection": "close",
                                                       **(headers or {})})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def scrape(port: int, log) -> str:
    status, body = request(port, "GET", "/metrics")
    assert status == 200, log.read_text(errors="replace")[-3000:]
    return body.decode()


def count(text: str, method: str, status: str) -> float:
    line = f'lsup_http_requests_total{{method="{method}",status="{status}"}} '
    found = re.search("^" + re.escape(line) + r"([0-9.e+]+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_metrics_sum_every_worker(tmp_path):
    env = {"LSUP_SERVER_WORKERS": "2", "LSUP_SERVER_THREADS": "4"}
    stale = tmp_path / "data" / "metrics"
    stale.mkdir(parents=True)
    (stale / "counter_1.db").write_bytes(b"\0" * 16)      # a file of an earlier run
    with lsup_server(tmp_path, env) as (proc, port, log):
        assert not (stale / "counter_1.db").exists()
        assert request(port, "PUT", "/rest/bin", b"x" * 100_000,
                       {"Content-Type": "image/png"})[0] == 201
        deadline = time.monotonic() + 60    # the second worker may be forked later
        while len(workers := set(child_pids(proc.pid))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(workers) == 2

        def answered() -> set[int]:
            """The workers that have counted a request (their counter files)."""
            return {int(m.group(1)) for f in os.listdir(stale)
                    if (m := re.fullmatch(r"counter_(\d+)\.db", f))} & workers

        sent = 0
        with ThreadPoolExecutor(8) as pool:
            # bursts until both workers have answered some (the kernel picks the worker)
            while answered() != workers and sent < 40 * BURST:
                statuses = set(pool.map(lambda _: request(port, "GET", "/rest/missing")[0],
                                        range(BURST)))
                assert statuses == {404}
                sent += BURST
            ranges = list(pool.map(lambda _: request(port, "GET", "/rest/bin",
                                                     headers={"Range": "bytes=0-9"})[0],
                                   range(10)))
        assert answered() == workers and set(ranges) == {206}
        # an answer is counted once the server has sent it: wait for the last ones
        deadline = time.monotonic() + 10
        while scrape(port, log).count('method="GET",status="206"} 10.0') == 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for _ in range(6):                   # whichever worker answers, the same sums
            text = scrape(port, log)
            assert count(text, "GET", "404") == sent
            assert count(text, "GET", "206") == 10
            assert count(text, "PUT", "201") == 1
            assert re.search(r"^lsup_write_lock_wait_seconds_count ([1-9][0-9.e+]*)$", text,
                             re.MULTILINE)
            assert re.search(r"^lsup_store_size_bytes [1-9]", text, re.MULTILINE)
        status, body = request(port, "GET", "/health")
        assert status == 200 and json.loads(body)["status"] == "ok"
