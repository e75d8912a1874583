"""HTTP transactions over a real gunicorn: one transaction's requests served by
different worker processes, and a server killed with a transaction open."""
from __future__ import annotations

import http.client
import os
import signal
import time

import pytest

from tests.servers import child_pids, lsup_server

pytestmark = pytest.mark.slow

TITLE = b'<> <http://purl.org/dc/terms/title> "%s" .'


def call(port: int, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request on a new connection (so that any worker may take it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def tx_path(location: str) -> str:
    return location[location.index("/rest/"):]


def test_tx_across_workers_and_servers(tmp_path):
    """Two servers of two workers each on one data directory: consecutive requests
    of the transaction alternate between them (different processes for sure)."""
    data = str(tmp_path / "data")
    env = {"LSUP_SERVER_WORKERS": "2", "LSUP_DATA_DIR": data}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with lsup_server(tmp_path / "a", env) as (_pa, port_a, _la), \
            lsup_server(tmp_path / "b", env) as (_pb, port_b, _lb):
        status, headers, _ = call(port_a, "POST", "/rest/fcr:tx")
        assert status == 201
        tx = headers["Location"]
        ports = [port_a, port_b]
        for i in range(6):
            status, _, body = call(ports[i % 2], "PUT", f"/rest/c{i}", TITLE % b"x",
                                   {"Content-Type": "text/turtle", "Atomic-ID": tx})
            assert status == 201, body
        for i in range(6):
            assert call(ports[(i + 1) % 2], "GET", f"/rest/c{i}",
                        headers={"Atomic-ID": tx})[0] == 200
            assert call(ports[i % 2], "GET", f"/rest/c{i}")[0] == 404
        assert call(port_b, "PUT", tx_path(tx))[0] == 204
        for i in range(6):
            assert call(ports[i % 2], "GET", f"/rest/c{i}")[0] == 200
        assert call(port_a, "GET", tx_path(tx))[0] == 410


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(") ", 1)[1].startswith("Z")


def test_tx_sigkill_with_open_transaction_restart_leaves_no_trace(tmp_path):
    data = tmp_path / "data"
    env = {"LSUP_SERVER_WORKERS": "2", "LSUP_DATA_DIR": str(data)}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with lsup_server(tmp_path / "a", env) as (proc, port, _log):
        assert call(port, "PUT", "/rest/kept", TITLE % b"kept",
                    {"Content-Type": "text/turtle"})[0] == 201
        status, headers, _ = call(port, "POST", "/rest/fcr:tx")
        tx = headers["Location"]
        assert call(port, "PUT", "/rest/lost", TITLE % b"lost",
                    {"Content-Type": "text/turtle", "Atomic-ID": tx})[0] == 201
        assert call(port, "POST", "/rest/kept", b"bytes",
                    {"Content-Type": "text/plain", "Atomic-ID": tx})[0] == 201
        victims = [proc.pid, *child_pids(proc.pid)]
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 30
        while not all(_gone(pid) for pid in victims) and time.monotonic() < deadline:
            time.sleep(0.05)
    with lsup_server(tmp_path / "b", env) as (_proc, port, _log):
        assert call(port, "GET", "/rest/kept")[0] == 200
        assert call(port, "GET", "/rest/lost")[0] == 404
        assert call(port, "GET", tx_path(tx))[0] == 404
        assert call(port, "GET", "/rest/lost", headers={"Atomic-ID": tx})[0] == 409
        _, _, body = call(port, "GET", "/rest/kept", headers={"Accept": "text/turtle"})
        assert b"ldp#contains" not in body and b"contains" not in body
        assert sorted(os.listdir(data / "transactions")) == [".alive"]
