"""The admin HTTP client (migrate and the benchmark): requests, streams, Link headers
parsed by lakesuperior.http.headers, credentials, and its errors."""
from __future__ import annotations

import base64
import http.server
import socket
import threading
from collections.abc import Iterator

import pytest

from lakesuperior.exceptions import HttpClientError, LakesuperiorError
from lakesuperior.http.client import HttpClient, HttpResponse, parse_auth
from lakesuperior.http.headers import parse_link

LDP = "http://www.w3.org/ns/ldp#"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/links":
            body = b"linked"
            self.send_response(200)
            # Two Link headers; a comma inside <...> and a quoted comma; upper-case rel.
            self.send_header("Link", f'<{LDP}BasicContainer>; rel="TYPE", '
                                     '</a,b>; title="x, y"; rel="describedby"')
            self.send_header("Link", '<../up>; rel="up type"')
        elif self.path == "/auth":
            body = (self.headers.get("Authorization") or "").encode()
            self.send_response(200)
        else:
            body = b"x" * 10_000
            self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def test_request_reads_the_whole_response(server):
    with HttpClient() as client:
        resp = client.request("GET", server + "/links")
    assert isinstance(resp, HttpResponse)
    assert resp.ok and resp.status == 200 and resp.body == b"linked"
    assert resp.content_type == "text/plain"
    assert resp.excerpt() == "linked" and resp.url == server + "/links"


def test_link_targets_use_the_server_grammar(server):
    with HttpClient() as client:
        resp = client.request("GET", server + "/links")
    assert resp.links == parse_link(resp.headers.get_all("Link"))
    # rel compares case-insensitively; a link may carry several relations
    assert resp.link_targets("type") == [f"{LDP}BasicContainer", f"{server}/up"]
    # commas inside <...> and quotes do not split links; targets resolve against the URL
    assert resp.link_targets("describedby") == [f"{server}/a,b"]
    assert resp.link_targets("up") == [f"{server}/up"]
    assert resp.link_targets("next") == []


def test_open_streams_and_the_connection_is_reused(server):
    with HttpClient() as client:
        head, body = client.open("GET", server + "/big")
        with body:
            assert head.status == 200 and head.body == b""
            assert body.read(4) == b"xxxx"
        # closed before the end: the connection is dropped, the next request reconnects
        assert client.request("GET", server + "/links").body == b"linked"
        head, body = client.open("GET", server + "/big")
        assert len(body.read()) == 10_000
        body.close()
        assert client.request("GET", server + "/links").ok


def test_basic_credentials(server):
    with HttpClient(auth=("alice", "s3:cret")) as client:
        sent = client.request("GET", server + "/auth").body.decode()
    assert sent == "Basic " + base64.b64encode(b"alice:s3:cret").decode()
    assert parse_auth("alice:s3:cret") == ("alice", "s3:cret")
    assert parse_auth(None) is None
    for bad in ("nocolon", ":nouser"):
        with pytest.raises(ValueError, match="USER:PASS"):
            parse_auth(bad)


def test_errors_are_domain_errors():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with HttpClient(timeout=5) as client:
        with pytest.raises(HttpClientError) as caught:
            client.request("GET", f"http://127.0.0.1:{port}/")
        assert isinstance(caught.value, LakesuperiorError)
        with pytest.raises(HttpClientError, match="Not an http"):
            client.request("GET", "ftp://example.org/x")
