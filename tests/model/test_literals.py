"""The model's literals: thin calls to ``store.terms``, the one escaping."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lakesuperior.model.literals import datetime_literal, lexical, literal_term
from lakesuperior.store import terms


def test_literal_terms():
    assert literal_term('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert literal_term("5", "http://www.w3.org/2001/XMLSchema#long") == \
        '"5"^^<http://www.w3.org/2001/XMLSchema#long>'
    lit = datetime_literal(datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=UTC))
    assert lit == '"2020-01-02T03:04:05.000006Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'


@pytest.mark.parametrize("text", ["plain", 'q"uote', "back\\slash", "line\nbreak\ttab",
                                  "\x00\x1f\x7f controls", "\ufffe\uffff", "\U0001F600"])
def test_literals_are_the_store_canonical_form(text):
    term = literal_term(text)
    assert term == terms.literal(text) == terms.canonical(term)
    assert lexical(term) == text
    typed = literal_term(text, "http://ex.org/T")
    assert typed == terms.canonical(typed) and lexical(typed) == text


def test_lexical_of_other_terms():
    assert lexical(None) is None
    assert lexical("<http://ex.org/a>") == "<http://ex.org/a>"
    assert lexical('"5"^^<http://www.w3.org/2001/XMLSchema#long>') == "5"
    assert lexical('"chat"@fr') == "chat"
