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


# --- @prefix / @base lines without their "." (Jena reads them; the Fedora suite sends them) ---

@pytest.mark.parametrize("data, expected", [
    ("@prefix ex: <http://ex.org/>\n<> ex:p ex:o .", [(f"<{BASE}>", P, "<http://ex.org/o>")]),
    ("@prefix ex: <http://ex.org/>\r\n@base <http://b.org/>\r\n<> ex:p 1 .",
     [("<http://b.org/>", P, '"1"^^<http://www.w3.org/2001/XMLSchema#integer>')]),
    ("# a comment\n@prefix : <http://ex.org/>  \n\n@prefix ex: <http://ex.org/> .\n<> :p :o",
     [(f"<{BASE}>", P, "<http://ex.org/o>")]),          # and no final dot either
    ("PREFIX ex: <http://ex.org/>\n@prefix ex2: <http://ex.org/>\n<> ex2:p ex:o .",
     [(f"<{BASE}>", P, "<http://ex.org/o>")]),
])
def test_directives_without_their_dot(data, expected):
    assert sorted(rdfio.parse(data.encode(), rdfio.TURTLE, BASE)) == expected


def test_only_the_directives_at_the_top_are_completed():
    """A line of a literal that looks like a directive is content, never changed."""
    text = f'<> {P} """\n@prefix a: <http://a/>\n""" .'
    assert rdfio.parse(text.encode(), rdfio.TURTLE, BASE) == [
        (f"<{BASE}>", P, '"\\n@prefix a: <http://a/>\\n"')]
    with pytest.raises(RdfParseError):   # a directive after a statement is not forgiven
        rdfio.parse(f'<> {P} 1 .\n@prefix ex: <http://ex.org/>\n<> ex:p 2 .'.encode(),
                    rdfio.TURTLE, BASE)


@pytest.mark.parametrize("data, line", [
    ("@prefix ex: <http://ex.org/>\n<> ex:p ex:o .\n<> ex:q ex:r ex:s .", 3),  # the real error
    ("@prefix ex: <http://ex.org/>\n<> ex:p ex:o .\n<> bad:p 1 .", 3),
    ("@prefix ex <http://ex.org/>\n<> ex:p ex:o .", 1),                     # not a directive
])
def test_other_errors_keep_their_position(data, line):
    with pytest.raises(RdfParseError) as e:
        rdfio.parse(data.encode(), rdfio.TURTLE, BASE)
    assert e.value.line == line, str(e.value)
