"""Content negotiation over HTTP (RFC 7231 section 5.3.2, LDP 4.3.2.1, Fedora API 3.1):
``Accept`` with parameters and q-values on every RDF representation, JSON-LD in
Fedora's three profiles, 400 for a malformed ``Accept`` and 406 for none served."""
from __future__ import annotations

import http.client
import json

import pytest
import rdflib
from rdflib.compare import isomorphic

from lakesuperior import rdfio

from ..servers import lsup_server
from .conftest import LDP, ROOT, TTL, graph, link_targets, post_ttl, put_ttl

JSONLD = "application/ld+json"
COMPACTED = "http://www.w3.org/ns/json-ld#compacted"
EXPANDED = "http://www.w3.org/ns/json-ld#expanded"
FLATTENED = "http://www.w3.org/ns/json-ld#flattened"
BODY = """<> <http://purl.org/dc/terms/title> "Café"@fr, "plain" ;
    <http://purl.org/dc/terms/extent> 12 ;
    <http://purl.org/dc/terms/relation> [ <http://purl.org/dc/terms/title> "inner" ] ;
    a <http://ex.org/Thing> ."""


@pytest.fixture
def seeded(client, repo, state):
    assert put_ttl(client, "/rest/c", BODY).status_code == 201
    assert post_ttl(client, "/rest/c", "", Slug="k").status_code == 201
    r = client.post("/rest/c", data=b"content", content_type="text/plain",
                    headers={"Slug": "bin"})
    assert r.status_code == 201
    assert client.post("/rest/c/fcr:versions").status_code == 201
    return state(repo)


def _rdflib(response) -> rdflib.Graph:
    return rdfio.triples_to_graph(graph(response))


def _get(client, path: str, accept: str):
    return client.get(path, headers={"Accept": accept})


# --- Accept: parameters, q-values, wildcards ---------------------------------------------

@pytest.mark.parametrize("accept", [
    "text/turtle;charset=utf-8", "text/turtle; charset=UTF-8", 'text/turtle;charset="utf-8"',
    "text/turtle;q=0.5;charset=utf-8",  # accept-ext after q: ignored
])
def test_rfc7231_5_3_2_parameters_are_matched(client, seeded, accept):
    r = _get(client, "/rest/c", accept)
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"] == "text/turtle; charset=utf-8"


def test_rfc7231_5_3_2_a_charset_not_served_is_not_acceptable(client, seeded):
    r = _get(client, "/rest/c", "text/turtle;charset=iso-8859-1")
    assert r.status_code == 406
    text = r.get_data(as_text=True)
    for offered in ("text/turtle", "application/n-triples", "application/rdf+xml",
                    f'application/ld+json; profile="{COMPACTED}"', "text/html"):
        assert offered in text, (offered, text)


@pytest.mark.parametrize("accept, served", [
    ("text/turtle;q=0, */*", JSONLD),                           # q=0 excludes
    ("text/turtle;q=0, text/*", "text/html"),
    ("*/*, application/n-triples", "application/n-triples"),      # exact beats */*
    ("application/*, application/n-triples", "application/n-triples"),  # exact beats type/*
    ("*/*;q=0.9, application/*;q=0.9, text/html;q=0.9", "text/html"),
    ("text/*, */*", "text/turtle"),                               # type/* beats */*
    ("application/*", JSONLD),                                   # first offered among equals
    ("application/n-triples;q=0.4, application/rdf+xml;q=0.6", "application/rdf+xml"),
    ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"),
    (", ,text/turtle,", "text/turtle"),                          # empty list elements
])
def test_rfc7231_5_3_2_ranking(client, seeded, accept, served):
    r = _get(client, "/rest/c", accept)
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"].split(";")[0] == served
    assert "Accept" in r.headers["Vary"]


@pytest.mark.parametrize("accept, says", [
    ("text/turtle;q=2", "q=2 is not a q-value"),
    ("text/turtle;q=", "neither a token nor a quoted string"),
    ("turtle", "'turtle' is not a media range"),
    ("*/turtle", "wildcard type needs a wildcard subtype"),
    ("text/turtle;charset", "has no '='"),
    ('text/turtle;charset="utf-8', "neither a token nor a quoted string"),
    ("text/turtle, application/ld+json;q=0.x", "q=0.x"),
])
@pytest.mark.parametrize("path", ["/rest/c", "/rest/c/bin/fcr:metadata", "/rest/c/fcr:versions"])
def test_rfc7231_5_3_2_malformed_accept_is_400(client, repo, state, seeded, path, accept, says):
    """Malformed Accept: 400 saying why (as Fedora's Jersey answers), not a guess."""
    r = _get(client, path, accept)
    text = r.get_data(as_text=True)
    assert r.status_code == 400, text
    assert "Malformed Accept header" in text and says in text
    assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == seeded


def test_rfc7231_5_3_2_malformed_accept_on_a_binary_is_ignored(client, seeded):
    """A binary is not negotiated: Accept does not apply to it."""
    r = _get(client, "/rest/c/bin", "turtle;;q=x")
    assert r.status_code == 200 and r.data == b"content"


@pytest.mark.parametrize("path, accept", [
    ("/rest/c", "image/png"),
    ("/rest/c", "*/*;q=0"),
    ("/rest/c/bin/fcr:metadata", "text/plain"),
    ("/rest/c/fcr:versions", "application/pdf"),
])
def test_rfc7231_6_5_6_not_acceptable_lists_what_is_offered(client, repo, state, seeded,
                                                            path, accept):
    r = _get(client, path, accept)
    text = r.get_data(as_text=True)
    assert r.status_code == 406
    assert "None of the media types in Accept can be served" in text
    assert "text/turtle" in text and "application/n-triples" in text
    assert state(repo) == seeded


# --- the same negotiation on descriptions, mementos, TimeMaps --------------------------------

def _memento(client, path: str) -> str:
    r = client.get(path + "/fcr:versions", headers={"Accept": "application/link-format"})
    assert r.status_code == 200
    return [line.split(">")[0].lstrip("<") for line in r.get_data(as_text=True).splitlines()
            if 'rel="memento"' in line][-1]


@pytest.mark.parametrize("accept, served", [
    ("text/turtle;charset=utf-8", "text/turtle"),
    (f'application/ld+json;profile="{EXPANDED}"', JSONLD),
    ("application/n-triples;q=1, */*;q=0.1", "application/n-triples"),
])
def test_ldp_4_3_2_1_description_and_memento_negotiate(client, seeded, accept, served):
    memento = _memento(client, ROOT + "/c")
    for path in ("/rest/c/bin/fcr:metadata", memento):
        r = _get(client, path, accept)
        assert r.status_code == 200, (path, r.data)
        assert r.headers["Content-Type"].split(";")[0] == served
        assert graph(r)


@pytest.mark.parametrize("accept, served", [
    ("application/link-format", "application/link-format"),
    ("application/link-format;charset=utf-8", "application/link-format"),
    ("text/turtle;q=0.5, application/link-format", "application/link-format"),
    (f'application/ld+json; profile="{FLATTENED}"', JSONLD),
    ("*/*", "text/turtle"),
])
def test_rfc7089_5_timemap_negotiates(client, seeded, accept, served):
    r = _get(client, "/rest/c/fcr:versions", accept)
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"].split(";")[0] == served
    body = r.get_data(as_text=True)
    if served == "application/link-format":
        assert 'rel="original timegate"' in body
    else:
        assert (f"<{ROOT}/c/fcr:versions>", f"<{LDP}contains>") in \
            {(s, p) for s, p, _ in graph(r)}


# --- JSON-LD profiles (Fedora API 3.1, JSON-LD 1.1 section 9.2) ------------------------------

@pytest.mark.parametrize("accept, profile", [
    (JSONLD, COMPACTED),                                        # compacted is the default
    (f'{JSONLD}; profile="{COMPACTED}"', COMPACTED),
    (f'{JSONLD}; profile="{EXPANDED}"', EXPANDED),
    (f'{JSONLD};profile="{FLATTENED}"', FLATTENED),
    (f'{JSONLD}; profile="http://example.org/unknown"', COMPACTED),  # unknown: default
    (f'{JSONLD}; profile="http://example.org/unknown {EXPANDED}"', EXPANDED),  # a list
    (f'{JSONLD}; profile="{COMPACTED}";q=0.5, {JSONLD}; profile="{FLATTENED}"', FLATTENED),
])
def test_fedora_3_1_json_ld_profiles(client, seeded, accept, profile):
    r = _get(client, "/rest/c", accept)
    assert r.status_code == 200, r.data
    # the profile served is named only to a client that asked for a profile
    asked = "profile=" in accept
    assert r.headers["Content-Type"] == (f'{JSONLD}; profile="{profile}"' if asked else JSONLD)
    doc = json.loads(r.data)
    turtle = _get(client, "/rest/c", TTL)
    assert isomorphic(_rdflib(r), _rdflib(turtle))        # the same graph as Turtle
    # rdflib's JSON-LD parser reads it the same (but writes xsd:dateTime values its own way)
    as_rdflib = rdfio.parse_rdflib(r.data, JSONLD, ROOT + "/c")
    assert isomorphic(rdfio.triples_to_graph(t for t in as_rdflib if "#dateTime" not in t[2]),
                      rdfio.triples_to_graph(t for t in graph(turtle) if "#dateTime" not in t[2]))
    if profile == EXPANDED:
        assert isinstance(doc, list) and "@context" not in json.dumps(doc)
        node = next(n for n in doc if n["@id"] == ROOT + "/c")
        assert f"{LDP}Container" in node["@type"]
        assert {"@value": "Café", "@language": "fr"} in \
            node["http://purl.org/dc/terms/title"]
    else:
        context = doc["@context"]
        assert isinstance(context, dict)                       # never a URL to fetch
        assert context["ldp"] == LDP and context["dcterms"] == "http://purl.org/dc/terms/"
        nodes = doc["@graph"] if "@graph" in doc else [doc]
        node = next(n for n in nodes if n["@id"] == ROOT + "/c")
        assert "ldp:Container" in node["@type"] and "dcterms:title" in node
        assert {"@id": ROOT + "/c/k"} in node["ldp:contains"] or \
            node["ldp:contains"] == {"@id": ROOT + "/c/k"}
        if profile == FLATTENED:
            assert "@graph" in doc
            ids = [n["@id"] for n in doc["@graph"]]
            assert ids == sorted(ids)


def test_fedora_3_1_json_ld_of_one_node_is_compacted_to_it(client, seeded):
    r = _get(client, "/rest/c/k", JSONLD)
    doc = json.loads(r.data)
    assert doc["@id"] == ROOT + "/c/k" and "@graph" not in doc
    assert isomorphic(_rdflib(r), _rdflib(_get(client, "/rest/c/k", TTL)))


def test_fedora_3_1_json_ld_round_trips_through_put(client, repo, seeded):
    """What a client GETs as JSON-LD it can PUT back (with its ETag)."""
    r = _get(client, "/rest/c/k", JSONLD)
    before = graph(_get(client, "/rest/c/k", TTL))
    put = client.put("/rest/c/k", data=r.data, content_type=JSONLD,
                     headers={"If-Match": r.headers["ETag"]})
    assert put.status_code == 204, put.data
    after = graph(_get(client, "/rest/c/k", TTL))
    assert {t for t in after if "lastModified" not in t[1]} == \
        {t for t in before if "lastModified" not in t[1]}


def test_sparql_construct_accepts_parameters(client, seeded):
    query = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 5"
    r = client.get("/query/sparql", query_string={"query": query},
                   headers={"Accept": "text/turtle;charset=utf-8"})
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"].startswith("text/turtle")


# --- the same over a real gunicorn ------------------------------------------------------------

def _wire(port: int, method: str, path: str, headers: dict[str, str], body: bytes = b""
          ) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


@pytest.mark.slow
def test_negotiation_over_gunicorn(tmp_path):
    """Negotiated answers and refused headers through a real ``lsup-server``."""
    with lsup_server(tmp_path, {"LSUP_SERVER_WORKERS": "1", "LSUP_SYNC": "false"}) \
            as (_proc, port, log):
        ttl = {"Content-Type": TTL}
        assert _wire(port, "PUT", "/rest/w", ttl, BODY.encode())[0] == 201
        status, headers, body = _wire(port, "GET", "/rest/w", {
            "Accept": f'text/turtle;q=0.5, {JSONLD}; profile="{EXPANDED}"'})
        assert status == 200 and headers["content-type"] == f'{JSONLD}; profile="{EXPANDED}"'
        assert isinstance(json.loads(body), list)
        for name, value, code, says in [
                ("Accept", "text/turtle;q=x", 400, "Malformed Accept"),
                ("Accept", "image/png", 406, "None of the media types"),
                ("Prefer", 'return=representation; include="x', 400, "Malformed Prefer"),
                ("Accept-Datetime", "2020-01-01", 400, "not an HTTP date")]:
            status, _, body = _wire(port, "GET", "/rest/w", {name: value})
            assert status == code and says in body.decode(), (name, status, body)
        status, _, body = _wire(port, "PUT", "/rest/w", {
            **ttl, "Prefer": "handling=lenient, =x"}, b'<> <http://ex.org/p> "changed"')
        assert status == 400 and b"Malformed Prefer" in body
        assert b"changed" not in _wire(port, "GET", "/rest/w", {})[2]
        assert "Traceback" not in log.read_text(errors="replace")


@pytest.mark.parametrize("path", ["/rest/c", "/rest/c/fcr:versions", "/rest/fcr:acl"])
@pytest.mark.parametrize("accept", [JSONLD, f"{JSONLD}, text/turtle;q=0.5", "application/*"])
def test_json_ld_without_a_profile_asked_is_plain(client, seeded, path, accept):
    """W3C LDP suite: a client that asks for ``application/ld+json`` gets that
    ``Content-Type`` back, without parameters (the compacted form)."""
    r = _get(client, path, accept)
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"] == JSONLD
    json.loads(r.data)


@pytest.mark.parametrize("path", ["/rest/c", "/rest/c/fcr:versions"])
def test_json_ld_with_a_profile_asked_names_the_one_served(client, seeded, path):
    r = _get(client, path, f'{JSONLD}; profile="{EXPANDED}"')
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"] == f'{JSONLD}; profile="{EXPANDED}"'


@pytest.mark.parametrize("turtle, says", [
    ('<> <http://ex.org/p> "nul\\u0000 and bell\\u0007" .', "U+0000"),
    ('<> <http://ex.org/p/> "x" .', "XML name"),
])
def test_data_rdf_xml_cannot_carry_is_406(client, turtle, says):
    """A literal with a character XML 1.0 forbids was written raw into RDF/XML, which
    no XML parser reads; a predicate with no XML name was a 415 (a request body's
    status). Both are 406 for RDF/XML; the other formats carry them."""
    assert client.put("/rest/x", data=turtle, content_type="text/turtle").status_code == 201
    r = client.get("/rest/x", headers={"Accept": "application/rdf+xml"})
    assert r.status_code == 406, r.get_data(as_text=True)
    assert says in r.get_data(as_text=True)
    r = client.get("/rest/x", headers={"Accept": "application/n-triples"})
    assert r.status_code == 200 and b"http://ex.org/p" in r.data
