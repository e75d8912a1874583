"""Uids: validation, normalisation, internal <-> public URIs."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import InvalidResourceError
from lakesuperior.model import uids
from lakesuperior.model.uids import UriMap, normalize_uid


@pytest.mark.parametrize("given, expected", [
    ("", "/"),
    ("/", "/"),
    ("a", "/a"),
    ("/a", "/a"),
    ("/a/", "/a"),
    ("/a/b/c", "/a/b/c"),
    ("/a%20b", "/a%20b"),
    ("/ünïcode/Ω", "/ünïcode/Ω"),
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
])
def test_normalize_uid_refuses(bad, why):
    with pytest.raises(InvalidResourceError) as e:
        normalize_uid(bad)
    assert why in str(e.value)


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
