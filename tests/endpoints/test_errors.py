"""Error responses: the status table, bodies in several formats, the constraints document."""
from __future__ import annotations

import errno
import json
import logging
import os

import pytest

from lakesuperior import exceptions as exc
from lakesuperior.config import Config
from lakesuperior.endpoints import errors
from lakesuperior.endpoints.paths import PathError
from tests.apps import Client

from ..conftest import store_state
from ..store.smallfs import small_filesystem
from .conftest import LDP, graph, link_targets, put_ttl


@pytest.mark.parametrize("error, status", [
    (exc.ResourceNotExistsError("/a"), 404), (exc.TombstoneError("/a"), 410),
    (exc.ServerManagedTermError("/a"), 409), (exc.IncompatibleLdpTypeError("/a"), 409),
    (exc.InvalidResourceError("/a"), 400), (exc.RdfParseError("bad", 1, 2), 400),
    (exc.UnsupportedMediaTypeError("x"), 415), (exc.ChecksumValidationError("/a"), 409),
    (exc.UnsupportedDigestError("x"), 400), (exc.PayloadTooLargeError("x"), 413),
    (exc.RangeNotSatisfiableError(5), 416), (exc.SparqlError("x"), 400),
    (exc.QueryTimeoutError("x"), 503), (exc.StoreError("x"), 500),
    (exc.TermError("x"), 400), (exc.BinaryNotFoundError("x"), 500),
    (errors.PreconditionFailed("x"), 412), (errors.NotAcceptable("x"), 406),
    (errors.MethodNotAllowed("x", ["GET"]), 405), (PathError("x", 404), 404),
    (errors.Gone("x"), 410), (exc.StoreFullError("x"), 507), (exc.DiskFullError("x"), 507),
    (exc.StoreBusyError("x"), 503),
    (RuntimeError("x"), 500), (KeyError("x"), 500),
])
def test_status_table(error, status):
    assert errors.status_of(error) == status


def test_a_busy_store_is_a_503_that_says_retry_not_a_bug(app, client, monkeypatch):
    def busy(*args, **kwargs):
        raise exc.StoreBusyError("The store must grow its map; retry shortly")
    repo = app.extensions["lakesuperior"].repository
    for name in ("info", "get", "exists"):
        monkeypatch.setattr(repo, name, busy)
    r = client.get("/rest/")
    assert r.status_code == 503
    text = r.get_data(as_text=True)
    assert "retry shortly" in text and "this is a bug" not in text


def test_every_domain_error_has_a_status():
    def walk(cls):
        yield cls
        for sub in cls.__subclasses__():
            yield from walk(sub)
    for cls in walk(exc.LakesuperiorError):
        if cls.__module__ == exc.__name__:
            assert any(c in errors.STATUS for c in cls.__mro__), cls


def test_plain_text_body(client):
    r = client.get("/rest/missing")
    assert r.status_code == 404
    assert r.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert r.get_data(as_text=True).startswith("404 Not Found: Resource /missing does not exist")
    assert link_targets(r, LDP + "constrainedBy") == ["http://localhost/constraints"]


def test_json_body(client):
    r = client.get("/rest/missing", headers={"Accept": "application/json"})
    assert r.status_code == 404 and r.headers["Content-Type"] == "application/json"
    assert json.loads(r.data) == {"status": 404, "error": "Not Found",
                                  "message": "Resource /missing does not exist"}


@pytest.mark.parametrize("accept", ["text/turtle", "application/ld+json", "application/n-triples"])
def test_rdf_body(client, accept):
    put_ttl(client, "/rest/a")
    r = client.put("/rest/a", data=b"<> <x", content_type="text/turtle",
                   headers={"Accept": accept})
    assert r.status_code == 400
    g = graph(r)
    comments = [o for s, p, o in g if p == "<http://www.w3.org/2000/01/rdf-schema#comment>"]
    assert comments and "line 1" in comments[0]
    assert ('"400"^^<http://www.w3.org/2001/XMLSchema#int>') in {o for s, p, o in g}


def test_html_body(client):
    r = client.get("/rest/missing", headers={"Accept": "text/html"})
    assert r.status_code == 404 and r.headers["Content-Type"].startswith("text/html")
    assert b"Resource /missing does not exist" in r.data


def test_head_error_has_no_body(client):
    r = client.head("/rest/missing")
    assert r.status_code == 404 and r.data == b""


def test_500_is_logged_and_hides_details(app, client, monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise RuntimeError("secret internals")
    monkeypatch.setattr(app.extensions["lakesuperior"].repository, "get", boom)
    with caplog.at_level(logging.ERROR):
        r = client.get("/rest/")
    assert r.status_code == 500
    text = r.get_data(as_text=True)
    assert "RuntimeError" in text and "secret internals" not in text
    assert not link_targets(r, LDP + "constrainedBy")
    assert any("secret internals" in str(rec.exc_info[1]) for rec in caplog.records if rec.exc_info)


def test_constraints_document(client):
    r = client.get("/constraints")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/turtle")
    g = graph(r)
    anchors = {s for s, p, o in g if p == "<http://www.w3.org/2000/01/rdf-schema#comment>"}
    for anchor in set(errors.CONSTRAINT_ANCHORS.values()):
        assert f"<http://localhost/constraints#{anchor}>" in anchors
    h = client.get("/constraints", headers={"Accept": "text/html"})
    assert h.status_code == 200 and b'id="server-managed"' in h.data
    assert client.get("/constraints", headers={"Accept": "text/plain"}).status_code == 200
    assert client.get("/constraints", headers={"Accept": "image/png"}).status_code == 406


def test_constrained_by_points_at_the_section(client):
    put_ttl(client, "/rest/a")
    r = client.put("/rest/a", data=f"<> <{LDP}contains> <http://localhost/rest/b> .",
                   content_type="text/turtle")
    assert link_targets(r, LDP + "constrainedBy") == [
        "http://localhost/constraints#server-managed"]


def test_routing_errors_use_the_same_format(client):
    r = client.get("/nowhere", headers={"Accept": "application/json"})
    assert r.status_code == 404 and json.loads(r.data)["status"] == 404
    r = client.post("/constraints")
    assert r.status_code == 405 and "GET" in r.headers["Allow"]


def test_app_on_a_caller_owned_repository(repo_factory):
    from lakesuperior.config import Config
    from tests.apps import build_app
    repo = repo_factory("shared")
    app = build_app(Config(), repository=repo)
    assert app.test_client().get("/rest/").status_code == 200
    app.extensions["lakesuperior"].close()
    assert repo.exists("/")   # still open: the caller owns it


# --- 507 Insufficient Storage: the store's map or the disk is full, nothing written ----

def _app_on(data_dir, **settings):
    from tests.apps import build_app
    app = build_app(Config(data_dir=str(data_dir), sync=False, auth_enabled=False,
                            **settings))
    app.testing = True
    app.test_client_class = Client
    return app


def _big_turtle(n: int) -> bytes:
    return "".join(f'<> <http://ex.org/p> "{i}{"y" * 1000}" .\n' for i in range(n)).encode()


def _assert_507(r, *words):
    assert r.status_code == 507, r.data
    text = r.get_data(as_text=True)
    assert text.startswith("507 Insufficient Storage: ")
    assert "bug" not in text and "/tmp" not in text and "Error" not in text.split(":")[0]
    for word in words:
        assert word in text


def _temp_files(repo) -> list[str]:
    return os.listdir(os.path.join(repo.binaries.root, "tmp"))


def test_507_when_the_disk_is_full_for_a_binary(app, client, repo, monkeypatch):
    from lakesuperior.store import binaries as binmod
    before = store_state(repo)

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(binmod._FileSink, "write", full)
    r = client.put("/rest/bin", data=b"content" * 100, content_type="application/pdf")
    monkeypatch.undo()
    _assert_507(r, "disk", "full", "nothing was stored")
    assert store_state(repo) == before and _temp_files(repo) == []
    assert client.get("/rest/bin").status_code == 404


def test_507_on_a_real_full_disk(tmp_path):
    with small_filesystem(tmp_path / "fs", "3m") as fs:
        app = _app_on(os.path.join(fs, "data"), max_body_size=32 << 20)
        try:
            client = app.test_client()
            repo = app.extensions["lakesuperior"].repository
            before = store_state(repo)
            r = client.put("/rest/rdf", data=_big_turtle(4000), content_type="text/turtle")
            _assert_507(r, "disk", "store is full")
            assert store_state(repo) == before
            r = client.put("/rest/bin", data=os.urandom(4 << 20),
                           content_type="application/octet-stream")
            _assert_507(r, "disk", "full")
            assert store_state(repo) == before and _temp_files(repo) == []
            assert client.put("/rest/small", data=b"", content_type="text/turtle"
                              ).status_code == 201                 # still serving
        finally:
            app.extensions["lakesuperior"].close()


def test_a_write_bigger_than_the_free_map_grows_it(tmp_path):
    app = _app_on(tmp_path / "data", map_size=1 << 20, max_body_size=32 << 20)
    try:
        r = app.test_client().put("/rest/rdf", data=_big_turtle(3000),
                                  content_type="text/turtle")
        assert r.status_code == 201
        assert app.extensions["lakesuperior"].repository.store.stats()["map_size"] > 3 << 20
    finally:
        app.extensions["lakesuperior"].close()


def test_507_when_the_map_is_full_and_cannot_grow(tmp_path):
    """A snapshot open in this process keeps LMDB from remapping: the write that
    needs a bigger map is a 507 that says so, and writes nothing."""
    app = _app_on(tmp_path / "data", map_size=1 << 20, max_body_size=32 << 20)
    try:
        client = app.test_client()
        repo = app.extensions["lakesuperior"].repository
        before = store_state(repo)
        with repo.store.read():
            r = client.put("/rest/rdf", data=_big_turtle(3000), content_type="text/turtle",
                           headers={"Accept": "application/json"})
        assert r.status_code == 507
        body = json.loads(r.data)
        assert body["error"] == "Insufficient Storage" and "map is full" in body["message"]
        assert store_state(repo) == before
    finally:
        app.extensions["lakesuperior"].close()
