"""Fixtures for read replicas: a real Oxigraph server on 127.0.0.1 (the ``oxigraph``
package of the test extras), a repository, and helpers that compare the replica
with the repository graph by graph."""
from __future__ import annotations

import http.client
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyoxigraph
import pytest
import rdflib
from rdflib.compare import isomorphic

from lakesuperior import rdfio
from lakesuperior.config import Config
from lakesuperior.replicas.graphs import live_uids
from lakesuperior.repository import Repository
from tests.servers import free_port

TTL = "text/turtle"
START_TIMEOUT = 60.0


def oxigraph_binary() -> str:
    found = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    if not os.path.exists(found):
        pytest.fail("The oxigraph server is not installed: pip install '.[test]' "
                    "(the PyPI package oxigraph)")
    return found


class Oxigraph:
    """``oxigraph serve`` on a free loopback port, its data in ``location``."""

    def __init__(self, location: Path):
        self.location = location
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def store(self) -> str:
        return self.base + "/store"

    def start(self) -> Oxigraph:
        log = open(self.location.parent / "oxigraph.log", "ab")
        self.proc = subprocess.Popen([oxigraph_binary(), "serve", "--location",
                                      str(self.location), "--bind", f"127.0.0.1:{self.port}"],
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            try:
                conn.request("GET", "/query?query=ASK%7B%7D")
                if conn.getresponse().status == 200:
                    return self
            except OSError:
                pass
            finally:
                conn.close()
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("oxigraph did not start")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def graphs(self) -> dict[str, rdflib.Graph]:
        """Every named graph of the store, by IRI."""
        req = urllib.request.Request(self.store, headers={"Accept": "application/n-quads"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            data = resp.read()
        lines: dict[str, list[str]] = {}
        for q in pyoxigraph.parse(data, pyoxigraph.RdfFormat.N_QUADS):
            if isinstance(q.graph_name, pyoxigraph.NamedNode):
                lines.setdefault(q.graph_name.value, []).append(
                    f"{q.subject} {q.predicate} {q.object} .\n")
        return {name: rdflib.Graph().parse(data="".join(text), format="nt")
                for name, text in lines.items()}

    def query(self, sparql: str) -> dict:
        """The SPARQL JSON results of ``sparql`` (a SELECT or an ASK)."""
        req = urllib.request.Request(self.base + "/query", data=sparql.encode(),
                                     headers={"Content-Type": "application/sparql-query",
                                              "Accept": "application/sparql-results+json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    def put(self, graph: str, ntriples: bytes) -> None:
        req = urllib.request.Request(f"{self.store}?graph={graph}", data=ntriples,
                                     method="PUT",
                                     headers={"Content-Type": rdfio.N_TRIPLES})
        urllib.request.urlopen(req, timeout=30).close()


def put(repo: Repository, uid: str, title: str = "t") -> None:
    """Create or replace ``uid`` with one title."""
    repo.create_or_replace(uid, data=f"<> <http://purl.org/dc/terms/title> '{title}' ."
                           .encode(), media_type=TTL)


def churn(repo: Repository, tag: str = "") -> None:
    """Creates, replaces, PATCHes, versions, binaries, deletes, purges, resurrects."""
    put(repo, f"/a{tag}")
    put(repo, f"/a{tag}/b")
    repo.create_or_replace(f"/a{tag}/c", data=b"<> <http://ex.org/p> [ <http://ex.org/q> "
                           b"'in a blank node' ] .", media_type=TTL)
    repo.create_or_replace(f"/bin{tag}", data=b"some bytes", media_type="text/plain")
    put(repo, f"/a{tag}/b", "replaced")
    repo.update(f"/a{tag}", 'INSERT DATA { <> <http://purl.org/dc/terms/subject> "s" }')
    repo.create_version(f"/a{tag}")
    put(repo, f"/gone{tag}")
    repo.delete(f"/gone{tag}")
    put(repo, f"/purged{tag}")
    repo.delete(f"/purged{tag}")
    repo.forget(f"/purged{tag}")
    put(repo, f"/back{tag}")
    put(repo, f"/back{tag}/child")
    repo.delete(f"/back{tag}")
    repo.resurrect(f"/back{tag}")
    put(repo, f"/hard{tag}")
    repo.delete(f"/hard{tag}", soft=False)


@pytest.fixture
def oxigraph(tmp_path) -> Iterator[Oxigraph]:
    ox = Oxigraph(tmp_path / "oxigraph").start()
    try:
        yield ox
    finally:
        ox.kill()


@pytest.fixture
def config(tmp_path) -> Config:
    return Config(data_dir=str(tmp_path / "data"), sync=False, background_index=False,
                  replicas_timeout=5.0)


@pytest.fixture
def repo(config) -> Iterator[Repository]:
    r = Repository(config=config)
    try:
        yield r
    finally:
        r.close()


def repository_graphs(repo: Repository, reader=None) -> dict[str, rdflib.Graph]:
    """What the replica should hold: each live (readable) resource's graph, by IRI."""
    reader = reader or repo
    out = {}
    for uid in live_uids(repo):
        try:
            res = reader.get(uid)
        except Exception:     # not readable by the filter's agent
            continue
        out[repo.base_uri + uid] = as_stored(res.serialize(rdfio.N_TRIPLES))
    return out


def as_stored(ntriples: bytes) -> rdflib.Graph:
    """The triples as an Oxigraph store keeps them: it stores integers of the
    derived types (``xsd:long``...) as ``xsd:integer`` (docs/replicas.md)."""
    store = pyoxigraph.Store()
    store.load(ntriples, pyoxigraph.RdfFormat.N_TRIPLES)
    text = "".join(f"{q.subject} {q.predicate} {q.object} .\n" for q in store)
    return rdflib.Graph().parse(data=text, format="nt")


def assert_same(replica: dict[str, rdflib.Graph], expected: dict[str, rdflib.Graph]) -> None:
    assert sorted(replica) == sorted(expected)
    for name, g in expected.items():
        assert isomorphic(replica[name], g), name


class ErrorHandler(http.server.BaseHTTPRequestHandler):
    """Answers every request as ``server.mode`` says: ``500``, ``400``, ``garbage``
    (bytes that are not HTTP), ``slow`` (no answer within the timeout), ``ok``
    (204); records each request's method, path and Authorization header."""

    def _any(self) -> None:
        srv = self.server
        srv.seen.append((self.command, self.path, self.headers.get("Authorization")))  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        mode = srv.mode  # type: ignore[attr-defined]
        if mode == "garbage":
            self.wfile.write(b"\x00\x01 this is not HTTP at all\r\n\r\n")
            self.close_connection = True
            return
        if mode == "slow":
            time.sleep(3)
            return
        status = {"500": 500, "400": 400, "ok": 204}[mode]
        body = b"" if status == 204 else b"store says no"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_PUT = do_DELETE = do_POST = do_GET = _any

    def log_message(self, *args) -> None:
        pass


@contextmanager
def threaded_server(handler: type[http.server.BaseHTTPRequestHandler],
                    **attrs: object) -> Iterator[http.server.ThreadingHTTPServer]:
    """A threaded HTTP server on a free port of 127.0.0.1 with ``attrs`` set on it
    (what its handler reads and records), serving until the block ends."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    for name, value in attrs.items():
        setattr(srv, name, value)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def error_server() -> Iterator[http.server.ThreadingHTTPServer]:
    with threaded_server(ErrorHandler, mode="500", seen=[]) as srv:
        yield srv
