"""Bad request headers over HTTP: every header the server reads, garbage or
refused values, and conditional requests that must fail."""
from __future__ import annotations

import pytest

from .conftest import LDP, MAX_BODY, SPARQL_UPDATE, TTL, Req, check_request, ids, store_state

P = "<http://purl.org/dc/terms/title>"
BODY = f'<> {P} "changed" .'
UPDATE = 'INSERT DATA { <> <http://purl.org/dc/terms/title> "x" }'


def h(id: str, method: str, path: str, status: int, keyword: str, data: str | bytes | None = None,
      ctype: str | None = None, **headers: str) -> Req:
    return Req(id, method, path, status, keyword, data, ctype,
               {k.replace("_", "-"): v for k, v in headers.items()})


def link_type(*names: str) -> str:
    return ", ".join(f'<{n if n.startswith("http") else LDP + n}>; rel="type"' for n in names)


LINK = [
    h("link unknown ldp model", "PUT", "/rest/new", 409, "ldp#Thing",
      Link=link_type("Thing")),
    h("link unknown ldp model (post)", "POST", "/rest/c", 409, "ldp#Thing",
      Link=link_type("Thing")),
    h("link two container kinds", "PUT", "/rest/new", 409, "conflicting",
      Link=link_type("BasicContainer", "DirectContainer")),
    h("link binary and container", "POST", "/rest/c", 409, "conflicting", b"x", "text/plain",
      Link=link_type("NonRDFSource", "BasicContainer")),
    h("link binary and rdf source", "POST", "/rest/c", 409, "conflicting", b"x", "text/plain",
      Link=link_type("NonRDFSource", "RDFSource")),
    h("link other model on existing container", "PUT", "/rest/c", 409, "model", BODY, TTL,
      Link=link_type("DirectContainer")),
    h("link binary model on existing container", "PUT", "/rest/c", 409, "model", b"x",
      "text/plain", Link=link_type("NonRDFSource")),
    h("link container model on existing binary", "PUT", "/rest/c/bin", 409, "model", BODY, TTL,
      Link=link_type("BasicContainer")),
    h("link indirect on a direct container", "PUT", "/rest/dc", 409, "model", BODY, TTL,
      Link=link_type("IndirectContainer")),
    h("link binary model on a description", "PUT", "/rest/c/bin/fcr:metadata", 409,
      "RDFSource", BODY, TTL, Link=link_type("NonRDFSource")),
]

SLUG = [
    h("slug fcr: prefix", "POST", "/rest/c", 400, "fcr:", Slug="fcr:metadata"),
    h("slug FCR: prefix upper case", "POST", "/rest/c", 400, "fcr:", Slug="FCR:versions"),
    h("slug overlong", "POST", "/rest/c", 400, "longer", Slug="x" * 300),
    h("slug overlong once encoded", "POST", "/rest/c", 400, "longer", Slug="%C3%A9" * 100),
    h("slug fcr: on a binary post", "POST", "/rest/c", 400, "fcr:", b"x", "text/plain",
      Slug="fcr:tombstone"),
]

#: Slugs no segment can be: the server mints a name instead (RFC 5023 section 9.7
#: lets it ignore or modify a slug), always one new child of the container.
MODIFIED_SLUGS = ["a/b", "..", ".", "a\x01b", "a\\b", "a%2Fb", "%2e%2e", "../../x", "%ff",
                  "/", "  "]
PREFER = [
    h("prefer strict with server-managed triples", "PUT", "/rest/c", 409, "contains",
      f"<> <{LDP}contains> <http://localhost/rest/c/k> .", TTL, Prefer="handling=strict"),
    h("prefer strict twice-listed", "PUT", "/rest/c", 409, "contains",
      f"<> <{LDP}contains> <http://localhost/rest/c/k> .", TTL,
      Prefer="handling=strict, handling=lenient"),
    # a Prefer that does not follow RFC 7240's grammar is refused, before the body is read
    h("prefer garbage after", "PUT", "/rest/c", 400, "Malformed Prefer",
      f"<> <{LDP}contains> <http://localhost/rest/c/k> .", TTL,
      Prefer="handling=strict, handling=lenient, ;;;=="),
    h("prefer garbage on a bad body", "PUT", "/rest/c", 400, "Malformed Prefer", f"<> {P} <",
      TTL, Prefer=';;;,,,="'),
    h("prefer unclosed quote on a read", "GET", "/rest/c", 400, "not closed",
      Prefer=f'return=representation; include="{LDP}PreferContainment'),
]

ACCEPT = [
    h("accept nothing offered", "GET", "/rest/c", 406, "text/turtle", Accept="image/png"),
    h("accept all refused", "GET", "/rest/c", 406, "text/turtle", Accept="*/*;q=0"),
    h("accept malformed q", "GET", "/rest/c", 400, "Malformed Accept",
      Accept="text/turtle;q=high"),
    h("accept not a media range", "GET", "/rest/c", 400, "Malformed Accept", Accept="turtle"),
    h("accept malformed on a timemap", "GET", "/rest/c/fcr:versions", 400, "Malformed Accept",
      Accept="*/turtle"),
    h("accept rdf on the timemap", "GET", "/rest/c/fcr:versions", 406, "link-format",
      Accept="application/pdf"),
    h("accept on a description", "GET", "/rest/c/bin/fcr:metadata", 406, "text/turtle",
      Accept="text/plain;q=1, */*;q=0"),
    h("accept on the constraints", "GET", "/constraints", 406, "text/turtle",
      Accept="image/gif"),
    h("accept on a sparql query", "GET", "/query/sparql", 406, "sparql-results",
      Accept="image/gif"),
    # the admin pages' 406 goes through the error table like every other 4xx
    h("admin stats not acceptable", "GET", "/admin/stats", 406, "application/json",
      Accept="image/png"),
    h("accept-datetime garbage", "GET", "/rest/c", 400, "Accept-Datetime",
      Accept_Datetime="yesterday"),
    h("accept-datetime iso format", "GET", "/rest/c", 400, "Accept-Datetime",
      Accept_Datetime="2020-01-01T00:00:00Z"),
    h("accept-datetime without versions", "GET", "/rest/", 406, "versions",
      Accept_Datetime="Sat, 01 Jan 2000 00:00:00 GMT"),
]

CONDITIONS = [
    h("if-match stale on put", "PUT", "/rest/c", 412, "If-Match", BODY, TTL,
      If_Match='"stale"'),
    h("if-match stale on post", "POST", "/rest/c", 412, "If-Match", If_Match='"stale"'),
    h("if-match stale on binary post", "POST", "/rest/c", 412, "If-Match", b"x", "text/plain",
      If_Match='"stale"'),
    h("if-match stale on patch", "PATCH", "/rest/c", 412, "If-Match", UPDATE, SPARQL_UPDATE,
      If_Match='"stale"'),
    h("if-match stale on delete", "DELETE", "/rest/c", 412, "If-Match", If_Match='"stale"'),
    h("if-match stale on binary put", "PUT", "/rest/c/bin", 412, "If-Match", b"new",
      "text/plain", If_Match='"stale"'),
    h("if-match stale on description put", "PUT", "/rest/c/bin/fcr:metadata", 412, "If-Match",
      BODY, TTL, If_Match='"stale"'),
    h("if-match weak tag on put", "PUT", "/rest/c", 412, "If-Match", BODY, TTL,
      If_Match='W/"stale"'),
    h("if-match star on a missing resource", "PUT", "/rest/new", 412, "If-Match", BODY, TTL,
      If_Match="*"),
    h("if-match unquoted garbage", "PUT", "/rest/c", 412, "If-Match", BODY, TTL,
      If_Match="garbage"),
    h("if-match empty list", "DELETE", "/rest/c", 412, "If-Match", If_Match=",,,"),
    h("if-none-match star on existing", "PUT", "/rest/c", 412, "If-None-Match", BODY, TTL,
      If_None_Match="*"),
    h("if-none-match star on existing binary", "PUT", "/rest/c/bin", 412, "If-None-Match",
      b"new", "text/plain", If_None_Match="*"),
    h("if-unmodified-since in the past", "PUT", "/rest/c", 412, "If-Unmodified-Since", BODY,
      TTL, If_Unmodified_Since="Sat, 01 Jan 2000 00:00:00 GMT"),
    h("if-unmodified-since in the past on delete", "DELETE", "/rest/c", 412,
      "If-Unmodified-Since", If_Unmodified_Since="Sat, 01 Jan 2000 00:00:00 GMT"),
    h("stale if-match with a bad body", "PUT", "/rest/c", 412, "If-Match", f"<> {P} <", TTL,
      If_Match='"stale"'),
]

RANGE = [
    h("range beyond the content", "GET", "/rest/c/bin", 416, "range", Range="bytes=100-200"),
    h("range suffix of zero", "GET", "/rest/c/bin", 416, "range", Range="bytes=-0"),
    h("ranges all beyond the content", "GET", "/rest/c/bin", 416, "range",
      Range="bytes=50-60, 70-80"),
]

DIGEST = [
    h("digest mismatch on binary post", "POST", "/rest/c", 409, "digest", b"data", "text/plain",
      Digest="sha-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="),
    h("digest mismatch on binary put", "PUT", "/rest/c/bin", 409, "digest", b"data",
      "text/plain", Digest="md5=1B2M2Y8AsgTpgAmY7PhCfg=="),
    h("digest sha1 mismatch", "POST", "/rest/c", 409, "digest", b"data", "text/plain",
      Digest="sha=2jmj7l5rSw0yVb/vlWAYkK/YBwk="),
    h("digest one of two mismatches", "POST", "/rest/c", 409, "digest", b"",
      "text/plain", Digest="md5=1B2M2Y8AsgTpgAmY7PhCfg==, sha=AAAAAAAAAAAAAAAAAAAAAAAAAAA="),
    h("digest unsupported algorithm", "POST", "/rest/c", 400, "crc32", b"data", "text/plain",
      Digest="crc32=AAAA"),
    h("digest not base64", "POST", "/rest/c", 409, "digest", b"data", "text/plain",
      Digest="sha-256=!!!!"),
    h("digest wrong length", "POST", "/rest/c", 409, "digest", b"data", "text/plain",
      Digest="md5=AAAA"),
    h("digest mismatch on a put to a new binary", "PUT", "/rest/newbin", 409, "digest",
      b"data", "text/plain", Digest="md5=1B2M2Y8AsgTpgAmY7PhCfg=="),
    # a malformed Digest header is a 400
    h("digest garbage", "POST", "/rest/c", 400, "digest", b"data", "text/plain",
      Digest="===,,,"),
    h("digest without a value", "POST", "/rest/c", 400, "digest", b"data", "text/plain",
      Digest="md5"),
    h("digest garbage on a binary put", "PUT", "/rest/c/bin", 400, "digest", b"data",
      "text/plain", Digest=",,,"),
]

LENGTHS = [
    h("content-length over the limit on put", "PUT", "/rest/c", 413, "limit",
      f'<> {P} "{"x" * MAX_BODY}" .', TTL),
    h("content-length over the limit on post", "POST", "/rest/c", 413, "limit",
      b"x" * (MAX_BODY + 1), "application/octet-stream"),
    h("content-length over the limit on binary put", "PUT", "/rest/c/bin", 413, "limit",
      b"x" * (MAX_BODY + 1), "text/plain"),
    h("content-length over the limit on patch", "PATCH", "/rest/c", 413, "limit",
      'INSERT DATA { <> <http://ex.org/p> "' + "x" * MAX_BODY + '" }', SPARQL_UPDATE),
    h("content-length over the limit on a description", "PUT", "/rest/c/bin/fcr:metadata", 413,
      "limit", f'<> {P} "{"x" * MAX_BODY}" .', TTL),
]

CASES = LINK + SLUG + PREFER + ACCEPT + CONDITIONS + RANGE + DIGEST + LENGTHS


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_bad_header(http, case):
    check_request(http, case)


@pytest.mark.parametrize("slug", MODIFIED_SLUGS)
def test_unusable_slug_names_one_new_child(http, slug):
    before = store_state(http.repo)
    r = http.client.post("/rest/c", headers={"Slug": slug})
    assert r.status_code == 201, r.get_data(as_text=True)
    location = r.headers["Location"]
    assert location.startswith("http://localhost/rest/c/")
    segment = location[len("http://localhost/rest/c/"):]
    assert segment and "/" not in segment and segment not in (".", "..")
    after = store_state(http.repo)
    new = set(after["graphs"]) - set(before["graphs"])
    # versioning.auto: the child's version list, and the parent's last state kept
    assert {g for g in new if g.startswith("<info:fcsnap/c/fcr:versions/")} <= {
        g for g in new if not g.startswith(("<info:fcres", "<info:fchist"))}
    new = {g for g in new if not g.startswith(("<info:fcsnap/c/", "<info:fchist/c/"))}
    assert new and all(g.startswith(f"<info:fcres/c/{segment}") for g in new), new
    assert http.client.delete(location[len("http://localhost"):]).status_code == 204
    assert http.client.delete(location[len("http://localhost"):] + "/fcr:tombstone"
                              ).status_code == 204


def test_overlapping_ranges_are_coalesced(http):
    """A Range header that asks for the same bytes over and over (RFC 7233 section
    6.1): overlapping ranges are coalesced, so the answer is no larger than the
    content, not one part per range."""
    before = store_state(http.repo)
    r = http.client.get("/rest/c/bin", headers={"Range": "bytes=" + "0-," * 2000 + "1-3"})
    assert r.status_code == 206
    assert r.headers["Content-Range"] == "bytes 0-6/7"
    assert r.data == b"content"
    assert store_state(http.repo) == before


def test_many_small_ranges_are_ignored(http):
    """More than ``MAX_RANGES`` disjoint ranges: the Range header is ignored (RFC
    7233 section 3.1 lets a server ignore it) and the content is sent once, whole."""
    from lakesuperior.endpoints.reads import MAX_RANGES
    data = bytes(range(256)) * 4
    assert http.client.put("/rest/ranges", data=data,
                           content_type="application/octet-stream").status_code == 201
    few = ",".join(f"{i}-{i}" for i in range(0, 2 * MAX_RANGES, 2))
    r = http.client.get("/rest/ranges", headers={"Range": "bytes=" + few})
    assert r.status_code == 206 and r.data.count(b"Content-Range: ") == MAX_RANGES
    many = ",".join(f"{i}-{i}" for i in range(0, 2 * (MAX_RANGES + 1), 2))
    r = http.client.get("/rest/ranges", headers={"Range": "bytes=" + many})
    assert r.status_code == 200 and r.data == data
