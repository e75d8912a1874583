"""Slow clients do not block the server: a real ``lsup-server`` with its default
worker model keeps answering while uploads trickle in."""
from __future__ import annotations

import http.client
import socket
import threading

import pytest

from .conftest import LsupServer

pytestmark = pytest.mark.slow

BODY = 20_000
STEP = 100          # bytes sent per 100 ms: a client at 1 KB/s


class SlowUpload(threading.Thread):
    """A PUT whose body arrives a few bytes per 100 ms until ``finish`` is set."""

    def __init__(self, port: int, path: str):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.path = path
        self.sent = 0
        self.started = threading.Event()
        self.finish = threading.Event()
        self.response = b""

    def run(self) -> None:
        head = (f"PUT {self.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/octet-stream\r\n"
                f"Content-Length: {BODY}\r\n\r\n").encode()
        self.sock.sendall(head)
        while self.sent < BODY - STEP and not self.finish.wait(0.1):
            self.sock.sendall(b"x" * STEP)
            self.sent += STEP
            if self.sent >= 3 * STEP:
                self.started.set()
        self.sock.sendall(b"x" * (BODY - self.sent))
        while not self.response.endswith(b"\r\n\r\n") and b"\r\n\r\n" not in self.response:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            self.response += chunk
        self.sock.close()


def get(port: int, path: str = "/rest/") -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_slow_uploads_do_not_block_other_requests(tmp_path):
    srv = LsupServer(tmp_path / "data", tmp_path / "server.log", args=["--workers", "2"])
    uploads: list[SlowUpload] = []
    try:
        srv.wait_ready()
        # An idle keep-alive connection holds nothing either.
        idle = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        idle.request("GET", "/rest/")
        idle.getresponse().read()
        uploads = [SlowUpload(srv.port, f"/rest/slow{i}") for i in range(2)]
        for upload in uploads:
            upload.start()
        for upload in uploads:
            assert upload.started.wait(30)
        statuses = [get(srv.port) for _ in range(3)]
        still_open = [u.is_alive() and not u.finish.is_set() for u in uploads]
        idle.request("GET", "/rest/")
        keepalive_status = idle.getresponse().status
        idle.close()
    finally:
        for upload in uploads:
            upload.finish.set()
        for upload in uploads:
            upload.join(60)
        srv.stop()
    assert statuses == [200, 200, 200]
    assert still_open == [True, True]
    assert keepalive_status == 200
    for upload in uploads:
        assert upload.response.startswith(b"HTTP/1.1 201"), upload.response[:200]
