"""Fixtures for external content: an origin HTTP server on 127.0.0.1 (files with
ranges, redirects, failures), a directory of files, and a repository and an app
whose allow-list names both."""
from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CONTENT = bytes(range(256)) * 40          # 10240 bytes
TEXT = b"hello external world\n"
REL = "http://fedora.info/definitions/fcrepo#ExternalContent"


class OriginHandler(http.server.BaseHTTPRequestHandler):
    """``/files/NAME`` (from ``server.files``: bytes, media type; HEAD and one
    ``bytes=a-b`` range), ``/go/NAME`` (a 302 to ``server.redirects[NAME]``),
    ``/status/N`` (that status), ``/midway`` (announces more than it sends)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        return

    def do_HEAD(self) -> None:
        self._answer(False)

    def do_GET(self) -> None:
        self._answer(True)

    def _answer(self, body: bool) -> None:
        origin: Origin = self.server.origin  # type: ignore[attr-defined]
        origin.requests.append((self.command, self.path, self.headers.get("Range")))
        path = self.path.split("?")[0]
        if path.startswith("/files/") and path[7:] in origin.files:
            data, mtype = origin.files[path[7:]]
            self._file(data, mtype, body)
        elif path.startswith("/go/") and path[4:] in origin.redirects:
            self._send(302, b"", {"Location": origin.redirects[path[4:]]}, body)
        elif path.startswith("/status/"):
            self._send(int(path[8:]), b"failing", {}, body)
        elif path == "/slow":
            origin.release.wait(10)           # answers when the test is done with it
            self._send(200, b"late", {}, body)
        elif path == "/midway":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            if body:
                self.wfile.write(b"x" * 10)
            self.close_connection = True
        else:
            self._send(404, b"not found", {}, body)

    def _file(self, data: bytes, mtype: str, body: bool) -> None:
        headers = {"Content-Type": mtype, "Accept-Ranges": "bytes"}
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
        if m:
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
            if start >= len(data):
                headers["Content-Range"] = f"bytes */{len(data)}"
                self._send(416, b"", headers, body)
                return
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            self._send(206, data[start:end + 1], headers, body)
            return
        self._send(200, data, headers, body)

    def _send(self, status: int, data: bytes, headers: dict, body: bool) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)


@dataclass
class Origin:
    """The origin server: ``url`` is ``http://127.0.0.1:PORT``."""

    url: str
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def origin() -> Iterator[Origin]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OriginHandler)
    server.daemon_threads = True
    o = Origin(f"http://127.0.0.1:{server.server_address[1]}")
    o.files.update({"data.bin": (CONTENT, "application/x-test"),
                    "hello.txt": (TEXT, "text/plain")})
    server.origin = o  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    yield o
    o.release.set()
    server.shutdown()
    server.server_close()
    thread.join()


@dataclass
class Files:
    """Local files: ``allowed`` (on the allow-list) holds ``data.bin`` and
    ``hello.txt``; ``outside`` (not allowed) holds ``secret.txt``."""

    allowed: Path
    outside: Path

    def url(self, name: str) -> str:
        return (self.allowed / name).as_uri()


@pytest.fixture
def files(tmp_path) -> Files:
    allowed = tmp_path / "allowed"
    outside = tmp_path / "allowed-not"       # shares the prefix, not the directory
    allowed.mkdir()
    outside.mkdir()
    (allowed / "data.bin").write_bytes(CONTENT)
    (allowed / "hello.txt").write_bytes(TEXT)
    (outside / "secret.txt").write_bytes(b"secret\n")
    return Files(allowed, outside)


def allow_list(origin: Origin, files: Files) -> tuple[str, ...]:
    return (origin.url + "/files", origin.url + "/go/", origin.url + "/midway",
            origin.url + "/slow", files.allowed.as_uri())


@pytest.fixture
def ext_repo(repo_factory, origin, files):
    """A repository whose allow-list names the origin's /files and /go/, and the
    allowed directory."""
    return repo_factory(external_content_allowed=allow_list(origin, files),
                        external_content_timeout=5.0, max_body_size=50_000)


@pytest.fixture
def app_config(origin, files):
    return {"max_body_size": 50_000, "auth_enabled": False,
            "external_content_allowed": allow_list(origin, files),
            "external_content_timeout": 5.0}


@pytest.fixture
def http_repo(app):
    return app.extensions["lakesuperior"].repository


def link(url: str, handling: str | None = "proxy", type_: str | None = None) -> str:
    value = f'<{url}>; rel="{REL}"'
    if handling is not None:
        value += f'; handling="{handling}"'
    if type_ is not None:
        value += f'; type="{type_}"'
    return value
