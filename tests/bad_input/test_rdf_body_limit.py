"""``max_rdf_body_size``: an RDF or SPARQL Update body, read whole and parsed in
memory (about 20 times its size), is refused past it with a 413 that names it,
and nothing changes; a binary's content, streamed, is bounded by
``max_body_size`` alone, also when it is sent as RDF to an existing binary."""
from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError

from .conftest import TTL, store_state

LIMIT = 2_000
P = "<http://purl.org/dc/terms/title>"


def _turtle(size: int) -> bytes:
    return f'<> {P} "'.encode() + b"x" * size + b'" .'


@pytest.fixture
def app(tmp_path) -> Iterator:
    from tests.apps import build_app, close_app
    app = build_app(Config(data_dir=str(tmp_path / "data"), sync=False, auth_enabled=False,
                           max_body_size=50_000, max_rdf_body_size=LIMIT))
    client = app.test_client()
    assert client.put("/rest/c", data=b"", content_type=TTL).status_code == 201
    assert client.put("/rest/b", data=b"bytes", content_type="text/plain").status_code == 201
    try:
        yield app
    finally:
        close_app(app)


def _refused(app, r) -> None:
    text = r.get_data(as_text=True)
    assert r.status_code == 413, text
    assert "max_rdf_body_size" in text and str(LIMIT) in text


@pytest.mark.parametrize("method, path, ctype, body", [
    ("PUT", "/rest/new", TTL, _turtle(LIMIT)),
    ("PUT", "/rest/c", TTL, _turtle(LIMIT)),
    ("POST", "/rest/c", TTL, _turtle(LIMIT)),
    ("PUT", "/rest/b/fcr:metadata", TTL, _turtle(LIMIT)),
    ("PATCH", "/rest/c", "application/sparql-update",
     b'INSERT DATA { <> <http://ex.org/p> "' + b"x" * LIMIT + b'" }'),
    ("PUT", "/rest/c/fcr:acl", TTL, _turtle(LIMIT)),
])
def test_an_rdf_body_past_the_limit_is_refused_and_changes_nothing(app, method, path, ctype,
                                                                   body):
    repo = app.extensions["lakesuperior"].repository
    before = store_state(repo)
    _refused(app, app.test_client().open(path, method=method, data=body, content_type=ctype))
    assert store_state(repo) == before


def test_a_chunked_rdf_body_past_the_limit_is_refused(app):
    repo = app.extensions["lakesuperior"].repository
    before = store_state(repo)
    r = app.test_client().put("/rest/c", input_stream=io.BytesIO(_turtle(LIMIT)),
                              content_type=TTL, headers={"Transfer-Encoding": "chunked"})
    _refused(app, r)
    assert store_state(repo) == before


def test_an_rdf_body_within_the_limit_is_written(app):
    client = app.test_client()
    assert client.put("/rest/c", data=_turtle(LIMIT - 100), content_type=TTL).status_code == 204
    assert b"x" * (LIMIT - 100) in client.get("/rest/c", headers={"Accept": TTL}).data


def test_a_binarys_rdf_content_is_bounded_by_max_body_size_only(app):
    """A PUT of Turtle on a binary is its new content: it is streamed, not parsed."""
    client = app.test_client()
    body = _turtle(LIMIT * 5)
    assert client.put("/rest/b", data=body, content_type=TTL).status_code == 204
    assert client.get("/rest/b").data == body
    r = client.put("/rest/b2", data=body, content_type=TTL,
                   headers={"Link": '<http://www.w3.org/ns/ldp#NonRDFSource>; rel="type"'})
    assert r.status_code == 201, r.get_data(as_text=True)
    assert client.get("/rest/b2").data == body
    r = client.put("/rest/b", data=b"x" * 50_001, content_type=TTL)
    assert r.status_code == 413 and "max_body_size" in r.get_data(as_text=True)


def test_the_smaller_limit_is_named(tmp_path):
    from tests.apps import build_app, close_app
    app = build_app(Config(data_dir=str(tmp_path / "data"), sync=False, auth_enabled=False,
                           max_body_size=1_000, max_rdf_body_size=LIMIT))
    try:
        r = app.test_client().put("/rest/c", data=_turtle(1_500), content_type=TTL)
        assert r.status_code == 413
        assert "(max_body_size)" in r.get_data(as_text=True)
    finally:
        close_app(app)


def test_max_rdf_body_size_configuration():
    assert Config.load(environ={}).max_rdf_body_size == 32 << 20
    assert Config.load(environ={"LSUP_MAX_RDF_BODY_SIZE": "1000"}).max_rdf_body_size == 1000
    for bad in ("0", "-1"):
        with pytest.raises(ConfigError, match="max_rdf_body_size"):
            Config.load(environ={"LSUP_MAX_RDF_BODY_SIZE": bad})
