"""Bad input to the version writes over HTTP (Fedora API 4.3.3 POST with
``Memento-Datetime``, 4.2.6 DELETE of a memento) and bad ``rel="type"`` values
(Archival Groups): a 4xx that says why, and nothing written."""
from __future__ import annotations

import pytest

from .conftest import TTL, Req, check_request, ids

AG = "http://fedora.info/definitions/v4/repository#ArchivalGroup"
BODY = '<> <http://purl.org/dc/terms/title> "then" .'
OLD = "Sat, 01 Jan 2000 00:00:00 GMT"


def h(id: str, method: str, path: str, status: int, keyword: str, data: str | bytes | None = None,
      ctype: str | None = None, **headers: str) -> Req:
    return Req(id, method, path, status, keyword, data, ctype,
               {k.replace("_", "-"): v for k, v in headers.items()})


MEMENTO_DATETIME = [
    h("memento-datetime not a date", "POST", "/rest/c/fcr:versions", 400, "not an HTTP date",
      BODY, TTL, Memento_Datetime="yesterday"),
    h("memento-datetime iso 8601", "POST", "/rest/c/fcr:versions", 400, "not an HTTP date",
      BODY, TTL, Memento_Datetime="2000-01-01T00:00:00Z"),
    h("memento-datetime empty", "POST", "/rest/c/fcr:versions", 400, "not an HTTP date",
      BODY, TTL, Memento_Datetime=""),
    h("memento-datetime bad day", "POST", "/rest/c/fcr:versions", 400, "not an HTTP date",
      BODY, TTL, Memento_Datetime="Sat, 32 Jan 2000 00:00:00 GMT"),
    h("memento-datetime in the future", "POST", "/rest/c/fcr:versions", 400, "future",
      BODY, TTL, Memento_Datetime="Fri, 01 Jan 2100 00:00:00 GMT"),
    h("memento-datetime of an existing memento", "POST", "/rest/c/fcr:versions", 409,
      "already has a version", BODY, TTL, Memento_Datetime="{vid-date}"),
    h("memento-datetime binary body for an rdf source", "POST", "/rest/c/fcr:versions", 415,
      "RDF", b"bytes", "text/plain", Memento_Datetime=OLD),
    h("memento-datetime malformed rdf", "POST", "/rest/c/fcr:versions", 400, "end of file",
      "<> <x", TTL, Memento_Datetime=OLD),
    h("memento-datetime binary without content type", "POST", "/rest/c/bin/fcr:versions", 415,
      "Content-Type", b"bytes", Memento_Datetime=OLD),
    h("memento-datetime on a missing resource", "POST", "/rest/nothing/fcr:versions", 404,
      "not exist", BODY, TTL, Memento_Datetime=OLD),
    h("memento-datetime on a deleted resource", "POST", "/rest/gone/fcr:versions", 410,
      "deleted", BODY, TTL, Memento_Datetime=OLD),
    h("delete of a missing memento", "DELETE", "/rest/c/fcr:versions/19990101000000", 404,
      "no version"),
]

TYPE_LINKS = [
    h("link unknown type", "PUT", "/rest/new", 400, "Invalid interaction model",
      Link='<http://example.org/Thing>; rel="type"'),
    h("link unknown type (post)", "POST", "/rest/c", 400, "Invalid interaction model",
      Link='<http://example.org/Thing>; rel="type"'),
    h("link archival group binary", "PUT", "/rest/new", 400, "ArchivalGroup", b"x",
      "text/plain", Link=f'<{AG}>; rel="type"'),
    h("link archival group binary (post)", "POST", "/rest/c", 400, "ArchivalGroup", b"x",
      "text/plain", Link=f'<{AG}>; rel="type"'),
    h("link archival group on an existing container", "PUT", "/rest/c", 409,
      "only when it is created", BODY, TTL, Link=f'<{AG}>; rel="type"'),
]

CASES = MEMENTO_DATETIME + TYPE_LINKS


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_bad_version_write(http, case):
    if "{vid-date}" in case.headers.get("Memento-Datetime", ""):
        from lakesuperior.endpoints.memento import version_datetime
        from lakesuperior.http import headers as hdr
        when = hdr.format_http_date(version_datetime(http.version_id()))
        case = Req(case.id, case.method, case.path, case.status, case.keyword, case.data,
                   case.ctype, {**case.headers, "Memento-Datetime": when})
    check_request(http, case)
