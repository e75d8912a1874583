"""The write path's MUSTs over HTTP: the links of a 201, a POST whose Slug is
taken, ``http.require_if_match`` (428), referential integrity, and binary
descriptions that set the media type and file name (Fedora API 3.2, 3.5, 3.6,
3.7; LDP 4.2.4.5, 5.2.3; RFC 6585)."""
from __future__ import annotations

import http.client

import pytest

from lakesuperior.config import Config
from lakesuperior.http import headers as hdr
from tests.apps import Client

from ..servers import lsup_server
from .conftest import (
    DC_TITLE,
    LDP,
    MEMENTO,
    ROOT,
    TTL,
    graph,
    links,
    post_ttl,
    put_ttl,
)

EBUCORE = "http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#"
MIME = f"<{EBUCORE}hasMimeType>"
FILENAME = f"<{EBUCORE}filename>"
SEE_ALSO = "<http://www.w3.org/2000/01/rdf-schema#seeAlso>"
SPARQL = "application/sparql-update"


@pytest.fixture
def make_client(tmp_path):
    """A client on an app with its own configuration (``Config`` keywords;
    authentication off: every request is the administrator)."""
    apps = []

    def make(**settings):
        from tests.apps import build_app
        settings.setdefault("auth_enabled", False)
        app = build_app(Config(data_dir=str(tmp_path / f"data{len(apps)}"), sync=False,
                                **settings))
        app.testing = True
        app.test_client_class = Client
        apps.append(app)
        return app.test_client(), app.extensions["lakesuperior"].repository

    yield make
    for app in apps:
        app.extensions["lakesuperior"].close()


def _link_set(response) -> set[tuple[str, frozenset[str]]]:
    return {(lk.uri, lk.rel) for lk in links(response)}


def _anchored(response) -> set[tuple[str, frozenset[str]]]:
    """The links of a response that carry an anchor, each naming the written resource."""
    location = response.headers.get("Location")
    out = set()
    for lk in links(response):
        if "anchor" in lk.params:
            assert lk.params["anchor"] == location
            out.add((lk.uri, lk.rel))
    return out


# --- 1. the Link headers of a write are a GET's (Fedora 6) ----------------------------------

@pytest.mark.parametrize("model", [None, "RDFSource", "DirectContainer"])
def test_fedora_3_5_post_201_links_are_the_new_resources(client, model):
    headers = {"Link": f'<{LDP}{model}>; rel="type"'} if model else {}
    if model == "DirectContainer":
        body = f"<> <{LDP}membershipResource> <{ROOT}/> ; <{LDP}hasMemberRelation> {DC_TITLE} ."
    else:
        body = f'<> {DC_TITLE} "x" .'
    r = post_ttl(client, "/rest/", body, **headers)
    assert r.status_code == 201, r.data
    got = client.get(r.headers["Location"])
    assert _link_set(r) == _link_set(got)
    assert not _anchored(r)             # as Fedora 6: no anchor but on describedby
    rels = {rel for _uri, rels in _link_set(r) for rel in rels}
    assert {"type", "timegate", "timemap", "original", "acl"} <= rels
    assert (MEMENTO + "OriginalResource", frozenset({"type"})) in _link_set(r)
    assert (MEMENTO + "TimeGate", frozenset({"type"})) in _link_set(r)


def test_fedora_3_5_post_201_binary_links_describedby(client):
    r = client.post("/rest/", data=b"abc", content_type="text/plain", headers={"Slug": "b"})
    assert r.status_code == 201
    assert _link_set(r) == _link_set(client.get("/rest/b"))
    assert _anchored(r) == {(f"{ROOT}/b/fcr:metadata", frozenset({"describedby"}))}
    assert (LDP + "NonRDFSource", frozenset({"type"})) in _link_set(r)


def test_fedora_3_6_put_201_links_are_a_gets(client):
    r = put_ttl(client, "/rest/new", f'<> {DC_TITLE} "x" .')
    assert r.status_code == 201
    assert not _anchored(r)
    assert _link_set(r) == _link_set(client.get("/rest/new"))
    r = client.put("/rest/bin", data=b"abc", content_type="text/plain")
    assert r.status_code == 201
    assert _link_set(r) == _link_set(client.get("/rest/bin"))
    assert _anchored(r) == {(f"{ROOT}/bin/fcr:metadata", frozenset({"describedby"}))}


def test_fedora_put_patch_204_links_are_a_gets(client):
    """A 204 of PUT or PATCH carries the Link set of a GET of what it wrote:
    the Memento types and relations included, nothing anchored."""
    assert put_ttl(client, "/rest/r", f'<> {DC_TITLE} "x" .').status_code == 201
    r = put_ttl(client, "/rest/r", f'<> {DC_TITLE} "y" .')
    assert r.status_code == 204
    assert _link_set(r) == _link_set(client.get("/rest/r"))
    assert (MEMENTO + "OriginalResource", frozenset({"type"})) in _link_set(r)
    assert (f"{ROOT}/r/fcr:versions", frozenset({"timemap"})) in _link_set(r)
    assert "anchor" not in r.headers["Link"]
    r = client.patch("/rest/r", data=f'INSERT DATA {{ <> {DC_TITLE} "z" }}',
                     content_type=SPARQL)
    assert r.status_code == 204
    assert _link_set(r) == _link_set(client.get("/rest/r"))
    assert client.put("/rest/bin", data=b"abc", content_type="text/plain").status_code == 201
    r = client.put("/rest/bin", data=b"abcd", content_type="text/plain")
    assert r.status_code == 204
    assert _link_set(r) == _link_set(client.get("/rest/bin"))
    assert "anchor" not in r.headers["Link"]
    r = client.patch("/rest/bin/fcr:metadata", content_type=SPARQL,
                     data=f'INSERT DATA {{ <> {DC_TITLE} "d" }}')
    assert r.status_code == 204
    assert _link_set(r) == _link_set(client.get("/rest/bin/fcr:metadata"))
    assert (f"{ROOT}/bin", frozenset({"describes"})) in _link_set(r)



# --- 2. a taken Slug never rewrites the body's links ----------------------------------------

def test_ldp_5_2_3_taken_slug_keeps_links_to_the_slug(client, repo, state):
    assert post_ttl(client, "/rest/", f'<> {DC_TITLE} "first" .', Slug="a").status_code == 201
    body = (f'<> {DC_TITLE} "second" ; {SEE_ALSO} <{ROOT}/a>, <{ROOT}/a#frag>, '
            f'<{ROOT}/a/child> . <#me> {DC_TITLE} "hash" .')
    r = post_ttl(client, "/rest/", body, Slug="a")
    assert r.status_code == 201
    new = r.headers["Location"]
    assert new != f"{ROOT}/a"
    g = graph(client.get(new))
    assert (f"<{new}>", SEE_ALSO, f"<{ROOT}/a>") in g
    assert (f"<{new}>", SEE_ALSO, f"<{ROOT}/a#frag>") in g
    assert (f"<{new}>", SEE_ALSO, f"<{ROOT}/a/child>") in g
    assert (f"<{new}>", DC_TITLE, '"second"') in g
    assert (f"<{new}#me>", DC_TITLE, '"hash"') in g
    assert (f"<{new}>", SEE_ALSO, f"<{new}>") not in g
    assert (f"<{ROOT}/a>", DC_TITLE, '"first"') in graph(client.get("/rest/a"))


def test_ldp_5_2_3_free_slug_relative_and_absolute_agree(client):
    body = f'<> {DC_TITLE} "t" ; {SEE_ALSO} <{ROOT}/s>, <#x>, <sibling> .'
    r = post_ttl(client, "/rest/", body, Slug="s")
    assert r.headers["Location"] == f"{ROOT}/s"
    g = graph(client.get("/rest/s"))
    assert {(f"<{ROOT}/s>", SEE_ALSO, f"<{ROOT}/s>"), (f"<{ROOT}/s>", SEE_ALSO, f"<{ROOT}/s#x>"),
            (f"<{ROOT}/s>", SEE_ALSO, f"<{ROOT}/sibling>"), (f"<{ROOT}/s>", DC_TITLE, '"t"')} <= g


# --- 3. http.require_if_match -----------------------------------------------------------------

def test_ldp_4_2_4_5_require_if_match_428(make_client, state):
    client, repo = make_client(http_require_if_match=True)
    assert put_ttl(client, "/rest/r", f'<> {DC_TITLE} "x" .').status_code == 201   # creation
    assert client.put("/rest/bin", data=b"abc", content_type="text/plain").status_code == 201
    before = state(repo)
    for r in (put_ttl(client, "/rest/r", f'<> {DC_TITLE} "y" .'),
              client.patch("/rest/r", data=f'INSERT DATA {{ <> {DC_TITLE} "z" }}',
                           content_type=SPARQL),
              client.delete("/rest/r"),
              client.put("/rest/bin", data=b"new", content_type="text/plain"),
              client.put("/rest/bin/fcr:metadata", data=f'<> {DC_TITLE} "d" .',
                         content_type=TTL),
              client.patch("/rest/bin/fcr:metadata", content_type=SPARQL,
                           data=f'INSERT DATA {{ <> {DC_TITLE} "d" }}')):
        assert r.status_code == 428, r.data
        assert b"If-Match" in r.data and b"requires" in r.data
        assert any(lk.has_rel(LDP + "constrainedBy") for lk in links(r))
    assert state(repo) == before


def test_ldp_4_2_4_5_require_if_match_with_if_match_writes(make_client):
    client, _repo = make_client(http_require_if_match=True)
    assert put_ttl(client, "/rest/r", f'<> {DC_TITLE} "x" .').status_code == 201
    etag = client.get("/rest/r").headers["ETag"]
    r = put_ttl(client, "/rest/r", f'<> {DC_TITLE} "y" .', **{"If-Match": etag})
    assert r.status_code == 204
    assert put_ttl(client, "/rest/r", f'<> {DC_TITLE} "z" .',
                   **{"If-Match": etag}).status_code == 412      # stale
    etag = client.get("/rest/r").headers["ETag"]
    r = client.patch("/rest/r", data=f'INSERT DATA {{ <> {DC_TITLE} "z" }}',
                     content_type=SPARQL, headers={"If-Match": etag})
    assert r.status_code == 204
    etag = client.get("/rest/r").headers["ETag"]
    assert client.delete("/rest/r", headers={"If-Match": etag}).status_code == 204
    # POST is not affected, nor is a write of what does not exist
    assert post_ttl(client, "/rest/").status_code == 201
    assert client.delete("/rest/missing").status_code == 404


def test_require_if_match_default_off(client):
    assert put_ttl(client, "/rest/r", "").status_code == 201
    assert put_ttl(client, "/rest/r", f'<> {DC_TITLE} "y" .').status_code == 204
    assert client.delete("/rest/r").status_code == 204


# --- 4. referential integrity ---------------------------------------------------------------

def test_referential_integrity_off_by_default(client):
    body = f"<> {SEE_ALSO} <{ROOT}/missing> ."
    r = put_ttl(client, "/rest/r", body)
    assert r.status_code == 201 and "Lakesuperior-Dropped-Links" not in r.headers
    assert (f"<{ROOT}/r>", SEE_ALSO, f"<{ROOT}/missing>") in graph(client.get("/rest/r"))


def test_referential_integrity_lenient_names_what_it_dropped(make_client):
    client, _repo = make_client(referential_integrity="lenient")
    assert put_ttl(client, "/rest/here", "").status_code == 201
    body = (f"<> {SEE_ALSO} <{ROOT}/gone1>, <{ROOT}/gone2>, <{ROOT}/here> ; "
            f"{DC_TITLE} <{ROOT}/gone1> .")
    r = put_ttl(client, "/rest/r", body)
    assert r.status_code == 201
    dropped = hdr.parse_link(r.headers["Lakesuperior-Dropped-Links"])
    assert [lk.uri for lk in dropped] == [f"{ROOT}/gone1", f"{ROOT}/gone2"]
    assert r.headers["Lakesuperior-Dropped-Triples"] == "3"
    g = graph(client.get("/rest/r"))
    assert (f"<{ROOT}/r>", SEE_ALSO, f"<{ROOT}/here>") in g
    assert not any(o.startswith(f"<{ROOT}/gone") for _s, _p, o in g)
    # on a replace (204), a POST and a PATCH too
    r = put_ttl(client, "/rest/r", f"<> {SEE_ALSO} <{ROOT}/gone3> .")
    assert r.status_code == 204 and r.headers["Lakesuperior-Dropped-Links"] == f"<{ROOT}/gone3>"
    r = post_ttl(client, "/rest/", f"<> {SEE_ALSO} <{ROOT}/gone4> .")
    assert r.status_code == 201 and r.headers["Lakesuperior-Dropped-Links"] == f"<{ROOT}/gone4>"
    r = client.patch("/rest/r", content_type=SPARQL,
                     data=f"INSERT DATA {{ <> {SEE_ALSO} <{ROOT}/gone5> }}")
    assert r.status_code == 204 and r.headers["Lakesuperior-Dropped-Links"] == f"<{ROOT}/gone5>"
    r = put_ttl(client, "/rest/r", f"<> {SEE_ALSO} <{ROOT}/here> .")
    assert r.status_code == 204 and "Lakesuperior-Dropped-Links" not in r.headers


def test_referential_integrity_strict_409_names_every_target(make_client, state):
    client, repo = make_client(referential_integrity="strict")
    assert put_ttl(client, "/rest/r", f'<> {DC_TITLE} "x" .').status_code == 201
    before = state(repo)
    targets = [f"{ROOT}/gone{i}" for i in range(8)]
    body = f"<> {SEE_ALSO} " + ", ".join(f"<{t}>" for t in targets) + " ."
    for r in (put_ttl(client, "/rest/r", body), post_ttl(client, "/rest/", body),
              client.patch("/rest/r", content_type=SPARQL,
                           data=f"INSERT DATA {{ <> {SEE_ALSO} <{targets[0]}> }}")):
        assert r.status_code == 409, r.data
        assert targets[0].encode() in r.data and b"do not exist" in r.data
        assert any(lk.uri.endswith("#referential-integrity") for lk in links(r))
    assert all(t.encode() in put_ttl(client, "/rest/r", body).data for t in targets)
    assert state(repo) == before


# --- 5. binary descriptions (Fedora API 3.2, 3.7) -----------------------------------------------

def _binary(client, **headers):
    r = client.put("/rest/bin", data=b"hello", content_type="text/plain",
                   headers={"Content-Disposition": 'attachment; filename="a.txt"', **headers})
    assert r.status_code == 201
    return r


def test_fedora_3_7_put_description_sets_mimetype_and_filename(client):
    _binary(client)
    r = client.put("/rest/bin/fcr:metadata", content_type=TTL,
                   data=f'<> {MIME} "image/png" ; {FILENAME} "b.png" ; {DC_TITLE} "t" .')
    assert r.status_code == 204, r.data
    got = client.get("/rest/bin")
    assert got.headers["Content-Type"] == "image/png"
    assert hdr.parse_content_disposition(got.headers["Content-Disposition"]) == "b.png"
    assert got.data == b"hello"
    g = graph(client.get("/rest/bin/fcr:metadata"))
    assert (f"<{ROOT}/bin>", MIME, '"image/png"') in g
    assert (f"<{ROOT}/bin>", FILENAME, '"b.png"') in g
    assert (f"<{ROOT}/bin>", FILENAME, '"a.txt"') not in g


def test_fedora_3_7_put_description_without_them_keeps_them(client):
    """Fedora 6 (ReplacePropertiesServiceImpl): a value the description does not
    give keeps the binary's current one."""
    _binary(client)
    r = client.put("/rest/bin/fcr:metadata", content_type=TTL, data=f'<> {DC_TITLE} "t" .')
    assert r.status_code == 204
    got = client.get("/rest/bin")
    assert got.headers["Content-Type"] == "text/plain"
    assert hdr.parse_content_disposition(got.headers["Content-Disposition"]) == "a.txt"
    g = graph(client.get("/rest/bin/fcr:metadata"))
    assert (f"<{ROOT}/bin>", DC_TITLE, '"t"') in g
    assert (f"<{ROOT}/bin>", FILENAME, '"a.txt"') in g


def test_fedora_3_7_description_round_trip(client):
    _binary(client)
    body = client.get("/rest/bin/fcr:metadata").data.replace(b"text/plain", b"text/csv")
    r = client.put("/rest/bin/fcr:metadata", data=body, content_type=TTL)
    assert r.status_code == 204, r.data
    assert client.get("/rest/bin").headers["Content-Type"] == "text/csv"


def test_fedora_3_7_patch_description_changes_only_what_it_touches(client):
    _binary(client)
    client.patch("/rest/bin/fcr:metadata", content_type=SPARQL,
                 data=f'INSERT DATA {{ <> {DC_TITLE} "kept" }}')
    etag = client.get("/rest/bin").headers["ETag"]
    r = client.patch("/rest/bin/fcr:metadata", content_type=SPARQL,
                     data=f'DELETE {{ <> {MIME} ?m }} INSERT {{ <> {MIME} "text/csv" }} '
                          f'WHERE {{ <> {MIME} ?m }}')
    assert r.status_code == 204, r.data
    got = client.get("/rest/bin")
    assert got.headers["Content-Type"] == "text/csv" and got.headers["ETag"] != etag
    assert hdr.parse_content_disposition(got.headers["Content-Disposition"]) == "a.txt"
    g = graph(client.get("/rest/bin/fcr:metadata"))
    assert (f"<{ROOT}/bin>", DC_TITLE, '"kept"') in g
    assert (f"<{ROOT}/bin>", MIME, '"text/plain"') not in g
    r = client.patch("/rest/bin/fcr:metadata", content_type=SPARQL,
                     data=f'INSERT DATA {{ <> {FILENAME} "c.csv" }}')
    assert r.status_code == 204
    got = client.get("/rest/bin")
    assert hdr.parse_content_disposition(got.headers["Content-Disposition"]) == "c.csv"
    assert got.headers["Content-Type"] == "text/csv"
    g = graph(client.get("/rest/bin/fcr:metadata"))
    assert [t for t in g if t[1] == FILENAME] == [(f"<{ROOT}/bin>", FILENAME, '"c.csv"')]
    # deleting without a new value changes nothing (Fedora 6 keeps them)
    r = client.patch("/rest/bin/fcr:metadata", content_type=SPARQL,
                     data=f'DELETE WHERE {{ <> {MIME} ?m . <> {FILENAME} ?f }}')
    assert r.status_code == 204
    got = client.get("/rest/bin")
    assert got.headers["Content-Type"] == "text/csv"
    assert hdr.parse_content_disposition(got.headers["Content-Disposition"]) == "c.csv"


@pytest.mark.parametrize("body,why", [
    (f'<> {MIME} "not a media type" .', b"Invalid ebucore:hasMimeType"),
    (f'<> {MIME} "text/plain\\r\\nX-Injected: 1" .', b"Invalid ebucore:hasMimeType"),
    (f'<> {MIME} "" .', b"Invalid ebucore:hasMimeType"),
    (f'<> {MIME} "text/html", "text/csv" .', b"one ebucore:hasMimeType"),
    (f"<> {MIME} <http://example.org/type> .", b"plain string literal"),
    (f'<> {MIME} "text/plain"@en .', b"plain string literal"),
    (f'<> {FILENAME} "a", "b" .', b"one ebucore:filename"),
    (f"<> {FILENAME} 3 .", b"plain string literal"),
])
def test_fedora_3_7_bad_description_values_400(client, repo, state, body, why):
    _binary(client)
    before = state(repo)
    r = client.put("/rest/bin/fcr:metadata", data=body, content_type=TTL)
    assert r.status_code == 400, r.data
    assert why in r.data
    assert any(lk.uri.endswith("#media-types") for lk in links(r))
    assert state(repo) == before
    r = client.patch("/rest/bin/fcr:metadata", data=f"INSERT DATA {{ {body} }}",
                     content_type=SPARQL)
    assert r.status_code == 400, r.data
    assert state(repo) == before


# --- over a real server ---------------------------------------------------------------------------

def _request(port: int, method: str, path: str, body: bytes = b"",
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def test_fedora_writes_over_gunicorn(tmp_path):
    """``LSUP_HTTP_REQUIRE_IF_MATCH`` and ``LSUP_REFERENTIAL_INTEGRITY`` reach the
    workers; a description sets what the binary is served as; a 201 has its links."""
    env = {"LSUP_HTTP_REQUIRE_IF_MATCH": "true", "LSUP_REFERENTIAL_INTEGRITY": "lenient",
           "LSUP_SERVER_WORKERS": "1", "LSUP_STORE_SYNC": "false"}
    with lsup_server(tmp_path, env) as (_proc, port, _log):
        status, headers, _ = _request(port, "PUT", "/rest/bin", b"hello",
                                      {"Content-Type": "text/plain"})
        assert status == 201
        assert "describedby" in headers["link"] and "timemap" in headers["link"]
        meta = f'<> {MIME} "text/csv" ; {FILENAME} "d.csv" .'.encode()
        status, _, body = _request(port, "PUT", "/rest/bin/fcr:metadata", meta,
                                   {"Content-Type": TTL})
        assert status == 428 and b"If-Match" in body
        etag = _request(port, "HEAD", "/rest/bin/fcr:metadata")[1]["etag"]
        status, _, body = _request(port, "PUT", "/rest/bin/fcr:metadata", meta,
                                   {"Content-Type": TTL, "If-Match": etag})
        assert status == 204, body
        status, headers, body = _request(port, "GET", "/rest/bin")
        assert (status, headers["content-type"], body) == (200, "text/csv", b"hello")
        assert hdr.parse_content_disposition(headers["content-disposition"]) == "d.csv"
        status, headers, _ = _request(port, "POST", "/rest/",
                                      f"<> {SEE_ALSO} <http://127.0.0.1:{port}/rest/gone> ."
                                      .encode(), {"Content-Type": TTL})
        assert status == 201
        assert headers["lakesuperior-dropped-links"] == f"<http://127.0.0.1:{port}/rest/gone>"
