"""SPARQL's regular-expression functions, ``REGEX`` and ``REPLACE``, on RE2.

rdflib runs them with Python's ``re``, which backtracks: ``REGEX(?x, "^(a+)+$")``
on thirty characters runs for minutes inside one C call that holds the GIL, so
neither the query's deadline nor any other thread of the process gets a turn.
Here they run on RE2 (``google-re2``): no backtracking, time linear in the
text, the GIL released while it matches. What RE2 cannot run (back-references,
look-around) is refused with ``SparqlError``, never handed to Python's ``re``.

RE2's time is linear in the text but grows with the compiled program as well
(it falls back from its DFA to a slower automaton whose steps grow with the
program): one match may cost at most ``MATCH_BUDGET`` units of program size
times text bytes (about 0.2-0.4 s at worst on a 2020s core), else the query is
refused with ``SparqlError``. Every call checks the query's deadline first, and
a ``REPLACE`` every ``CHECK_EVERY`` matches. ``CONCAT``, ``REPLACE`` and
``ENCODE_FOR_URI`` results longer than ``MAX_STRING`` characters are refused
(doubling a string in a chain of ``BIND`` would otherwise fill the memory in
thirty steps).

``install(algebra, check)`` puts these functions into one translated query or
update (its expression objects: ``query.sparql`` for queries, with the query's
deadline; ``model.sparql_update`` for the ``WHERE`` of a PATCH, which holds the
write lock), for one evaluation: nothing process-wide changes. XPath
flags ``i``, ``s``, ``m``, ``x`` and ``q`` are honoured; another flag, a
non-string argument or a ``REPLACE`` pattern matching the empty string is an
expression error (SPARQL 17.3: the filter is false, the variable unbound). The
replacement of ``REPLACE`` is XPath's: ``$N`` a group, ``\\$`` and ``\\\\`` the
characters themselves.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from types import MethodType
from typing import Any

import re2
from rdflib.plugins.sparql.operators import string
from rdflib.plugins.sparql.parserutils import CompValue, Expr
from rdflib.plugins.sparql.sparql import SPARQLError
from rdflib.term import Literal

from lakesuperior.exceptions import SparqlError

__all__ = ["MATCH_BUDGET", "MAX_STRING", "CHECK_EVERY", "install", "RegexFunctions"]

#: Most program size x text bytes one match may cost.
MATCH_BUDGET = 100_000_000
#: Longest string a CONCAT, REPLACE or ENCODE_FOR_URI may produce, in characters.
MAX_STRING = 16 << 20
#: Matches a REPLACE makes between two deadline checks.
CHECK_EVERY = 1024
#: Memory RE2 may use for one compiled pattern (program and DFA cache).
MAX_MEM = 4 << 20
#: Compiled patterns kept per query (a pattern may come from the data, one per row).
CACHE_SIZE = 16

_FLAGS = "imsxq"
_WHITESPACE = " \t\n\r"
_DIGITS = "0123456789"
_GROWING = ("Builtin_CONCAT", "Builtin_ENCODE_FOR_URI")
_LOOK_AROUND = re.compile(r"invalid escape sequence: \\\d|invalid perl operator: \(\?<?[=!]")
_UNSUPPORTED = ("This server runs regular expressions in linear time (RE2): "
                "back-references and look-around are not supported")


class RegexFunctions:
    """``REGEX`` and ``REPLACE`` for one query evaluation: its deadline check and
    its compiled patterns (at most ``CACHE_SIZE``)."""

    def __init__(self, check: Callable[[], None]):
        self.check = check
        self._compiled: dict[tuple[str, str, bool], Any] = {}

    def regex(self, expr: Expr, ctx: Any) -> Literal:
        """SPARQL 17.4.3.14 ``REGEX(text, pattern[, flags])``."""
        self.check()
        text = string(expr.text)
        compiled = self.compile(string(expr.pattern), _flags(expr.flags), capture=False)
        data = str(text).encode("utf-8")
        self._within_budget(compiled, len(data))
        return Literal(compiled.search(data) is not None)

    def replace(self, expr: Expr, ctx: Any) -> Literal:
        """SPARQL 17.4.3.15 ``REPLACE(arg, pattern, replacement[, flags])``."""
        self.check()
        text = string(expr.arg)
        pattern = string(expr.pattern)
        compiled = self.compile(pattern, _flags(expr.flags), capture=True)
        template = _template(str(string(expr.replacement)), compiled.groups)
        if compiled.search(b"") is not None:
            raise SPARQLError(f"REPLACE: the pattern {str(pattern)[:100]!r} matches the "
                              "empty string")
        data = str(text).encode("utf-8")
        self._within_budget(compiled, len(data))
        pieces: list[bytes] = []
        size = end = 0
        for i, match in enumerate(compiled.finditer(data), 1):
            if not i % CHECK_EVERY:
                self.check()
            new = [data[end:match.start()]]
            new += [p if isinstance(p, bytes) else match.group(p) or b"" for p in template]
            size += sum(map(len, new))
            if size > 4 * MAX_STRING:
                _too_long("REPLACE")
            pieces += new
            end = match.end()
        pieces.append(data[end:])
        out = b"".join(pieces).decode("utf-8")
        if len(out) > MAX_STRING:
            _too_long("REPLACE")
        return Literal(out, datatype=text.datatype, lang=text.language)

    def compile(self, pattern: str, flags: str, *, capture: bool) -> Any:
        """The compiled RE2 regular expression of an XPath pattern and flags;
        ``SparqlError`` for a pattern RE2 cannot run."""
        key = (pattern, flags, capture)
        found = self._compiled.get(key)
        if found is not None:
            return found
        options = re2.Options()
        options.max_mem = MAX_MEM
        options.log_errors = False
        options.never_capture = not capture
        source = _translate(str(pattern), flags)
        try:
            # re2._Regexp, not re2.compile: compile() keeps every pattern it sees
            # in a process-wide cache, and the patterns here are the clients'.
            compiled = re2._Regexp(source, options)
        except re2.error as e:
            raise SparqlError(f"The query cannot be evaluated: the regular expression "
                              f"{str(pattern)[:100]!r} cannot be run: {_reason(e)}") from None
        if len(self._compiled) >= CACHE_SIZE:
            self._compiled.pop(next(iter(self._compiled)))
        self._compiled[key] = compiled
        return compiled

    @staticmethod
    def _within_budget(compiled: Any, size: int) -> None:
        cost = max(compiled.programsize, compiled.reverseprogramsize) * size
        if cost > MATCH_BUDGET:
            raise SparqlError(
                f"The regular expression {compiled.pattern[:100]!r} on a string of {size} "
                f"bytes is over this server's budget for one match (program size "
                f"{compiled.programsize} x {size} bytes > {MATCH_BUDGET}): use a simpler "
                "pattern or match on shorter strings")


def install(algebra: Any, check: Callable[[], None]) -> None:
    """Make the ``REGEX`` and ``REPLACE`` of a translated query run on RE2 under
    ``check`` (the query's deadline), and bound what string functions produce."""
    functions = RegexFunctions(check)
    seen: set[int] = set()
    stack = [algebra]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Expr):
            if node.name == "Builtin_REGEX":
                node._evalfn = MethodType(functions.regex, node)
            elif node.name == "Builtin_REPLACE":
                node._evalfn = MethodType(functions.replace, node)
            elif node.name in _GROWING and node._evalfn is not None:
                node._evalfn = MethodType(_bounded(node._evalfn, node.name[8:]), node)
        if isinstance(node, CompValue):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def _bounded(evalfn: Callable[[Any], Any], name: str) -> Callable[[Expr, Any], Any]:
    """``evalfn`` (an expression's own evaluation), refusing a string result longer
    than ``MAX_STRING``; to be bound to the expression as rdflib's are."""
    def bounded(expr: Expr, ctx: Any) -> Any:
        out = evalfn(ctx)
        if isinstance(out, str) and len(out) > MAX_STRING:
            _too_long(name)
        return out
    return bounded


def _too_long(name: str) -> None:
    raise SparqlError(f"{name} would make a string longer than {MAX_STRING} characters: "
                      "the query is refused")


def _flags(flags: Any) -> str:
    """The XPath flags of a call (an expression error for an unknown one)."""
    if flags is None:
        return ""
    text = str(string(flags))
    bad = sorted(set(text) - set(_FLAGS))
    if bad:
        raise SPARQLError(f"Unknown regular-expression flag(s) {''.join(bad)!r}: the flags "
                          f"are {', '.join(_FLAGS)}")
    return "".join(sorted(set(text)))


def _translate(pattern: str, flags: str) -> str:
    """An XPath pattern with its flags as RE2 syntax."""
    if "q" in flags:
        pattern = re2.escape(pattern)
    elif "x" in flags:
        pattern = _strip_whitespace(pattern)
    inline = "".join(f for f in flags if f in "ims")
    return f"(?{inline}){pattern}" if inline else pattern


def _strip_whitespace(pattern: str) -> str:
    """XPath's ``x`` flag: whitespace removed, except inside a character class."""
    out: list[str] = []
    in_class = escaped = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append(ch)
            in_class = ch != "]"
        elif ch == "[":
            out.append(ch)
            in_class = True
        elif ch not in _WHITESPACE:
            out.append(ch)
    return "".join(out)


def _template(replacement: str, groups: int) -> list[bytes | int]:
    """XPath's replacement string as literal bytes and group numbers: ``$N`` is
    group N, its further digits taken while the number stays one of the
    ``groups`` (``$N`` past them: empty); ``\\$`` and ``\\\\`` are the character;
    another ``\\`` or a ``$`` without a digit is an expression error."""
    parts: list[bytes | int] = []
    literal: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        ch = replacement[i]
        if ch == "\\":
            if i + 1 < n and replacement[i + 1] in "\\$":
                literal.append(replacement[i + 1])
                i += 2
                continue
            raise SPARQLError("REPLACE: a '\\' in the replacement must be followed by "
                              "'\\' or '$'")
        if ch == "$":
            if i + 1 >= n or replacement[i + 1] not in _DIGITS:
                raise SPARQLError("REPLACE: a '$' in the replacement must be followed by "
                                  "a group number")
            number, i = int(replacement[i + 1]), i + 2
            while i < n and replacement[i] in _DIGITS and (
                    number * 10 + int(replacement[i]) <= groups):
                number, i = number * 10 + int(replacement[i]), i + 1
            if literal:
                parts.append("".join(literal).encode("utf-8"))
                literal = []
            if number <= groups:
                parts.append(number)
            continue
        literal.append(ch)
        i += 1
    if literal:
        parts.append("".join(literal).encode("utf-8"))
    return parts


def _reason(error: BaseException) -> str:
    """RE2's message, with what it means for a client."""
    arg = error.args[0] if error.args else str(error)
    text = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)
    if _LOOK_AROUND.search(text):
        return f"{text} ({_UNSUPPORTED})"
    if "too large" in text:
        return f"{text} (the pattern is over this server's {MAX_MEM >> 20} MiB for one pattern)"
    return f"{text} (not a valid regular expression)"
