"""The SPARQL fast path: rdflib algebra evaluated natively on an ``LmdbStore``.

rdflib's evaluator calls a store's ``triples()`` once per pattern per partial
solution. ``native_eval``, a hook of rdflib's ``CUSTOM_EVALS``, takes over the parts
it can do better and hands the others back (``NotImplementedError``):

* a basic graph pattern (and a ``Project`` of one): solved by the join engine of
  ``lakesuperior.query.joins`` on term strings, rdflib terms made only for results;
  property paths in it are left to rdflib, per solution;
* ``GRAPH ?g { BGP }`` with ``?g`` unbound: one pass over all named graphs;
* ``COUNT`` over a basic graph pattern without ``GROUP BY``: a single pattern is one
  ``count()`` of the store, several are counted on the joined rows.

The hook is registered explicitly, never on import: ``enable_sparql_fast_path()``
for every ``LmdbStore`` (an opt-in for rdflib users of the store plugin), and
``register_view_eval()``, called by the query functions, for query views only.
Both keys of rdflib's ``CUSTOM_EVALS`` are added together, once per process, and
never removed: switching the fast path off replaces its hook with one that
declines every part (a dict that changes size fails the evaluations iterating
it in other threads).
"""
from __future__ import annotations

from collections.abc import Generator
from typing import Any

from rdflib.graph import ConjunctiveGraph, Dataset, Graph
from rdflib.plugins.sparql import CUSTOM_EVALS
from rdflib.plugins.sparql.evaluate import evalBGP
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import FrozenBindings, QueryContext
from rdflib.term import BNode, Literal, Node, URIRef, Variable

from lakesuperior.query.deadlines import HAND_ON_EVERY, checked_part
from lakesuperior.query.joins import Pattern, Target, solve
from lakesuperior.query.view import QueryView
from lakesuperior.store.rdflib_store import (
    LmdbStore,
    TermMemo,
    Unmatchable,
    graph_identifier,
    graph_name,
    pattern_term,
)

__all__ = ["native_eval", "enable_sparql_fast_path", "disable_sparql_fast_path",
           "register_view_eval"]

_STORE_KEY = "lakesuperior.rdflib_store"   # enable_sparql_fast_path(): every LmdbStore
_VIEW_KEY = "lakesuperior.query"           # register_view_eval(): query views only


def enable_sparql_fast_path() -> None:
    """Let rdflib's SPARQL engine evaluate basic graph patterns over ``LmdbStore``
    natively (registers in rdflib's ``CUSTOM_EVALS``; other stores are unaffected)."""
    register_view_eval()
    CUSTOM_EVALS[_STORE_KEY] = native_eval


def disable_sparql_fast_path() -> None:
    """Undo ``enable_sparql_fast_path()``."""
    register_view_eval()
    CUSTOM_EVALS[_STORE_KEY] = _declined


def register_view_eval() -> None:
    """Register the fast path for query views (``QueryView``) only; idempotent.

    Called by the query functions before they evaluate. rdflib iterates
    ``CUSTOM_EVALS`` during every evaluation, in every thread, and a dict that
    changes size under an iteration fails it: both keys are added once per
    process, here, and then only their values change (``_declined`` is the
    store hook switched off)."""
    if CUSTOM_EVALS.get(_VIEW_KEY) is not _view_eval:
        CUSTOM_EVALS[_VIEW_KEY] = _view_eval
    CUSTOM_EVALS.setdefault(_STORE_KEY, _declined)


def _declined(ctx: QueryContext, part: CompValue) -> Any:
    """The store hook while the fast path is off: every part goes to rdflib."""
    raise NotImplementedError


def _view_eval(ctx: QueryContext, part: CompValue) -> Any:
    """The fast path, for query views only (other stores keep their own choice);
    what it hands back, rdflib evaluates under the view's deadline."""
    store = getattr(ctx.graph, "store", None)
    if not isinstance(store, QueryView):
        raise NotImplementedError
    try:
        return native_eval(ctx, part)
    except NotImplementedError:
        return checked_part(ctx, part, store.deadline)


def native_eval(ctx: QueryContext, part: CompValue) -> Any:
    """The fast path, an rdflib ``CUSTOM_EVALS`` hook for any ``LmdbStore``:
    ``NotImplementedError`` hands a part back to rdflib."""
    name = part.name
    if name == "BGP":
        return _eval_bgp(ctx, part, _target(ctx, ctx.graph))
    if name == "Project" and part.p.name == "BGP":
        return _eval_bgp(ctx, part.p, _target(ctx, ctx.graph), part.PV)
    if name == "Graph":
        return _eval_graph(ctx, part)
    if name == "AggregateJoin":
        return _eval_count(ctx, part)
    raise NotImplementedError


def _target(ctx: QueryContext, graph: Any) -> Target:
    store = getattr(graph, "store", None)
    if not isinstance(store, LmdbStore):
        raise NotImplementedError
    if isinstance(graph, ConjunctiveGraph) or type(graph) is Graph:
        return Target(store, store.context_name(graph), None, frozenset())
    raise NotImplementedError


def _patterns(ctx: QueryContext, triples: list) -> tuple[list[Pattern], list[tuple]]:
    """The BGP's patterns with the context's bindings substituted, and apart the
    triples whose predicate is a property path; ``Unmatchable`` if a constant
    cannot occur."""
    out = []
    paths = []
    for triple in triples:
        terms: list[str | None] = [None, None, None]
        keys: list[Any] = [None, None, None]
        for i, node in enumerate(triple):
            value = ctx[node]
            if value is None:
                keys[i] = node
            elif isinstance(value, (URIRef, BNode, Literal)):
                terms[i] = pattern_term(value, i)
            else:
                paths.append(triple)
                break
        else:
            out.append(Pattern(tuple(terms), tuple(keys)))  # type: ignore[arg-type]
    return out, paths


def _eval_bgp(ctx: QueryContext, part: CompValue, target: Target,
              project: list[Variable] | None = None) -> Generator[FrozenBindings, None, None]:
    try:
        patterns, paths = _patterns(ctx, part.triples)
    except Unmatchable:
        return _no_solutions()
    if not patterns or (paths and target.graph_var is not None):
        raise NotImplementedError
    if paths:
        return _with_paths(ctx, target, patterns, paths, project)
    return _solutions(ctx, target, patterns, project)


def _with_paths(ctx: QueryContext, target: Target, patterns: list[Pattern],
                paths: list[tuple], project: list[Variable] | None
                ) -> Generator[FrozenBindings, None, None]:
    """Plain patterns natively, then the property paths by rdflib, per solution."""
    for solution in _solutions(ctx, target, patterns, None):
        for row in evalBGP(ctx.thaw(solution), paths):
            yield row if project is None else row.project(project)


def _no_solutions() -> Generator[FrozenBindings, None, None]:
    yield from ()


def _solutions(ctx: QueryContext, target: Target, patterns: list[Pattern],
               project: list[Variable] | None) -> Generator[FrozenBindings, None, None]:
    """The solutions as rdflib bindings (only the ``project`` variables, if given)."""
    with target.store.read() as txn:
        cols, chunks = solve(txn, target, patterns)
        base = dict(ctx.bindings)
        out = list(cols.items())
        if project is not None:
            keep = set(project)
            base = {k: v for k, v in base.items() if k in keep}
            out = [(k, c) for k, c in out if k in keep]
        keys = [k for k, _ in out]
        terms, graphs = TermMemo(), _GraphMemo()
        conv = [(graphs if k == target.graph_var else terms, c) for k, c in out]
        checkpoint = target.store.checkpoint
        for rows in chunks:
            for start in range(0, len(rows), HAND_ON_EVERY):
                checkpoint()      # the consumer's work per row counts too (FILTER...)
                for row in rows[start:start + HAND_ON_EVERY]:
                    values = zip(keys, [m[row[c]] for m, c in conv], strict=False)
                    yield FrozenBindings(ctx, {**base, **dict(values)} if base else values)


class _GraphMemo(dict):
    """Store graph name -> rdflib graph identifier."""

    def __missing__(self, name: str) -> Node:
        node = self[name] = graph_identifier(name)
        return node


def _eval_graph(ctx: QueryContext, part: CompValue) -> Any:
    """``GRAPH ?g { BGP }`` with ``?g`` unbound: one pass over all named graphs."""
    term = part.term
    if not isinstance(term, Variable) or ctx[term] is not None or part.p.name != "BGP":
        raise NotImplementedError
    try:
        dataset = ctx.dataset
    except Exception:
        raise NotImplementedError from None
    store = getattr(dataset, "store", None)
    if not isinstance(store, LmdbStore) or not isinstance(dataset, ConjunctiveGraph):
        raise NotImplementedError
    if not store.named_graphs_are_union:
        raise NotImplementedError
    default = dataset.default_graph if isinstance(dataset, Dataset) else dataset.default_context
    target = Target(store, None, term, frozenset((graph_name(default.identifier),)))
    return _eval_bgp(ctx, part.p, target)


def _eval_count(ctx: QueryContext, part: CompValue) -> Any:
    """``SELECT (COUNT(...) AS ?c) WHERE { BGP }`` without GROUP BY: counted natively."""
    group = part.p
    if group.name != "Group" or group.expr is not None or group.p.name != "BGP":
        raise NotImplementedError
    triples = group.p.triples
    if not triples or not part.A or any(a.name != "Aggregate_Count" for a in part.A):
        raise NotImplementedError
    variables = {n for t in triples for n in t
                 if isinstance(n, (Variable, BNode)) and ctx[n] is None}
    if any(a.vars != "*" and a.vars not in variables for a in part.A):
        raise NotImplementedError   # an expression, or a variable bound elsewhere
    target = _target(ctx, ctx.graph)
    try:
        patterns, paths = _patterns(ctx, triples)
    except Unmatchable:
        patterns, paths = None, []
    if paths:
        raise NotImplementedError
    return _counts(ctx, part.A, target, patterns)


def _countable(aggregates: list, target: Target, patterns: list[Pattern] | None) -> bool:
    """Whether the store's ``count()`` answers every aggregate: one pattern, no
    repeated variable, no ``GRAPH ?g``, and ``COUNT(DISTINCT ?v)`` only when ``?v``
    is the pattern's one variable (solutions are then the distinct matching triples)."""
    if patterns is None or len(patterns) != 1 or target.graph_var is not None:
        return False
    names = [v for v in patterns[0].vars if v is not None]
    if len(set(names)) != len(names):
        return False
    return all(not a.distinct or a.vars == "*" or len(names) == 1 for a in aggregates)


def _counts(ctx: QueryContext, aggregates: list, target: Target,
            patterns: list[Pattern] | None) -> Generator[FrozenBindings, None, None]:
    n_rows = 0
    seen: dict[Any, set] = {a.vars: set() for a in aggregates if a.distinct}
    if _countable(aggregates, target, patterns):
        assert patterns is not None
        with target.store.read() as txn:
            n = txn.count(*patterns[0].terms, target.graph, distinct=True)
        yield FrozenBindings(ctx, {a.res: Literal(n) for a in aggregates})
        return
    if patterns is not None:
        with target.store.read() as txn:
            cols, chunks = solve(txn, target, patterns)
            checkpoint = target.store.checkpoint
            for rows in chunks:
                checkpoint()
                n_rows += len(rows)
                for var, values in seen.items():
                    if var == "*":
                        values.update(rows)
                    else:
                        i = cols[var]
                        values.update([row[i] for row in rows])
    yield FrozenBindings(ctx, {a.res: Literal(len(seen[a.vars]) if a.distinct else n_rows)
                               for a in aggregates})
