"""Tests for the pure HTTP header functions."""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from lakesuperior.exceptions import (
    InvalidDigestError,
    InvalidHeaderError,
    LakesuperiorError,
    RangeNotSatisfiableError,
    UnsupportedDigestError,
)
from lakesuperior.http import headers as h
from lakesuperior.http import mediatypes

LDP = "http://www.w3.org/ns/ldp#"
UTC = UTC


def test_no_flask_import():
    code = "import sys, lakesuperior.http.headers; assert 'flask' not in sys.modules"
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# --- Prefer -----------------------------------------------------------------------

def test_prefer_empty():
    p = h.parse_prefer([])
    assert p == h.Prefer()
    assert h.preference_applied(p) == ""


def test_prefer_minimal():
    p = h.parse_prefer(["return=minimal"])
    assert p.return_ == "minimal" and p.include == p.omit == frozenset()
    assert h.preference_applied(p) == "return=minimal"


def test_prefer_ldp_include_omit():
    p = h.parse_prefer([
        f'return=representation; include="{LDP}PreferMinimalContainer {LDP}PreferMembership"; '
        f'omit="{LDP}PreferContainment"'])
    assert p.return_ == "representation"
    assert p.include == {f"{LDP}PreferMinimalContainer", f"{LDP}PreferMembership"}
    assert p.omit == {f"{LDP}PreferContainment"}
    assert h.preference_applied(p) == "return=representation"


def test_prefer_case_and_whitespace():
    p = h.parse_prefer([f'RETURN = Representation ;  INCLUDE = "{LDP}PreferMembership" '])
    assert p.return_ == "representation"
    assert p.include == {f"{LDP}PreferMembership"}


def test_prefer_several_values_and_headers():
    p = h.parse_prefer(["respond-async, wait=10", "handling=strict, return=minimal"])
    assert p.return_ == "minimal" and p.handling == "strict"
    assert [x.name for x in p.raw] == ["respond-async", "wait", "handling", "return"]
    assert p.get("wait").value == "10" and p.get("respond-async").value is None
    assert p.get("WAIT") is p.get("wait") and p.get("nope") is None
    assert h.preference_applied(p) == "return=minimal, handling=strict"


def test_prefer_first_instance_wins():
    p = h.parse_prefer(["return=minimal", "return=representation",
                        "handling=lenient, handling=strict"])
    assert p.return_ == "minimal" and p.handling == "lenient"


def test_prefer_comma_inside_quoted_include():
    p = h.parse_prefer(
        ['return=representation; include="http://a/x,y http://b/", handling=lenient'])
    assert p.include == {"http://a/x,y", "http://b/"}
    assert p.handling == "lenient"


def test_prefer_include_ignored_for_minimal():
    p = h.parse_prefer([f'return=minimal; include="{LDP}PreferMembership"'])
    assert p.include == frozenset()
    assert p.get("return").param("include") == f"{LDP}PreferMembership"


def test_prefer_unknown_values_ignored():
    p = h.parse_prefer(["return=everything, handling=sloppy, return"])
    assert p.return_ is None and p.handling is None
    assert h.preference_applied(p) == ""


def test_prefer_accepts_a_single_string():
    assert h.parse_prefer("return=minimal").return_ == "minimal"


def test_prefer_quoted_value_escapes():
    p = h.parse_prefer([r'foo="a \"b\" c"; x=1'])
    assert p.get("foo").value == 'a "b" c'
    assert p.get("foo").params == (("x", "1"),)


def test_prefer_empty_elements_skipped():
    p = h.parse_prefer([" , return=minimal ,, "])
    assert p.return_ == "minimal" and len(p.raw) == 1


# --- Link ---------------------------------------------------------------------------

def test_link_single():
    [link] = h.parse_link([f'<{LDP}BasicContainer>; rel="type"'])
    assert link.uri == f"{LDP}BasicContainer"
    assert link.rel == {"type"} and link.has_rel("TYPE") and link.params == {}


def test_link_several_in_one_header_and_several_headers():
    links = h.parse_link([
        f'<{LDP}Resource>; rel="type", <{LDP}Container>;rel=type',
        '<http://x/acl>; rel=acl'])
    assert [lk.uri for lk in links] == [f"{LDP}Resource", f"{LDP}Container", "http://x/acl"]
    assert all(lk.rel for lk in links)


def test_link_commas_and_semicolons_inside_uri_and_quotes():
    links = h.parse_link(
        ['<http://x/a,b;c>; rel="next"; title="one, two; three", <http://y/>; rel=prev'])
    assert links[0].uri == "http://x/a,b;c"
    assert links[0].params == {"title": "one, two; three"}
    assert links[1].uri == "http://y/" and links[1].rel == {"prev"}


def test_link_multiple_rels_lowercased_first_rel_only():
    [link] = h.parse_link([f'<http://x/>; rel="Next  {LDP}constrainedBy"; rel="prev"'])
    assert link.rel == {"next", f"{LDP}constrainedby"}
    assert link.has_rel(f"{LDP}constrainedBy") and not link.has_rel("prev")


def test_link_params_case_insensitive_first_wins():
    [link] = h.parse_link(['<http://x/>; REL=type; Anchor="#a"; anchor="#b"; type=text/html'])
    assert link.params == {"anchor": "#a", "type": "text/html"}


def test_link_ext_value_param():
    [link] = h.parse_link(["<http://x/>; rel=next; title*=UTF-8'de'n%c3%a4chstes%20Kapitel"])
    assert link.params["title*"] == "nächstes Kapitel"


def test_link_malformed_skipped():
    links = h.parse_link(['http://x/; rel=type, <http://ok/>; rel=type, '
                          '<http://bad/> junk; rel=x, <unclosed'])
    assert [lk.uri for lk in links] == ["http://ok/"]


def test_link_without_rel():
    [link] = h.parse_link(["<http://x/>"])
    assert link.rel == frozenset() and link.params == {}


def test_link_single_string():
    assert h.parse_link("<http://x/>; rel=type")[0].uri == "http://x/"


def test_format_link():
    assert h.format_link(f"{LDP}Resource", "type") == f'<{LDP}Resource>; rel="type"'
    assert (h.format_link("http://x/", ["next", "last"], title='say "hi"', type_="text/html")
            == '<http://x/>; rel="next last"; title="say \\"hi\\""; type="text/html"')


def test_format_link_encodes_iri_and_non_ascii_params():
    value = h.format_link("http://x/caf\u00e9 <1>", "describedby", title="Caf\u00e9")
    assert value == "<http://x/caf%C3%A9%20%3C1%3E>; rel=\"describedby\"; title*=UTF-8''Caf%C3%A9"
    [link] = h.parse_link([value])
    assert link.params == {"title*": "Caf\u00e9"}


def test_format_link_refuses_header_injection():
    with pytest.raises(ValueError):
        h.format_link("http://x/", "type", title="a\r\nSet-Cookie: x")
    assert "\r" not in h.format_link("http://x/\r\nX: y", "type")


def test_format_link_round_trip():
    value = h.format_link("http://x/a,b", "type", anchor="#frag")
    [link] = h.parse_link([value])
    assert (link.uri, link.rel, dict(link.params)) == (
        "http://x/a,b", {"type"}, {"anchor": "#frag"})


# --- ETags ------------------------------------------------------------------------

def test_make_etag():
    assert h.make_etag("abc") == '"abc"'
    assert h.make_etag("abc", weak=True) == 'W/"abc"'
    assert h.make_etag("") == '""'
    for bad in ('a"b', "a b", "caf\u00e9", "a\n"):
        with pytest.raises(ValueError):
            h.make_etag(bad)


def test_parse_etags():
    assert h.parse_etags("*") == "*"
    assert h.parse_etags('  * ') == "*"
    assert h.parse_etags('"a", W/"b" ,"c,d"') == [("a", False), ("b", True), ("c,d", False)]
    assert h.parse_etags('"a\\", "b"') == [("a\\", False), ("b", False)]  # no escapes in etags
    assert h.parse_etags('unquoted, w/"lower", "ok"') == [("ok", False)]
    assert h.parse_etags("") == []


LM = datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=UTC)
LM_HTTP = "Wed, 01 May 2024 12:00:00 GMT"
EARLIER = "Tue, 30 Apr 2024 12:00:00 GMT"
LATER = "Thu, 02 May 2024 12:00:00 GMT"


def pre(method="GET", *, exists=True, etag='"abc"', last_modified=LM, **headers):
    return h.evaluate_preconditions(method, exists=exists, etag=etag,
                                    last_modified=last_modified, **headers)


def test_preconditions_none():
    assert pre() is None
    assert pre("PUT", exists=False, etag=None, last_modified=None) is None


def test_if_match_strong_comparison():
    assert pre("PUT", if_match='"abc"') is None
    assert pre("PUT", if_match='"x", "abc"') is None
    assert pre("PUT", if_match='"x"') == 412
    assert pre("PUT", if_match='W/"abc"') == 412  # weak never matches strongly
    assert pre("PUT", etag='W/"abc"', if_match='"abc"') == 412
    assert pre("GET", if_match='"x"') == 412  # 412 for GET too
    assert pre("PUT", if_match="garbage") == 412


def test_if_match_weak_comparison_on_request():
    # opt-in for servers whose only validators are weak (LDP RDF sources)
    assert pre("PUT", etag='W/"abc"', if_match='W/"abc"', weak_if_match=True) is None
    assert pre("PUT", etag='W/"abc"', if_match='"abc"', weak_if_match=True) is None
    assert pre("PUT", etag='"abc"', if_match='W/"abc"', weak_if_match=True) is None
    assert pre("PUT", etag='W/"abc"', if_match='W/"x"', weak_if_match=True) == 412
    assert pre("PUT", exists=False, etag=None, if_match="*", weak_if_match=True) == 412
    assert pre("PUT", etag='W/"abc"', if_match='W/"abc"') == 412  # default stays strong


def test_if_match_bare_etag_argument():
    assert pre("PUT", etag="abc", if_match='"abc"') is None


def test_if_match_star():
    assert pre("PUT", if_match="*") is None
    assert pre("PUT", exists=False, etag=None, last_modified=None, if_match="*") == 412
    assert pre("PUT", exists=False, etag=None, if_match='"abc"') == 412


def test_if_none_match_weak_comparison():
    assert pre("GET", if_none_match='W/"abc"') == 304
    assert pre("HEAD", if_none_match='"abc"') == 304
    assert pre("GET", etag='W/"abc"', if_none_match='"abc"') == 304
    assert pre("GET", if_none_match='"x", "y"') is None
    assert pre("PUT", if_none_match='"abc"') == 412
    assert pre("DELETE", if_none_match='W/"abc"') == 412


def test_if_none_match_star():
    assert pre("PUT", exists=False, etag=None, last_modified=None, if_none_match="*") is None
    assert pre("PUT", if_none_match="*") == 412
    assert pre("GET", if_none_match="*") == 304
    assert pre("post", if_none_match="*") == 412


def test_if_unmodified_since():
    assert pre("PUT", if_unmodified_since=LM_HTTP) is None  # equal: fractions ignored
    assert pre("PUT", if_unmodified_since=LATER) is None
    assert pre("PUT", if_unmodified_since=EARLIER) == 412
    assert pre("GET", if_unmodified_since=EARLIER) == 412


def test_if_unmodified_since_ignored_cases():
    assert pre("PUT", if_match='"abc"', if_unmodified_since=EARLIER) is None  # If-Match present
    assert pre("PUT", if_unmodified_since="yesterday") is None  # bad date
    assert pre("PUT", last_modified=None, if_unmodified_since=EARLIER) is None  # no date
    assert pre("PUT", exists=False, etag=None, if_unmodified_since=EARLIER) is None


def test_if_modified_since():
    assert pre("GET", if_modified_since=LM_HTTP) == 304
    assert pre("HEAD", if_modified_since=LATER) == 304
    assert pre("GET", if_modified_since=EARLIER) is None


def test_if_modified_since_ignored_cases():
    assert pre("PUT", if_modified_since=LATER) is None  # not GET/HEAD
    assert pre("GET", if_none_match='"x"', if_modified_since=LATER) is None  # If-None-Match wins
    assert pre("GET", if_modified_since="not a date") is None
    assert pre("GET", last_modified=None, if_modified_since=LATER) is None
    assert pre("GET", exists=False, etag=None, if_modified_since=LATER) is None


def test_preconditions_order():
    # If-Match fails first: 412 even though If-None-Match would give 304
    assert pre("GET", if_match='"x"', if_none_match='"abc"') == 412
    # If-Unmodified-Since fails before If-None-Match
    assert pre("GET", if_unmodified_since=EARLIER, if_none_match='"abc"') == 412
    # both pass -> If-None-Match decides
    assert pre("GET", if_match='"abc"', if_none_match='"abc"') == 304


def test_preconditions_blank_headers_are_absent():
    assert pre("PUT", if_match="", if_none_match="  ") is None


def test_preconditions_naive_last_modified_is_utc():
    naive = datetime(2024, 5, 1, 12, 0, 0)
    assert pre("GET", last_modified=naive, if_modified_since=LM_HTTP) == 304
    other_tz = LM.astimezone(timezone(timedelta(hours=5)))
    assert pre("GET", last_modified=other_tz, if_modified_since=LM_HTTP) == 304


# --- Digest -------------------------------------------------------------------------

DATA = b"some content"


def b64(algo):
    return base64.b64encode(hashlib.new(algo, DATA).digest()).decode()


def test_parse_digest():
    header = f"SHA-256={b64('sha256')}, md5={b64('md5')},SHA={b64('sha1')}"
    assert h.parse_digest(header) == {"sha-256": b64("sha256"), "md5": b64("md5"),
                                      "sha": b64("sha1")}


def test_parse_digest_keeps_unknown_and_padding_first_wins():
    assert h.parse_digest("UNIXsum=30637, md5=YQ==, md5=Yg==") == {
        "unixsum": "30637", "md5": "YQ=="}


def test_parse_digest_malformed_entries():
    assert h.parse_digest(", sha-256, =abc") == {"sha-256": ""}
    assert h.parse_digest("") == {}


@pytest.mark.parametrize("header, problem", [
    ("===,,,", "algorithm name is missing"), (",,,", "holds no"), ("", "holds no"),
    ("sha-256", "no '='"), ("=abc", "algorithm name is missing"),
    ("sha 256=abc", "not an algorithm name"), ("sha-256=", "value is empty"),
    ("md5=YQ==, sha-256", "no '='"), ('"md5"=YQ==', "not an algorithm name"),
])
def test_parse_digest_strict_refuses_malformed_headers(header, problem):
    with pytest.raises(InvalidDigestError, match="Malformed Digest header") as info:
        h.parse_digest(header, strict=True)
    assert problem in str(info.value)


def test_parse_digest_strict_takes_well_formed_headers():
    assert h.parse_digest(" md5=YQ==,, UNIXsum=30637 ,", strict=True) == {
        "md5": "YQ==", "unixsum": "30637"}


@pytest.mark.parametrize("value, ok", [
    ("text/plain", True), ("text/turtle; charset=utf-8", True), ("a/b;x=\"q;\\\"\"", True),
    ("message/external-body; access-type=URL; URL=\"http://x/f\"", True),
    ("text/plain;", True), ("Application/LD+JSON", True),
    ("bogus", False), ("/", False), ("text/", False), ("/plain", False), (";;;", False),
    ("text/plain; x", False), ("text/plain; =y", False), ('text/plain; a="open', False),
    ("text plain/x", False), ("", False), ("text/plain; a=b c", False),
])
def test_is_media_type(value, ok):
    assert mediatypes.is_media_type(value) is ok


def test_parse_want_digest():
    assert h.parse_want_digest("SHA-512;q=0.3, sha-256;q=1, md5;q=0.3, sha") == \
        ["sha-256", "sha", "sha-512", "md5"]
    assert h.parse_want_digest("md5;q=0, sha-256") == ["sha-256"]
    assert h.parse_want_digest("md5;q=2, sha;q=abc, sha-256;Q=0.5") == ["sha-256"]
    assert h.parse_want_digest("") == []


def test_format_digest():
    digests = {"sha512": hashlib.sha512(DATA).hexdigest(),
               "SHA-256": hashlib.sha256(DATA).hexdigest(),
               "sha1": hashlib.sha1(DATA).hexdigest(), "md5": hashlib.md5(DATA).hexdigest()}
    assert h.format_digest(digests) == (
        f"sha-512={b64('sha512')}, sha-256={b64('sha256')}, sha={b64('sha1')}, md5={b64('md5')}")
    assert h.format_digest({}) == ""


def test_format_digest_round_trip():
    value = h.format_digest({"sha256": hashlib.sha256(DATA).hexdigest()})
    parsed = h.parse_digest(value)
    assert base64.b64decode(parsed["sha-256"]).hex() == hashlib.sha256(DATA).hexdigest()


def test_format_digest_errors():
    with pytest.raises(UnsupportedDigestError):
        h.format_digest({"crc32": "00"})
    with pytest.raises(InvalidDigestError):
        h.format_digest({"md5": "not hex"})


# --- Range --------------------------------------------------------------------------

@pytest.mark.parametrize("header, expected", [
    ("bytes=0-499", [(0, 499)]),
    ("bytes=500-999", [(500, 999)]),
    ("bytes=-500", [(9500, 9999)]),
    ("bytes=9500-", [(9500, 9999)]),
    ("bytes=0-0,-1", [(0, 0), (9999, 9999)]),
    ("bytes=500-600, 601-999", [(500, 600), (601, 999)]),
    ("bytes=9000-20000", [(9000, 9999)]),  # clipped
    ("bytes=-20000", [(0, 9999)]),  # suffix longer than the content
    ("Bytes=1-2", [(1, 2)]),  # unit is case-insensitive
    ("bytes=1-2,,3-4", [(1, 2), (3, 4)]),  # empty list elements
    ("bytes=20000-, 5-5", [(5, 5)]),  # unsatisfiable part dropped
    ("bytes=-0, 1-1", [(1, 1)]),
])
def test_parse_range(header, expected):
    assert h.parse_range(header, 10000) == expected


@pytest.mark.parametrize("header", [
    "", "bytes", "bytes=", "bytes=,", "items=0-5", "bytes=5-1", "bytes=0-1,5-1", "bytes=-",
    "bytes=a-b", "bytes=1 - 2", "bytes=+1-2", "bytes=1-2-3", "bytes=\u0661-\u0662",
])
def test_parse_range_invalid_is_ignored(header):
    assert h.parse_range(header, 10000) is None


@pytest.mark.parametrize("header", ["bytes=10000-", "bytes=10000-10005", "bytes=-0",
                                    "bytes=20000-, 10000-"])
def test_parse_range_unsatisfiable(header):
    with pytest.raises(RangeNotSatisfiableError) as err:
        h.parse_range(header, 10000)
    assert err.value.size == 10000
    assert isinstance(err.value, LakesuperiorError)


def test_parse_range_empty_representation():
    with pytest.raises(RangeNotSatisfiableError):
        h.parse_range("bytes=0-", 0)
    assert h.parse_range("bytes=-5", 0) is None  # suffix of nothing: send it whole


def test_content_range():
    assert h.content_range(0, 499, 1234) == "bytes 0-499/1234"
    assert h.content_range(1233, 1233, 1234) == "bytes 1233-1233/1234"
    for args in ((5, 4, 10), (0, 10, 10), (-1, 2, 10)):
        with pytest.raises(ValueError):
            h.content_range(*args)
    assert h.unsatisfied_content_range(1234) == "bytes */1234"


# --- Content negotiation ------------------------------------------------------------

RDF = ["text/turtle", "application/ld+json", "application/n-triples", "application/rdf+xml"]


@pytest.mark.parametrize("accept, expected", [
    (None, "text/turtle"),
    ("", "text/turtle"),
    ("application/ld+json", "application/ld+json"),
    ("APPLICATION/LD+JSON", "application/ld+json"),
    ("*/*", "text/turtle"),
    ("application/*", "application/ld+json"),  # first offered among equals
    ("text/turtle;q=0.5, application/rdf+xml", "application/rdf+xml"),
    ("text/turtle;q=0.8, application/n-triples;q=0.8", "text/turtle"),  # tie: first offered
    ("application/*;q=0.9, application/rdf+xml;q=0.1, */*;q=0.95", "text/turtle"),
    ("*/*;q=0.1, application/n-triples", "application/n-triples"),
    ("text/html", None),
    ("text/turtle;q=0, */*", "application/ld+json"),  # specific q=0 beats the wildcard
    ("*/*;q=0", None),
    ("garbage, ;;;", "text/turtle"),  # wholly malformed: as if absent
    ("*/turtle, application/rdf+xml;q=0.2", "application/rdf+xml"),  # */x is invalid
    ("text/turtle;q=bogus, application/n-triples;q=0.1", "application/n-triples"),
])
def test_negotiate(accept, expected):
    assert mediatypes.negotiate(accept, RDF) == expected


def test_negotiate_rfc7231_example():
    accept = "text/*;q=0.3, text/html;q=0.7, text/html;level=1, text/html;level=2;q=0.4, */*;q=0.5"
    cases = {"text/html;level=1": 1.0, "text/html": 0.7, "text/plain": 0.3, "image/jpeg": 0.5,
             "text/html;level=2": 0.4, "text/html;level=3": 0.7}
    ranges = mediatypes.parse_accept(accept)
    for offer, q in cases.items():
        assert mediatypes._rank(mediatypes._offer(offer), ranges, frozenset())[0] == q, offer
    assert mediatypes.negotiate(accept, ["image/jpeg", "text/html;level=1"]) == "text/html;level=1"
    assert mediatypes.negotiate(accept, ["text/plain", "image/jpeg"]) == "image/jpeg"


def test_negotiate_parameters():
    offered = ["application/ld+json", 'application/ld+json; profile="http://www.w3.org/ns/json-ld#compacted"']
    accept = 'application/ld+json;profile="http://www.w3.org/ns/json-ld#compacted"'
    assert mediatypes.negotiate(accept, offered) == offered[1]
    assert mediatypes.negotiate("text/turtle; charset=UTF-8", ["text/turtle; charset=utf-8"]) == \
        "text/turtle; charset=utf-8"
    assert mediatypes.negotiate("text/turtle;charset=latin1", ["text/turtle"]) is None


def test_negotiate_accept_ext_after_q_ignored():
    assert mediatypes.negotiate("text/turtle;q=0.5;ext=1", ["text/turtle"]) == "text/turtle"


def test_negotiate_nothing_offered():
    assert mediatypes.negotiate("*/*", []) is None


# --- Dates --------------------------------------------------------------------------

EXAMPLE = datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)


def test_format_http_date():
    assert h.format_http_date(EXAMPLE) == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert h.format_http_date(
        EXAMPLE.replace(microsecond=999999)) == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert h.format_http_date(datetime(1994, 11, 6, 8, 49, 37)) == "Sun, 06 Nov 1994 08:49:37 GMT"
    est = EXAMPLE.astimezone(timezone(timedelta(hours=-5)))
    assert h.format_http_date(est) == "Sun, 06 Nov 1994 08:49:37 GMT"


@pytest.mark.parametrize("value", [
    "Sun, 06 Nov 1994 08:49:37 GMT",  # IMF-fixdate
    "Sunday, 06-Nov-94 08:49:37 GMT",  # obsolete RFC 850
    "Sun Nov  6 08:49:37 1994",  # asctime
    "  Sun, 06 Nov 1994 08:49:37 GMT  ",
    # read leniently (RFC 7231 section 7.1.1.1 asks recipients to be robust), as Fedora does
    "Sun, 6 Nov 1994 08:49:37 GMT",  # one-digit day
    "Sunday, 6-Nov-94 08:49:37 GMT",
    "Sun Nov 6 08:49:37 1994",
    "06 Nov 1994 08:49:37 GMT",  # no weekday (RFC 1123)
    "Sun, 06 Nov 1994 09:49:37 +0100",  # a numeric zone (RFC 1123)
])
def test_parse_http_date_formats(value):
    parsed = h.parse_http_date(value)
    assert parsed == EXAMPLE and parsed.tzinfo is UTC


@pytest.mark.parametrize("value", [
    None, "", "yesterday", "Sun, 06 Nov 1994 08:49:37 EST", "Sun, 31 Feb 1994 08:49:37 GMT",
    "Sun, 06 Nov 1994 25:49:37 GMT", "sun, 06 nov 1994 08:49:37 gmt", "1994-11-06T08:49:37Z",
    "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 006 Nov 1994 08:49:37 GMT",
])
def test_parse_http_date_invalid(value):
    assert h.parse_http_date(value) is None


def test_parse_http_date_leap_second():
    assert h.parse_http_date("Sat, 31 Dec 2016 23:59:60 GMT") == datetime(
        2016, 12, 31, 23, 59, 59, tzinfo=UTC)


def test_parse_rfc850_two_digit_year():
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert h.parse_http_date("Monday, 01-Jan-80 00:00:00 GMT", now=now).year == 2080  # 50 ahead
    assert h.parse_http_date("Monday, 01-Jan-35 00:00:00 GMT", now=now).year == 2035
    assert h.parse_http_date("Monday, 01-Jan-79 00:00:00 GMT", now=now).year == 2079  # 49 ahead
    assert h.parse_http_date("Monday, 01-Jan-81 00:00:00 GMT", now=now).year == 1981  # 51 ahead


def test_http_date_round_trip():
    now = datetime(2024, 2, 29, 23, 5, 1, tzinfo=UTC)
    assert h.parse_http_date(h.format_http_date(now)) == now


def test_parse_accept_datetime():
    assert h.parse_accept_datetime("Thu, 31 May 2007 20:35:00 GMT") == \
        datetime(2007, 5, 31, 20, 35, tzinfo=UTC)
    assert h.parse_accept_datetime(None) is None
    assert h.parse_accept_datetime("") is None
    assert h.parse_accept_datetime("  ") is None
    assert h.parse_accept_datetime("Thu, 31  May 2007 20:35:00 GMT") == \
        datetime(2007, 5, 31, 20, 35, tzinfo=UTC)


@pytest.mark.parametrize("value, says", [
    ("2007-05-31", "none of the HTTP date forms"),
    ("yesterday", "none of the HTTP date forms"),
    ("Thu, 31 Feb 2007 20:35:00 GMT", "no calendar date"),
    ("Thu, 31 May 2007 24:35:00 GMT", "no calendar date"),
])
def test_parse_accept_datetime_malformed(value, says):
    with pytest.raises(InvalidHeaderError, match=says) as e:
        h.parse_accept_datetime(value)
    assert "Accept-Datetime" in str(e.value) and value in str(e.value)


# --- Content-Disposition ------------------------------------------------------------

def test_content_disposition_ascii():
    assert h.content_disposition("report.pdf") == 'attachment; filename="report.pdf"'
    assert h.content_disposition("a b.txt", inline=True) == 'inline; filename="a b.txt"'
    assert h.content_disposition('say "hi".txt') == 'attachment; filename="say \\"hi\\".txt"'


def test_content_disposition_non_ascii():
    assert h.content_disposition("caf\u00e9 \u2603.txt") == (
        "attachment; filename=\"cafe _.txt\"; filename*=UTF-8''caf%C3%A9%20%E2%98%83.txt")


def test_content_disposition_percent_and_backslash():
    assert h.content_disposition("100%.txt") == (
        "attachment; filename=\"100_.txt\"; filename*=UTF-8''100%25.txt")
    assert h.content_disposition("a\\b") == "attachment; filename=\"a_b\"; filename*=UTF-8''a%5Cb"


def test_content_disposition_strips_control_characters():
    value = h.content_disposition("evil\r\nSet-Cookie: x.txt")
    assert "\r" not in value and "\n" not in value
    assert value == 'attachment; filename="evilSet-Cookie: x.txt"'


@pytest.mark.parametrize("name", ["plain.txt", "caf\u00e9.txt", "\u65e5\u672c\u8a9e.pdf",
                                  '"quoted"; name.txt', "100%", "a,b;c"])
def test_content_disposition_round_trip(name):
    assert h.parse_content_disposition(h.content_disposition(name)) == name


def test_parse_content_disposition():
    p = h.parse_content_disposition
    assert p('attachment; filename="a.txt"') == "a.txt"
    assert p("attachment; filename=a.txt") == "a.txt"
    assert p("INLINE; FILENAME=a.txt") == "a.txt"
    assert p("attachment") is None
    assert p(None) is None and p("") is None
    assert p('filename="a.txt"') is None  # no disposition type
    # filename* wins, whatever the order (RFC 6266 4.3)
    assert p("attachment; filename*=UTF-8''%e2%82%ac%20rates; "
             "filename=\"EURO rates\"") == "\u20ac rates"
    assert p("attachment; filename*=iso-8859-1'en'%A3%20rates") == "\u00a3 rates"
    # a bad filename* falls back to filename
    assert p("attachment; filename=\"x.txt\"; filename*=UTF-8''%ff%fe") == "x.txt"
    assert p("attachment; filename=\"x.txt\"; filename*=KOI8-R''abc") == "x.txt"
    # path parts are returned as sent
    assert p('attachment; filename="../../etc/passwd"') == "../../etc/passwd"


# --- Slug -------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("my-resource", "my-resource"),
    ("The Beach", "The Beach"),
    ("caf%C3%A9", "caf\u00e9"),
    ("cafe%CC%81", "caf\u00e9"),  # NFC
    ("  spaced  ", "spaced"),
    ("/leading/", "leading"),
    ("a/b", "a_b"),
    ("a%2Fb", "a_b"),
    ("a\\b", "a_b"),
    ("...", "..."),
    ("%252e", "%2e"),  # decoded once only
])
def test_parse_slug(value, expected):
    assert h.parse_slug(value) == expected


@pytest.mark.parametrize("value", [
    None, "", "   ", "/", "//", ".", "..", "%2E", "%2e%2E", "/../", "a%00b", "a%0Ab", "tab\there",
    "%ff", "%C3", "a\x7fb",
])
def test_parse_slug_refused(value):
    assert h.parse_slug(value) is None
