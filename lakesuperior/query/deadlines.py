"""Time limits of queries: a deadline checked as the work goes.

A ``Deadline`` is checked by the query view at every store access and every
``CHECK_EVERY`` triples or natively joined rows, every ``HAND_ON_EVERY`` rows the
fast path hands on to rdflib, and by ``checked_part`` at every part of the
algebra that rdflib evaluates itself and every ``HAND_ON_EVERY`` rows each such
part hands on: work that never touches the store (rdflib joining
``VALUES`` in memory, filtering, grouping) is checked too. Past the deadline the
check raises ``QueryTimeoutError`` in the query's own thread, as any error, so
every ``with`` and ``finally`` on the way runs.

An ``ORDER BY`` sorts with a key that checks the deadline every
``CHECK_EVERY`` comparisons, and counts the rows it sorts: past the deadline's
``max_rows`` it raises ``QueryTooLargeError`` (a sort holds every row it sorts).

Nothing interrupts a query from outside: an exception sent into a thread
(``PyThreadState_SetAsyncExc``) can land inside another module's lock handling,
a logging handler's say, and leave that lock held for good. What can run past
the limit is one step that hands on no row: a single long regular-expression
match, the serialization of a result (at most ``max_rows`` rows).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from rdflib.plugins.sparql import evaluate
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import QueryContext

from lakesuperior.exceptions import QueryTimeoutError, QueryTooLargeError

__all__ = ["CHECK_EVERY", "HAND_ON_EVERY", "Deadline", "checked_part"]

CHECK_EVERY = 1024              # rows or triples handed out between two deadline checks
#: Rows handed on to rdflib between two checks: its work per row (a FILTER's
#: expression, a BIND's) runs between two of them, a millisecond per operand of
#: the expression (1,024 rows of a 1,000-term FILTER had run 16 s unchecked).
HAND_ON_EVERY = 16

#: rdflib's evaluation of each part of the algebra that yields solutions (rdflib's
#: ``evalPart`` dispatches the same names to the same functions).
_RDFLIB_PARTS: Mapping[str, Callable[[QueryContext, CompValue], Iterable[Any]]] = \
    MappingProxyType({
        "Filter": evaluate.evalFilter, "Join": evaluate.evalJoin,
        "LeftJoin": evaluate.evalLeftJoin, "Graph": evaluate.evalGraph,
        "Union": evaluate.evalUnion, "ToMultiSet": evaluate.evalMultiset,
        "Extend": evaluate.evalExtend, "Minus": evaluate.evalMinus,
        "Project": evaluate.evalProject, "Slice": evaluate.evalSlice,
        "Distinct": evaluate.evalDistinct, "Reduced": evaluate.evalReduced,
        "OrderBy": evaluate.evalOrderBy, "Group": evaluate.evalGroup,
        "AggregateJoin": evaluate.evalAggregateJoin,
    })


class Deadline:
    """The end of a call's time: ``check()`` raises ``QueryTimeoutError`` past it;
    and the most rows (``max_rows``, None: no bound) its result, or a sort, may hold:
    ``rows(n)`` raises ``QueryTooLargeError`` past them."""

    __slots__ = ("at", "limit", "max_rows")

    def __init__(self, limit: float | None, max_rows: int | None = None):
        self.limit = limit
        self.at = time.monotonic() + limit if limit is not None else None
        self.max_rows = max_rows

    def check(self) -> None:
        if self.at is not None and time.monotonic() > self.at:
            raise self.error()

    def error(self) -> QueryTimeoutError:
        return QueryTimeoutError(
            f"The query ran over the time limit of {self.limit:g} s and was stopped; "
            "narrow it (more specific patterns, LIMIT) or ask for a longer query_timeout")

    def rows(self, count: int, what: str = "The result") -> None:
        """``QueryTooLargeError`` if ``count`` rows are more than ``max_rows``."""
        if self.max_rows is not None and count > self.max_rows:
            raise QueryTooLargeError(
                f"{what} holds more than {self.max_rows} rows, the most a query may "
                "(query_max_rows); narrow it, or page through it with LIMIT and OFFSET")


def checked_part(ctx: QueryContext, part: CompValue, deadline: Deadline) -> Iterator[Any]:
    """rdflib's own evaluation of ``part``, with ``deadline.check()`` before it starts
    and every ``CHECK_EVERY`` rows it hands on (an ``ORDER BY``: ``_ordered``);
    ``NotImplementedError`` for a part that yields no rows of solutions (a query
    form, a basic graph pattern, whose triples the store checks), which rdflib
    evaluates as usual."""
    check = deadline.check
    if part.name == "OrderBy":
        check()
        return _checked(_ordered(ctx, part, deadline), check)
    run = _RDFLIB_PARTS.get(part.name)
    if run is None:
        raise NotImplementedError
    check()
    return _checked(run(ctx, part), check)


def _ordered(ctx: QueryContext, part: CompValue, deadline: Deadline) -> list[Any]:
    """rdflib's ``evalOrderBy`` (one stable sort per key, the last key first, rdflib's
    own key values), with the deadline checked as the sort compares and the rows
    it sorts counted against ``max_rows``: sorting some million rows takes minutes
    and holds them all."""
    rows = evaluate.evalPart(ctx, part.p)
    tally = _Tally(deadline)
    for cond in reversed(part.expr):
        expr = cond.expr

        def key(row: Any, expr: Any = expr) -> _SortKey:
            tally.row()
            return _SortKey(evaluate._val(evaluate.value(row, expr, variables=True)), tally)
        rows = sorted(rows, key=key, reverse=bool(cond.order and cond.order == "DESC"))
        tally.count = 0
    return list(rows)


class _Tally:
    """The rows a sort keyed and the comparisons it made since the last check."""

    __slots__ = ("deadline", "count", "compared")

    def __init__(self, deadline: Deadline):
        self.deadline = deadline
        self.count = 0
        self.compared = 0

    def row(self) -> None:
        self.count += 1
        if not self.count % CHECK_EVERY:
            self.deadline.check()
            self.deadline.rows(self.count, "The ORDER BY")

    def compare(self) -> None:
        self.compared += 1
        if self.compared >= CHECK_EVERY:
            self.compared = 0
            self.deadline.check()


class _SortKey:
    """rdflib's sort key of a row, compared as it is, counting the comparisons."""

    __slots__ = ("value", "tally")

    def __init__(self, value: Any, tally: _Tally):
        self.value = value
        self.tally = tally

    def __lt__(self, other: _SortKey) -> bool:
        self.tally.compare()
        return bool(self.value < other.value)


def _checked(rows: Iterable[Any], check: Callable[[], None]) -> Iterator[Any]:
    for i, row in enumerate(rows, 1):
        if not i % HAND_ON_EVERY:
            check()
        yield row
