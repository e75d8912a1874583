"""rdflib's SPARQL 1.1 parser, made safe to call from any thread.

rdflib parses SPARQL with one pyparsing grammar, built once per process at
import and shared by every parse, queries and updates alike. That grammar is not
thread-safe: pyparsing learns how many arguments each parse action takes on the
action's first calls (``_trim_arity``, a counter kept in a closure) and
streamlines the grammar on its first parse, both by mutating shared objects. Two
threads doing either at once leave a wrong count behind for good, and from then
on every parse that reaches that action fails in that process ("postParse2()
missing 1 required positional argument", "Expected SelectQuery"), valid input
included.

So every parse in the package goes through this module, and one lock lets one
parse run at a time (a parse is pure Python: the GIL would serialize it anyway).
Translating a tree to the algebra (``rdflib.plugins.sparql.algebra``) works on
the caller's own tree and needs no lock. The lock covers the parses made through
this module: the package's own, and those of the rdflib store plugin's
``query``/``update``. An application that embeds the repository and parses
SPARQL with rdflib in its own threads parses through these functions too.

A translated ``Query`` or ``Update`` must not be evaluated by two threads at
once either: rdflib keeps the bindings being evaluated on the expression
objects (``Expr.eval``). Every caller here parses its own.
"""
from __future__ import annotations

import threading

from pyparsing import ParseResults
from rdflib.plugins.sparql import parser
from rdflib.plugins.sparql.parserutils import CompValue

__all__ = ["parse_query", "parse_update"]

_GRAMMAR_LOCK = threading.Lock()
"""Held by every parse: rdflib's grammar is one per process, so its lock is too."""


def parse_query(text: str) -> ParseResults:
    """The parse tree of a SPARQL query; pyparsing's ``ParseException`` if it
    does not parse."""
    with _GRAMMAR_LOCK:
        return parser.parseQuery(text)


def parse_update(text: str) -> CompValue:
    """The parse tree of a SPARQL Update; pyparsing's ``ParseException`` if it
    does not parse."""
    with _GRAMMAR_LOCK:
        return parser.parseUpdate(text)

