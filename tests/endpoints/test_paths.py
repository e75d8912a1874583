"""Pure functions of the HTTP layer: paths, Memento logic, HTML helpers."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lakesuperior.endpoints import html, memento
from lakesuperior.endpoints.paths import (
    MAX_SEGMENT,
    PathError,
    Target,
    Urls,
    check_controls,
    check_empty_segments,
    normalize_path,
    parse_target,
    slug_segment,
    target_path,
)
from lakesuperior.model.namespaces import RDF_TYPE

# --- paths ---------------------------------------------------------------------

@pytest.mark.parametrize("raw, uid", [
    ("", "/"), ("/", "/"), ("/a", "/a"), ("/a/", "/a"), ("/a/b", "/a/b"),
    ("/caf%C3%A9", "/caf%C3%A9"), ("/café".encode().decode("latin-1"), "/caf%C3%A9"),
    ("/caf%c3%a9", "/caf%C3%A9"),
    ("/%41%7e", "/A~"), ("/a%20b", "/a%20b"), ("/a b", "/a%20b"), ("/50%25", "/50%25"),
    ("/a%23b", "/a%23b"), ("/a%3Fb", "/a%3Fb"), ("/a%3fb", "/a%3Fb"), ("/x:y@z", "/x:y@z"),
    ("/a%22%3C%3E", "/a%22%3C%3E"),
])
def test_normalize_path(raw, uid):
    assert parse_target(raw) == Target(uid)


def test_same_resource_any_encoding():
    assert parse_target("/caf%c3%a9").uid == parse_target("/café".encode()).uid


@pytest.mark.parametrize("raw", [
    "/..", "/a/../b", "/%2e%2e", "/a/%2E%2E/b", "/.", "/a/./b", "/a%2Fb", "/a%2fb",
    "/a%5Cb", "/a\\b", "/a%00b", "/a%0Ab", "/a\x01", "/a//b", "//a", "/a%FFb", "/a%C3",
    "/" + "x" * (MAX_SEGMENT + 1), "a/b", "/a%7F",
])
def test_bad_paths(raw):
    with pytest.raises(PathError) as info:
        parse_target(raw)
    assert info.value.status == 400


@pytest.mark.parametrize("raw, code", [
    ("/a%0Ab", 0x0A), ("/a%0d", 0x0D), ("/%00", 0), ("/a%7Fb", 0x7F), ("/a\nb", 0x0A),
    ("/a\x1b", 0x1B), (b"/a\x7f", 0x7F), ("/a%C2%85", 0x85), ("/x/%c2%9f/y", 0x9F),
    ("/rest/fcr:metadata%09", 0x09),
])
def test_control_characters(raw, code):
    with pytest.raises(PathError, match=f"Control character U\\+{code:04X}") as info:
        check_controls(raw)
    assert info.value.status == 400


@pytest.mark.parametrize("raw", ["/a%20b", "/caf%C3%A9", "/café".encode(), "/a%C2%A0", "/%25"])
def test_no_control_characters(raw):
    check_controls(raw)


@pytest.mark.parametrize("raw", ["//", "//x", "/rest//x", "/rest/c//", b"/rest//x",
                                 "http://host//rest", "https://host/rest//c"])
def test_empty_segments(raw):
    with pytest.raises(PathError, match="Empty path segments") as info:
        check_empty_segments(raw)
    assert info.value.status == 400


@pytest.mark.parametrize("raw", ["", "/", "/rest/", "/rest/c/", "http://host/rest/c",
                                 "http://host", "/rest/c%2F%2Fx", "*"])
def test_no_empty_segments(raw):
    check_empty_segments(raw)


def test_overlong_path():
    with pytest.raises(PathError):
        normalize_path("/" + "/".join(["y" * 200] * 30))


def test_segment_limit_is_inclusive():
    assert normalize_path("/" + "x" * MAX_SEGMENT) == ["x" * MAX_SEGMENT]


@pytest.mark.parametrize("raw, target", [
    ("/a/fcr:metadata", Target("/a", "metadata")),
    ("/a/fcr:versions", Target("/a", "timemap")),
    ("/a/fcr:versions/20240102030405", Target("/a", "memento", "20240102030405")),
    ("/a/fcr:metadata/fcr:versions", Target("/a", "timemap", description=True)),
    ("/a/fcr:metadata/fcr:versions/20240102030405",
     Target("/a", "memento", "20240102030405", True)),
    ("/a/b/fcr:tombstone", Target("/a/b", "tombstone")),
    ("/a/b/fcr:acl", Target("/a/b", "acl")),
    ("/fcr:acl", Target("/", "acl")),
    ("/fcr:versions", Target("/", "timemap")),
])
def test_fedora_endpoints(raw, target):
    assert parse_target(raw) == target
    assert target_path(target) == raw


@pytest.mark.parametrize("raw", [
    "/a/fcr:nope", "/a/fcr:acl/x", "/a/fcr:versions/123", "/a/fcr:versions/20240102030405/x",
    "/a/fcr:metadata/x", "/a/fcr:tombstone/x", "/a/fcr:metadata/fcr:tombstone", "/FCR:metadata",
    "/a/fcr:versions/2024010203040x",
])
def test_unknown_fedora_endpoints_are_404(raw):
    with pytest.raises(PathError) as info:
        parse_target(raw)
    assert info.value.status == 404


def test_target_path_of_root():
    assert target_path(Target("/")) == "/"
    assert target_path(Target("/", "metadata")) == "/fcr:metadata"


@pytest.mark.parametrize("slug, segment", [
    ("abc", "abc"), ("a b", "a%20b"), ("café", "caf%C3%A9"), ("50%", "50%25"), ("a#b", "a%23b"),
    ("x?y", "x%3Fy"),
])
def test_slug_segment(slug, segment):
    assert slug_segment(slug) == segment
    assert parse_target(("/" + segment).encode()).uid == "/" + segment


@pytest.mark.parametrize("slug", ["fcr:versions", "FCR:x", "..", ".", "a\x00", "x" * 300])
def test_bad_slugs(slug):
    with pytest.raises(PathError):
        slug_segment(slug)


def test_urls():
    urls = Urls("http://h:8000/app", "/rest")
    assert urls.base == "http://h:8000/app/rest"
    assert urls.constraints == "http://h:8000/app/constraints"
    assert urls.url("/") == "http://h:8000/app/rest/"
    assert urls.url("/", "timemap") == "http://h:8000/app/rest/fcr:versions"
    assert urls.url("/a", "memento", "20240101000000", description=True) == (
        "http://h:8000/app/rest/a/fcr:metadata/fcr:versions/20240101000000")
    for target in (Target("/a", "metadata"), Target("/a", "tombstone"),
                   Target("/a/b", "timemap", description=True)):
        assert parse_target(urls.url(target.uid, target.kind, target.version,
                                     target.description)[len(urls.base):]) == target


# --- Memento ---------------------------------------------------------------------

def test_version_datetime():
    assert memento.version_datetime("20240102030405") == datetime(
        2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    with pytest.raises(ValueError):
        memento.version_datetime("2024")


def test_choose_memento():
    ids = ["20200101000000", "20210101000000", "20220101000000"]
    at = lambda y, m=1: datetime(y, m, 1, tzinfo=UTC)  # noqa: E731
    assert memento.choose_memento(ids, at(2021, 6)) == "20210101000000"
    assert memento.choose_memento(ids, at(2021)) == "20210101000000"
    assert memento.choose_memento(ids, at(1970)) == "20200101000000"
    assert memento.choose_memento(ids, at(2030)) == "20220101000000"
    assert memento.choose_memento([], at(2030)) is None


def test_timemap_link_format():
    text = memento.timemap_link_format(
        "http://x/r", "http://x/r/fcr:versions",
        [("http://x/r/fcr:versions/20200101000000", "20200101000000"),
         ("http://x/r/fcr:versions/20210101000000", "20210101000000")])
    from lakesuperior.http.headers import parse_link
    parsed = parse_link(text.replace("\n", ""))
    assert parsed[0].uri == "http://x/r" and parsed[0].rel == {"original", "timegate"}
    assert parsed[1].rel == {"self"} and parsed[1].params["type"] == "application/link-format"
    assert parsed[1].params["from"] == "Wed, 01 Jan 2020 00:00:00 GMT"
    assert parsed[2].rel == {"memento"}          # Fedora 6's form: no first / last
    assert parsed[2].params["datetime"] == "Wed, 01 Jan 2020 00:00:00 GMT"
    assert parsed[3].rel == {"memento"}


def test_timemap_triples():
    tm = "http://x/r/fcr:versions"
    triples = memento.timemap_triples(tm, [(tm + "/20200101000000", "20200101000000", None),
                                           (tm + "/20210101000000", "20210101000000", "v2")])
    m1, m2 = f"<{tm}/20200101000000>", f"<{tm}/20210101000000>"
    types = {o for s, p, o in triples if p == RDF_TYPE}
    assert types == {"<http://www.w3.org/ns/ldp#Container>", "<http://mementoweb.org/ns#TimeMap>",
                     "<http://www.w3.org/ns/ldp#Resource>", "<http://www.w3.org/ns/ldp#RDFSource>"}
    assert (f"<{tm}>", "<http://www.w3.org/ns/ldp#contains>", m2) in triples
    assert (m1, "<http://mementoweb.org/ns#mementoDatetime>",
            '"2020-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>') in triples
    labels = [(s, o) for s, p, o in triples if p.endswith("#label>")]
    assert labels == [(m2, '"v2"')]


def test_empty_timemap_link_format():
    text = memento.timemap_link_format("http://x/r", "http://x/r/fcr:versions", [])
    assert "from=" not in text and text.count("rel=") == 2


# --- HTML helpers ---------------------------------------------------------------------

def test_terms():
    assert html.term("<http://www.w3.org/ns/ldp#contains>").text == "ldp:contains"
    t = html.term('"a\\"b\\nc"@en')
    assert (t.kind, t.text, t.note) == ("literal", 'a"b\nc', "en")
    t = html.term('"5"^^<http://www.w3.org/2001/XMLSchema#int>')
    assert (t.text, t.note) == ("5", "xsd:int")
    assert html.term("_:b1").kind == "bnode"
    assert html.term('"\\u00E9"').text == "é"


def test_group_and_pages():
    s = "<http://x/a>"
    triples = [(s, "<http://p/1>", '"x"'), ("<http://x/a#h>", "<http://p/1>", '"y"'),
               (s, "<http://www.w3.org/ns/ldp#contains>", "<http://x/a/b>")]
    groups = html.group(triples, s, skip=("<http://www.w3.org/ns/ldp#contains>",))
    assert [g.term.href for g in groups] == ["http://x/a", "http://x/a#h"]
    assert len(groups[0].properties) == 1
    items = [str(i) for i in range(250)]
    assert html.page_of(items, 250, 3) == (sorted(items)[200:], 3, 3)
    assert html.page_of(items, 250, 99)[1] == 3 and html.page_of(items, 250, -1)[1] == 1
    assert html.page_of([], 0, 1) == ([], 1, 1)
    # past SORT_LIMIT: the store's order, each page sorted; only what was read
    many = [f"k{i}" for i in range(html.SORT_LIMIT + 1)]
    assert html.children_range(1) == (0, html.SORT_LIMIT + 1)
    assert html.page_of(many, 5000, 2) == (sorted(many[100:200]), 2, 50)
    assert html.breadcrumbs("http://x/rest", "/a/b") == [
        ("root", "http://x/rest/"), ("a", "http://x/rest/a"), ("b", "http://x/rest/a/b")]
    assert html.human_size(10) == "10 bytes" and html.human_size(2048) == "2.0 KiB"


@pytest.mark.parametrize("plain", ["abc", "a-b.c_d~e", "x!$&'()*+,;=:@y", "fcr:metadata",
                                   "0f8fad5b-d9cb-469f-a165-70867728950e"])
def test_plain_segments_read_as_their_percent_encoded_forms(plain):
    # a segment with nothing to decode or quote is taken as it is; encoding any of its
    # characters gives the same normalized segment through the decoding path
    from lakesuperior.endpoints.paths import normalize_path
    encoded = f"%{ord(plain[0]):02X}" + plain[1:]
    assert normalize_path("/" + plain) == normalize_path("/" + encoded) == [plain]


@pytest.mark.parametrize("bad", ["/.", "/a/..", "/" + "a" * 300])
def test_plain_segments_are_still_checked(bad):
    from lakesuperior.endpoints.paths import PathError, normalize_path
    with pytest.raises(PathError):
        normalize_path(bad)
