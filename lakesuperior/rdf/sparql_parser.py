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

A parse is pure Python and may take long: an expression costs about a
millisecond per operand (``1+1+1...`` of 100,000 characters: 37 s), all of it
holding the lock. ``parse_query`` with ``check`` (the query's deadline) calls
``check`` as a long query's parse goes, from a profile function of the parsing
thread every ``CHECK_CALLS`` calls of the parser's functions (``sys.setprofile``:
this thread only, about twice the time of an unchecked parse), and lets its
exception end the parse. The grammar is streamlined by a first, short parse
before any parse that may be ended so.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

from pyparsing import ParseResults
from rdflib.plugins.sparql import parser
from rdflib.plugins.sparql.parserutils import CompValue

__all__ = ["parse_query", "parse_update", "checked_call", "CHECKED_FROM"]

_T = TypeVar("_T")

_GRAMMAR_LOCK = threading.Lock()
"""Held by every parse: rdflib's grammar is one per process, so its lock is too."""

#: Queries of at least this many characters are parsed under their ``check`` (a
#: shorter one parses in well under a second, whatever it holds).
CHECKED_FROM = 1000
#: Function calls of the parser between two calls of ``check``.
CHECK_CALLS = 4096


def parse_query(text: str, check: Callable[[], None] | None = None) -> ParseResults:
    """The parse tree of a SPARQL query; pyparsing's ``ParseException`` if it
    does not parse. ``check`` (a query of ``CHECKED_FROM`` characters or more):
    called as the parse goes, whatever it raises ends the parse."""
    with _GRAMMAR_LOCK:
        if check is None or len(text) < CHECKED_FROM:
            return parser.parseQuery(text)
        if not parser.Query.streamlined:    # the process's first parse, never cut short
            parser.parseQuery("ASK {}")
        return checked_call(lambda: parser.parseQuery(text), check)


def checked_call(fn: Callable[[], _T], check: Callable[[], None]) -> _T:
    """``fn()`` with ``check()`` called every ``CHECK_CALLS`` Python function calls
    of this thread (its exception ends ``fn``): a time limit for pure-Python work,
    such as rdflib's evaluation of an update, at about twice its cost."""
    calls = 0

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1
            if calls >= CHECK_CALLS:
                calls = 0
                check()

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        return fn()
    finally:
        sys.setprofile(previous)


def parse_update(text: str, check: Callable[[], None] | None = None) -> CompValue:
    """The parse tree of a SPARQL Update; pyparsing's ``ParseException`` if it
    does not parse. ``check``: as for ``parse_query``."""
    with _GRAMMAR_LOCK:
        if check is None or len(text) < CHECKED_FROM:
            return parser.parseUpdate(text)
        if not parser.UpdateUnit.streamlined:
            parser.parseUpdate("CLEAR DEFAULT")
        return checked_call(lambda: parser.parseUpdate(text), check)

