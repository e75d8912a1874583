"""``SocketBody``: the worker's reader of bodies of known length, alone on a socket
pair and behind a real lsup-server (kept-alive connections stay in step)."""
from __future__ import annotations

import os
import re
import socket
import threading

import pytest
from gunicorn.http.unreader import SocketUnreader

from lakesuperior.exceptions import ClientTimeoutError
from lakesuperior.worker import SocketBody

from ..servers import lsup_server
from .test_slow_clients import answer


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    a.settimeout(5)
    yield a, b
    a.close()
    b.close()


def body_of(sock: socket.socket, length: int, held: bytes = b"", timeout: float = 5
            ) -> tuple[SocketBody, SocketUnreader]:
    unreader = SocketUnreader(sock)
    if held:
        unreader.unread(held)           # read with the header
    return SocketBody(unreader, length, sock, timeout), unreader


def send_later(sock: socket.socket, data: bytes) -> threading.Thread:
    t = threading.Thread(target=sock.sendall, args=(data,), daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("size", [1, 1000, 65536, 262144])
def test_reads_held_bytes_then_the_socket_exactly_the_length(pair, size):
    a, b = pair
    data = os.urandom(700_000)
    sender = send_later(b, data[100:] + b"NEXT REQUEST")
    body, unreader = body_of(a, len(data), held=data[:100])
    got = b"".join(iter(lambda: body.read(size), b""))
    sender.join()
    assert got == data
    assert body.read(size) == b""
    assert body.reader.length == 0
    assert unreader.read(12) == b"NEXT REQUEST"     # nothing past the body was taken


def test_held_bytes_beyond_the_read_stay_held(pair):
    a, _b = pair
    body, unreader = body_of(a, 10, held=b"0123456789GET / HTTP/1.1")
    assert body.read(4) == b"0123"
    assert body.read(100) == b"456789"
    assert body.read(100) == b""
    assert unreader.take_buffered() == b"GET / HTTP/1.1"


def test_whole_reads_lines_and_reads_past_a_partial_line(pair):
    a, b = pair
    b.sendall(b"line one\nline two\nrest")
    body, _ = body_of(a, 22)
    assert body.readline() == b"line one\n"
    assert body.read(4) == b"line"                  # after a line: gunicorn's own read
    assert body.read() == b" two\nrest"
    assert body.read(10) == b""


def test_a_body_that_ends_early_reads_short_then_empty(pair):
    a, b = pair
    b.sendall(b"abc")
    b.shutdown(socket.SHUT_WR)
    body, _ = body_of(a, 10)
    assert body.read(8) == b"abc"
    assert body.read(8) == b""


def test_a_body_that_stops_is_a_client_timeout_counting_what_arrived(pair):
    a, b = pair
    a.settimeout(0.2)
    b.sendall(b"abcd")
    body, _ = body_of(a, 10, timeout=0.2)
    with pytest.raises(ClientTimeoutError, match="0.2 seconds"):
        body.read(8)
    assert body.reader.length == 6       # the 4 bytes taken off the connection count
    assert body.failed


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    with lsup_server(tmp_path_factory.mktemp("body")) as (_proc, port, _log):
        yield port


def request(method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    head += "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
    if body or method in ("PUT", "POST"):
        head += f"Content-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


def test_kept_alive_connection_stays_in_step_after_bodies_read_or_left(port):
    """A binary read whole, a body the server refuses without reading it, and a GET
    of the binary: three requests on one connection, each answered."""
    content = os.urandom(3_000_000)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock.sendall(request("PUT", "/rest/sb-bin", content, Content_Type="image/png"))
        sock.sendall(request("PUT", "/rest/sb-bin", b"<> <p:q> 1 .",
                             Content_Type="text/turtle", If_Match='"not-the-etag"'))
        sock.sendall(request("GET", "/rest/sb-bin", Connection="close"))
        data = answer(sock, within=30)
    finally:
        sock.close()
    assert content in data
    statuses = re.findall(rb"(?:^|\n)HTTP/1\.1 (\d{3}) ", data.replace(content, b""))
    assert statuses == [b"201", b"412", b"200"], data[:500]


def test_a_body_sent_after_100_continue_is_read_whole(port):
    content = os.urandom(2_000_000)
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        head = request("PUT", "/rest/sb-expect", content, Content_Type="image/png",
                       Expect="100-continue", Connection="close")
        sock.sendall(head[:-len(content)])
        assert sock.recv(64).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(content)
        assert answer(sock, within=30).startswith(b"HTTP/1.1 201 ")
    finally:
        sock.close()
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock.sendall(request("GET", "/rest/sb-expect", Connection="close"))
        assert content in answer(sock, within=30)
    finally:
        sock.close()
