"""Bad request bodies over HTTP: malformed RDF in every format the server reads,
deep nesting, DTD entities, wrong or missing media types, server-managed and
otherwise refused triples, chunked bodies past the limit."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from .conftest import (
    FCREPO,
    JSONLD,
    LDP,
    MAX_BODY,
    N3,
    NT,
    RDFXML,
    TTL,
    Req,
    check_request,
    ids,
    store_state,
)

P = "<http://purl.org/dc/terms/title>"
RDF = '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" ' \
      'xmlns:dc="http://purl.org/dc/terms/">'


def put(id: str, body: bytes | str, ctype: str | None, status: int = 400,
        keyword: str = "", path: str = "/rest/c", **headers: str) -> Req:
    return Req(id, "PUT", path, status, keyword, body, ctype, headers)


def post(id: str, body: bytes | str, ctype: str | None, status: int = 400,
         keyword: str = "", path: str = "/rest/c", **headers: str) -> Req:
    return Req(id, "POST", path, status, keyword, body, ctype, headers)


TURTLE = [
    put("ttl unterminated string", f'<> {P} "open .', TTL, keyword="line"),
    # (a missing final dot alone is accepted, as by Fedora: tests/endpoints/test_negotiation.py)
    put("ttl missing final dot and bracket", f'<> {P} [ {P} "a"', TTL, keyword="line"),
    post("ttl missing final dot and paren (post)", f'<> {P} ( "a"', TTL, keyword="line"),
    put("ttl new resource, syntax error", f"<> {P} <", TTL, path="/rest/new", keyword="line"),
    put("ttl space in IRI", '<> <http://ex.org/a b> "x" .', TTL, keyword="line"),
    put("ttl space in object IRI", f"<> {P} <http://ex.org/a b> .", TTL, keyword="line"),
    put("ttl angle in IRI", f"<> {P} <http://ex.org/a<b> .", TTL, keyword="line"),
    put("ttl bad string escape", f'<> {P} "a\\qb" .', TTL, keyword="line"),
    put("ttl bad unicode escape", f'<> {P} "\\uZZZZ" .', TTL, keyword="line"),
    put("ttl lone surrogate escape", f'<> {P} "\\uD800" .', TTL, keyword="line"),
    put("ttl escape beyond unicode", f'<> {P} "\\U00110000" .', TTL, keyword="line"),
    put("ttl bad IRI escape", f"<> {P} <http://ex.org/\\u00ZZ> .", TTL, keyword="line"),
    put("ttl language tag with digit first", f'<> {P} "a"@1en .', TTL, keyword="line"),
    put("ttl language tag trailing hyphen", f'<> {P} "a"@en- .', TTL, keyword="line"),
    put("ttl language tag underscore", f'<> {P} "a"@en_US .', TTL, keyword="line"),
    put("ttl undefined prefix", f"<> nope:p {P} .", TTL, keyword="prefix"),
    put("ttl invalid utf-8", f'<> {P} "'.encode() + b'\xc3\x28" .', TTL, keyword="utf-8"),
    put("ttl truncated utf-8", f'<> {P} "'.encode() + b'\xe2\x82" .', TTL, keyword="utf-8"),
    put("ttl utf-16 with BOM", f'<> {P} "a" .'.encode("utf-16"), TTL),
    put("ttl BOM mid-document", f'<> {P} "a" .\n\ufeff<> {P} "b" .', TTL, keyword="line"),
    put("ttl NUL byte", f'<> {P} "a" .\x00', TTL, keyword="line"),
    put("ttl literal subject", f'"s" {P} "a" .', TTL, keyword="line"),
    put("ttl literal predicate", '<> "p" "a" .', TTL, keyword="line"),
    put("ttl blank node predicate", '<> _:p "a" .', TTL, keyword="line"),
    put("ttl bad datatype IRI", f'<> {P} "a"^^<http://ex.org/a b> .', TTL, keyword="line"),
    put("ttl bad @base", f'@base <http://a b/> .\n<> {P} "a" .', TTL, keyword="line"),
    put("ttl bad @prefix", f'@prefix ex <http://ex.org/> .\n<> {P} "a" .', TTL,
        keyword="line"),
    put("ttl unbalanced collection", f"<> {P} ( 1 2 .", TTL, keyword="line"),
    put("ttl unbalanced blank node", f"<> {P} [ {P} 1 .", TTL, keyword="line"),
    put("ttl only garbage", "}}}}", TTL, keyword="line"),
    put("ttl charset utf-16 on utf-8 bytes", f'<> {P} "a" .'.encode("utf-16-le"),
        TTL + "; charset=utf-16"),
]

NTRIPLES = [
    put("nt relative IRIs", "<a> <b> <c> .", NT, keyword="line"),
    put("nt prefixed name", "<http://localhost/rest/c> dc:title \"a\" .", NT, keyword="line"),
    put("nt turtle predicate list", f'<http://localhost/rest/c> {P} "a" ; {P} "b" .', NT,
        keyword="line"),
    put("nt missing dot", f'<http://localhost/rest/c> {P} "a"', NT, keyword="line"),
    put("nt bad escape", f'<http://localhost/rest/c> {P} "\\x" .', NT, keyword="line"),
    put("nt literal subject", f'"a" {P} "b" .', NT, keyword="line"),
    put("nt bad language tag", f'<http://localhost/rest/c> {P} "a"@-x .', NT, keyword="line"),
    put("nt invalid utf-8", f'<http://localhost/rest/c> {P} "'.encode() + b'\xff" .', NT,
        keyword="utf-8"),
    put("nt quad on a triple format", f'<http://localhost/rest/c> {P} "a" <http://g> .', NT,
        keyword="line"),
    post("nt relative IRIs (post)", "<a> <b> <c> .", NT, keyword="line"),
]

JSON_LD = [
    put("jsonld truncated", b'{"@id": "", "http://ex.org/p": ', JSONLD),
    put("jsonld not json", b"<> <http://ex.org/p> 1 .", JSONLD),
    put("jsonld context a number", b'{"@context": 5, "@id": ""}', JSONLD),
    put("jsonld remote context", b'{"@context": "http://remote.example/c.jsonld", "@id": ""}',
        JSONLD),
    put("jsonld @id not a string", b'{"@id": 5, "http://ex.org/p": "a"}', JSONLD),
    put("jsonld @type a number", b'{"@id": "", "@type": 5}', JSONLD),
    put("jsonld @language not a string",
        b'{"@id": "", "http://ex.org/p": {"@value": "a", "@language": 5}}', JSONLD),
    put("jsonld @value an object",
        b'{"@id": "", "http://ex.org/p": {"@value": {"a": 1}}}', JSONLD),
    put("jsonld invalid utf-8", b'{"@id": "", "http://ex.org/p": "\xff"}', JSONLD),
    put("jsonld bad \\u escape", b'{"@id": "", "http://ex.org/p": "\\uZZZZ"}', JSONLD),
    put("jsonld @list in @list value",
        b'{"@id": "", "http://ex.org/p": {"@list": 5, "@value": 1}}', JSONLD),
    post("jsonld truncated (post)", b'{"@id": ', JSONLD),
]

XML = [
    put("rdfxml unclosed", b"<rdf:RDF", RDFXML),
    put("rdfxml not xml", f'<> {P} "a" .', RDFXML),
    put("rdfxml unbound prefix", b"<rdf:RDF><rdf:Description/></rdf:RDF>", RDFXML),
    put("rdfxml mismatched tags",
        f'{RDF}<rdf:Description rdf:about=""><dc:title>a</dc:x></rdf:Description></rdf:RDF>',
        RDFXML),
    put("rdfxml bad rdf:ID", f'{RDF}<rdf:Description rdf:ID="1a"/></rdf:RDF>', RDFXML),
    put("rdfxml invalid utf-8",
        f'{RDF}<rdf:Description rdf:about=""><dc:title>'.encode() + b"\xff"
        + b"</dc:title></rdf:Description></rdf:RDF>", RDFXML),
    put("rdfxml text in rdf:RDF", f"{RDF}loose text</rdf:RDF>", RDFXML),
    put("rdfxml property element with two objects",
        f'{RDF}<rdf:Description rdf:about=""><dc:title rdf:resource="http://a">'
        f"text</dc:title></rdf:Description></rdf:RDF>", RDFXML),
    post("rdfxml unclosed (post)", b"<rdf:RDF", RDFXML),
    # DTD entity declarations are refused
    put("rdfxml internal entity",
        f'<!DOCTYPE rdf:RDF [<!ENTITY e "x">]>{RDF}<rdf:Description rdf:about="">'
        f"<dc:title>&e;</dc:title></rdf:Description></rdf:RDF>", RDFXML, 400, "entit"),
    put("rdfxml nested entities",
        '<!DOCTYPE rdf:RDF [<!ENTITY a "xxxxxxxxxx"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
        f'{RDF}<rdf:Description rdf:about=""><dc:title>&b;</dc:title></rdf:Description>'
        "</rdf:RDF>", RDFXML, 400, "entit"),
]

NOTATION3 = [
    put("n3 syntax error", f"<> {P} .", N3),
    put("n3 formula", "{ <a> <b> <c> } => { <d> <e> <f> } .", N3),
    put("n3 variable", f"<> {P} ?x .", N3),
    put("n3 unterminated", f'<> {P} "a', N3),
]

MEDIA_TYPES = [
    put("turtle body labelled json-ld", f'<> {P} "a" .', JSONLD),
    put("json-ld body labelled turtle", b'{"@id": "", "http://ex.org/p": "a"}', TTL,
        keyword="line"),
    put("rdf/xml body labelled n-triples", f'{RDF}</rdf:RDF>', NT, keyword="line"),
    put("rdf body with text/plain on a container", f'<> {P} "a" .', "text/plain", 415,
        "rdf"),
    put("rdf body without content-type on a container", f'<> {P} "a" .', None, 415,
        "content-type"),
    put("rdf body with empty content-type", f'<> {P} "a" .', "", 415, "content-type"),
    put("rdf body with image/png on a container", f'<> {P} "a" .', "image/png", 415, "rdf"),
    # not a media type at all: the header is malformed (400), not unsupported (415)
    put("rdf body with a bogus media type", f'<> {P} "a" .', "garbage", 400,
        "Malformed Content-Type"),
    post("container model with a binary media type", b"\x89PNG", "image/png", 415, "image/png",
         Link=f'<{LDP}BasicContainer>; rel="type"'),
    put("external body", b"", 'message/external-body; access-type=URL; URL="http://a"', 415,
        "external"),
    post("external body (post)", b"", "message/external-body; access-type=URL", 415,
         "external"),
    put("sparql update as a PUT body", "INSERT DATA { <> <http://ex.org/p> 1 }",
        "application/sparql-update", 415, "rdf"),
]

REFUSED_TRIPLES = [
    put("ldp:contains", f"<> <{LDP}contains> <http://localhost/rest/c/k2> .", TTL, 409,
        "contains"),
    post("ldp:contains (post)", f"<> <{LDP}contains> <http://localhost/rest/c> .", TTL, 409,
         "contains"),
    put("fcrepo:created changed", f'<> <{FCREPO}created> "2001-01-01T00:00:00Z"^^'
        f"<http://www.w3.org/2001/XMLSchema#dateTime> .", TTL, 409, "created",
        Prefer="handling=strict"),
    put("fcrepo:lastModifiedBy changed", f'<> <{FCREPO}lastModifiedBy> "mallory" .', TTL, 409,
        "lastModifiedBy", Prefer="handling=strict"),
    put("fcrepo:hasParent elsewhere", f"<> <{FCREPO}hasParent> <http://localhost/rest/dc> .",
        TTL, 409, "hasParent"),
    put("unknown fcrepo predicate", f'<> <{FCREPO}madeUp> "x" .', TTL, 409, "madeUp"),
    put("rdf:type of another model", f"<> a <{LDP}DirectContainer> .", TTL, 409,
        "DirectContainer"),
    put("rdf:type ldp:NonRDFSource", f"<> a <{LDP}NonRDFSource> .", TTL, 409, "NonRDFSource"),
    post("rdf:type fcrepo:Binary (post)", f"<> a <{FCREPO}Binary> .", TTL, 409, "Binary"),
    put("strict handling, own type", f"<> a <{LDP}Container> .", TTL, 409, "Container",
        Prefer="handling=strict"),
    put("premis digest", "<> <http://www.loc.gov/premis/rdf/v1#hasMessageDigest> "
        "<urn:sha1:0000000000000000000000000000000000000000> .", TTL, 409, "hasMessageDigest"),
    put("foreign subject", f'<http://elsewhere.example/x> {P} "a" .', TTL, 409, "subject"),
    post("foreign subject (post)", f'<http://localhost/rest/c/k> {P} "a" .', TTL, 409,
         "subject"),
    put("link to a missing resource (strict referential integrity)",
        f"<> {P} <http://localhost/rest/missing> .", TTL, 409, "missing"),
    put("link to a tombstone (strict referential integrity)",
        f"<> {P} <http://localhost/rest/gone> .", TTL, 409, "gone"),
]

DC = {"Link": f'<{LDP}DirectContainer>; rel="type"'}

MEMBERSHIP = [
    put("membership resource a literal", f'<> <{LDP}membershipResource> "c" .', TTL, 409,
        "IRI", path="/rest/newdc", **DC),
    put("ldp:contains as the member relation", f"<> <{LDP}membershipResource> <c> ; "
        f"<{LDP}hasMemberRelation> <{LDP}contains> .", TTL, 409, "membership predicate",
        path="/rest/newdc", **DC),
    put("two membership resources", f"<> <{LDP}membershipResource> <c>, <c/k> .", TTL, 409,
        "at most one", path="/rest/newdc", **DC),
    put("membership config on an existing direct container", f"<> <{LDP}membershipResource> "
        f"<c>, <c/k> .", TTL, 409, "at most one", path="/rest/dc"),
]

CASES = (TURTLE + NTRIPLES + JSON_LD + XML + NOTATION3 + MEDIA_TYPES + REFUSED_TRIPLES
         + MEMBERSHIP)


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_bad_body(http, case):
    check_request(http, case)


# --- deep nesting, run in a child process: unbounded, it could kill the process -----------

EX_P = "http://ex.org/p"
EX_RDF = ('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
          'xmlns:e="http://ex.org/">')
DEPTH = 5000

#: Any parser input is bounded before it reaches code that can overflow the stack, in
#: every RDF format: 400, says why.
NESTED = {
    "jsonld objects": (JSONLD, f'{{"@id":"","{EX_P}":' + f'{{"{EX_P}":' * DEPTH
                       + '"x"' + "}" * (DEPTH + 1)),
    "jsonld arrays": (JSONLD, f'{{"@id":"","{EX_P}":' + "[" * DEPTH + '"x"'
                      + "]" * DEPTH + "}"),
    "turtle blank nodes": (TTL, f"<> <{EX_P}> " + f"[ <{EX_P}> " * DEPTH + '"x"'
                           + " ]" * DEPTH + " ."),
    "turtle collections": (TTL, f"<> <{EX_P}> " + "( " * DEPTH + '"x"' + " )" * DEPTH
                           + " ."),
    "rdf/xml elements": (RDFXML, EX_RDF + '<rdf:Description rdf:about="">'
                         + "<e:p><rdf:Description>" * DEPTH + "<e:p>x</e:p>"
                         + "</rdf:Description></e:p>" * DEPTH
                         + "</rdf:Description></rdf:RDF>"),
}

_CHILD = """
import json, sys, tempfile
from lakesuperior.config import Config
from lakesuperior.endpoints.app import create_app
ctype, body = json.load(sys.stdin)
with tempfile.TemporaryDirectory() as d:
    app = create_app(Config(data_dir=d + "/data", sync=False, auth_enabled=False,
                            indexer_process=False))
    client = app.test_client()
    assert client.put("/rest/c").status_code == 201
    before = client.get("/rest/c", headers={"Accept": "application/n-triples"}).data
    r = client.put("/rest/c", data=body.encode(), content_type=ctype)
    after = client.get("/rest/c", headers={"Accept": "application/n-triples"}).data
    print(json.dumps([r.status_code, r.get_data(as_text=True)[:500], before == after]))
    app.extensions["lakesuperior"].close()
"""


@pytest.mark.parametrize("name", list(NESTED))
def test_deep_nesting_is_refused(name, tmp_path):
    ctype, body = NESTED[name]
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps([ctype, body]),
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, f"the process died ({proc.returncode}): {proc.stderr[-500:]}"
    status, text, unchanged = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == 400, text
    assert any(w in text.lower() for w in ("nest", "depth", "deep")), text
    assert unchanged


# --- chunked bodies ----------------------------------------------------------------------

def test_chunked_rdf_body_over_the_limit(http):
    """max_body_size holds for a chunked RDF body, also under a WSGI server that does
    not end the input (the Flask test client): the length it gives is over the limit."""
    before = store_state(http.repo)
    body = f'<> <{EX_P}> "'.encode() + b"x" * (MAX_BODY + 10) + b'" .'
    r = http.client.put("/rest/c", input_stream=io.BytesIO(body), content_type=TTL,
                        headers={"Transfer-Encoding": "chunked"})
    assert r.status_code == 413, r.get_data(as_text=True)
    assert "limit" in r.get_data(as_text=True)
    assert store_state(http.repo) == before
