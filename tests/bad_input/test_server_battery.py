"""Bad input over a real gunicorn on 127.0.0.1: malformed HTTP that never reaches
Flask (lying lengths, broken chunking, oversized headers) and a few application
errors. Each case gets its status and a body that says what was wrong within
``HANG`` seconds, leaves the store unchanged, and no worker dies: a following
GET answers and no new worker was booted."""
from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..servers import lsup_server
from .conftest import HANG, LDP, store_state

pytestmark = pytest.mark.slow

MAX_BODY = 50_000
TTL_BODY = b'<> <http://purl.org/dc/terms/title> "c" .'


@dataclass
class Reply:
    status: int
    head: str
    body: bytes


@dataclass
class Server:
    port: int
    proc: subprocess.Popen
    log: Path
    data: Path

    def send(self, raw: bytes, *, shutdown: bool = True) -> Reply:
        """Send raw bytes; read the whole reply (the connection is closed by the
        server, or ``HANG`` seconds pass: a hang fails the case)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=HANG) as s:
            try:
                s.sendall(raw)
                if shutdown:
                    s.shutdown(socket.SHUT_WR)
            except OSError:
                pass    # the server answered (and closed) before reading everything
            chunks = []
            while True:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        data = b"".join(chunks)
        head, _, body = data.partition(b"\r\n\r\n")
        first = head.split(b"\r\n", 1)[0].split()
        assert len(first) >= 2, f"no HTTP response: {data[:200]!r}"
        return Reply(int(first[1]), head.decode("latin-1"), body)

    def request(self, method: str, path: str, body: bytes = b"",
                headers: dict[str, str] | None = None) -> Reply:
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}",
                 "Connection: close", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        return self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def boots(self) -> int:
        return self.log.read_text(errors="replace").count("Booting worker")


@contextmanager
def running_server(tmp: Path) -> Iterator[Server]:
    """lsup-server on a free port of 127.0.0.1 with data in ``tmp``, seeded with a
    container ``/c`` and a binary ``/c/bin``; stopped at exit."""
    env = {"LSUP_SERVER_WORKERS": "2", "LSUP_SYNC": "false",
           "LSUP_MAX_BODY_SIZE": str(MAX_BODY), "GUNICORN_CMD_ARGS": "--timeout 30"}
    log = tmp / "server.log"
    with lsup_server(tmp, env, ready=lambda: log.read_text(errors="replace").count(
            "Booting worker") >= 2) as (proc, port, log_path):
        srv = Server(port, proc, log_path, tmp / "data")
        ttl = {"Content-Type": "text/turtle"}
        assert srv.request("PUT", "/rest/c", TTL_BODY, ttl).status == 201
        assert srv.request("PUT", "/rest/c/bin", b"content",
                           {"Content-Type": "text/plain"}).status == 201
        yield srv


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("bad-server")) as srv:
        yield srv


@pytest.fixture
def repo_of(server: Server) -> Iterator[Any]:
    with reader(server) as repo:
        yield repo


@contextmanager
def reader(server: Server) -> Iterator[Any]:
    """A reader of the server's store, in this process (LMDB allows several)."""
    from lakesuperior import Repository
    repo = Repository(server.data, sync=False)
    try:
        yield repo
    finally:
        repo.close()


def raw_request(method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body: bytes) -> bytes:
    """``body`` as one chunk and the last chunk (RFC 7230 section 4.1)."""
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


BIG_TTL = b'<> <http://ex.org/p> "' + b"x" * MAX_BODY + b'" .'
#: Deep JSON-LD under the server's body limit (short keys through @vocab).
DEEP_JSONLD = (b'{"@context":{"@vocab":"http://ex.org/"},"@id":"","p":' + b'{"p":' * 8000
               + b'"x"' + b"}" * 8001)
assert len(DEEP_JSONLD) < MAX_BODY
UPDATE = b'INSERT DATA { <> <http://ex.org/p> "x" }'
BAD_CHUNK = b"zz\r\nhello\r\n0\r\n\r\n"


@dataclass(frozen=True)
class Raw:
    id: str
    raw: bytes
    statuses: tuple[int, ...]
    keyword: str
    constrained: bool = True   #: an application answer (links the constraints)


CASES = [
    Raw("negative content-length", raw_request(
        "PUT", "/rest/c", TTL_BODY, Content_Type="text/turtle", Content_Length="-1"),
        (400,), "Content-Length", False),
    Raw("content-length not a number", raw_request("PUT", "/rest/c", TTL_BODY,
                                            Content_Type="text/turtle", Content_Length="abc"),
        (400,), "Content-Length", False),
    Raw("two different content-lengths",
        b"PUT /rest/c HTTP/1.1\r\nHost: x\r\nContent-Type: text/turtle\r\nContent-Length: 5"
        b"\r\nContent-Length: " + str(len(TTL_BODY)).encode() + b"\r\n\r\n" + TTL_BODY,
        (400,), "Content-Length", False),
    Raw("chunked and content-length", raw_request(
        "PUT", "/rest/c", b"5\r\nhello\r\n0\r\n\r\n", Content_Type="text/turtle",
        Transfer_Encoding="chunked", Content_Length="3"), (400,), "", False),
    Raw("chunk shorter than declared", raw_request(
        "PUT", "/rest/c/bin", b"ff\r\nhello\r\n", Content_Type="text/plain",
        Transfer_Encoding="chunked"), (400,), "", False),
    Raw("unknown transfer coding", raw_request("PUT", "/rest/c/bin", b"hello",
                                        Content_Type="text/plain", Transfer_Encoding="gzip"),
        (400, 501), "", False),
    Raw("header line too long", raw_request("GET", "/rest/c", X_Junk="x" * 9000), (400, 431),
        "header", False),
    Raw("too many headers", b"GET /rest/c HTTP/1.1\r\nHost: x\r\n"
        + b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n", (400, 431), "header",
        False),
    Raw("request line too long", raw_request("GET", "/rest/" + "x" * 9000), (400, 414), "line",
        False),
    Raw("garbage request line", b"HELLO\r\n\r\n", (400,), "", False),
    Raw("unsupported http version", b"GET /rest/c HTTP/9.9\r\nHost: x\r\n\r\n", (400, 505),
        "version", False),
    Raw("raw non-ascii in the path", b"GET /rest/\xff\xfe HTTP/1.1\r\nHost: x\r\n"
        b"Connection: close\r\n\r\n", (400,), "request line", False),
    Raw("control character in a header", b"GET /rest/c HTTP/1.1\r\nHost: x\r\nX-A: a\x01b"
        b"\r\nConnection: close\r\n\r\n", (400,), "", False),
    Raw("declared body over the limit, none sent", raw_request(
        "PUT", "/rest/c/bin", Content_Type="text/plain", Content_Length=str(MAX_BODY * 100)),
        (413,), "limit"),
    Raw("malformed turtle", raw_request("PUT", "/rest/c", b"<> <", Content_Type="text/turtle",
                                 Content_Length="4"), (400,), "line"),
    Raw("digest mismatch", raw_request("POST", "/rest/c", b"data", Content_Type="text/plain",
                                Content_Length="4", Digest="md5=1B2M2Y8AsgTpgAmY7PhCfg=="),
        (409,), "digest"),
    Raw("sparql query too long", raw_request(
        "POST", "/query/sparql", b"ASK {}" + b" " * 400_001,
        Content_Type="application/sparql-query", Content_Length=str(400_007)), (413,),
        "too long"),
    Raw("unknown interaction model", raw_request(
        "PUT", "/rest/c/new", Content_Length="0",
        Link=f'<{LDP}Thing>; rel="type"'), (409,), "Thing"),
    # A body that ends before its Content-Length (the client closed the connection) is
    # incomplete (RFC 7230 section 3.3.3): nothing is written from it.
    Raw("truncated rdf body", raw_request("PUT", "/rest/c", TTL_BODY, Content_Type="text/turtle",
                                          Content_Length="1000"), (400,), "incomplete"),
    Raw("truncated binary body", raw_request("PUT", "/rest/c/bin", b"short",
                                             Content_Type="text/plain", Content_Length="1000"),
        (400,), "incomplete"),
    Raw("truncated binary post", raw_request("POST", "/rest/c", b"short",
                                             Content_Type="text/plain", Content_Length="1000"),
        (400,), "incomplete"),
    Raw("truncated sparql update", raw_request(
        "PATCH", "/rest/c", UPDATE, Content_Type="application/sparql-update",
        Content_Length="1000"), (400,), "incomplete"),
    # A malformed chunk size is the client's error (400), not a 500 "this is a bug".
    Raw("invalid chunk size", raw_request("PUT", "/rest/c/bin", BAD_CHUNK,
                                          Content_Type="text/plain", Transfer_Encoding="chunked"),
        (400,), "chunked"),
    Raw("invalid chunk size on rdf", raw_request("PUT", "/rest/c", BAD_CHUNK,
                                                 Content_Type="text/turtle",
                                                 Transfer_Encoding="chunked"), (400,), "chunked"),
    Raw("invalid chunk size on a binary post", raw_request(
        "POST", "/rest/c", BAD_CHUNK, Content_Type="text/plain", Transfer_Encoding="chunked"),
        (400,), "chunked"),
    Raw("invalid chunk size on a sparql update", raw_request(
        "PATCH", "/rest/c", BAD_CHUNK, Content_Type="application/sparql-update",
        Transfer_Encoding="chunked"), (400,), "chunked"),
    # max_body_size while reading a chunked body.
    Raw("chunked rdf over the limit", raw_request(
        "PUT", "/rest/c", chunked(BIG_TTL), Content_Type="text/turtle",
        Transfer_Encoding="chunked"), (413,), "limit"),
    # The worker survives deep JSON-LD.
    Raw("deep json-ld", raw_request("PUT", "/rest/c", DEEP_JSONLD,
                                    Content_Type="application/ld+json",
                                    Content_Length=str(len(DEEP_JSONLD))), (400,), "nest"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_request_on_the_wire(server, repo_of, case):
    before = store_state(repo_of)
    boots = server.boots()
    reply = server.send(case.raw)
    assert reply.status in case.statuses, (reply.status, reply.head, reply.body[:300])
    assert reply.body.strip(), "empty body"
    assert case.keyword.lower() in reply.body.decode("utf-8", "replace").lower(), reply.body
    if case.constrained:
        assert "constrainedBy" in reply.head, reply.head
    assert server.request("GET", "/rest/c").status == 200
    assert server.boots() == boots, "a worker died"
    assert store_state(repo_of) == before, "the store changed"
