"""Slow clients cannot starve a real lsup-server (default workers and threads):
headers are read without holding a worker thread and within
``server.header_timeout``, a body read waits at most ``server.body_timeout``."""
from __future__ import annotations

import http.client
import select
import socket
import threading
import time

import pytest

from ..servers import lsup_server

pytestmark = pytest.mark.slow

HEAD = b"GET /rest/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nX-Padding: "


def timed_get(port: int, path: str = "/rest/", timeout: float = 15) -> tuple[int, float]:
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        return r.status, time.monotonic() - start
    finally:
        conn.close()


def answer(sock: socket.socket, within: float) -> bytes:
    """What the server sends on ``sock`` until it closes it (at most ``within`` s)."""
    deadline = time.monotonic() + within
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    raise AssertionError(f"the server did not close the connection in {within} s: {data!r}")


class Trickle:
    """``n`` connections sending their header one byte a second, never finishing it
    (each reconnects if the server closes it)."""

    def __init__(self, port: int, n: int):
        self.port = port
        self.socks = [self._open() for _ in range(n)]
        self.stop = threading.Event()
        self.sent = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def _run(self) -> None:
        while not self.stop.wait(1.0):
            for i, sock in enumerate(self.socks):
                try:
                    sock.send(HEAD[self.sent % len(HEAD):][:1] or b"a")
                except OSError:
                    sock.close()
                    self.socks[i] = self._open()
            self.sent += 1

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        for sock in self.socks:
            sock.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with lsup_server(tmp_path_factory.mktemp("slow"), {"LSUP_SERVER_WORKERS": "2"}) \
            as (_proc, port, _log):
        yield port


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    """A server with 2-second header and body timeouts."""
    env = {"LSUP_SERVER_HEADER_TIMEOUT": "2", "LSUP_SERVER_BODY_TIMEOUT": "2",
           "LSUP_SERVER_WORKERS": "2"}
    with lsup_server(tmp_path_factory.mktemp("short"), env) as (_proc, port, _log):
        yield port


def test_100_slow_header_connections_do_not_starve_requests(server):
    trickle = Trickle(server, 100)
    try:
        time.sleep(3.5)                           # every connection has sent bytes
        for _ in range(3):
            status, took = timed_get(server)
            assert status == 200
            assert took < 3.0, f"a GET took {took:.1f} s during the slow headers"
            time.sleep(0.5)
    finally:
        trickle.close()


def test_header_timeout_408_and_close(short):
    sock = socket.create_connection(("127.0.0.1", short), timeout=5)
    try:
        start = time.monotonic()
        sock.sendall(HEAD[:10])
        data = answer(sock, within=8)
        assert data.startswith(b"HTTP/1.1 408 "), data
        assert b"server.header_timeout" in data
        assert 1.5 <= time.monotonic() - start < 8
    finally:
        sock.close()


def test_header_trickled_within_the_timeout_is_served(short):
    sock = socket.create_connection(("127.0.0.1", short), timeout=5)
    try:
        for i in range(0, 40, 4):
            sock.sendall(HEAD[i:i + 4])
            time.sleep(0.05)
        sock.sendall(HEAD[40:] + b"x\r\nConnection: close\r\n\r\n")
        assert answer(sock, within=10).startswith(b"HTTP/1.1 200 ")
    finally:
        sock.close()


def test_header_over_64_kib_431(short):
    sock = socket.create_connection(("127.0.0.1", short), timeout=5)
    try:
        sock.sendall(b"GET /rest/ HTTP/1.1\r\nHost: x\r\n"
                     + b"".join(b"X-F%d: %s\r\n" % (i, b"a" * 1000) for i in range(70)))
        data = answer(sock, within=8)
        assert data.startswith(b"HTTP/1.1 431 "), data[:200]
    finally:
        sock.close()


def test_pipelined_and_kept_alive_requests_are_served(short):
    sock = socket.create_connection(("127.0.0.1", short), timeout=5)
    try:
        one = b"GET /rest/ HTTP/1.1\r\nHost: x\r\n\r\n"
        sock.sendall(one + one[:12])             # a second request begun in the same packet
        time.sleep(0.3)
        sock.sendall(one[12:-2] + b"Connection: close\r\n\r\n")
        data = answer(sock, within=10)
        assert data.count(b"HTTP/1.1 200 ") == 2, data[:300]
    finally:
        sock.close()


def test_body_timeout_408_nothing_written(short):
    sock = socket.create_connection(("127.0.0.1", short), timeout=5)
    try:
        start = time.monotonic()
        sock.sendall(b"PUT /rest/stalled HTTP/1.1\r\nHost: x\r\nContent-Type: text/turtle\r\n"
                     b"Content-Length: 100\r\n\r\n<> <http://x.org/p> ")
        data = answer(sock, within=10)
        assert data.startswith(b"HTTP/1.1 408 "), data[:300]
        assert b"server.body_timeout" in data
        assert time.monotonic() - start < 10
    finally:
        sock.close()
    assert timed_get(short, "/rest/stalled")[0] == 404
