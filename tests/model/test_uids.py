"""Uids: validation, normalisation, internal <-> public URIs."""
from __future__ import annotations

import http.client
from urllib.parse import quote

import pytest

from lakesuperior.exceptions import InvalidResourceError
from lakesuperior.model import uids
from lakesuperior.model.uids import UriMap, normalize_uid

from ..servers import lsup_server


@pytest.mark.parametrize("given, expected", [
    ("", "/"),
    ("/", "/"),
    ("a", "/a"),
    ("/a", "/a"),
    ("/a/", "/a"),
    ("/a/b/c", "/a/b/c"),
    ("/a%20b", "/a%20b"),
    ("/ünïcode/Ω", "/%C3%BCn%C3%AFcode/%CE%A9"),
    ("/caf%c3%a9", "/caf%C3%A9"),
    ("/%7Ea%41", "/~aA"),
    ("/a[b]", "/a%5Bb%5D"),
    ("/a%zz", "/a%25zz"),
    ("/a%3fb", "/a%3Fb"),
    ("/a:b", "/a:b"),
    ("/fcrx", "/fcrx"),
])
def test_normalize_uid_accepts(given, expected):
    assert normalize_uid(given) == expected


@pytest.mark.parametrize("bad, why", [
    ("/a/../b", "'..'"),
    ("/..", "'..'"),
    ("/a/./b", "'.'"),
    ("/a//b", "empty"),
    ("//a", "empty"),
    ("/a\x00b", "control"),
    ("/a\nb", "control"),
    ("/a\x7fb", "control"),
    ("/a b", "character"),
    ("/a<b", "character"),
    ("/a#b", "character"),
    ("/a?b", "character"),
    ("/a/fcr:metadata", "reserved"),
    ("/fcr:versions", "reserved"),
    ("/a/FCR:acl/b", "reserved"),
    ("/a%2Fb", "encoded '/'"),
    ("/a%5cb", "encoded '\\\\'"),
    ("/a%0Ab", "control"),
    ("/%2e%2E", "'..'"),
    ("/fcr%3Ametadata", "reserved"),
    ("/a%FFb", "not valid UTF-8"),
    ("/a\ud800", "lone surrogate"),
])
def test_normalize_uid_refuses(bad, why):
    with pytest.raises(InvalidResourceError) as e:
        normalize_uid(bad)
    assert why in str(e.value)


@pytest.mark.parametrize("path", [
    "/a/b", "/café/Ω", "/caf%c3%a9", "/%7Ea%41", "/a[b]", "/a%zz", "/a%3fb", "/a%20b",
    "/a%2Fb", "/a%5Cb", "/a%0Ab", "/%2e%2E", "/a%FFb", "/a/" + "x" * 255, "/a/" + "x" * 256,
    "/" + "é" * 42, "/" + "é" * 43, "/a:b@c!$&'()*+,;=",
])
def test_both_doors_agree(path):
    """The HTTP door (request path -> uid) and the Python API's ``normalize_uid``
    name the same resource, or both refuse."""
    from lakesuperior.endpoints.paths import PathError, parse_target
    try:
        http_uid = parse_target(path.encode("utf-8")).uid
    except PathError:
        http_uid = None
    try:
        api_uid = normalize_uid(path)
    except InvalidResourceError:
        api_uid = None
    assert http_uid == api_uid


def test_normalize_uid_refuses_non_strings():
    with pytest.raises(InvalidResourceError):
        normalize_uid(None)  # type: ignore[arg-type]


def test_check_slug():
    assert uids.check_slug("photo-1") == "photo-1"
    for bad in ("", "a/b", "..", "fcr:x", "a b"):
        with pytest.raises(InvalidResourceError):
            uids.check_slug(bad)


def test_tree_helpers():
    assert uids.parent_uid("/") is None
    assert uids.parent_uid("/a") == "/"
    assert uids.parent_uid("/a/b") == "/a"
    assert uids.child_uid("/", "x") == "/x"
    assert uids.child_uid("/a", "x") == "/a/x"
    assert uids.ancestors("/a/b/c") == ["/a/b", "/a", "/"]
    assert uids.is_descendant("/a/b", "/a")
    assert not uids.is_descendant("/ab", "/a")
    assert uids.is_descendant("/a", "/")
    assert not uids.is_descendant("/", "/")


def test_parent_of_a_non_root_uid():
    assert uids.parent_of("/a") == "/"
    assert uids.parent_of("/a/b") == "/a"
    with pytest.raises(InvalidResourceError):
        uids.parent_of("/")


def test_internal_uris():
    assert uids.res_uri("/") == "<info:fcres/>"
    assert uids.res_uri("/a/b") == "<info:fcres/a/b>"
    assert uids.uid_of("<info:fcres/a/b>") == "/a/b"
    assert uids.uid_of("<info:fcres/a/b#frag>") == "/a/b"
    assert uids.uid_of("<info:fcres/a/fcr:versions/20200101000000>") == "/a"
    assert uids.uid_of("<info:fcres/>") == "/"
    assert uids.uid_of("<info:fcres/#x>") == "/"
    assert uids.version_uri("/", "20200101000000") == "<info:fcres/fcr:versions/20200101000000>"
    assert uids.graph("tomb", "/a") == "<info:fctomb/a>"
    assert uids.graph_kind("<info:fcres/a>") == "res"
    assert uids.graph_kind("<info:fcmbr/a>") == "mbr"
    assert uids.graph_kind("<info:fcmidx/a>") == "midx"
    assert uids.graph_kind("<http://x/a>") is None
    assert uids.uid_of_graph("<info:fchist/a/b>") == "/a/b"


def test_graph_prefixes_do_not_overlap():
    prefixes = list(uids._GRAPH_PREFIXES.values())
    for a in prefixes:
        for b in prefixes:
            if a != b:
                assert not (a + "/").startswith(b + "/")


def test_urimap_round_trip():
    m = UriMap("http://h.example/rest/")
    assert m.base == "http://h.example/rest"
    assert m.public_iri("/") == "http://h.example/rest/"
    assert m.public_iri("/a") == "http://h.example/rest/a"
    assert m.to_public("<info:fcres/a#x>") == "<http://h.example/rest/a#x>"
    assert m.to_public("<http://other/a>") == "<http://other/a>"
    assert m.to_public('"<info:fcres/a>"') == '"<info:fcres/a>"'
    assert m.to_internal("<http://h.example/rest/a#x>") == "<info:fcres/a#x>"
    assert m.to_internal("<http://h.example/rest>") == "<info:fcres/>"
    assert m.to_internal("<http://h.example/rest/>") == "<info:fcres/>"
    # Same prefix but not under the base: untouched.
    assert m.to_internal("<http://h.example/restaurant>") == "<http://h.example/restaurant>"
    triples = [("<info:fcres/a>", "<http://p>", "<info:fcres/b>"),
               ("_:x", "<http://p>", '"lit"')]
    assert m.triples_to_public(triples) == [
        ("<http://h.example/rest/a>", "<http://p>", "<http://h.example/rest/b>"),
        ("_:x", "<http://p>", '"lit"')]
    assert m.uid_of_public("http://h.example/rest/a/b") == "/a/b"
    assert m.uid_of_public("http://h.example/rest") == "/"
    assert m.uid_of_public("http://elsewhere/a") is None


def test_urimap_refuses_relative_base():
    with pytest.raises(ValueError):
        UriMap("/rest")


# --- one length rule for both doors: what HTTP can always serve -----------------------------

def _uid_of_length(total: int, segment: int = 200) -> str:
    """A uid of exactly ``total`` characters, in segments of at most ``segment``."""
    full, rest = divmod(total, segment + 1)
    assert rest != 1, "pick another segment length: the last segment would be empty"
    parts = ["s" * segment] * full + (["t" * (rest - 1)] if rest else [])
    return "/" + "/".join(parts)


def test_segment_and_uid_limits():
    assert uids.MAX_SEGMENT_LENGTH == 255 and uids.MAX_UID_LENGTH == 2048
    assert normalize_uid("/" + "a" * 255) == "/" + "a" * 255
    with pytest.raises(InvalidResourceError, match="segment is longer than 255 characters"):
        normalize_uid("/a/" + "b" * 256 + "/c")
    longest = _uid_of_length(2048)
    assert len(longest) == 2048 and normalize_uid(longest) == longest
    with pytest.raises(InvalidResourceError, match="longer than 2048 characters") as info:
        normalize_uid(_uid_of_length(2049))
    assert len(str(info.value)) < 300                    # the message does not echo it all


def test_lengths_count_characters_as_a_url_carries_them():
    """Beyond ASCII a character takes 3 characters per UTF-8 byte in a URL
    (``é`` is ``%C3%A9``): the limits count that form, as the HTTP door does."""
    assert normalize_uid("/" + "é" * 42)                 # 252 in URL form
    with pytest.raises(InvalidResourceError, match="segment is longer than 255"):
        normalize_uid("/" + "é" * 43)                    # 258 in URL form
    with pytest.raises(InvalidResourceError, match="longer than 2048"):
        normalize_uid("/" + "/".join(["é" * 40] * 9))    # 9 * 241 characters in URL form


def test_the_python_api_refuses_what_http_refuses(repo, state):
    before = state(repo)
    with pytest.raises(InvalidResourceError, match="longer than 255"):
        repo.create_or_replace("/" + "x" * 300)
    with pytest.raises(InvalidResourceError, match="longer than 2048"):
        repo.create_or_replace(_uid_of_length(2100, 200))
    assert state(repo) == before


@pytest.mark.slow
def test_the_longest_uid_is_served_by_a_real_server(repo_factory, tmp_path):
    """A uid at both limits, made through the Python API, is reachable over HTTP
    (real gunicorn), with its longest Fedora suffix; one character more is a 400
    through either door."""
    uid = "/" + "/".join(["s" * 255] * 7 + ["é" * 40 + "t" * 15])
    assert len(normalize_uid(uid)) == 2048
    repo = repo_factory("data")
    repo.create_or_replace(uid, data=b"<> <http://ex.org/p> 'x' .", media_type="text/turtle")
    version = repo.create_version(uid)
    repo.close()
    with lsup_server(tmp_path, {"LSUP_SERVER_WORKERS": "1"}) as (_proc, port, _log):

        def request(method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.request(method, path, body=body, headers={"Content-Type": "text/turtle"})
                r = conn.getresponse()
                return r.status, r.read()
            finally:
                conn.close()

        path = "/rest" + quote(uid, safe="/")
        assert len(path) == 5 + 2048
        assert request("GET", path)[0] == 200
        assert request("GET", f"{path}/fcr:versions/{version}")[0] == 200
        assert request("PUT", path[:-1] + "u", b"")[0] == 201          # same length over HTTP
        status, body = request("PUT", path + "/v", b"")
        assert status == 400 and b"longer than 2048 characters" in body


def test_slugs_and_children_follow_the_rule(repo, state):
    """A slug is one segment in normalized URL form; a child whose uid would be
    longer than the limit is refused (POST to a parent near it), nothing written."""
    assert uids.check_slug("café") == "caf%C3%A9"
    assert repo.create("/", slug="café").uid == "/caf%C3%A9"
    parent = _uid_of_length(2030)
    repo.create_or_replace(parent)
    before = state(repo)
    with pytest.raises(InvalidResourceError, match="longer than 2048"):
        repo.create(parent)                               # a uuid: 37 more characters
    with pytest.raises(InvalidResourceError, match="longer than 2048"):
        repo.create(parent, slug="s" * 30)
    assert state(repo) == before
    assert repo.create(parent, slug="s" * 16).uid == parent + "/" + "s" * 16
