"""Bad input whose fix belongs to another part of issue #14 (the comment on each
case names the issue item and the helper whose files it touches). Each test
expects the correct behaviour. They are strict xfails: an XPASS means the fix
was merged, and the marker goes (the test then guards the fix like any other)."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from lakesuperior.exceptions import InvalidResourceError

from .conftest import (
    MAX_BODY,
    RDFXML,
    TTL,
    Call,
    Req,
    check_call,
    check_request,
    store_state,
)
from .test_server_battery import TTL_BODY, raw_request, reader, running_server

pytestmark = pytest.mark.xfail(strict=True, reason="pending another helper's fix (issue #14)")

P = "http://ex.org/p"
RDF = ('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
       'xmlns:e="http://ex.org/">')
DEPTH = 5000

# --- deep nesting, run in a child process: today it can kill the process --------------

#: #1 "Deeply nested JSON-LD kills the process": any parser input is bounded before
#: it reaches code that can overflow the stack, in every RDF format: 400, says why.
NESTED = {
    "jsonld objects": ("application/ld+json", f'{{"@id":"","{P}":' + f'{{"{P}":' * DEPTH
                       + '"x"' + "}" * (DEPTH + 1)),
    "jsonld arrays": ("application/ld+json", f'{{"@id":"","{P}":' + "[" * DEPTH + '"x"'
                      + "]" * DEPTH + "}"),
    "turtle blank nodes": (TTL, f"<> <{P}> " + f"[ <{P}> " * DEPTH + '"x"' + " ]" * DEPTH
                           + " ."),
    "turtle collections": (TTL, f"<> <{P}> " + "( " * DEPTH + '"x"' + " )" * DEPTH + " ."),
    "rdf/xml elements": (RDFXML, RDF + '<rdf:Description rdf:about="">'
                         + "<e:p><rdf:Description>" * DEPTH + "<e:p>x</e:p>"
                         + "</rdf:Description></e:p>" * DEPTH + "</rdf:Description></rdf:RDF>"),
}

_CHILD = """
import json, sys, tempfile
from lakesuperior.config import Config
from lakesuperior.endpoints.app import create_app
ctype, body = json.load(sys.stdin)
with tempfile.TemporaryDirectory() as d:
    app = create_app(Config(data_dir=d + "/data", sync=False))
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
    # issue #14 item 1 (helper "parse")
    ctype, body = NESTED[name]
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps([ctype, body]),
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, f"the process died ({proc.returncode}): {proc.stderr[-500:]}"
    status, text, unchanged = json.loads(proc.stdout.strip().splitlines()[-1])
    assert status == 400, text
    assert any(w in text.lower() for w in ("nest", "depth", "deep")), text
    assert unchanged


# --- in-process cases -----------------------------------------------------------------

CASES = [
    # issue #14 item 2 (helper "parse"): DTD entity declarations are refused.
    Req("rdf/xml internal entity", "PUT", "/rest/c", 400, "entit",
        f'<!DOCTYPE rdf:RDF [<!ENTITY e "x">]>{RDF}<rdf:Description rdf:about="">'
        f"<e:p>&e;</e:p></rdf:Description></rdf:RDF>", RDFXML),
    Req("rdf/xml nested entities", "PUT", "/rest/c", 400, "entit",
        '<!DOCTYPE rdf:RDF [<!ENTITY a "xxxxxxxxxx"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
        f'{RDF}<rdf:Description rdf:about=""><e:p>&b;</e:p></rdf:Description></rdf:RDF>',
        RDFXML),
    # issue #14 item 5 (helper "parse"): a malformed Digest header is a 400.
    Req("digest garbage", "POST", "/rest/c", 400, "digest", b"data", "text/plain",
        {"Digest": "===,,,"}),
    Req("digest without a value", "POST", "/rest/c", 400, "digest", b"data", "text/plain",
        {"Digest": "md5"}),
    Req("digest garbage on a binary put", "PUT", "/rest/c/bin", 400, "digest", b"data",
        "text/plain", {"Digest": ",,,"}),
    # issue #14 item 9 (helper "parse"): control characters in a path are a 400 that
    # says so, not Werkzeug's generic 404 page.
    Req("encoded newline in the path", "GET", "/rest/c%0A", 400, "control"),
    Req("encoded newline in a put path", "PUT", "/rest/c/k%0A", 400, "control",
        b"", TTL),
    # issue #14 item 9, generally (helper "parse"): a leading '//' is refused like an
    # inner one (400, "Empty path segments"), not Werkzeug's generic 404 page.
    Req("leading empty segment", "PUT", "/rest//x", 400, "//", b"", TTL),
    # issue #14 "Bad input, generally" (helper "storage", endpoints/admin.py): the
    # admin pages' 406 goes through the error table like every other 4xx (a body
    # that says what was wrong and the constrainedBy link).
    Req("admin stats not acceptable", "GET", "/admin/stats", 406, "application/json",
        headers={"Accept": "image/png"}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_pending_request(http, case):
    check_request(http, case)


def test_chunked_rdf_body_over_the_limit(http):
    # issue #14 item 3 (helper "parse"): max_body_size holds for chunked RDF bodies.
    before = store_state(http.repo)
    body = f'<> <{P}> "'.encode() + b"x" * (MAX_BODY + 10) + b'" .'
    r = http.client.put("/rest/c", input_stream=io.BytesIO(body), content_type=TTL,
                        headers={"Transfer-Encoding": "chunked"})
    assert r.status_code == 413, r.get_data(as_text=True)
    assert "limit" in r.get_data(as_text=True)
    assert store_state(http.repo) == before


def test_uid_segment_longer_than_http_allows(api_repo):
    # issue #14 item 7 (helper "storage"): one uid rule for both doors.
    check_call(api_repo, Call("300-character segment", InvalidResourceError, "long",
                              lambda r: r.create_or_replace("/c/" + "x" * 300)))
    check_call(api_repo, Call("300-character slug", InvalidResourceError, "long",
                              lambda r: r.create("/c", slug="x" * 300)))


# --- over a real gunicorn ---------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("pending-server")) as srv:
        yield srv


BIG_TTL = f'<> <{P}> "'.encode() + b"x" * MAX_BODY + b'" .'
#: Deep JSON-LD under the server's body limit (short keys through @vocab).
DEEP_JSONLD = (b'{"@context":{"@vocab":"http://ex.org/"},"@id":"","p":' + b'{"p":' * 8000
               + b'"x"' + b"}" * 8001)
assert len(DEEP_JSONLD) < MAX_BODY

WIRE = [
    # issue #14 item 3 (helper "parse"): an RDF body that ends before its
    # Content-Length (the client closed the connection) is incomplete (RFC 7230
    # 3.3.3): nothing is written.
    ("truncated rdf body", raw_request("PUT", "/rest/c", TTL_BODY, Content_Type="text/turtle",
                                       Content_Length="1000"), 400),
    # ... nor is a truncated binary stored as if complete.
    ("truncated binary body", raw_request("PUT", "/rest/c/bin", b"short",
                                          Content_Type="text/plain", Content_Length="1000"),
     400),
    # issue #14 item 3 (helper "parse"): a malformed chunk size is the client's error
    # (400), not a 500 "this is a bug".
    ("invalid chunk size", raw_request("PUT", "/rest/c/bin", b"zz\r\nhello\r\n0\r\n\r\n",
                                       Content_Type="text/plain", Transfer_Encoding="chunked"),
     400),
    ("invalid chunk size on rdf", raw_request("PUT", "/rest/c", b"zz\r\nhello\r\n0\r\n\r\n",
                                              Content_Type="text/turtle",
                                              Transfer_Encoding="chunked"), 400),
    # issue #14 item 3 (helper "parse"): max_body_size while reading a chunked body.
    ("chunked rdf over the limit", raw_request(
        "PUT", "/rest/c", b"%x\r\n%s\r\n0\r\n\r\n" % (len(BIG_TTL), BIG_TTL),
        Content_Type="text/turtle", Transfer_Encoding="chunked"), 413),
    # issue #14 item 1 (helper "parse"): the worker survives deep JSON-LD.
    ("deep json-ld", raw_request("PUT", "/rest/c", DEEP_JSONLD,
                                 Content_Type="application/ld+json",
                                 Content_Length=str(len(DEEP_JSONLD))), 400),
]


@pytest.mark.parametrize("name, raw, status", WIRE, ids=[w[0] for w in WIRE])
def test_pending_on_the_wire(server, name, raw, status):
    with reader(server) as repo:
        before = store_state(repo)
    boots = server.boots()
    reply = server.send(raw)
    assert reply.status == status, (reply.status, reply.body[:300])
    assert reply.body.strip()
    assert server.request("GET", "/rest/c").status == 200
    assert server.boots() == boots, "a worker died"
    with reader(server) as repo:
        assert store_state(repo) == before, "the store changed"


