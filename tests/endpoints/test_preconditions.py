"""The pure precondition logic: conditional headers against a current state."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from lakesuperior.endpoints import representation as rep
from lakesuperior.endpoints.paths import Target
from lakesuperior.endpoints.preconditions import Conditions, if_range_holds

RDF = SimpleNamespace(uid="/a", is_binary=False, etag='W/"x"', version_info=[], version_ids=[],
                      last_modified="2024-01-02T03:04:05Z")
BIN = SimpleNamespace(uid="/b", is_binary=True, etag='W/"y"', version_info=[], version_ids=[],
                      last_modified="2024-01-02T03:04:05Z", digest="d", mimetype="text/plain")
OLD = "Sat, 01 Jan 2000 00:00:00 GMT"
NEW = "Fri, 01 Jan 2100 00:00:00 GMT"


def test_of_headers():
    c = Conditions.of({"If-Match": '"a"', "If-Modified-Since": OLD, "Other": "x"})
    assert c == Conditions(if_match='"a"', if_modified_since=OLD)
    assert c and not Conditions.of({})
    assert Conditions(if_none_match="")   # present, even blank


def test_weak_tags_compare_weakly_on_rdf_sources():
    tag = rep.etag_of(RDF, Target("/a"))
    assert Conditions(if_match=tag).evaluate_state("PUT", RDF, Target("/a")) is None
    assert Conditions(if_match=tag[2:]).evaluate_state("PUT", RDF, Target("/a")) is None
    assert Conditions(if_match='"nope"').evaluate_state("PUT", RDF, Target("/a")) == 412


def test_strong_tags_compare_strongly_on_binaries():
    tag = rep.etag_of(BIN, Target("/b"))
    assert Conditions(if_match=tag).evaluate_state("PUT", BIN, Target("/b")) is None
    assert Conditions(if_match="W/" + tag).evaluate_state("PUT", BIN, Target("/b")) == 412


@pytest.mark.parametrize("conditions, method, exists, outcome", [
    (Conditions(if_none_match="*"), "PUT", False, None),
    (Conditions(if_none_match="*"), "PUT", True, 412),
    (Conditions(if_match="*"), "PUT", False, 412),
    (Conditions(if_match="*"), "DELETE", True, None),
    (Conditions(if_unmodified_since=OLD), "PATCH", True, 412),
    (Conditions(if_unmodified_since=NEW), "PATCH", True, None),
    (Conditions(if_modified_since=NEW), "GET", True, 304),
    (Conditions(if_modified_since=NEW), "PUT", True, None),
    (Conditions(), "POST", True, None),
])
def test_evaluate_state(conditions, method, exists, outcome):
    assert conditions.evaluate_state(method, RDF if exists else None, Target("/a")) == outcome


def test_evaluate_a_representation():
    c = Conditions(if_none_match='W/"t"')
    assert c.evaluate("GET", etag='W/"t"', last_modified=None) == 304
    assert c.evaluate("GET", etag='W/"u"', last_modified=None) is None


def test_if_range():
    modified = "Tue, 02 Jan 2024 03:04:05 GMT"
    assert if_range_holds(None, '"s"', modified)
    assert if_range_holds('"s"', '"s"', modified)
    assert not if_range_holds('"t"', '"s"', modified)
    assert not if_range_holds('W/"s"', 'W/"s"', modified)      # weak tags never match
    assert if_range_holds(modified, '"s"', modified)
    assert not if_range_holds(OLD, '"s"', modified)
    assert not if_range_holds("not a date", '"s"', modified)
