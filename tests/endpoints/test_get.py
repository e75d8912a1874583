"""GET, HEAD and OPTIONS on RDF sources and containers."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.http import headers as hdr

from .conftest import (
    DC_TITLE,
    FCREPO,
    LDP,
    NT,
    ROOT,
    TTL,
    graph,
    link_targets,
    post_ttl,
    put_ttl,
    types,
)

CONTAINER_TYPES = {LDP + "Resource", LDP + "RDFSource", LDP + "Container",
                   LDP + "BasicContainer", "http://mementoweb.org/ns#OriginalResource",
                   "http://mementoweb.org/ns#TimeGate"}


def test_root_container(client):
    r = client.get("/rest/")
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "text/turtle; charset=utf-8"
    assert types(r) == CONTAINER_TYPES
    g = graph(r)
    assert (f"<{ROOT}/>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
            f"<{FCREPO}RepositoryRoot>") in g
    assert r.headers["Allow"] == "GET, HEAD, OPTIONS, POST, PUT, PATCH"
    assert client.get("/rest").status_code == 200
    assert client.get("/ldp/").status_code == 200


def test_app_root_redirects(client):
    r = client.get("/")
    assert r.status_code == 302 and r.headers["Location"].endswith("/rest/")


def test_get_resource_headers(client):
    assert put_ttl(client, "/rest/a", f'<> {DC_TITLE} "A" .').status_code == 201
    r = client.get("/rest/a")
    assert r.status_code == 200
    assert (f"<{ROOT}/a>", DC_TITLE, '"A"') in graph(r)
    assert hdr.parse_etags(r.headers["ETag"])[0][1] is True  # weak for RDF
    assert hdr.parse_http_date(r.headers["Last-Modified"]) is not None
    assert types(r) == CONTAINER_TYPES
    assert link_targets(r, "timegate") == [f"{ROOT}/a"]
    assert link_targets(r, "original") == [f"{ROOT}/a"]
    assert link_targets(r, "timemap") == [f"{ROOT}/a/fcr:versions"]
    assert link_targets(r, LDP + "constrainedBy") == ["http://localhost/constraints"]
    assert "accept-datetime" in r.headers["Vary"].lower()
    assert r.headers["Accept-Post"].startswith("text/turtle")
    assert r.headers["Accept-Patch"] == "application/sparql-update"
    assert "DELETE" in r.headers["Allow"]


def test_rdf_source_is_not_a_container(client):
    r = put_ttl(client, "/rest/s", "", Link=f'<{LDP}RDFSource>; rel="type"')
    assert r.status_code == 201
    r = client.get("/rest/s")
    assert types(r) & {LDP + "Container", LDP + "BasicContainer"} == set()
    assert LDP + "RDFSource" in types(r)
    assert "POST" not in r.headers["Allow"] and "Accept-Post" not in r.headers
    r = client.options("/rest/s")
    assert "POST" not in r.headers["Allow"]


def test_head_same_headers_no_body(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "A" .')
    g, h = client.get("/rest/a"), client.head("/rest/a")
    assert h.status_code == 200 and h.data == b""
    for name in ("ETag", "Last-Modified", "Link", "Allow", "Content-Type", "Vary",
                 "Accept-Post", "Accept-Patch"):
        assert h.headers[name] == g.headers[name]
    assert h.headers.get("Content-Length") in (None, str(len(g.data)))


def test_options(client):
    put_ttl(client, "/rest/a")
    r = client.options("/rest/a")
    assert r.status_code == 200 and r.data == b""
    assert r.headers["Allow"] == "GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE"
    assert r.headers["Accept-Post"] and r.headers["Accept-Patch"] == "application/sparql-update"
    assert LDP + "BasicContainer" in types(r)


def test_options_missing_is_404(client):
    assert client.options("/rest/nothing").status_code == 404


@pytest.mark.parametrize("accept, expected", [
    (None, TTL), ("*/*", TTL), ("text/*", TTL), (TTL, TTL),
    ("text/turtle;q=0.9,application/json;q=0.8", TTL),
    ("application/ld+json", "application/ld+json"), (NT, NT),
    ("application/rdf+xml", "application/rdf+xml"),
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"),
    ("application/n-triples;q=1, text/turtle;q=0.5", NT),
])
def test_content_negotiation(client, accept, expected):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "A" .')
    r = client.get("/rest/a", headers={"Accept": accept} if accept else {})
    assert r.status_code == 200
    assert rdfio.normalize_media_type(r.headers["Content-Type"]) == expected
    if expected != "text/html":
        assert (f"<{ROOT}/a>", DC_TITLE, '"A"') in graph(r)


def test_not_acceptable(client):
    r = client.get("/rest/", headers={"Accept": "image/png"})
    assert r.status_code == 406
    assert "text/turtle" in r.get_data(as_text=True)


def test_json_ld_round_trip(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "A"@en .')
    r = client.get("/rest/a", headers={"Accept": "application/ld+json"})
    back = client.put("/rest/b", data=r.data.replace(b"/rest/a", b"/rest/b"),
                      content_type="application/ld+json")
    assert back.status_code == 201, back.data
    assert (f"<{ROOT}/b>", DC_TITLE, '"A"@en') in graph(client.get("/rest/b"))


def _children(client, path="/rest/c", prefer=None):
    r = client.get(path, headers={"Prefer": prefer} if prefer else {})
    assert r.status_code == 200
    return r, {o for s, p, o in graph(r) if p == f"<{LDP}contains>"}


def test_containment(client):
    put_ttl(client, "/rest/c")
    for i in range(3):
        assert post_ttl(client, "/rest/c", Slug=f"k{i}").status_code == 201
    r, kids = _children(client)
    assert kids == {f"<{ROOT}/c/k{i}>" for i in range(3)}
    assert "Preference-Applied" not in r.headers


@pytest.mark.parametrize("prefer, contained", [
    (f'return=representation; include="{LDP}PreferContainment"', True),
    (f'return=representation; omit="{LDP}PreferContainment"', False),
    (f'return=representation; include="{LDP}PreferMinimalContainer"', False),
    ("return=minimal", False),
    ("return=representation", True),
])
def test_prefer_containment(client, prefer, contained):
    put_ttl(client, "/rest/c")
    post_ttl(client, "/rest/c")
    r, kids = _children(client, prefer=prefer)
    assert bool(kids) is contained
    applied = hdr.parse_prefer(r.headers.get("Preference-Applied", ""))
    assert applied.return_ == prefer.split(";")[0].split("=")[1]


def test_prefer_omit_server_managed(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "A" .')
    r = client.get("/rest/a", headers={
        "Prefer": 'return=representation; omit="http://fedora.info/definitions/fcrepo#ServerManaged"'})
    g = graph(r)
    assert (f"<{ROOT}/a>", DC_TITLE, '"A"') in g
    assert not [t for t in g if t[1].startswith(f"<{FCREPO}")]
    assert r.headers["Preference-Applied"] == "return=representation"


def test_prefer_inbound_references(client):
    put_ttl(client, "/rest/a")
    put_ttl(client, "/rest/b", f"<> <http://purl.org/dc/terms/isPartOf> <{ROOT}/a> .")
    inbound = (f"<{ROOT}/b>", "<http://purl.org/dc/terms/isPartOf>", f"<{ROOT}/a>")
    assert inbound not in graph(client.get("/rest/a"))
    r = client.get("/rest/a", headers={"Prefer": 'return=representation; include='
                                       '"http://fedora.info/definitions/fcrepo#PreferInboundReferences"'})
    assert inbound in graph(r)
    assert "return=representation" in r.headers["Preference-Applied"]


def test_prefer_contained_descriptions(client):
    put_ttl(client, "/rest/c")
    put_ttl(client, "/rest/c/k", '<> <http://xmlns.com/foaf/0.1/name> "Pythagoras" .')
    r = client.get("/rest/c", headers={
        "Prefer": 'return=representation; include="http://www.w3.org/ns/oa#PreferContainedDescriptions"'})
    assert (f"<{ROOT}/c/k>", "<http://xmlns.com/foaf/0.1/name>", '"Pythagoras"') in graph(r)


def _direct(client, hmr="ldp:member"):
    put_ttl(client, "/rest/mr")
    body = (f"@prefix ldp: <{LDP}> . <> ldp:membershipResource <{ROOT}/mr> ; "
            f"ldp:hasMemberRelation {hmr} .")
    r = put_ttl(client, "/rest/dc", body, Link=f'<{LDP}DirectContainer>; rel="type"')
    assert r.status_code == 201, r.data
    assert post_ttl(client, "/rest/dc", Slug="m1").status_code == 201


def test_membership_and_prefer(client):
    _direct(client)
    member = (f"<{ROOT}/mr>", f"<{LDP}member>", f"<{ROOT}/dc/m1>")
    assert member in graph(client.get("/rest/mr"))
    omit = f'return=representation; omit="{LDP}PreferMembership"'
    assert member not in graph(client.get("/rest/mr", headers={"Prefer": omit}))
    minimal = f'return=representation; include="{LDP}PreferMinimalContainer"'
    assert member not in graph(client.get("/rest/mr", headers={"Prefer": minimal}))
    both = (f'return=representation; include="{LDP}PreferMinimalContainer '
            f'{LDP}PreferMembership"')
    assert member in graph(client.get("/rest/mr", headers={"Prefer": both}))
    dc = client.get("/rest/dc")
    assert LDP + "DirectContainer" in types(dc)
    assert client.delete("/rest/dc/m1").status_code == 204
    assert member not in graph(client.get("/rest/mr"))


def test_contains_cannot_be_membership_predicate(client, repo, state):
    put_ttl(client, "/rest/mr")
    before = state(repo)
    body = (f"@prefix ldp: <{LDP}> . <> ldp:membershipResource <{ROOT}/mr> ; "
            "ldp:hasMemberRelation ldp:contains .")
    r = post_ttl(client, "/rest/", body, Link=f'<{LDP}DirectContainer>; rel="type"')
    assert r.status_code == 409
    assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before


def test_conditional_get(client):
    put_ttl(client, "/rest/a")
    r = client.get("/rest/a")
    etag, modified = r.headers["ETag"], r.headers["Last-Modified"]
    r2 = client.get("/rest/a", headers={"If-None-Match": etag})
    assert r2.status_code == 304 and r2.data == b"" and r2.headers["ETag"] == etag
    assert client.get("/rest/a", headers={"If-None-Match": '"other"'}).status_code == 200
    assert client.get("/rest/a", headers={"If-Modified-Since": modified}).status_code == 304
    assert client.get("/rest/a", headers={
        "If-Modified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"}).status_code == 200
    assert client.get("/rest/a", headers={"If-Match": '"nope"'}).status_code == 412
    assert client.get("/rest/a", headers={"If-Match": etag}).status_code == 200
    assert client.head("/rest/a", headers={"If-None-Match": "*"}).status_code == 304
    assert client.get("/rest/a", headers={
        "If-Unmodified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"}).status_code == 412


def test_etag_changes_with_representation(client):
    put_ttl(client, "/rest/c")
    e1 = client.get("/rest/c").headers["ETag"]
    post_ttl(client, "/rest/c")
    e2 = client.get("/rest/c").headers["ETag"]
    put_ttl(client, "/rest/c", f'<> {DC_TITLE} "x" .')
    e3 = client.get("/rest/c").headers["ETag"]
    assert len({e1, e2, e3}) == 3


def test_public_uris_follow_host_and_prefix(client):
    put_ttl(client, "/rest/a", "<> <http://purl.org/dc/terms/relation> <#frag> .")
    r = client.get("/ldp/a", base_url="http://example.org:8080")
    g = graph(r, "http://example.org:8080/ldp/")
    assert ("<http://example.org:8080/ldp/a>", "<http://purl.org/dc/terms/relation>",
            "<http://example.org:8080/ldp/a#frag>") in g
    assert link_targets(r, "timegate") == ["http://example.org:8080/ldp/a"]
    # Links written through one base are read back through another.
    put_ttl(client, "/rest/b", "<> <http://purl.org/dc/terms/relation> "
                               "<http://localhost/rest/a> .")
    g = graph(client.get("/ldp/b", base_url="https://other.example"), "https://other.example/ldp/")
    assert ("<https://other.example/ldp/b>", "<http://purl.org/dc/terms/relation>",
            "<https://other.example/ldp/a>") in g


def test_missing_is_404(client):
    r = client.get("/rest/nothing/here")
    assert r.status_code == 404
    assert "/nothing/here" in r.get_data(as_text=True)
    assert client.head("/rest/nothing").status_code == 404


def test_fcr_metadata_of_rdf_source_is_404(client):
    put_ttl(client, "/rest/a")
    assert client.get("/rest/a/fcr:metadata").status_code == 404


def test_unknown_fcr_endpoint_is_404(client):
    put_ttl(client, "/rest/a")
    assert client.get("/rest/a/fcr:nope").status_code == 404


def test_percent_encoded_uids(client):
    r = put_ttl(client, "/rest/caf%C3%A9", f'<> {DC_TITLE} "x" .')
    assert r.status_code == 201
    assert r.headers["Location"] == f"{ROOT}/caf%C3%A9"
    assert (f"<{ROOT}/caf%C3%A9>", DC_TITLE, '"x"') in graph(client.get("/rest/café"))
    assert client.get("/rest/caf%c3%a9").status_code == 200
    r = put_ttl(client, "/rest/a%20b")
    assert r.status_code == 201 and r.headers["Location"] == f"{ROOT}/a%20b"
    assert client.get("/rest/a%20b").status_code == 200


def test_etag_changes_with_membership(client):
    _direct(client)
    e1 = client.get("/rest/mr").headers["ETag"]
    post_ttl(client, "/rest/dc", Slug="m2")
    e2 = client.get("/rest/mr").headers["ETag"]
    assert e1 != e2
    r = put_ttl(client, "/rest/mr", "", **{"If-Match": e2})
    assert r.status_code == 204, r.data


def test_if_modified_since_after_membership_change(make_app, app_config, clock):
    """A membership change moves the membership resource's Last-Modified."""
    client = make_app(clock=clock, **app_config).test_client()
    _direct(client)
    r1 = client.get("/rest/mr")
    modified = r1.headers["Last-Modified"]
    assert client.get("/rest/mr", headers={"If-Modified-Since": modified}).status_code == 304
    clock.advance()                       # HTTP dates have one-second resolution
    post_ttl(client, "/rest/dc", Slug="m2")
    r2 = client.get("/rest/mr", headers={"If-Modified-Since": modified})
    assert r2.status_code == 200
    assert r2.headers["Last-Modified"] != modified and r2.headers["ETag"] != r1.headers["ETag"]
    assert (f"<{ROOT}/mr>", f"<{LDP}member>", f"<{ROOT}/dc/m2>") in graph(r2)


@pytest.mark.parametrize("prefer", [None, "return=minimal",
                                    f'return=representation; omit="{LDP}PreferContainment"',
                                    "return=representation; include="
                                    '"http://fedora.info/definitions/fcrepo#PreferInboundReferences"'])
def test_head_matches_get_for_containers_and_prefer(client, prefer):
    put_ttl(client, "/rest/c", f'<> {DC_TITLE} "C" .')
    post_ttl(client, "/rest/c", Slug="x")
    put_ttl(client, "/rest/other", f"<> <http://purl.org/dc/terms/relation> <{ROOT}/c> .")
    headers = {"Prefer": prefer} if prefer else {}
    g, h = client.get("/rest/c", headers=headers), client.head("/rest/c", headers=headers)
    assert h.status_code == g.status_code == 200
    for name in ("ETag", "Last-Modified", "Link", "Allow", "Vary", "Preference-Applied"):
        assert h.headers.get(name) == g.headers.get(name), name
    assert client.get("/rest/c", headers={"If-None-Match": g.headers["ETag"],
                                          **headers}).status_code == 304


def test_etag_follows_prefer_and_versions(make_app, app_config, clock):
    client = make_app(clock=clock, **app_config).test_client()
    put_ttl(client, "/rest/c")
    post_ttl(client, "/rest/c", Slug="x")
    full = client.get("/rest/c").headers["ETag"]
    minimal = client.get("/rest/c", headers={"Prefer": "return=minimal"}).headers["ETag"]
    assert full != minimal
    clock.advance()                        # versioning.auto made a version this second
    assert client.post("/rest/c/fcr:versions").status_code == 201
    assert client.get("/rest/c").headers["ETag"] != full     # the HTML view lists versions


def test_head_of_binary_with_want_digest(client):
    import hashlib
    client.put("/rest/b", data=b"bytes", content_type="text/plain")
    g = client.get("/rest/b", headers={"Want-Digest": "sha-256"})
    h = client.head("/rest/b", headers={"Want-Digest": "sha-256"})
    for name in ("ETag", "Last-Modified", "Link", "Content-Type", "Digest", "Content-Length"):
        assert h.headers.get(name) == g.headers.get(name), name
    assert hashlib.sha256(b"bytes").hexdigest() in "".join(
        f"{b:02x}" for b in __import__("base64").b64decode(h.headers["Digest"].split("=", 1)[1]))
