"""The BGP join planner and evaluator: basic graph patterns solved on term strings.

The patterns are ordered up front (bound subject first, then object, then
predicate; variables bound by earlier patterns count as bound). The first pattern
is matched whole; its rows then flow in chunks through one stage per further
pattern, so a consumer that stops early (LIMIT, ASK) stops the work. A stage joins
either by one ``match()`` per distinct value of the shared variables (few rows
upstream), or by one ``match()`` of the pattern's constants, hash-joined (many rows
upstream). Positions 0-2 of a match are s, p, o; 3 is the graph, bound to the graph
variable of ``GRAPH ?g``.

``solve`` is the entry; ``lakesuperior.query.fast_path`` turns rdflib algebra into
``Pattern``s and its rows into rdflib bindings.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from rdflib.term import Variable

from lakesuperior.store.quadstore import Reader
from lakesuperior.store.rdflib_store import LmdbStore, Quad

__all__ = ["Pattern", "Target", "solve"]

_CHUNK = 2000           # rows a stage aims to make per call
_FIRST_PIECE = 64       # rows given to a stage's first call (then sized by its output)
_CACHE_MAX = 100_000    # join keys kept by a nested-loop stage
_NESTED_LOOP_MAX = 1000  # up to this many distinct join keys: one match() per key


class Pattern(NamedTuple):
    """A triple pattern: per position a constant term string or a variable key."""

    terms: tuple[str | None, str | None, str | None]
    vars: tuple[Any, Any, Any]


class Target(NamedTuple):
    """Where a basic graph pattern is matched."""

    store: LmdbStore
    graph: str | None            # a graph name; None: the union (or GRAPH ?g)
    graph_var: Variable | None   # GRAPH ?g: bound to each named graph
    exclude: frozenset[str]      # graphs GRAPH ?g leaves out (the default graph)


class _Step(NamedTuple):
    """One pattern placed in the plan."""

    terms: tuple[str | None, str | None, str | None]
    key_pos: list[int]      # positions whose values the rows bind ...
    key_cols: list[int]     # ... from these row columns
    new_pos: list[int]      # positions of the variables this step adds (as columns)
    same: list[tuple[int, int]]   # position pairs that must be equal (a repeated variable)


def _plan(patterns: list[Pattern], graph_var: Variable | None
          ) -> tuple[dict[Any, int], list[_Step]]:
    """Order the patterns; the columns of the result rows and one step per pattern."""
    cols: dict[Any, int] = {}
    steps = []
    todo = list(patterns)
    while todo:
        pat = max(todo, key=lambda t: _score(t, cols))
        todo.remove(pat)
        step = _Step(pat.terms, [], [], [], [])
        first: dict[Any, int] = {}
        for i, v in enumerate([*pat.vars, graph_var]):
            if v is None:
                continue
            if v in cols:
                step.key_pos.append(i)
                step.key_cols.append(cols[v])
            elif v in first:
                step.same.append((first[v], i))
            else:
                first[v] = i
                step.new_pos.append(i)
        for v in first:
            cols[v] = len(cols)
        steps.append(step)
    return cols, steps


def _score(pat: Pattern, cols: dict[Any, int]) -> int:
    """Selectivity guess: a bound subject counts most, then object, then predicate."""
    return sum(w for w, t, v in zip((4, 1, 2), pat.terms, pat.vars, strict=False)
               if t is not None or v in cols)


_Table = dict[tuple[str, ...], list[tuple[str, ...]]]


def _getter(positions: list[int]) -> Callable[[Sequence[str]], tuple[str, ...]]:
    """A function taking the values at ``positions`` of a quad or row, as a tuple."""
    if not positions:
        return lambda q: ()
    if len(positions) == 1:
        i = positions[0]
        return lambda q: (q[i],)
    return itemgetter(*positions)


class _Stage:
    """Joins row chunks with one pattern's matches."""

    def __init__(self, txn: Reader, target: Target, step: _Step, upstream: int):
        self.txn = txn
        self.target = target
        self.step = step
        self.upstream = upstream        # rows expected in all (the first pattern's)
        self.piece = min(_FIRST_PIECE, _CHUNK)   # rows per call, adapted to the output
        self.hash_join: bool | None = None if any(t is not None for t in step.terms) else False
        self.table: _Table | None = None
        self.dedupe = target.graph is None and target.graph_var is None
        self.key_get = _getter(step.key_pos)
        self.new_get = _getter(step.new_pos)
        self.row_key = _getter(step.key_cols)

    def collect(self, quads: Iterable[Quad], table: _Table) -> None:
        """Add matched quads to ``table`` (key values -> new column values)."""
        same, exclude = self.step.same, self.target.exclude
        if exclude:
            quads = [q for q in quads if q[3] not in exclude]
        if same:
            quads = [q for q in quads if all(q[a] == q[b] for a, b in same)]
        new_get = self.new_get
        if not self.step.key_pos:
            lst = table.get(())
            exts = list(map(new_get, quads))
            if lst is not None:
                exts = lst + exts
            if self.dedupe:   # a triple in several graphs is one triple of the union
                exts = list(dict.fromkeys(exts))
            if exts:
                table[()] = exts
            return
        key_get = self.key_get
        added = []
        for q in quads:
            k = key_get(q)
            lst = table.get(k)
            if lst is None:
                table[k] = [new_get(q)]
                added.append(k)
            else:
                lst.append(new_get(q))
        if self.dedupe:
            for k in added:
                lst = table[k]
                if len(lst) > 1:
                    table[k] = list(dict.fromkeys(lst))

    def match(self, key: tuple[str, ...], table: _Table) -> None:
        """Match the pattern with ``key`` bound (nothing if no quad can hold it)."""
        quad: list[str | None] = [*self.step.terms, self.target.graph]
        for i, value in zip(self.step.key_pos, key, strict=False):
            quad[i] = value
        s, p, o, g = quad
        if (s is not None and s[0] == '"') or (p is not None and p[0] != "<") or (
                g is not None and g[0] != "<"):
            table.setdefault(key, [])
            return
        self.collect(self.txn.match(s, p, o, g), table)
        table.setdefault(key, [])

    def __call__(self, rows: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        row_key = self.row_key
        keys = set(map(row_key, rows))
        if self.hash_join is None:   # decided on the first chunk: distinct keys expected
            self.hash_join = len(keys) * max(1, self.upstream // len(rows)) > _NESTED_LOOP_MAX
        if self.hash_join:
            if self.table is None:
                self.table = {}
                self.collect(self.txn.match(*self.step.terms, self.target.graph), self.table)
            table = self.table
        else:
            table = self.table if self.table is not None else {}
            if len(table) > _CACHE_MAX:
                table = {}
            self.table = table
            for k in keys:
                if k not in table:
                    self.match(k, table)
        if not self.step.key_cols:
            exts = table.get((), [])
            if len(rows) == 1 and not rows[0]:
                return exts          # the first pattern: its matches are the rows
            return [row + ext for row in rows for ext in exts]
        out: list[tuple[str, ...]] = []
        get = table.get
        for row in rows:
            found = get(row_key(row))
            if found:
                out.extend([row + ext for ext in found])
        return out


def solve(txn: Reader, target: Target, patterns: list[Pattern]
           ) -> tuple[dict[Any, int], Iterator[list[tuple[str, ...]]]]:
    """The solutions: variable -> column, and the rows (term strings) in chunks."""
    cols, steps = _plan(patterns, target.graph_var)

    checkpoint = target.store.checkpoint

    def feed(stages: list[_Stage], rows: list[tuple[str, ...]]
             ) -> Iterator[list[tuple[str, ...]]]:
        """Rows through the stages, in pieces sized so that a stage makes about
        ``_CHUNK`` rows per call (a cross product cannot blow up one call)."""
        if not stages:
            yield rows
            return
        stage, rest = stages[0], stages[1:]
        start = 0
        while start < len(rows):
            piece = rows[start:start + stage.piece]
            start += len(piece)
            checkpoint()
            out = stage(piece)
            if len(out) > _CHUNK:
                stage.piece = max(1, len(piece) * _CHUNK // len(out))
            else:
                stage.piece = min(_CHUNK, stage.piece * 2)
            if out:
                yield from feed(rest, out)

    def chunks() -> Iterator[list[tuple[str, ...]]]:
        rows = _Stage(txn, target, steps[0], 1)([()])
        stages = [_Stage(txn, target, step, len(rows)) for step in steps[1:]]
        if not stages:
            for start in range(0, len(rows), _CHUNK):
                yield rows[start:start + _CHUNK]
            return
        yield from feed(stages, rows)

    return cols, chunks()
