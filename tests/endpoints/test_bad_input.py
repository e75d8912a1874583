"""Bad input: every case is refused with the right status and leaves the repository
exactly as it was.

The cases that are refused share one app for the module (``client``, ``repo``),
seeded once: each compares the whole store with its state after the seeding
(``seeded``). The cases whose request is stored get an app of their own
(``fresh``, ``fresh_seeded``)."""
from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any

import pytest

from lakesuperior import rdfio
from lakesuperior.config import Config
from tests.apps import build_app, close_app
from tests.conftest import store_state

from .conftest import LDP, MAX_BODY, TTL, link_targets, post_ttl, put_ttl
from .test_server import MAX_BODY as SERVER_MAX_BODY
from .test_server import server  # noqa: F401  (the real gunicorn, a fixture)

RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
P = "http://ex.org/p"
SPARQL_UPDATE = "application/sparql-update"
DEEP = 5000


def _seed(client: Any) -> None:
    """A little content: a container, a child, a binary, a version."""
    r = put_ttl(client, "/rest/c", '<> <http://purl.org/dc/terms/title> "c" .')
    assert r.status_code == 201
    assert post_ttl(client, "/rest/c", "", Slug="k").status_code == 201
    r = client.post("/rest/c", data=b"content", content_type="text/plain", headers={"Slug": "bin"})
    assert r.status_code == 201
    assert client.post("/rest/c/fcr:versions").status_code == 201


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Iterator[Any]:
    """The module's app (the configuration of ``tests/endpoints/conftest.py``), seeded."""
    app = build_app(Config(data_dir=str(tmp_path_factory.mktemp("bad-input") / "data"),
                           sync=False, auth_enabled=False, max_body_size=MAX_BODY))
    try:
        _seed(app.test_client())
        yield app
    finally:
        close_app(app)


@pytest.fixture(scope="module")
def client(shared):
    return shared.test_client()


@pytest.fixture(scope="module")
def repo(shared):
    return shared.extensions["lakesuperior"].repository


@pytest.fixture(scope="module")
def seeded(repo) -> dict:
    """The state of the seeded repository, which every refused case leaves as it is."""
    return store_state(repo)


@pytest.fixture
def fresh(make_app, app_config):
    """A client of an app of this test's own, for a case whose request is stored."""
    return make_app(**app_config).test_client()


@pytest.fixture
def fresh_seeded(fresh):
    _seed(fresh)
    return fresh


def _unchanged(repo, state, before):
    assert state(repo) == before


def test_malformed_turtle(client, repo, state, seeded):
    bad = b"<> <http://purl.org/dc/terms/title> \"unterminated .\n<> <x"
    for r in (client.put("/rest/c", data=bad, content_type=TTL),
              client.put("/rest/new", data=bad, content_type=TTL),
              client.post("/rest/c", data=bad, content_type=TTL)):
        assert r.status_code == 400
        text = r.get_data(as_text=True)
        assert "line" in text and "column" in text
        assert link_targets(r, LDP + "constrainedBy")
    _unchanged(repo, state, seeded)


@pytest.mark.parametrize("ctype, body", [
    ("application/ld+json", b'{"@id": "", "http://x/p": '),
    ("application/ld+json", b'{"@context": "http://remote.example/ctx.jsonld", "@id": ""}'),
    ("application/rdf+xml", b"<rdf:RDF"),
    ("application/n-triples", b"<a> <b> <c> ."),
    ("text/turtle", b"\xff\xfe not utf-8"),
])
def test_malformed_rdf_formats(client, repo, state, seeded, ctype, body):
    assert client.put("/rest/c", data=body, content_type=ctype).status_code == 400
    _unchanged(repo, state, seeded)


def test_unsupported_media_types(client, repo, state, seeded):
    assert client.put("/rest/c", data=b"plain", content_type="text/plain").status_code == 415
    r = client.post("/rest/c", data=b"x", content_type="text/plain",
                    headers={"Link": f'<{LDP}BasicContainer>; rel="type"'})
    assert r.status_code == 415
    r = client.patch("/rest/c", data=b"INSERT DATA {}", content_type="text/plain")
    assert r.status_code == 415
    r = client.post("/rest/c", content_type='message/external-body; access-type=URL; '
                                            'URL="http://example.org/file"')
    assert r.status_code == 415
    r = client.put("/rest/c/k", data=b"<> <http://x/p> 1 .")
    assert r.status_code == 415   # a body without Content-Type on an RDF source
    _unchanged(repo, state, seeded)


def test_server_managed_triples_strict(client, repo, state, seeded):
    body = f"<> <{LDP}contains> <http://localhost/rest/elsewhere> ."
    for r in (put_ttl(client, "/rest/c", body), put_ttl(client, "/rest/c", body,
                                                           Prefer="handling=strict"),
              post_ttl(client, "/rest/c", body)):
        assert r.status_code == 409
        assert link_targets(r, LDP + "constrainedBy")
    _unchanged(repo, state, seeded)


@pytest.mark.parametrize("path, status", [
    ("/rest/c/../c", 400), ("/rest/c/%2e%2e/c", 400), ("/rest/c/%2E%2E", 400),
    ("/rest/c%2Fk", 400), ("/rest/c/%2fk", 400), ("/rest/c%00", 400), ("/rest/c/k%0A", 400),
    ("/rest/" + "x" * 300, 400), ("/rest/c/./k", 400), ("/rest/c%5C..%5Cetc", 400),
    ("/rest//c", 400), ("/rest/c/fcr:nope", 404), ("/rest/%ff", 400),
])
def test_path_tricks(client, repo, state, seeded, path, status):
    for method in ("GET", "PUT", "POST", "DELETE", "PATCH"):
        r = client.open(path, method=method, data=b"<> <http://x/p> 1 .", content_type=TTL)
        assert r.status_code == status, (method, path, r.data)
    _unchanged(repo, state, seeded)


def test_oversized_bodies(client, repo, state, seeded):
    big = b"<> <http://x/p> " + b'"' + b"x" * MAX_BODY + b'" .'
    assert client.put("/rest/c", data=big, content_type=TTL).status_code == 413
    assert client.post("/rest/c", data=big, content_type=TTL).status_code == 413
    assert client.patch("/rest/c", data=b"INSERT DATA { <> <http://x/p> \"" + b"x" * MAX_BODY
                        + b'" }', content_type="application/sparql-update").status_code == 413
    assert client.put("/rest/c/bin", data=b"x" * (MAX_BODY + 1),
                      content_type="text/plain").status_code == 413
    _unchanged(repo, state, seeded)


def test_bad_digests(client, repo, state, seeded):
    assert client.put("/rest/c/bin", data=b"other", content_type="text/plain",
                      headers={"Digest": "sha-256=AAAA"}).status_code == 409
    assert client.put("/rest/c/bin", data=b"other", content_type="text/plain",
                      headers={"Digest": "crc32=AAAA"}).status_code == 400
    _unchanged(repo, state, seeded)


def test_failed_preconditions(client, repo, state, seeded):
    h = {"If-Match": '"stale"'}
    assert client.put("/rest/c", data=b"", content_type=TTL, headers=h).status_code == 412
    assert client.delete("/rest/c", headers=h).status_code == 412
    assert client.post("/rest/c", headers=h).status_code == 412
    assert client.patch("/rest/c", data=b"INSERT DATA {}", content_type="application/sparql-update",
                        headers=h).status_code == 412
    assert client.put("/rest/c/bin", data=b"x", content_type="text/plain",
                      headers=h).status_code == 412
    _unchanged(repo, state, seeded)


def test_unknown_methods(client, repo, state, seeded):
    for method in ("PROPFIND", "MKCOL", "TRACE", "CONNECT", "LOCK"):
        assert client.open("/rest/c", method=method).status_code == 405
    _unchanged(repo, state, seeded)


def test_patch_binary_content(client, repo, state, seeded):
    r = client.patch("/rest/c/bin", data=b"INSERT DATA { <> <http://x/p> 1 }",
                     content_type="application/sparql-update")
    assert r.status_code == 415
    _unchanged(repo, state, seeded)


def test_writes_to_mementos(client, repo, state, seeded):
    vid = client.get("/rest/c/fcr:versions", headers={"Accept": "application/link-format"}
                     ).get_data(as_text=True).split("fcr:versions/")[1][:14]
    for method in ("PUT", "POST", "PATCH"):       # DELETE removes it (test_versions_auto)
        r = client.open(f"/rest/c/fcr:versions/{vid}", method=method, data=b"",
                        content_type=TTL)
        assert r.status_code == 405
    _unchanged(repo, state, seeded)


def test_bad_sparql(client, repo, state, seeded):
    for update in ("INSERT DATA { <> <x", "LOAD <http://example.org/data>",
                   "INSERT DATA { GRAPH <http://g> { <> <http://x/p> 1 } }", ""):
        r = client.patch("/rest/c", data=update.encode(), content_type="application/sparql-update")
        assert r.status_code == 400, update
    _unchanged(repo, state, seeded)


def test_bad_host_header(client, repo, state, seeded):
    r = client.put("/rest/c/x", headers={"Host": "evil>.example"}, data=b"", content_type=TTL)
    assert r.status_code == 400
    _unchanged(repo, state, seeded)


def test_other_subjects(client, repo, state, seeded):
    r = put_ttl(client, "/rest/c", "<http://example.org/other> <http://x/p> 1 .")
    assert r.status_code == 409
    _unchanged(repo, state, seeded)


def test_bad_membership_config(client, repo, state, seeded):
    body = (f"<> <{LDP}membershipResource> <http://localhost/rest/c>, "
            "<http://localhost/rest/c/k> .")
    r = post_ttl(client, "/rest/c", body, Link=f'<{LDP}DirectContainer>; rel="type"')
    assert r.status_code == 409
    _unchanged(repo, state, seeded)


def test_bad_accept_datetime(client, repo, state, seeded):
    assert client.get("/rest/c", headers={"Accept-Datetime": "not a date"}).status_code == 400
    _unchanged(repo, state, seeded)


def _says(r, *words: str) -> None:
    """The response is a 4xx whose body says ``words`` (and links the constraints)."""
    text = r.get_data(as_text=True)
    assert 400 <= r.status_code < 500, (r.status_code, text)
    for word in words:
        assert word in text, (word, text)
    assert link_targets(r, LDP + "constrainedBy")


# --- nesting (issue 14, item 1) ---------------------------------------------------------

def _nested(media_type: str, depth: int) -> bytes:
    p = P.encode()
    if media_type == rdfio.JSON_LD:
        return b'{"@id":"","' + p + b'":' + (b'{"' + p + b'":') * depth + b'"x"' \
            + b"}" * (depth + 1)
    if media_type == rdfio.RDF_XML:
        return (b'<rdf:RDF xmlns:rdf="' + RDF_NS.encode() + b'" xmlns:e="http://ex.org/">'
                b'<rdf:Description rdf:about="">' + b"<e:p><rdf:Description>" * depth
                + b"<e:p>x</e:p>" + b"</rdf:Description></e:p>" * depth
                + b"</rdf:Description></rdf:RDF>")
    if media_type == rdfio.N_TRIPLES:
        s = b"<http://localhost/rest/c>"
        return s + b" <" + p + b"> " + (b"<<( " + s + b" <" + p + b"> ") * depth + b'"x"' \
            + b" )>>" * depth + b" .\n"
    return b"<> <" + p + b"> " + (b"[ <" + p + b"> ") * depth + b'"x"' + b" ]" * depth \
        + b" ."


@pytest.mark.parametrize("media_type", [rdfio.JSON_LD, rdfio.TURTLE, rdfio.N3, rdfio.RDF_XML,
                                        rdfio.N_TRIPLES])
def test_deep_nesting_is_refused(client, repo, state, seeded, media_type):
    """5000 nested JSON-LD objects killed the worker (SIGSEGV in pyoxigraph)."""
    body = _nested(media_type, DEEP if media_type in (rdfio.JSON_LD, TTL, rdfio.N3) else 1000)
    assert len(body) < MAX_BODY
    for r in (client.put("/rest/c", data=body, content_type=media_type),
              client.put("/rest/new", data=body, content_type=media_type),
              client.post("/rest/c", data=body, content_type=media_type),
              client.put("/rest/c/bin/fcr:metadata", data=body, content_type=media_type)):
        _says(r, "nesting is too deep", str(rdfio.MAX_NESTING))
        assert r.status_code == 400
    _unchanged(repo, state, seeded)


@pytest.mark.parametrize("media_type, depth", [
    (rdfio.JSON_LD, rdfio.MAX_NESTING - 1), (TTL, rdfio.MAX_NESTING),
    (rdfio.N3, rdfio.MAX_NESTING), (rdfio.RDF_XML, (rdfio.MAX_NESTING - 3) // 2),
])
def test_nesting_within_the_limit_is_stored(fresh, media_type, depth):
    body = _nested(media_type, depth)
    r = fresh.put("/rest/ok", data=body, content_type=media_type)
    assert r.status_code == 201, r.data
    assert fresh.get("/rest/ok", headers={"Accept": TTL}).data.count(b"ex.org/p") >= depth


# --- RDF/XML DTDs (issue 14, item 2) ------------------------------------------------------

def _laughs(levels: int, entity: str = "") -> bytes:
    decls = ['<!ENTITY l0 "ha">'] + [
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1)]
    return (f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{chr(10).join(decls)}\n{entity}]>\n'
            f'<rdf:RDF xmlns:rdf="{RDF_NS}" xmlns:e="http://ex.org/">'
            f'<rdf:Description rdf:about=""><e:p>&l{levels};</e:p></rdf:Description>'
            f"</rdf:RDF>").encode()


@pytest.mark.parametrize("body", [
    _laughs(9), _laughs(1), _laughs(0, '<!ENTITY x SYSTEM "file:///etc/passwd">'),
    f'<?xml version="1.0"?><!DOCTYPE rdf:RDF SYSTEM "http://127.0.0.1:9/x.dtd">'
    f'<rdf:RDF xmlns:rdf="{RDF_NS}"/>'.encode(),
])
def test_rdf_xml_dtds_are_refused(client, repo, state, seeded, body):
    """A 0.9 KB body with nine nested entities was stored as a 1e9-character literal."""
    for r in (client.put("/rest/c", data=body, content_type=rdfio.RDF_XML),
              client.post("/rest/c", data=body, content_type=rdfio.RDF_XML),
              client.put("/rest/c/bin/fcr:metadata", data=body, content_type=rdfio.RDF_XML)):
        _says(r, "DTD")
        assert r.status_code == 400
    _unchanged(repo, state, seeded)


# --- chunked bodies past max_body_size (issue 14, item 3) ---------------------------------

def _chunked(client, method: str, path: str, body: bytes, ctype: str):
    """A chunked request as a WSGI server gives it: no Content-Length, the input ended
    by the server (``wsgi.input_terminated``, as gunicorn sets it)."""
    return client.open(path, method=method, input_stream=io.BytesIO(body),
                       headers={"Content-Type": ctype, "Transfer-Encoding": "chunked"},
                       environ_overrides={"wsgi.input_terminated": True})


BIG_TTL = b"<> <http://x/p> " + b'"' + b"x" * (2 * MAX_BODY) + b'" .'
LINES = b'<> <http://x/p> "abcd" .\n' * (2 * MAX_BODY // 25)   # 25-byte lines
BIG_UPDATE = b'INSERT DATA { <> <http://x/p> "' + b"x" * (2 * MAX_BODY) + b'" }'


@pytest.mark.parametrize("method, path, body, ctype", [
    ("PUT", "/rest/c", BIG_TTL, TTL),
    ("PUT", "/rest/new", BIG_TTL, TTL),
    ("POST", "/rest/c", BIG_TTL, TTL),
    ("PUT", "/rest/c/bin/fcr:metadata", BIG_TTL, TTL),
    ("PATCH", "/rest/c", BIG_UPDATE, SPARQL_UPDATE),
    ("PUT", "/rest/c/bin", b"x" * (MAX_BODY + 1), "text/plain"),
    ("POST", "/rest/c", b"x" * (MAX_BODY + 1), "text/plain"),
    ("PUT", "/rest/c", LINES, TTL),      # Werkzeug cut it at the limit, between two lines
])
def test_chunked_bodies_past_the_limit(client, repo, state, seeded, method, path, body, ctype):
    """An 8 MB chunked Turtle body passed a 5 MB limit (Werkzeug cut it at the limit)."""
    r = _chunked(client, method, path, body, ctype)
    _says(r, f"limit of {MAX_BODY} bytes")
    assert r.status_code == 413
    _unchanged(repo, state, seeded)


@pytest.mark.parametrize("method, path, body, ctype", [
    ("PUT", "/rest/c", b"<> <http://x/p> 2 .", TTL),
    ("POST", "/rest/c", b"<> <http://x/p> 2 .", TTL),
    ("PUT", "/rest/c/bin", b"new content", "text/plain"),
    ("POST", "/rest/c", b"new content", "text/plain"),
    ("PATCH", "/rest/c", b"INSERT DATA { <> <http://x/p> 2 }", SPARQL_UPDATE),
    ("PUT", "/rest/c/bin/fcr:metadata", b"<> <http://x/p> 2 .", TTL),
])
def test_chunked_bodies_the_server_does_not_end(client, repo, state, seeded, method, path,
                                                body, ctype):
    """Without ``wsgi.input_terminated`` Werkzeug read a chunked body as empty: a PUT
    replaced the resource with nothing."""
    r = client.open(path, method=method, input_stream=io.BytesIO(body),
                    headers={"Content-Type": ctype, "Transfer-Encoding": "chunked"})
    _says(r, "chunked request body", "Content-Length")
    assert r.status_code == 400
    _unchanged(repo, state, seeded)


def test_chunked_bodies_up_to_the_limit(fresh):
    body = b"<> <http://x/p> " + b'"' + b"x" * (MAX_BODY - 20) + b'" .'
    body += b" " * (MAX_BODY - len(body))
    assert _chunked(fresh, "PUT", "/rest/t", body, TTL).status_code == 201
    assert fresh.get("/rest/t", headers={"Accept": TTL}).data.count(b"x" * 1000)
    r = _chunked(fresh, "PUT", "/rest/b", b"y" * MAX_BODY, "text/plain")
    assert r.status_code == 201
    assert fresh.get("/rest/b").data == b"y" * MAX_BODY


@pytest.mark.parametrize("method, path", [("PUT", "/rest/b"), ("POST", "/rest/")])
def test_a_body_of_exactly_the_limit_with_its_length(fresh, method, path):
    """Under a server that ends the input (gunicorn), Werkzeug caps the stream at the
    limit and refuses a read after it: a body of exactly ``max_body_size`` was a 413."""
    body = os.urandom(MAX_BODY)
    r = fresh.open(path, method=method, input_stream=io.BytesIO(body),
                    headers={"Content-Type": "application/octet-stream",
                             "Content-Length": str(MAX_BODY)},
                    environ_overrides={"wsgi.input_terminated": True})
    assert r.status_code == 201, r.data
    assert fresh.get(r.headers["Location"]).data == body


# --- Digest (issue 14, item 5) ------------------------------------------------------------

@pytest.mark.parametrize("digest", ["===,,,", ",,,", "sha-256", "=abc", "sha 256=abc",
                                    "sha-256=", "md5=YQ==, sha-256", "sha-256=YQ==, =x"])
def test_malformed_digest_headers(client, repo, state, seeded, digest):
    """``Digest: ===,,,`` was ignored and the binary stored unverified."""
    for r in (client.put("/rest/c/bin", data=b"other", content_type="text/plain",
                         headers={"Digest": digest}),
              client.put("/rest/c/newbin", data=b"other", content_type="text/plain",
                         headers={"Digest": digest}),
              client.post("/rest/c", data=b"other", content_type="text/plain",
                          headers={"Digest": digest})):
        _says(r, "Malformed Digest header")
        assert r.status_code == 400
    _unchanged(repo, state, seeded)


def test_well_formed_digests_keep_their_statuses(client, repo, state, seeded):
    """Fedora API 3.5.1 / 3.6.1: an unsupported algorithm is a 400, a mismatch a 409."""
    r = client.put("/rest/c/bin", data=b"other", content_type="text/plain",
                   headers={"Digest": "UNIXsum=30637"})
    _says(r, "Unsupported digest algorithm")
    assert r.status_code == 400
    r = client.put("/rest/c/bin", data=b"other", content_type="text/plain",
                   headers={"Digest": "md5=YQ=="})
    assert r.status_code == 409
    _unchanged(repo, state, seeded)


# --- control characters in paths (issue 14, item 9) ---------------------------------------

CONTROLS = ["%0A", "%0D", "%00", "%7F", "%09", "%1B", "%0a", "%C2%85", "%C2%9F"]
METHODS = ["GET", "HEAD", "OPTIONS", "PUT", "POST", "PATCH", "DELETE", "PROPFIND"]


@pytest.mark.parametrize("control", CONTROLS)
@pytest.mark.parametrize("path", ["/rest/c/k{}", "/rest/{}", "/rest/c{}/fcr:metadata",
                                  "/ldp/x{}y", "/query{}", "/admin/{}", "/constraints{}",
                                  "/{}", "/nowhere{}/x"])
def test_control_characters_in_paths(client, repo, state, seeded, control, path):
    """``%0A`` in a path was Werkzeug's generic 404."""
    for method in METHODS:
        r = client.open(path.format(control), method=method, data=b"<> <http://x/p> 1 .",
                        content_type=TTL)
        assert r.status_code == 400, (method, path, control, r.data)
        if method != "HEAD":
            _says(r, "Control character U+")
    _unchanged(repo, state, seeded)


def test_control_characters_in_the_query_string_are_not_path_errors(client):
    assert client.get("/rest/?x=%0A").status_code == 200


# --- malformed bodies in every format ----------------------------------------------------

_X = b'xmlns:rdf="' + RDF_NS.encode() + b'" xmlns:e="http://ex.org/"'
MALFORMED = [
    (TTL, b'<> <http://x/p> "unterminated .', "Unexpected end of file"),
    (TTL, b"<> <http://x/p> .", "is not a valid RDF object"),
    (TTL, b"<> <http://x/p> e:o .", "prefix e: has not been declared"),
    (TTL, b"<> <http://x/p> [ <http://x/q> 1 .", "should end with a ']'"),
    (TTL, b"<> <http://x/p> ( 1", "Unexpected end"),
    (TTL, b"@prefix e <http://x/> .", "should be followed by a prefix"),
    (TTL, b'<> <http://x/p> "x"^^ .', "Expecting a datatype IRI"),
    (TTL, b'<> <http://x/p> "x"@ .', "language code"),
    (TTL, b"<> <http://x/p> <http://x/a b> .", "Invalid IRI code point"),
    (TTL, b'<> <http://x/p> "\\q" .', "Unexpected escape character"),
    (TTL, b"{ <> <http://x/p> 1 }", "is not a valid subject"),
    (TTL, b'<> <http://x/p> "caf\xe9" .', "line 1"),
    (TTL, b"<> <http://x/p> <<( <http://x/a> <http://x/b> <http://x/c> )>> .", "not supported"),
    (TTL, b"GRAPH <http://g> { <> <http://x/p> 1 }", "line 1"),
    (rdfio.N_TRIPLES, b"<a> <b> <c> .", "No scheme found in an absolute IRI"),
    (rdfio.N_TRIPLES, b"<http://x/s> <http://x/p> .", "The object of a triple must be"),
    (rdfio.N_TRIPLES, b"<http://localhost/rest/c> <http://x/p> <http://x/o>",
     "must be followed by a dot"),
    (rdfio.N_TRIPLES, b"<http://localhost/rest/c> <http://x/p> 1 .", "The object of a triple"),
    (rdfio.N_TRIPLES, b"@prefix e: <http://x/> .", "The subject of a triple must be"),
    (rdfio.N_TRIPLES, b"<http://localhost/rest/c> <http://x/p> <http://x/o> <http://x/g> .",
     "line 1"),
    (rdfio.JSON_LD, b'{"@id": "", ', "Object keys must be strings"),
    (rdfio.JSON_LD, b"[", "Unexpected end of file"),
    (rdfio.JSON_LD, b'{"@id": 5}', "@id value must be a string"),
    (rdfio.JSON_LD, b'{"@context": 5, "@id": ""}', "@context value must be"),
    (rdfio.JSON_LD, b'{"@id": "", "http://x/p": {"@value": "x", "@language": 5}}',
     "@language value must be a string"),
    (rdfio.JSON_LD, b'{"@id": "", "@type": 5}', "@type value must be a string"),
    (rdfio.JSON_LD, b'{"@context": "http://remote.example/ctx.jsonld", "@id": ""}',
     "Remote JSON-LD contexts are not loaded"),
    (rdfio.JSON_LD, b'{"@id": "http://x/g", "@graph": [{"@id": "a", "http://x/p": "v"}]}',
     "Named graphs"),
    (rdfio.JSON_LD, b"nul", "Unexpected end of file"),
    (rdfio.RDF_XML, b"<rdf:RDF", "not found before end of input"),
    (rdfio.RDF_XML, b"<rdf:RDF " + _X + b"><rdf:Description rdf:about=''><e:p>x</e:q>"
     b"</rdf:Description></rdf:RDF>", "expected `</e:p>`"),
    (rdfio.RDF_XML, b"<rdf:RDF><rdf:Description/></rdf:RDF>", "Unknown prefix rdf:"),
    (rdfio.RDF_XML, b"<rdf:RDF " + _X + b"><rdf:Description rdf:about='' rdf:ID='1bad'/>"
     b"</rdf:RDF>", "not a valid rdf:ID"),
    (rdfio.RDF_XML, b"<rdf:RDF " + _X + b"><rdf:Description rdf:about=''>&undefined;"
     b"</rdf:Description></rdf:RDF>", "unrecognized entity"),
    (rdfio.RDF_XML, b"not xml at all", "Unexpected text"),
    (rdfio.RDF_XML, b"<?xml version='1.0' encoding='bogus'?><a/>", "Only UTF-8"),
    (rdfio.N3, b"<> <http://x/p> [ .", "Bad syntax (']' expected)"),
    (rdfio.N3, b"<> <http://x/p> .", "Bad syntax (objectList expected)"),
    (rdfio.N3, b"<> <http://x/p> { <http://x/a> <http://x/b> <http://x/c> } .", "N3 formulas"),
    (rdfio.N3, b'<> <http://x/p> "x .', "Quote expected"),
    (rdfio.N3, b"@prefix e <http://x/> .", "expected qname after @prefix"),
    (rdfio.N3, b'<> <http://x/p> "caf\xe9" .', "Invalid UTF-8"),
]


@pytest.mark.parametrize("ctype, body, says", MALFORMED,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(MALFORMED)])
def test_malformed_bodies_say_what_is_wrong(client, repo, state, seeded, ctype, body, says):
    for r in (client.put("/rest/c", data=body, content_type=ctype),
              client.put("/rest/new", data=body, content_type=ctype),
              client.post("/rest/c", data=body, content_type=ctype),
              client.put("/rest/c/bin/fcr:metadata", data=body, content_type=ctype)):
        _says(r, says)
        assert r.status_code == 400
    _unchanged(repo, state, seeded)


# --- headers that describe the body -------------------------------------------------------

@pytest.mark.parametrize("method, path, body, ctype", [
    ("PUT", "/rest/c/bin", b"x", "text/plain"), ("PUT", "/rest/c", b"", TTL),
    ("PUT", "/rest/c/bin/fcr:metadata", b"", TTL), ("PUT", "/rest/c/new", b"x", "text/plain"),
])
def test_partial_put_is_refused(client, repo, state, seeded, method, path, body, ctype):
    """A PUT with Content-Range stored the part as the whole content (RFC 7231 4.3.4:
    the server MUST answer 400)."""
    r = client.open(path, method=method, data=body, content_type=ctype,
                    headers={"Content-Range": "bytes 0-0/100"})
    _says(r, "Content-Range")
    assert r.status_code == 400
    _unchanged(repo, state, seeded)


@pytest.mark.parametrize("coding", ["gzip", "deflate, gzip", "br", "x-unknown"])
@pytest.mark.parametrize("method, path, body, ctype", [
    ("PUT", "/rest/c/bin", b"\x1f\x8b\x08", "text/plain"), ("POST", "/rest/c", b"x", "text/plain"),
    ("PUT", "/rest/c", b"<> <http://x/p> 1 .", TTL), ("POST", "/rest/c", b"", TTL),
    ("PATCH", "/rest/c", b"INSERT DATA {}", SPARQL_UPDATE),
])
def test_content_codings_are_refused(client, repo, state, seeded, coding, method, path, body,
                                     ctype):
    """A gzip body was stored still compressed, as if it were the content."""
    r = client.open(path, method=method, data=body, content_type=ctype,
                    headers={"Content-Encoding": coding})
    _says(r, "Content-Encoding", coding)
    assert r.status_code == 415
    _unchanged(repo, state, seeded)


def test_identity_coding_is_accepted(fresh):
    r = fresh.put("/rest/plain", data=b"x", content_type="text/plain",
                   headers={"Content-Encoding": "identity"})
    assert r.status_code == 201


@pytest.mark.parametrize("ctype", ["bogus", "/", ";;;", "text/", "/plain", "text/plain; x",
                                   "text/plain; =y", 'text/plain; a="unterminated',
                                   "text plain/x", "text/turtle; charset"])
@pytest.mark.parametrize("method, path", [("POST", "/rest/c"), ("PUT", "/rest/c/bin"),
                                          ("PUT", "/rest/c"), ("PATCH", "/rest/c")])
def test_malformed_content_types(client, repo, state, seeded, ctype, method, path):
    """``Content-Type: bogus`` made a binary of media type 'bogus'."""
    r = client.open(path, method=method, data=b"x", headers={"Content-Type": ctype})
    _says(r, "Malformed Content-Type")
    assert r.status_code == 400
    _unchanged(repo, state, seeded)


# --- every header headers.py parses, malformed ------------------------------------------------

REFUSED_HEADERS = [
    # (method, path, body, content type, header, value, status, the body says)
    ("PUT", "/rest/c/n", b"", TTL, "Link", f'<{LDP}Nothing>; rel="type"', 409,
     "Unsupported LDP interaction model"),
    ("PUT", "/rest/c/n", b"", TTL, "Link",
     f'<{LDP}BasicContainer>; rel="type", <{LDP}DirectContainer>; rel="type"', 409,
     "Conflicting interaction models"),
    ("PUT", "/rest/c", b"", TTL, "If-Match", "garbage", 412, "precondition"),
    ("PUT", "/rest/c", b"", TTL, "If-Match", '"unterminated', 412, "precondition"),
    ("DELETE", "/rest/c", None, None, "If-None-Match", "*", 412, "precondition"),
    ("PUT", "/rest/c", b"", TTL, "If-Unmodified-Since", "Mon, 01 Jan 1990 00:00:00 GMT", 412,
     "precondition"),
    ("POST", "/rest/c", b"", TTL, "Slug", "fcr:metadata", 400, "reserved 'fcr:' prefix"),
    ("POST", "/rest/c", b"", TTL, "Slug", "x" * 300, 400, "Unusable Slug"),
    ("GET", "/rest/c", None, None, "Accept", "*/*;q=0", 406, "None of the media types"),
    ("GET", "/rest/c", None, None, "Accept-Datetime", "not a date", 400, "not an HTTP date"),
    ("GET", "/rest/c", None, None, "Accept", "text/turtle;q=abc", 400, "Malformed Accept"),
    ("GET", "/rest/c", None, None, "Prefer", 'return=representation; include="unterminated',
     400, "Malformed Prefer"),
    ("PUT", "/rest/c", b"", TTL, "Prefer", 'return=representation; include="unterminated',
     400, "Malformed Prefer"),
    ("GET", "/rest/c/bin", None, None, "Range", "bytes=100-", 416, "satisfiable"),
    ("PUT", "/rest/c/bin", b"x", "text/plain", "Digest", "sha-256", 400, "Malformed Digest"),
    ("PUT", "/rest/c/bin", b"x", "text/plain", "Digest", "crc32=AAAA", 400, "Unsupported"),
]


@pytest.mark.parametrize("method, path, body, ctype, name, value, status, says",
                         REFUSED_HEADERS, ids=[f"{c[4]}-{i}" for i, c in
                                               enumerate(REFUSED_HEADERS)])
def test_malformed_headers_are_refused(client, repo, state, seeded, method, path, body, ctype,
                                       name, value, status, says):
    kwargs = {"content_type": ctype} if ctype else {}
    r = client.open(path, method=method, data=body, headers={name: value}, **kwargs)
    assert r.status_code == status, r.data
    _says(r, says)
    _unchanged(repo, state, seeded)


IGNORED_HEADERS = [
    # Ignored as the RFCs ask of recipients: the request is served as without them.
    ("Prefer", "handling=bogus"),                                   # RFC 7240 section 2
    ("Link", "garbage"),
    ("If-Modified-Since", "not a date"),                            # RFC 7232 section 3.3
    ("If-Unmodified-Since", "not a date"),                          # RFC 7232 section 3.4
    ("Range", "bytes=5-1"),                                         # RFC 7233 section 3.1
    ("Range", "garbage"),
    ("Want-Digest", "bogus;q=x"),
    ("Accept", "text/turtle;q=abc"),
    ("Content-Disposition", 'attachment; filename="'),
    ("Slug", "%ff"),
]


@pytest.mark.parametrize("name, value", IGNORED_HEADERS)
def test_malformed_headers_that_are_ignored(fresh_seeded, name, value):
    """No malformed header is a 5xx; where an RFC says to ignore it, it changes nothing."""
    client = fresh_seeded
    plain = client.get("/rest/c/bin")
    assert client.get("/rest/c/bin", headers={name: value}).data == plain.data == b"content"
    r = client.post("/rest/c", data=b"x", content_type="text/plain", headers={name: value})
    assert r.status_code == 201
    assert client.get(r.headers["Location"]).data == b"x"


# --- the same over a real gunicorn ----------------------------------------------------------

def _pieces(body: bytes, size: int = 8192):
    for start in range(0, len(body), size):
        yield body[start:start + size]


@pytest.mark.slow
@pytest.mark.parametrize("method, path, body, ctype", [
    ("PUT", "/rest/chunked", b'<> <http://x/p> "abcd" .\n' * (8 * SERVER_MAX_BODY // 25), TTL),
    ("POST", "/rest/", b'<> <http://x/p> "abcd" .\n' * (8 * SERVER_MAX_BODY // 25), TTL),
    ("PATCH", "/rest/", b'INSERT DATA { <> <http://x/p> "' + b"x" * (2 * SERVER_MAX_BODY)
     + b'" }', SPARQL_UPDATE),
    ("PUT", "/rest/chunked-bin", b"x" * (SERVER_MAX_BODY + 1), "text/plain"),
    ("POST", "/rest/", b"x" * (2 * SERVER_MAX_BODY), "text/plain"),
])
def test_chunked_bodies_past_the_limit_over_gunicorn(server, method, path, body, ctype):  # noqa: F811
    before = server.request("GET", "/rest/", headers={"Accept": "application/n-triples"})
    status, headers, text = server.request(method, path, lambda: _pieces(body),
                                           {"Content-Type": ctype}, encode_chunked=True)
    assert status == 413, text
    assert f"limit of {SERVER_MAX_BODY} bytes".encode() in text
    after = server.request("GET", "/rest/", headers={"Accept": "application/n-triples"})
    assert after[2] == before[2]
    assert server.request("GET", "/rest/chunked")[0] == 404


@pytest.mark.slow
def test_chunked_body_at_the_limit_over_gunicorn(server):  # noqa: F811
    body = b"z" * SERVER_MAX_BODY
    status, _, text = server.request("PUT", "/rest/chunked-ok", _pieces(body),
                                     {"Content-Type": "text/plain"}, encode_chunked=True)
    assert status == 201, text
    assert server.request("GET", "/rest/chunked-ok")[2] == body


@pytest.mark.slow
@pytest.mark.parametrize("control", ["%0A", "%0D", "%00", "%7F"])
def test_control_characters_in_paths_over_gunicorn(server, control):  # noqa: F811
    for method in ("GET", "PUT", "DELETE"):
        status, _, text = server.request(method, f"/rest/x{control}y", b"",
                                         {"Content-Type": TTL})
        assert status == 400, (method, text)
        assert b"Control character U+" in text
