"""Fixtures for the CLI and benchmark tests: repositories on tmp dirs, a real
``lsup-server`` on 127.0.0.1, and a stub HTTP server for bad migration sources."""
from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakesuperior.bench.ports import free_port
from tests.servers import START_TIMEOUT

BASE = "http://test.example/rest"
BIN_DIR = os.path.dirname(sys.executable)
DC_TITLE = "<http://purl.org/dc/terms/title>"
LINK = "<http://ex.org/link>"
#: The environment of an in-process command whose indexer need not be a process.
THREAD_INDEXER = {"LSUP_STORE_INDEXER_PROCESS": "false"}


def script(name: str) -> str:
    return os.path.join(BIN_DIR, name)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def invoke(runner, monkeypatch):
    """Run ``lsup-admin`` in-process with a clean environment (the indexer of the
    repository it opens a thread, unless ``env`` says otherwise: a process would
    cost each command a Python start); returns the result."""
    from lakesuperior.cli import cli
    for var in ("LSUP_CONFIG", "LSUP_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)

    def run(*args: str, input: str | None = None, env: dict | None = None):
        return runner.invoke(cli, [str(a) for a in args], input=input,
                             env={**THREAD_INDEXER, **(env or {})})

    return run


def populate(path: Path | str, **overrides) -> dict[str, str]:
    """A small repository of every kind of resource, closed again; returns
    {name: uid} of what it made."""
    from lakesuperior import Repository
    overrides.setdefault("base_uri", BASE)
    overrides.setdefault("sync", False)
    overrides.setdefault("indexer_process", False)    # a Python start saved
    with Repository(path, **overrides) as repo:
        repo.create_or_replace("/coll", data=f'<> {DC_TITLE} "A collection"@en .'.encode(),
                               media_type="text/turtle")
        repo.create_or_replace("/coll/doc", data=(
            f'<> {DC_TITLE} "Doc \\"quoted\\" ᚠ α" ; {LINK} <{BASE}/coll> , '
            f'<http://example.org/ext> ; <http://ex.org/n> 42 .\n'
            f'<#part> {DC_TITLE} "part" .').encode(), media_type="text/turtle")
        _, binary = repo.create_or_replace("/coll/file.bin", data=b"\x00\x01binary content" * 50,
                                           media_type="application/octet-stream",
                                           filename="file.bin")
        repo.update_delta("/coll/file.bin", None, [("<>", DC_TITLE, '"a binary"')])
        repo.create_or_replace("/coll/note.txt", data=b"hello world\n", media_type="text/plain")
        repo.create_or_replace("/dc", data=(
            f"<> <http://www.w3.org/ns/ldp#membershipResource> <{BASE}/coll> ; "
            "<http://www.w3.org/ns/ldp#hasMemberRelation> <http://purl.org/dc/terms/hasPart> ."
        ).encode(), media_type="text/turtle",
            interaction_model="http://www.w3.org/ns/ldp#DirectContainer")
        repo.create_or_replace("/dc/m1", data=f'<> {DC_TITLE} "member" .'.encode(),
                               media_type="text/turtle")
        repo.create_or_replace("/flat", data=f'<> {DC_TITLE} "flat" .'.encode(),
                               media_type="text/turtle",
                               interaction_model="http://www.w3.org/ns/ldp#RDFSource")
        repo.create_version("/coll/doc")
        repo.create_or_replace("/gone")
        repo.delete("/gone")
        return {"coll": "/coll", "doc": "/coll/doc", "binary": "/coll/file.bin",
                "note": "/coll/note.txt", "dc": "/dc", "member": "/dc/m1", "flat": "/flat",
                "digest": binary.digest}


@pytest.fixture
def data_dir(tmp_path) -> Path:
    """A populated repository (closed), ready for the CLI; its one version made on
    request (``versioning.auto`` off while populating)."""
    path = tmp_path / "data"
    populate(path, versioning_auto=False)
    return path


def state(path: Path | str) -> dict:
    """Everything a repository holds (graphs with triples, binary digests)."""
    from lakesuperior import Repository
    with Repository(path, sync=False, indexer_process=False) as repo:
        with repo.store.read() as txn:
            graphs = {g: sorted(txn.triples(g)) for g in txn.graphs()}
        return {"graphs": graphs, "binaries": sorted(repo.binaries)}


# --- servers on loopback -----------------------------------------------------------------

class LsupServer:
    """``lsup-server`` in a subprocess on a tmp data directory."""

    def __init__(self, data_dir: Path, log_path: Path, args: list[str] | None = None,
                 env: dict[str, str] | None = None):
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/rest"
        env = {**os.environ, "LSUP_DATA_DIR": str(data_dir),
               "LSUP_SERVER_BIND": f"127.0.0.1:{self.port}", "LSUP_SERVER_WORKERS": "1",
               "LSUP_STORE_SYNC": "false", "LSUP_AUTH_ENABLED": "false", **(env or {})}
        env.pop("LSUP_CONFIG", None)
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([script("lsup-server"), *(args or [])],
                                     cwd=str(data_dir.parent),
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        import http.client
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("lsup-server exited:\n" + self.log_text())
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                try:
                    conn.request("HEAD", "/rest/")
                    if conn.getresponse().status == 200:
                        return
                finally:
                    conn.close()
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("lsup-server did not start:\n" + self.log_text())
            time.sleep(0.1)

    def log_text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@contextmanager
def running_server(data: Path, log: Path) -> Iterator[LsupServer]:
    """``lsup-server`` on ``data`` (its log in ``log``) for the block: for a
    fixture of wider scope than ``start_server``'s."""
    srv = LsupServer(data, log)
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def start_server(tmp_path) -> Iterator[Callable[[Path], LsupServer]]:
    """Start ``lsup-server`` on a data directory; stopped at teardown."""
    started: list[LsupServer] = []

    def start(data: Path) -> LsupServer:
        srv = LsupServer(data, tmp_path / f"server-{len(started)}.log")
        started.append(srv)
        srv.wait_ready()
        return srv

    yield start
    for srv in started:
        srv.stop()


class StubHandler(http.server.BaseHTTPRequestHandler):
    """Answers from ``server.routes``: path -> (status, headers, body), or a
    callable taking the handler and returning that."""

    protocol_version = "HTTP/1.1"

    def _answer(self, body_too: bool) -> None:
        routes = self.server.routes  # type: ignore[attr-defined]
        answer = routes.get(self.path, (404, {}, b"not found"))
        status, headers, body = answer(self) if callable(answer) else answer
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body_too:
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(False)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._answer(True)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stub_server() -> Iterator[Callable[[dict], str]]:
    """A tiny HTTP server on 127.0.0.1 answering fixed routes; returns its base URL."""
    servers: list[http.server.ThreadingHTTPServer] = []
    threads: list[threading.Thread] = []

    def start(routes: dict) -> str:
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StubHandler)
        srv.daemon_threads = True
        srv.routes = routes  # type: ignore[attr-defined]
        t = threading.Thread(target=srv.serve_forever, daemon=True)
        t.start()
        servers.append(srv)
        threads.append(t)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()
    for t in threads:
        t.join(timeout=5)
