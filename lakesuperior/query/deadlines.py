"""Time limits of queries: a deadline checked as the work goes.

A ``Deadline`` is checked by the query view at every store access and every
``CHECK_EVERY`` triples or natively joined rows, and by ``checked_part`` at every
part of the algebra that rdflib evaluates itself and every ``CHECK_EVERY`` rows
each such part hands on: work that never touches the store (rdflib joining
``VALUES`` in memory, filtering, grouping) is checked too. Past the deadline the
check raises ``QueryTimeoutError`` in the query's own thread, as any error, so
every ``with`` and ``finally`` on the way runs.

Nothing interrupts a query from outside: an exception sent into a thread
(``PyThreadState_SetAsyncExc``) can land inside another module's lock handling,
a logging handler's say, and leave that lock held for good. What can run past
the limit is one step that hands on no row: a single long regular-expression
match, the sort of rows already read, the serialization of a result.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from rdflib.plugins.sparql import evaluate
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import QueryContext

from lakesuperior.exceptions import QueryTimeoutError

__all__ = ["CHECK_EVERY", "Deadline", "checked_part"]

CHECK_EVERY = 1024              # rows or triples handed out between two deadline checks

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
    """The end of a call's time: ``check()`` raises ``QueryTimeoutError`` past it."""

    __slots__ = ("at", "limit")

    def __init__(self, limit: float | None):
        self.limit = limit
        self.at = time.monotonic() + limit if limit is not None else None

    def check(self) -> None:
        if self.at is not None and time.monotonic() > self.at:
            raise self.error()

    def error(self) -> QueryTimeoutError:
        return QueryTimeoutError(
            f"The query ran over the time limit of {self.limit:g} s and was stopped; "
            "narrow it (more specific patterns, LIMIT) or ask for a longer query_timeout")


def checked_part(ctx: QueryContext, part: CompValue, check: Callable[[], None]
                 ) -> Iterator[Any]:
    """rdflib's own evaluation of ``part``, with ``check()`` before it starts and
    every ``CHECK_EVERY`` rows it hands on; ``NotImplementedError`` for a part
    that yields no rows of solutions (a query form, a basic graph pattern, whose
    triples the store checks), which rdflib evaluates as usual."""
    run = _RDFLIB_PARTS.get(part.name)
    if run is None:
        raise NotImplementedError
    check()
    return _checked(run(ctx, part), check)


def _checked(rows: Iterable[Any], check: Callable[[], None]) -> Iterator[Any]:
    for i, row in enumerate(rows, 1):
        if not i % CHECK_EVERY:
            check()
        yield row
