"""Turtle whose last statement lacks its closing ``.`` is read (Fedora's parser reads
it); every other malformation is still an ``RdfParseError`` with its position."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.exceptions import RdfParseError

BASE = "http://ex.org/r"
P = "<http://ex.org/p>"


@pytest.mark.parametrize("data, count", [
    (f'<> {P} "x"', 1),
    (f'<> {P} "x" # comment', 1),
    (f'<> {P} "x"\n\n  ', 1),
    (f'<> {P} "x" .\n<> {P} "y"', 2),
    (f'<> {P} "x", "y" ;', 2),
    (f'<> {P} [ {P} 1 ]', 2),
    (f'<> {P} ( 1 )', 3),
    (f'<> {P} """long\nstring"""', 1),
    ('@prefix ex: <http://ex.org/> .\n<> ex:p ex:o', 1),
])
def test_last_statement_without_its_dot(data, count):
    triples = rdfio.parse(data.encode(), rdfio.TURTLE, BASE)
    assert len(triples) == count
    assert all(s.startswith(("<", "_:")) for s, _, _ in triples)


@pytest.mark.parametrize("data, says", [
    (f'<> {P} "open', "Unexpected end"),
    (f"<> {P} ( 1 2", "Unexpected end"),
    (f"<> {P} [ {P} 1", "Unexpected end"),
    (f"<> {P}", "Unexpected end"),
    (f'<> {P} "x" <> .', "line 1"),
    (f'<> {P} "x" . .', "line 1"),
    (f'<> {P} "x"\n<> {P} "y" .', "line 2"),     # a missing dot inside stays an error
])
def test_other_malformations_stay_errors(data, says):
    with pytest.raises(RdfParseError) as e:
        rdfio.parse(data.encode(), rdfio.TURTLE, BASE)
    assert says in str(e.value)
    assert e.value.line is not None


def test_only_turtle_is_forgiven():
    with pytest.raises(RdfParseError):
        rdfio.parse(f'<{BASE}> {P} "x"'.encode(), rdfio.N_TRIPLES, BASE)
