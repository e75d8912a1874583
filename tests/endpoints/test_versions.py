"""Versioning per Fedora API section 4 (Memento, RFC 7089) and tombstones, with
versions made on request (``versioning.auto: false``; ``test_versions_auto``
covers automatic versions)."""
from __future__ import annotations

import pytest

from lakesuperior.endpoints.memento import version_datetime
from lakesuperior.http import headers as hdr

from .conftest import (
    DC_TITLE,
    LDP,
    MEMENTO,
    NT,
    ROOT,
    TTL,
    graph,
    link_targets,
    links,
    post_ttl,
    put_ttl,
    types,
)


@pytest.fixture
def app_config():
    from .conftest import MAX_BODY
    return {"max_body_size": MAX_BODY, "versioning_auto": False, "auth_enabled": False}


def _version(client, path):
    r = client.post(path + "/fcr:versions")
    assert r.status_code == 201, r.data
    assert "fcr:versions/" in r.headers["Location"]
    return r.headers["Location"]


def test_resource_is_a_timegate(client):
    put_ttl(client, "/rest/a")
    r = client.get("/rest/a")
    assert {MEMENTO + "OriginalResource", MEMENTO + "TimeGate"} <= types(r)
    gates = [lk for lk in links(r) if lk.has_rel("timegate")]
    assert len(gates) == 1 and gates[0].has_rel("original") and gates[0].uri == f"{ROOT}/a"
    assert link_targets(r, "timemap") == [f"{ROOT}/a/fcr:versions"]


def test_timemap(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "v1" .')
    tm = client.get("/rest/a/fcr:versions")
    assert tm.status_code == 200
    assert {LDP + "Container", MEMENTO + "TimeMap"} <= types(tm)
    for m in ("GET", "HEAD", "OPTIONS", "POST"):
        assert m in tm.headers["Allow"]
    assert tm.headers["Accept-Post"]
    assert not [t for t in graph(tm) if t[1] == f"<{LDP}contains>"]
    uri = _version(client, "/rest/a")
    tm = client.get("/rest/a/fcr:versions")
    assert (f"<{ROOT}/a/fcr:versions>", f"<{LDP}contains>", f"<{uri}>") in graph(tm)
    lf = client.get("/rest/a/fcr:versions", headers={"Accept": "application/link-format"})
    assert lf.status_code == 200
    assert lf.headers["Content-Type"].startswith("application/link-format")
    parsed = hdr.parse_link(lf.get_data(as_text=True).replace("\n", ""))
    assert parsed[0].uri == f"{ROOT}/a" and parsed[0].has_rel("original")
    mementos = [lk for lk in parsed if lk.has_rel("memento")]
    assert [lk.uri for lk in mementos] == [uri]
    assert hdr.parse_http_date(mementos[0].params["datetime"]) is not None
    assert [lk.rel for lk in mementos] == [{"memento"}]
    head = client.head("/rest/a/fcr:versions")
    assert head.status_code == 200
    opts = client.options("/rest/a/fcr:versions")
    assert opts.status_code == 200 and "POST" in opts.headers["Allow"]
    for answer in (tm, lf, head, opts):     # Fedora API 4.3.1
        assert answer.headers["Vary-Post"] == "Memento-Datetime"


def test_memento(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "v1" .')
    orig = client.get("/rest/a", headers={"Accept": NT})
    uri = _version(client, "/rest/a")
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "v2" .')
    m = client.get(uri, headers={"Accept": NT})
    assert m.status_code == 200
    assert sorted(m.data.splitlines()) == sorted(orig.data.splitlines())
    assert MEMENTO + "Memento" in types(m)
    assert LDP + "Container" not in types(m)
    vid = uri.rsplit("/", 1)[1]
    assert hdr.parse_http_date(m.headers["Memento-Datetime"]) == version_datetime(vid)
    gate = [lk for lk in links(m) if lk.has_rel("timegate")]
    assert gate[0].uri == f"{ROOT}/a" and gate[0].has_rel("original")
    assert link_targets(m, "timemap") == [f"{ROOT}/a/fcr:versions"]
    assert m.headers["Allow"] == "GET, HEAD, OPTIONS, DELETE"
    assert client.options(uri).headers["Allow"] == "GET, HEAD, OPTIONS, DELETE"
    assert client.get(uri, headers={"Accept": "text/html"}).status_code == 200


def test_mementos_are_read_only(client, repo, state):
    put_ttl(client, "/rest/a")
    uri = _version(client, "/rest/a")
    before = state(repo)
    for method in ("PUT", "POST", "PATCH"):        # DELETE removes it (test_versions_auto)
        r = client.open(uri, method=method, data=b"<> <http://x/p> 1 .", content_type=TTL)
        assert r.status_code == 405, method
        assert r.headers["Allow"] == "GET, HEAD, OPTIONS, DELETE"
    for method in ("PUT", "PATCH", "DELETE"):
        assert client.open("/rest/a/fcr:versions", method=method).status_code == 405
    assert state(repo) == before


def test_post_to_timemap_ignores_body(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "v1" .')
    orig = client.get("/rest/a", headers={"Accept": NT})
    r = client.post("/rest/a/fcr:versions",
                    data=b'<> <http://purl.org/dc/elements/1.1/title> "x" .', content_type=TTL)
    assert r.status_code == 201
    m = client.get(r.headers["Location"], headers={"Accept": NT})
    assert sorted(m.data.splitlines()) == sorted(orig.data.splitlines())


def test_version_label_from_slug(client):
    put_ttl(client, "/rest/a")
    r = client.post("/rest/a/fcr:versions", headers={"Slug": "first draft"})
    assert r.status_code == 201
    tm = graph(client.get("/rest/a/fcr:versions"))
    assert (f"<{r.headers['Location']}>", "<http://www.w3.org/2000/01/rdf-schema#label>",
            '"first draft"') in tm


@pytest.mark.both_backends
def test_binary_mementos(client):
    r = client.post("/rest/", data=b"version one", content_type="text/plain",
                    headers={"Slug": "bin"})
    assert r.status_code == 201
    uri = _version(client, "/rest/bin")
    client.put("/rest/bin", data=b"version two", content_type="text/plain")
    m = client.get(uri)
    assert m.status_code == 200 and m.data == b"version one"
    assert MEMENTO + "Memento" in types(m)
    assert link_targets(m, "timegate") == [f"{ROOT}/bin"]
    vid = uri.rsplit("/", 1)[1]
    assert link_targets(m, "describedby") == [f"{ROOT}/bin/fcr:metadata/fcr:versions/{vid}"]
    d = client.get(f"/rest/bin/fcr:metadata/fcr:versions/{vid}")
    assert d.status_code == 200 and MEMENTO + "Memento" in types(d)
    assert link_targets(d, "timegate") == [f"{ROOT}/bin/fcr:metadata"]
    dtm = client.get("/rest/bin/fcr:metadata/fcr:versions")
    assert dtm.status_code == 200
    assert (f"<{ROOT}/bin/fcr:metadata/fcr:versions>", f"<{LDP}contains>",
            f"<{ROOT}/bin/fcr:metadata/fcr:versions/{vid}>") in graph(dtm)
    assert client.get("/rest/bin").data == b"version two"


def test_timegate(client):
    put_ttl(client, "/rest/a")
    r = client.get("/rest/a", headers={"Accept-Datetime": "Thu, 01 Jan 1970 00:00:00 GMT"})
    assert r.status_code == 406
    uri = _version(client, "/rest/a")
    for when in ("Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 01 Jan 2100 00:00:00 GMT"):
        r = client.get("/rest/a", headers={"Accept-Datetime": when})
        assert r.status_code == 302 and r.headers["Location"] == uri
        assert "accept-datetime" in r.headers["Vary"].lower()
        assert link_targets(r, "original") == [f"{ROOT}/a"]
        assert link_targets(r, "timemap") == [f"{ROOT}/a/fcr:versions"]
    assert client.head("/rest/a", headers={
        "Accept-Datetime": "Fri, 01 Jan 2100 00:00:00 GMT"}).status_code == 302
    assert client.get("/rest/a", headers={"Accept-Datetime": "yesterday"}).status_code == 400


def test_timegate_picks_closest(make_app, app_config, clock):
    client = make_app(clock=clock, **app_config).test_client()
    put_ttl(client, "/rest/a")
    first = _version(client, "/rest/a")
    clock.advance()
    second = _version(client, "/rest/a")
    assert first != second
    when = hdr.format_http_date(version_datetime(first.rsplit("/", 1)[1]))
    assert client.get("/rest/a", headers={"Accept-Datetime": when}).headers["Location"] == first
    later = "Fri, 01 Jan 2100 00:00:00 GMT"
    assert client.get("/rest/a", headers={"Accept-Datetime": later}).headers["Location"] == second


def test_missing_memento_is_404(client):
    put_ttl(client, "/rest/a")
    assert client.get("/rest/a/fcr:versions/20000101000000").status_code == 404
    assert client.get("/rest/nothing/fcr:versions").status_code == 404


# --- tombstones ---------------------------------------------------------------------------

def test_tombstones(client, repo, state):
    put_ttl(client, "/rest/c/d/e")
    assert client.delete("/rest/c").status_code == 204
    for path in ("/rest/c", "/rest/c/d", "/rest/c/d/e", "/rest/c/d/fcr:versions"):
        r = client.get(path)
        assert r.status_code == 410, path
        assert link_targets(r, "hasTombstone") == [f"{ROOT}/c/fcr:tombstone"]
    assert client.head("/rest/c/d").status_code == 410
    assert client.options("/rest/c").status_code == 410
    r = client.get("/rest/c/fcr:tombstone")
    assert r.status_code == 405 and "DELETE" in r.headers["Allow"]
    assert client.options("/rest/c/fcr:tombstone").status_code == 200
    before = state(repo)
    assert post_ttl(client, "/rest/c/d", "").status_code == 410
    assert put_ttl(client, "/rest/c/d/new", "").status_code == 410
    assert state(repo) == before


def test_resurrect(client):
    put_ttl(client, "/rest/c/d", f'<> {DC_TITLE} "x" .')
    client.delete("/rest/c")
    r = client.post("/rest/c/fcr:tombstone")
    assert r.status_code == 201 and r.headers["Location"] == f"{ROOT}/c"
    assert (f"<{ROOT}/c/d>", DC_TITLE, '"x"') in graph(client.get("/rest/c/d"))


def test_purge(client):
    put_ttl(client, "/rest/c/d")
    client.delete("/rest/c")
    assert client.delete("/rest/c/fcr:tombstone").status_code == 204
    assert client.get("/rest/c").status_code == 404
    assert client.get("/rest/c/d").status_code == 404
    assert client.get("/rest/c/fcr:tombstone").status_code == 404
    assert put_ttl(client, "/rest/c").status_code == 201


def test_tombstone_of_live_or_missing(client):
    put_ttl(client, "/rest/a")
    assert client.get("/rest/a/fcr:tombstone").status_code == 404
    assert client.delete("/rest/a/fcr:tombstone").status_code == 409
    assert client.delete("/rest/nothing/fcr:tombstone").status_code == 404
