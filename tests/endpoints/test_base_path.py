"""``http.base_path``: the LDP root where the configuration puts it (``/fcrepo/rest``
as Fedora's war is mounted), in every Location, Link, RDF body, HTML page, SPARQL
result and transaction URI; ``/rest`` is then nothing; bad values refused."""
from __future__ import annotations

import http.client
import json

import pytest

from lakesuperior import rdfio
from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError
from lakesuperior.http import headers as hdr

from ..servers import lsup_server

BASE = "/fcrepo/rest"
ROOT = "http://localhost" + BASE
TITLE = "<http://purl.org/dc/terms/title>"


@pytest.fixture
def app_config():
    return {"auth_enabled": False, "http_base_path": BASE}


def _links(r) -> set[str]:
    return {lk.uri for lk in hdr.parse_link(r.headers.getlist("Link"))}


def test_resources_live_under_the_base_path(client):
    r = client.put(f"{BASE}/a", data=f'<> {TITLE} "a" .'.encode(), content_type="text/turtle")
    assert r.status_code == 201, r.data
    assert r.headers["Location"] == f"{ROOT}/a"
    assert {f"{ROOT}/a/fcr:acl", f"{ROOT}/a/fcr:versions", f"{ROOT}/a"} <= _links(r)
    assert client.get("/rest/a").status_code == 404
    assert client.get("/rest/").status_code == 404
    post = client.post(f"{BASE}/a", data=b"x", content_type="text/plain",
                       headers={"Slug": "b"})
    assert post.headers["Location"] == f"{ROOT}/a/b"
    assert f"{ROOT}/a/b/fcr:metadata" in _links(post)
    got = client.get(f"{BASE}/a", headers={"Accept": rdfio.N_TRIPLES})
    triples = set(rdfio.parse(got.data, rdfio.N_TRIPLES, ROOT + "/"))
    assert (f"<{ROOT}/a>", "<http://www.w3.org/ns/ldp#contains>", f"<{ROOT}/a/b>") in triples
    assert (f"<{ROOT}/a>", TITLE, '"a"') in triples
    assert client.get(f"{BASE}/a/b/fcr:metadata").status_code == 200
    tm = client.get(f"{BASE}/a/fcr:versions", headers={"Accept": "application/link-format"})
    assert f"<{ROOT}/a/fcr:versions/".encode() in tm.data
    # the root: its redirect, and its own links
    assert client.get("/").headers["Location"].endswith(f"{BASE}/")
    assert client.get(f"{BASE}/").status_code == 200


def test_html_and_sparql_use_the_base_path(client):
    client.put(f"{BASE}/a", data=f'<> {TITLE} "a" .'.encode(), content_type="text/turtle")
    page = client.get(f"{BASE}/", headers={"Accept": "text/html"})
    assert f'href="{ROOT}/a"'.encode() in page.data
    q = client.get("/query/sparql", query_string={
        "query": f"SELECT ?s WHERE {{ ?s {TITLE} \"a\" }}"},
        headers={"Accept": "application/sparql-results+json"})
    assert q.status_code == 200, q.data
    rows = json.loads(q.data)["results"]["bindings"]
    assert [row["s"]["value"] for row in rows] == [f"{ROOT}/a"]


def test_transactions_under_the_base_path(client):
    r = client.post(f"{BASE}/fcr:tx")
    assert r.status_code == 201
    tx = r.headers["Location"]
    assert tx.startswith(f"{ROOT}/fcr:tx/")
    w = client.put(f"{BASE}/t", data=f'<> {TITLE} "t" .'.encode(), content_type="text/turtle",
                   headers={"Atomic-ID": tx})
    assert w.status_code == 201, w.data
    assert w.headers["Location"] == f"{ROOT}/t"
    assert client.put(tx[len("http://localhost"):]).status_code == 204
    assert client.get(f"{BASE}/t").status_code == 200


def test_ldp_alias_keeps_its_own_uris(client):
    r = client.put("/ldp/x", data=b"", content_type="text/turtle")
    assert r.headers["Location"] == "http://localhost/ldp/x"
    assert client.get(f"{BASE}/x").status_code == 200


def test_ldp_as_the_base_path(make_app):
    app = make_app(auth_enabled=False, http_base_path="/ldp")
    c = app.test_client()
    assert c.put("/ldp/x").headers["Location"] == "http://localhost/ldp/x"
    assert c.post("/ldp/fcr:tx").headers["Location"].startswith(
        "http://localhost/ldp/fcr:tx/")
    assert c.get("/rest/x").status_code == 404


@pytest.mark.parametrize("value", ["/", "", "rest", "/rest/", "/a//b", "/a/../b", "/a/./b",
                                   "/query", "/admin/rest", "/constraints", "/static/x",
                                   "/login", "/search/rest", "/health", "/metrics", "/ui/x",
                                   "/a b", "/fcr:rest", "/a?b"])
def test_bad_base_paths_are_refused(value):
    with pytest.raises(ConfigError, match="http.base_path"):
        Config(http_base_path=value).check()


def test_base_path_from_the_environment():
    cfg = Config.load(environ={"LSUP_HTTP_BASE_PATH": "/fcrepo/rest"})
    assert cfg.http_base_path == "/fcrepo/rest"
    assert Config().http_base_path == "/rest"


@pytest.mark.slow
def test_gunicorn_serves_the_base_path(tmp_path):
    with lsup_server(tmp_path, {"LSUP_HTTP_BASE_PATH": BASE}) as (_proc, port, _log):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("PUT", f"{BASE}/g", body=b'<> <http://x/p> "g" .',
                         headers={"Content-Type": "text/turtle"})
            r = conn.getresponse()
            r.read()
            assert r.status == 201
            assert r.getheader("Location") == f"http://127.0.0.1:{port}{BASE}/g"
            conn.request("GET", f"{BASE}/g", headers={"Accept": "application/n-triples"})
            r = conn.getresponse()
            assert f"<http://127.0.0.1:{port}{BASE}/g>".encode() in r.read()
            conn.request("GET", "/rest/g")
            r = conn.getresponse()
            r.read()
            assert r.status == 404
        finally:
            conn.close()
