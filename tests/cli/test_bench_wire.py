"""``lakesuperior.bench.wire``: the benchmark clients' HTTP/1.1 connection, against
a raw socket server that answers each request with scripted bytes."""
from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from lakesuperior.bench.wire import Connection, WireError


class RawServer:
    """Accepts connections on 127.0.0.1; answers the n-th request with the n-th
    scripted reply (None: close the connection without answering; a tuple
    ``(bytes,)``: send them, then close); keeps the requests it read (head and body)."""

    def __init__(self, replies: list[bytes | tuple[bytes] | None]):
        self.replies = list(replies)
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/rest/"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.replies:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn, conn.makefile("rb") as rfile:
                while self.replies:
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = rfile.readline()
                        if not line:
                            break
                        head += line
                    if not head:
                        break
                    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), 0)
                    self.requests.append(head + rfile.read(length))
                    reply = self.replies.pop(0)
                    if reply is None:
                        break
                    conn.sendall(reply if isinstance(reply, bytes) else reply[0])
                    if isinstance(reply, tuple):
                        break

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw() -> Iterator:
    servers: list[RawServer] = []

    def start(*replies: bytes | tuple[bytes] | None) -> RawServer:
        srv = RawServer(list(replies))
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.close()


def test_request_is_http11_with_host_length_and_body(raw):
    srv = raw(b"HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nnew")
    conn = Connection(srv.url)
    assert conn.request("PUT", "/rest/a", {"Content-Type": "text/turtle"}, b"<> a <b> .") \
        == (201, b"new")
    conn.close()
    head, _, body = srv.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"PUT /rest/a HTTP/1.1"
    assert f"Host: 127.0.0.1:{srv.url.split(':')[2].split('/')[0]}".encode() in lines
    assert b"Content-Type: text/turtle" in lines and b"Content-Length: 10" in lines
    assert body == b"<> a <b> ."


def test_keep_alive_reads_each_body_whole_whatever_its_framing(raw):
    srv = raw(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
              b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n",
              b"HTTP/1.1 204 No Content\r\n\r\n",
              b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
              b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n",   # HEAD: no body follows
              b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nto the end")
    conn = Connection(srv.url)
    assert conn.request("GET", "/rest/", {}) == (200, b"hello")
    assert conn.request("GET", "/rest/", {}) == (200, b"abcde")
    assert conn.request("DELETE", "/rest/x", {}) == (204, b"")
    assert conn.request("GET", "/rest/", {}) == (200, b"ok")
    assert conn.request("HEAD", "/rest/", {}) == (200, b"")
    assert conn.request("GET", "/rest/", {}) == (200, b"to the end")
    assert srv.connections == 1 and conn.sock is None    # closed as the server said


def test_a_keep_alive_connection_the_server_closed_is_opened_again_once(raw):
    srv = raw(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na", None,
              b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb")
    conn = Connection(srv.url)
    assert conn.request("GET", "/rest/", {}) == (200, b"a")
    assert conn.request("GET", "/rest/", {}) == (200, b"b")
    assert srv.connections == 2 and len(srv.requests) == 3
    conn.close()


def test_a_server_that_keeps_closing_is_an_error(raw):
    srv = raw(None, None)
    with pytest.raises(ConnectionResetError):
        Connection(srv.url).request("GET", "/rest/", {})


@pytest.mark.parametrize("reply, message", [
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP status line"),
    (b"ICY 200 OK\r\n\r\n", "not an HTTP/1.x response"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "after 5 of 10 body bytes"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a chunk size"),
    (b"HTTP/1.1 200 OK\r\nContent-Le", "closed in the response's headers"),
])
def test_a_broken_response_is_a_wire_error(raw, reply, message):
    srv = raw((reply,))
    conn = Connection(srv.url)
    with pytest.raises(WireError, match=message):
        conn.request("GET", "/rest/", {})
    conn.close()
