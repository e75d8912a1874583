"""REGEX and REPLACE run on RE2: linear time whatever the pattern, a budget per
match, XPath's flags and replacement syntax; what RE2 cannot run is refused."""
from __future__ import annotations

import time

import pytest
from rdflib import Literal

from lakesuperior.exceptions import SparqlError

CATASTROPHIC = ('SELECT ?x WHERE { BIND("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!" AS ?x) '
                'FILTER(REGEX(?x, "^(a+)+$")) }')


def value(repo, expression: str):
    """The value of one expression (None: unbound, an expression error; ``?w``
    keeps the row, which rdflib drops when nothing in it is bound)."""
    result = repo.sparql_query(f"SELECT ?v ?w WHERE {{ BIND(1 AS ?w) "
                               f"BIND({expression} AS ?v) }}")
    rows = list(result)
    assert len(rows) == 1
    return rows[0][0]


def test_catastrophic_backtracking_is_linear(repo_factory):
    """Python's re takes 35 s on this, the GIL held all along; RE2 answers at once."""
    repo = repo_factory(query_timeout=5)
    started = time.monotonic()
    assert list(repo.sparql_query(CATASTROPHIC)) == []
    assert time.monotonic() - started < 10      # loose: a busy machine
    assert list(repo.sparql_query(CATASTROPHIC.replace("!", "a" * 10_000 + "!"))) == []
    assert time.monotonic() - started < 20


def test_an_update_runs_its_regex_on_re2(repo):
    """A PATCH's WHERE holds the write lock: its REGEX is linear too."""
    repo.create_or_replace("/r", data='<> <http://ex.org/p> "x" .', media_type="text/turtle")
    started = time.monotonic()
    repo.update("/r", 'INSERT { <> <http://ex.org/q> ?x } WHERE { BIND("aaaaaaaaaaaaaaaaaaaaaaa'
                      'aaaaaa!" AS ?x) FILTER(REGEX(?x, "^(a+)+$")) }')
    repo.update("/r", 'INSERT { <> <http://ex.org/q> ?y } WHERE { BIND("aaaa" AS ?x) '
                      'BIND(REPLACE(?x, "a", "b") AS ?y) }')
    assert time.monotonic() - started < 10      # Python's re: 35 s for the first
    assert [t[2] for t in repo.triple_match(p="<http://ex.org/q>")] == ['"bbbb"']
    with pytest.raises(SparqlError, match="back-references"):
        repo.update("/r", 'INSERT { <> <http://ex.org/q> "z" } WHERE { '
                          'FILTER(REGEX("aa", "(a)\\\\1")) }')


def test_regex_matches_and_flags(repo):
    assert value(repo, 'REGEX("aaaa", "^(a+)+$")') == Literal(True)
    assert value(repo, 'REGEX("ABC", "b")') == Literal(False)
    assert value(repo, 'REGEX("ABC", "b", "i")') == Literal(True)
    assert value(repo, 'REGEX("a\\nb", "a.b")') == Literal(False)
    assert value(repo, 'REGEX("a\\nb", "a.b", "s")') == Literal(True)
    assert value(repo, 'REGEX("x\\nab", "^ab$")') == Literal(False)
    assert value(repo, 'REGEX("x\\nab", "^ab$", "m")') == Literal(True)
    assert value(repo, 'REGEX("abc", "a b  c", "x")') == Literal(True)
    assert value(repo, 'REGEX("a c", "a[ ]c", "x")') == Literal(True)   # kept in a class
    assert value(repo, 'REGEX("a.c", "a.c", "q")') == Literal(True)
    assert value(repo, 'REGEX("abc", "a.c", "q")') == Literal(False)
    assert value(repo, 'REGEX("Été", "^été$", "i")') == Literal(True)
    assert value(repo, 'REGEX("abc", "b", "z")') is None                # unknown flag
    assert value(repo, 'REGEX(<http://ex.org/>, "ex")') is None        # not a string


def test_replace_follows_xpath(repo):
    assert value(repo, 'REPLACE("abcabc", "(b)(c)", "[$2$1$0]")') == Literal("a[cbbc]a[cbbc]")
    assert value(repo, 'REPLACE("abc", "(b)", "$12")') == Literal("ab2c")   # $1 then "2"
    assert value(repo, 'REPLACE("abc", "b", "\\\\$\\\\\\\\")') == Literal("a$\\c")
    assert value(repo, 'REPLACE("Été", "t", "T")') == Literal("ÉTé")
    assert value(repo, 'REPLACE("ABAB", "b", "x", "i")') == Literal("AxAx")
    assert value(repo, 'REPLACE("abc"@en, "b", "x")') == Literal("axc", lang="en")
    assert value(repo, 'REPLACE("abc", "x*", "z")') is None     # matches the empty string
    assert value(repo, 'REPLACE("abc", "b", "$")') is None      # $ without a digit
    assert value(repo, 'REPLACE("abc", "b", "\\\\n")') is None  # \\ not before \\ or $


@pytest.mark.parametrize("pattern", ["(a)\\\\1", "a(?=a)", "a(?!b)", "(?<=a)b"])
def test_backreferences_and_look_around_are_refused(repo, pattern):
    """Python's re would run them, with backtracking: they are refused, 400 over HTTP."""
    with pytest.raises(SparqlError, match="back-references and look-around"):
        repo.sparql_query(f'ASK {{ FILTER(REGEX("aa", "{pattern}")) }}')


def test_invalid_pattern_is_a_clear_error(repo):
    with pytest.raises(SparqlError, match="not a valid regular expression"):
        repo.sparql_query('ASK { FILTER(REGEX("aa", "a[")) }')


def test_match_over_budget_is_refused(repo):
    """A large program on a long text could run for a minute in RE2's slower
    automaton: the product of the two is bounded."""
    text = "a" * 1_000_000
    with pytest.raises(SparqlError, match="budget for one match"):
        repo.sparql_query(f'ASK {{ FILTER(REGEX("{text}", "[\\\\s\\\\S]{{1000}}z")) }}')


def test_growing_strings_are_bounded(repo):
    """CONCAT in a chain of BIND doubles a string each step: refused past MAX_STRING."""
    binds = ['BIND("aaaaaaaaaaaaaaaa" AS ?v0)']
    for i in range(1, 22):
        binds.append(f"BIND(CONCAT(?v{i - 1}, ?v{i - 1}) AS ?v{i})")
    with pytest.raises(SparqlError, match="longer than"):
        repo.sparql_query(f"SELECT (STRLEN(?v21) AS ?n) WHERE {{ {' '.join(binds)} }}")
