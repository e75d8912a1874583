"""``Prefer`` that does not follow RFC 7240 section 2's grammar: refused, saying why
(``strict``, what the server does) or skipped (``strict=False``)."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import InvalidHeaderError
from lakesuperior.http import headers as h

LDP = "http://www.w3.org/ns/ldp#"


@pytest.mark.parametrize("value, says", [
    (f'return=representation; include="{LDP}PreferContainment', "not closed"),
    ('return=representation; include="a\\"', "not closed"),
    ("return=representation; =x", "'' is not a parameter name"),
    ("=minimal", "'' is not a preference name"),
    ('"return"=minimal', "is not a preference name"),
    ("ret urn=minimal", "is not a preference name"),
    ("return=", "neither a token nor a quoted string"),
    ("return=representation; include=a b", "neither a token nor a quoted string"),
    ("handling=strict, ;;;==", "'' is not a preference name"),
])
def test_malformed_prefer(value, says):
    with pytest.raises(InvalidHeaderError, match="Malformed Prefer header") as e:
        h.parse_prefer([value])
    assert says in str(e.value)


def test_malformed_elements_are_skipped_when_lenient():
    p = h.parse_prefer(['handling=strict, "bad"=1, return=minimal'], strict=False)
    assert p.handling == "strict" and p.return_ == "minimal" and len(p.raw) == 2


@pytest.mark.parametrize("value", [
    "return=minimal", "respond-async", "wait = 10", 'foo="a \\"b\\" c"; x=1; flag',
    " , return=minimal ,, ", "return=everything",       # unknown values: ignored, not refused
    f'return=representation; include="{LDP}PreferMinimalContainer {LDP}PreferMembership"',
    f'return=representation; omit="{LDP}PreferMinimalContainer"',
])
def test_well_formed_prefer(value):
    h.parse_prefer([value])


def test_omit_of_the_minimal_container_is_read():
    p = h.parse_prefer([f'return=representation; omit="{LDP}PreferMinimalContainer"'])
    assert p.omit == {f"{LDP}PreferMinimalContainer"} and p.return_ == "representation"
