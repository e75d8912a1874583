"""Bad targets over HTTP: path tricks, Fedora endpoints that do not exist, methods
a target does not allow, tombstones, and binaries and their descriptions."""
from __future__ import annotations

import pytest

from .conftest import LDP, SPARQL_UPDATE, TTL, Req, check_request, ids

BODY = '<> <http://purl.org/dc/terms/title> "x" .'
UPDATE = 'INSERT DATA { <> <http://purl.org/dc/terms/title> "x" }'


def r(id: str, method: str, path: str, status: int, keyword: str,
      data: str | bytes | None = None, ctype: str | None = None, allow: str | None = None,
      **headers: str) -> Req:
    return Req(id, method, path, status, keyword, data, ctype,
               {k.replace("_", "-"): v for k, v in headers.items()}, allow=allow)


PATHS = [
    r("dotdot segment", "PUT", "/rest/c/../x", 400, "segment", BODY, TTL),
    r("encoded dotdot", "PUT", "/rest/c/%2e%2e/x", 400, "segment", BODY, TTL),
    r("upper-case encoded dotdot", "DELETE", "/rest/c/%2E%2E", 400, "segment"),
    r("half-encoded dotdot", "POST", "/rest/c/.%2e", 400, "segment"),
    r("dot segment", "PUT", "/rest/c/./k", 400, "segment", BODY, TTL),
    r("encoded slash", "PUT", "/rest/c%2Fx", 400, "%2F", BODY, TTL),
    r("lower-case encoded slash", "DELETE", "/rest/c/%2fk", 400, "%2F"),
    r("empty inner segment", "GET", "/rest/c//k", 400, "//"),
    # a leading '//' is refused like an inner one, not Werkzeug's generic 404 page
    r("leading empty segment", "PUT", "/rest//x", 400, "//", b"", TTL),
    r("encoded NUL", "PUT", "/rest/c%00", 400, "control", BODY, TTL),
    r("encoded DEL", "POST", "/rest/c/%7F", 400, "control"),
    # control characters are a 400 that says so, not Werkzeug's generic 404 page
    r("encoded newline in the path", "GET", "/rest/c%0A", 400, "control"),
    r("encoded newline in a put path", "PUT", "/rest/c/k%0A", 400, "control", b"", TTL),
    r("encoded tab", "DELETE", "/rest/c%09", 400, "control"),
    r("encoded C1 control", "PUT", "/rest/c/%C2%85", 400, "control", BODY, TTL),
    r("encoded backslash", "PUT", "/rest/c%5C..%5Cx", 400, "backslash", BODY, TTL),
    r("invalid utf-8 once decoded", "PUT", "/rest/%ff", 400, "utf-8", BODY, TTL),
    r("overlong utf-8 once decoded", "PUT", "/rest/%C0%AE%C0%AE", 400, "utf-8", BODY, TTL),
    r("overlong segment", "PUT", "/rest/" + "x" * 300, 400, "longer", BODY, TTL),
    r("overlong once normalized", "PUT", "/rest/" + "%C3%A9" * 100, 400, "longer", BODY, TTL),
    r("overlong path", "PUT", "/rest" + "/abcdefghij" * 420, 400, "longer", BODY, TTL),
    r("unknown fcr endpoint", "GET", "/rest/c/fcr:nope", 404, "fcr:nope"),
    r("unknown fcr endpoint on put", "PUT", "/rest/c/fcr:nope", 404, "fcr:nope", BODY, TTL),
    r("fcr segment inside a path", "PUT", "/rest/c/fcr:metadata/x", 404, "fcr:metadata",
      BODY, TTL),
    r("memento id not a date", "GET", "/rest/c/fcr:versions/latest", 404, "fcr:versions"),
    r("memento id too short", "DELETE", "/rest/c/fcr:versions/2020", 404, "fcr:versions"),
    r("below a memento", "GET", "/rest/c/fcr:versions/{vid}/x", 404, "fcr:versions"),
    r("metadata of metadata", "GET", "/rest/c/bin/fcr:metadata/fcr:metadata", 404,
      "fcr:metadata"),
    r("tombstone of a description", "GET", "/rest/c/bin/fcr:metadata/fcr:tombstone", 404,
      "fcr:tombstone"),
    r("missing memento", "GET", "/rest/c/fcr:versions/19990101000000", 404, "19990101000000"),
    r("missing resource", "GET", "/rest/missing", 404, "missing"),
    r("patch a missing resource", "PATCH", "/rest/missing", 404, "missing", UPDATE,
      SPARQL_UPDATE),
    r("delete a missing resource", "DELETE", "/rest/missing", 404, "missing"),
    r("post to a missing container", "POST", "/rest/missing", 404, "missing"),
    r("description of a missing resource", "PUT", "/rest/missing/fcr:metadata", 404,
      "missing", BODY, TTL),
    r("versions of a missing resource", "POST", "/rest/missing/fcr:versions", 404, "missing"),
    r("description of a container", "GET", "/rest/c/fcr:metadata", 404, "metadata"),
    r("tombstone of a live resource", "DELETE", "/rest/c/fcr:tombstone", 409, "not deleted"),
    r("admin fixity of a missing resource", "GET", "/admin/fixity/missing", 404, "missing"),
    r("admin fixity of a container", "GET", "/admin/fixity/c", 409, "binaries"),
    r("admin fixity with a path trick", "GET", "/admin/fixity/c/%2e%2e/c", 400, ".."),
    r("admin fixity of a deleted resource", "GET", "/admin/fixity/gone", 410, "deleted"),
    r("unknown top-level path", "GET", "/nothing-here", 404, "not found"),
]

METHODS = [
    r("put on a timemap", "PUT", "/rest/c/fcr:versions", 405, "PUT", BODY, TTL, allow="POST"),
    r("patch on a timemap", "PATCH", "/rest/c/fcr:versions", 405, "PATCH", UPDATE,
      SPARQL_UPDATE, allow="GET"),
    r("delete a timemap", "DELETE", "/rest/c/fcr:versions", 405, "DELETE", allow="GET"),
    r("put on a memento", "PUT", "/rest/c/fcr:versions/{vid}", 405, "PUT", BODY, TTL,
      allow="GET"),
    r("post to a memento", "POST", "/rest/c/fcr:versions/{vid}", 405, "POST", allow="GET"),
    r("patch a memento", "PATCH", "/rest/c/fcr:versions/{vid}", 405, "PATCH", UPDATE,
      SPARQL_UPDATE, allow="GET"),
    r("post to a description", "POST", "/rest/c/bin/fcr:metadata", 405, "POST", allow="GET"),
    r("delete a description", "DELETE", "/rest/c/bin/fcr:metadata", 405, "DELETE",
      allow="PUT"),
    r("get a tombstone", "GET", "/rest/gone/fcr:tombstone", 405, "DELETE", allow="DELETE"),
    r("put on a tombstone", "PUT", "/rest/gone/fcr:tombstone", 405, "PUT", BODY, TTL,
      allow="DELETE"),
    r("delete the root", "DELETE", "/rest/", 405, "root", allow="GET"),
    r("propfind", "PROPFIND", "/rest/c", 405, "not allowed", allow="GET"),
    r("mkcol", "MKCOL", "/rest/c", 405, "not allowed", allow="PUT"),
    r("trace", "TRACE", "/rest/c", 405, "not allowed", allow="GET"),
    r("post to the constraints", "POST", "/constraints", 405, "not allowed", allow="GET"),
    r("put on the sparql endpoint", "PUT", "/query/sparql", 405, "not allowed", "ASK {}",
      "application/sparql-query", allow="POST"),
    r("delete on the sparql endpoint", "DELETE", "/query/sparql", 405, "not allowed",
      allow="GET"),
    r("post to admin stats", "POST", "/admin/stats", 405, "not allowed", allow="GET"),
]

TOMBSTONES = [
    r("get a deleted resource", "GET", "/rest/gone", 410, "deleted"),
    r("head a deleted resource", "HEAD", "/rest/gone", 410, ""),
    r("put on a deleted resource", "PUT", "/rest/gone", 410, "deleted", BODY, TTL),
    r("post to a deleted resource", "POST", "/rest/gone", 410, "deleted"),
    r("patch a deleted resource", "PATCH", "/rest/gone", 410, "deleted", UPDATE, SPARQL_UPDATE),
    r("delete a deleted resource", "DELETE", "/rest/gone", 410, "deleted"),
    r("get a never-created child of a deleted resource", "GET", "/rest/gone/x", 404,
      "does not exist"),
    r("put below a deleted resource", "PUT", "/rest/gone/x", 410, "deleted", BODY, TTL),
    r("versions of a deleted resource", "POST", "/rest/gone/fcr:versions", 410, "deleted"),
    r("timemap of a deleted resource", "GET", "/rest/gone/fcr:versions", 410, "deleted"),
    r("put a binary on a deleted resource", "PUT", "/rest/gone", 410, "deleted", b"x",
      "text/plain"),
]

BINARIES = [
    r("patch binary content", "PATCH", "/rest/c/bin", 415, "binary", UPDATE, SPARQL_UPDATE),
    r("rdf body on a binary with an rdf model", "PUT", "/rest/c/bin", 409, "model", BODY, TTL,
      Link=f'<{LDP}RDFSource>; rel="type"'),
    r("post to a binary", "POST", "/rest/c/bin", 409, "bin"),
    r("put below a binary", "PUT", "/rest/c/bin/x", 409, "bin", BODY, TTL),
    r("binary content on an rdf source", "PUT", "/rest/c", 415, "rdf", b"\x89PNG",
      "image/png"),
    r("description with a non-rdf type", "PUT", "/rest/c/bin/fcr:metadata", 415, "rdf",
      b"x", "text/plain"),
    r("description without a type", "PUT", "/rest/c/bin/fcr:metadata", 415, "rdf", BODY),
    r("description with bad turtle", "PUT", "/rest/c/bin/fcr:metadata", 400, "line",
      "<> <http://purl.org/dc/terms/title> <", TTL),
    r("description with a server-managed digest", "PUT", "/rest/c/bin/fcr:metadata", 409,
      "hasMessageDigest", "<> <http://www.loc.gov/premis/rdf/v1#hasMessageDigest> "
      "<urn:sha1:0000000000000000000000000000000000000000> .", TTL),
    r("description with a foreign subject", "PUT", "/rest/c/bin/fcr:metadata", 409, "subject",
      '<http://elsewhere.example/x> <http://purl.org/dc/terms/title> "x" .', TTL),
    r("patch a description with a server-managed type", "PATCH", "/rest/c/bin/fcr:metadata",
      409, "type", f"INSERT DATA {{ <> a <{LDP}BasicContainer> }}", SPARQL_UPDATE),
    r("patch a description with a bad update", "PATCH", "/rest/c/bin/fcr:metadata", 400,
      "INSERT", "INSERT DATA { <> ", SPARQL_UPDATE),
    r("want-digest garbage and a range beyond", "GET", "/rest/c/bin", 416, "range",
      Want_Digest=";;;", Range="bytes=999-"),
]

CASES = PATHS + METHODS + TOMBSTONES + BINARIES


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_bad_target(http, case):
    check_request(http, case)


#: Binary content sent where no binary can be made: refused, and no content file kept.
CONTENT = [
    r("binary posted to a binary", "POST", "/rest/c/bin", 409, "bin", b"new content",
      "text/plain"),
    r("binary posted to a deleted resource", "POST", "/rest/gone", 410, "deleted",
      b"new content", "text/plain"),
    r("binary posted to a missing container", "POST", "/rest/missing", 404, "missing",
      b"new content", "text/plain"),
    r("binary put below a binary", "PUT", "/rest/c/bin/x", 409, "bin", b"new content",
      "text/plain"),
    r("binary put below a deleted resource", "PUT", "/rest/gone/x", 410, "deleted",
      b"new content", "text/plain"),
    r("binary put on a description", "PUT", "/rest/c/bin/fcr:metadata", 415, "rdf",
      b"new content", "text/plain"),
    r("binary put on a direct container", "PUT", "/rest/dc", 415, "rdf", b"new content",
      "text/plain"),
    r("binary posted with a conflicting model", "POST", "/rest/c", 409, "conflicting",
      b"new content", "text/plain", Link=f'<{LDP}NonRDFSource>; rel="type", '
                                         f'<{LDP}DirectContainer>; rel="type"'),
]


@pytest.mark.parametrize("case", CONTENT, ids=ids(CONTENT))
def test_refused_content(http, case):
    check_request(http, case)
