"""Smoke tests against a real gunicorn (lsup-server) on 127.0.0.1, started once per session."""
from __future__ import annotations

import http.client
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from ..servers import lsup_server

pytestmark = pytest.mark.slow

MAX_BODY = 100_000


class Server:
    def __init__(self, port: int, proc: subprocess.Popen, log: str):
        self.port = port
        self.proc = proc
        self.log = log

    def request(self, method: str, path: str, body=None, headers=None, *, encode_chunked=False):
        """One request on a new connection: ``(status, headers, body)``.

        A server that refuses a body answers and closes before the client has sent
        it all; the client then reads the answer already sent. Where the close came
        first and took that answer with it (a TCP reset), the request is sent again
        (three times at most): that race is the transport's, not the server's."""
        for attempt in range(3):
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                try:
                    conn.request(method, path, body=body() if callable(body) else body,
                                 headers=headers or {}, encode_chunked=encode_chunked)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                r = conn.getresponse()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
            except (ConnectionResetError, http.client.RemoteDisconnected):
                if attempt == 2:
                    raise
            finally:
                conn.close()
        raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    env = {"LSUP_SERVER_WORKERS": "2", "LSUP_STORE_SYNC": "false",
           "LSUP_MAX_BODY_SIZE": str(MAX_BODY)}
    with lsup_server(tmp_path_factory.mktemp("lsup-server"), env) as (proc, port, log_path):
        yield Server(port, proc, str(log_path))


def test_root(server):
    status, headers, body = server.request("GET", "/rest/")
    assert status == 200
    assert headers["content-type"].startswith("text/turtle")
    assert f"<http://127.0.0.1:{server.port}/rest/>".encode() in body
    assert "ldp#BasicContainer" in headers["link"]


def test_put_get_head(server):
    ttl = b'<> <http://purl.org/dc/terms/title> "smoke" .'
    status, headers, _ = server.request("PUT", "/rest/smoke", ttl, {"Content-Type": "text/turtle"})
    assert status == 201
    status, headers, body = server.request("GET", "/rest/smoke",
                                           headers={"Accept": "application/n-triples"})
    assert status == 200 and b'"smoke"' in body
    status, hheaders, hbody = server.request("HEAD", "/rest/smoke",
                                             headers={"Accept": "application/n-triples"})
    assert status == 200 and hbody == b""
    assert hheaders["etag"] == headers["etag"]
    assert hheaders.get("content-length") in (None, str(len(body)))
    status, _, _ = server.request("DELETE", "/rest/smoke")
    assert status == 204
    assert server.request("GET", "/rest/smoke")[0] == 410


def test_public_uris_follow_host(server):
    server.request("PUT", "/rest/hosted", b"", {"Content-Type": "text/turtle"})
    status, _, body = server.request(
        "GET", "/ldp/hosted",
        headers={"Host": "example.org:8123", "Accept": "application/n-triples"})
    assert status == 200 and b"<http://example.org:8123/ldp/hosted>" in body


@pytest.mark.parametrize("script_name", ["/elsewhere", "/rest", "/rest/hosted"])
def test_a_script_name_header_is_not_believed(server, script_name):
    """gunicorn took a ``SCRIPT_NAME`` request header from a trusted proxy address
    (127.0.0.1, so any local client) as the WSGI script root: a path outside it was a
    500 ("Configuration problem: Request path ... does not start with SCRIPT_NAME"),
    one inside it moved the routes and every public URI."""
    server.request("PUT", "/rest/hosted", b"", {"Content-Type": "text/turtle"})
    status, _, body = server.request(
        "GET", "/rest/hosted",
        headers={"SCRIPT_NAME": script_name, "Accept": "application/n-triples"})
    assert status == 200, (status, body)
    assert f"<http://127.0.0.1:{server.port}/rest/hosted>".encode() in body


def test_binary_and_ranges(server):
    data = bytes(range(256)) * 100
    status, headers, _ = server.request("POST", "/rest/", data,
                                        {"Content-Type": "application/octet-stream",
                                         "Slug": "smokebin"})
    assert status == 201
    status, headers, body = server.request("GET", "/rest/smokebin")
    assert status == 200 and body == data and headers["content-length"] == str(len(data))
    status, headers, body = server.request("GET", "/rest/smokebin", headers={"Range": "bytes=5-9"})
    assert status == 206 and body == data[5:10]
    status, headers, body = server.request("HEAD", "/rest/smokebin", headers={"Want-Digest": "md5"})
    assert status == 200 and body == b"" and headers["digest"].startswith("md5=")


def test_chunked_upload(server):
    chunks = (b"part-%d;" % i for i in range(50))
    status, _, _ = server.request("PUT", "/rest/chunked", chunks,
                                  {"Content-Type": "text/plain"}, encode_chunked=True)
    assert status == 201
    assert server.request("GET", "/rest/chunked")[2] == b"".join(b"part-%d;" % i for i in range(50))


@pytest.mark.parametrize("path, statuses", [
    ("/rest/a/../b", (400,)), ("/rest/a/%2e%2e/b", (400,)), ("/rest/a%2Fb", (400,)),
    ("/rest/a%00b", (400,)), ("/rest/" + "x" * 300, (400,)), ("/rest//x", (400, 404)),
    ("/rest/%2e%2e/%2e%2e/etc/passwd", (400,)),
])
def test_path_tricks(server, path, statuses):
    for method in ("GET", "PUT"):
        status, headers, body = server.request(method, path, b"", {"Content-Type": "text/turtle"})
        assert status in statuses, (method, path, body)


def test_oversized_body(server):
    status, _, _ = server.request("PUT", "/rest/huge", b"x" * (MAX_BODY + 1),
                                  {"Content-Type": "application/octet-stream"})
    assert status == 413
    assert server.request("GET", "/rest/huge")[0] == 404


def test_unknown_method(server):
    assert server.request("PROPFIND", "/rest/")[0] == 405


def test_concurrent_writes_and_reads(server):
    server.request("PUT", "/rest/many", b"", {"Content-Type": "text/turtle"})

    def work(i):
        body = f'<> <http://purl.org/dc/terms/title> "{i}" .'.encode()
        put = server.request("PUT", f"/rest/many/r{i}", body, {"Content-Type": "text/turtle"})[0]
        get = server.request("GET", f"/rest/many/r{i}")[0]
        return put, get

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(40)))
    assert results == [(201, 200)] * 40
    status, _, body = server.request("GET", "/rest/many",
                                     headers={"Accept": "application/n-triples"})
    assert body.count(b"ldp#contains") == 40


def test_constraints_document(server):
    status, headers, body = server.request("GET", "/constraints")
    assert status == 200 and b"server-managed" in body


def test_server_settings(monkeypatch):
    from lakesuperior.config import Config
    from lakesuperior.server import Server
    monkeypatch.setenv("GUNICORN_CMD_ARGS", "--timeout 77 --graceful-timeout 5")
    srv = Server(Config(server_bind="127.0.0.1:9999", server_workers=3))
    assert srv.cfg.bind == ["127.0.0.1:9999"] and srv.cfg.workers == 3
    assert srv.cfg.timeout == 77 and srv.cfg.graceful_timeout == 5
    assert srv.cfg.worker_class_str == "lakesuperior.worker.HeaderReadingWorker"
    assert srv.cfg.worker_connections == 1000 and srv.cfg.preload_app is False
    assert srv.cfg.threads == 8 and srv.cfg.control_socket_disable is True
    monkeypatch.delenv("GUNICORN_CMD_ARGS")
    assert Server(Config()).cfg.timeout == 120


def test_workers_take_a_short_gil_switch_interval():
    import sys

    from lakesuperior.config import Config
    from lakesuperior.server import AccessLogger, Server
    srv = Server(Config())
    assert srv.cfg.logger_class is AccessLogger
    before = sys.getswitchinterval()
    try:
        srv.cfg.post_worker_init(None)      # what each worker runs once its app is loaded
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    finally:
        sys.setswitchinterval(before)


def test_access_log_line(server):
    status, _, _ = server.request("GET", "/rest/?x=1", headers={"User-Agent": "probe-ua"})
    assert status == 200
    deadline = time.monotonic() + 10    # the worker logs the line after it has answered
    while True:
        with open(server.log) as fh:
            lines = [line for line in fh if '"GET /rest/?x=1 HTTP/1.1" 200 ' in line]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert lines and lines[-1].startswith("127.0.0.1 ")
    assert lines[-1].rstrip().endswith("ms")


class _Resp:
    status = "201 Created"
    sent = 17
    headers = [("Content-Type", "text/plain")]


class _Req:
    headers = [("User-Agent", "probe-ua")]


def _logger(fmt: str):
    from gunicorn.config import Config as GunicornConfig

    from lakesuperior.server import AccessLogger
    cfg = GunicornConfig()
    cfg.set("access_log_format", fmt)
    return AccessLogger(cfg)


@pytest.mark.parametrize("fmt", [
    '%(h)s "%(r)s" %(s)s %(b)s %(M)sms',                      # the default
    '%(h)s %(l)s "%(r)s" %(s)s %(B)s %(m)s %(U)s %(q)s %(H)s %(f)s %(a)s %(T)s %(D)s %(L)s %(p)s',
    '%(h)s "%(r)s" %(s)s "%({user-agent}i)s" %({content-type}o)s %(u)s',   # gunicorn's
])
def test_access_logger_writes_what_gunicorns_writes(fmt):
    from datetime import timedelta

    from gunicorn import glogging
    environ = {"REMOTE_ADDR": "10.0.0.9", "REQUEST_METHOD": "PUT", "RAW_URI": "/rest/a?b=c",
               "SERVER_PROTOCOL": "HTTP/1.1", "PATH_INFO": "/rest/a", "QUERY_STRING": "b=c",
               "HTTP_USER_AGENT": "probe-ua", "HTTP_REFERER": "http://r/"}
    took = timedelta(seconds=1, microseconds=2345)
    ours, theirs = _logger(fmt), glogging.Logger(_logger(fmt).cfg)
    line = fmt % glogging.SafeAtoms(ours.atoms(_Resp(), _Req(), environ, took))
    assert line == fmt % glogging.SafeAtoms(theirs.atoms(_Resp(), _Req(), environ, took))
    assert "10.0.0.9" in line and "PUT /rest/a?b=c HTTP/1.1" in line and "201" in line
