"""rdflib Store adapter over the quad store, and a native SPARQL fast path.

``LmdbStore`` holds a ``QuadStore`` (composition) and implements rdflib's whole
``Store`` contract, so ``rdflib.Dataset(store="Lakesuperior")`` reads and writes a
Lakesuperior store::

    ds = rdflib.Dataset(store="Lakesuperior")
    ds.open("/path/to/store", create=True)
    ds.add((s, p, o, g))
    ds.commit()                      # writes are kept only on commit()
    ds.query("SELECT ...")
    ds.close()                       # an uncommitted write is rolled back

Mapping of rdflib onto the store:

* Terms go through ``rdfio.from_rdflib`` / ``rdfio.to_rdflib`` (canonical N-Triples).
* A graph named by an IRI is the store graph of that IRI; rdflib's Dataset default
  graph is the store graph ``<urn:x-rdflib:default>``; a graph named by a blank node
  ``_:x`` is stored as ``<urn:x-lsup:bnode-graph:x>`` (and read back as the blank node).
* ``triples(pattern, None)``, or with a ``default_union`` Dataset as context, is the
  union of all graphs (each triple once, with every graph it is in); a Dataset that is
  not ``default_union`` stands for its default graph.
* Transactions: every write goes into one ``QuadStore.write()`` transaction that the
  adapter opens on the first write and holds until ``commit()`` / ``rollback()``.
  While it is open, reads go through it (they see the uncommitted writes) and every
  other writer of the store waits: commit early. Without one, each read takes its own
  short snapshot. Added triples are buffered and written in batches before the next
  read, removal or commit. A namespace binding joins the open write transaction, or
  else commits at once; on a read-only store it lives in this adapter only.
* Empty graphs: the quad store knows graphs that hold quads. ``add_graph`` registers
  a graph in this adapter, so an empty graph is listed until ``remove_graph``.
* N3 formulae (quoted graphs) are not supported.

One adapter is used by one thread at a time (an LMDB write transaction belongs to
the thread that began it). A process that holds the adapter's write transaction
cannot open another ``QuadStore.write()`` on the same store until it ends.

SPARQL: rdflib calls ``triples()`` once per pattern per partial solution. Call
``enable_sparql_fast_path()`` once to let basic graph patterns, ``GRAPH ?g`` over a
basic graph pattern, and ``COUNT`` over one, be evaluated directly on the quad store
(joins on term strings, rdflib terms made only for results; ``COUNT`` over a single
pattern is one ``count()`` of the store); everything else stays with rdflib's
evaluator. ``native_eval`` is that evaluator hook, for a caller that registers it in
``CUSTOM_EVALS`` under its own key (with its own store check).

Subclasses may override ``_checkpoint()``: ``triples()`` consumers and the fast path
call it between batches of work, so that raising from it stops a query (a time
limit); and set ``_named_graphs_are_union = False`` when the graphs ``GRAPH ?g``
ranges over are not the graphs of the union (then ``GRAPH ?g`` goes to rdflib).
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from operator import itemgetter
from typing import Any, NamedTuple

from rdflib.graph import DATASET_DEFAULT_GRAPH_ID, ConjunctiveGraph, Dataset, Graph, QuotedGraph
from rdflib.plugins.sparql import CUSTOM_EVALS
from rdflib.plugins.sparql.evaluate import evalBGP
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import FrozenBindings, QueryContext
from rdflib.store import NO_STORE, VALID_STORE, Store
from rdflib.term import BNode, Literal, Node, URIRef, Variable

from lakesuperior.exceptions import StoreError, TermError
from lakesuperior.rdfio import from_rdflib, to_rdflib
from lakesuperior.store.quadstore import QuadStore, Reader, WriteTxn

__all__ = [
    "LmdbStore", "DEFAULT_GRAPH", "BNODE_GRAPH_PREFIX",
    "enable_sparql_fast_path", "disable_sparql_fast_path", "native_eval",
]

DEFAULT_GRAPH = f"<{DATASET_DEFAULT_GRAPH_ID}>"
"""The store graph holding rdflib's Dataset default graph."""
BNODE_GRAPH_PREFIX = "urn:x-lsup:bnode-graph:"
"""Graphs named by a blank node ``_:x`` are stored as ``<urn:x-lsup:bnode-graph:x>``."""

_EMPTY_PREFIX = ":"    # the store cannot key an empty prefix; ":" is no valid prefix
_FLUSH_AT = 50_000     # buffered quads written per batch
_NESTED_LOOP_MAX = 1000  # up to this many distinct join keys: one match() per key
_EVAL_KEY = "lakesuperior.rdflib_store"
_FORMULA_MSG = "Lakesuperior stores no N3 formulae (quoted graphs)"

Quad = tuple[str, str, str, str]


class _Unmatchable(Exception):
    """A pattern term that no stored quad can match (e.g. a literal subject)."""


# --- terms and graph names ---------------------------------------------------------

def _graph_name(identifier: Node) -> str:
    """The store graph name of an rdflib graph identifier."""
    if isinstance(identifier, BNode):
        return f"<{BNODE_GRAPH_PREFIX}{identifier}>"
    if isinstance(identifier, URIRef):
        return from_rdflib(identifier)
    if isinstance(identifier, str):
        return from_rdflib(URIRef(identifier))
    raise TermError(f"A graph name must be an IRI or a blank node, not {identifier!r:.80}")


def _graph_identifier(name: str) -> URIRef | BNode:
    """The rdflib identifier of a store graph name."""
    if name.startswith(BNODE_GRAPH_PREFIX, 1):
        return BNode(name[len(BNODE_GRAPH_PREFIX) + 1:-1])
    return URIRef(name[1:-1])


def _term(node: Any) -> str:
    """The canonical string of an rdflib term given to a write."""
    if isinstance(node, Graph):
        raise NotImplementedError(_FORMULA_MSG)
    return from_rdflib(node)


def _check_triple(s: str, p: str, o: str) -> None:
    if s[0] == '"':
        raise TermError(f"A literal cannot be a subject: {s[:80]}")
    if p[0] != "<":
        raise TermError(f"A predicate must be an IRI: {p[:80]}")


def _pattern_term(node: Any, position: int) -> str | None:
    """A bound pattern term as a string (None = wildcard); ``_Unmatchable`` if no
    stored quad can hold it at ``position`` (0 subject, 1 predicate, 2 object)."""
    if node is None:
        return None
    if isinstance(node, Graph):
        raise NotImplementedError(_FORMULA_MSG)
    try:
        text = from_rdflib(node)
    except TermError:
        raise _Unmatchable from None
    if (position == 0 and text[0] == '"') or (position == 1 and text[0] != "<"):
        raise _Unmatchable
    return text


class _Memo(dict):
    """Canonical string -> rdflib term, each string converted once."""

    def __missing__(self, text: str) -> Node:
        node = self[text] = to_rdflib(text)
        return node


# --- the store ---------------------------------------------------------------------

class LmdbStore(Store):
    """rdflib ``Store`` over a Lakesuperior ``QuadStore`` (see the module docstring).

    ``LmdbStore(quadstore=qs)`` uses an open store (``close()`` leaves it open);
    ``LmdbStore(path)`` or ``open(path)`` opens one (``close()`` closes it). Keyword
    options (``sync``, ``map_size``, ``readonly``...) go to ``QuadStore``.
    """

    context_aware = True
    formula_aware = False
    graph_aware = True
    transaction_aware = True
    #: Whether ``GRAPH ?g`` ranges over the graphs of the union (see the module doc).
    _named_graphs_are_union = True

    def __init__(self, configuration: str | os.PathLike[str] | None = None,
                 identifier: Node | None = None, *, quadstore: QuadStore | None = None,
                 **options: Any) -> None:
        super().__init__(None, identifier)  # not Store's open(create=False): see below
        self.identifier = identifier
        self._store: QuadStore | None = quadstore
        self._owned_path: str | None = None
        self._options = options
        self._txn: WriteTxn | None = None
        self._pending: list[Quad] = []
        self._graphs: set[str] = set()          # registered by add_graph()
        self._local_ns: dict[str, str] = {}     # bindings on a read-only store
        if configuration is not None:
            if quadstore is not None:
                raise StoreError("Give a configuration (path) or an open quadstore, not both")
            self.open(configuration, create=True)

    # -- lifecycle -------------------------------------------------------------

    @property
    def quadstore(self) -> QuadStore:
        """The underlying quad store (``StoreError`` if none is open)."""
        if self._store is None:
            raise StoreError("The rdflib store is not open: call open(path) first")
        return self._store

    def open(self, configuration: str | os.PathLike[str], create: bool = True) -> int:
        """Open the store in directory ``configuration``; ``NO_STORE`` if there is
        none and ``create`` is false."""
        path = os.path.abspath(os.fspath(configuration))
        if self._store is not None:
            if self._store.path == path:
                return VALID_STORE
            raise StoreError(f"This rdflib store is open on {self._store.path} already")
        if not create and not os.path.exists(os.path.join(path, "data.mdb")):
            return NO_STORE
        self._store = QuadStore(path, **self._options)
        self._owned_path = path
        return VALID_STORE

    def close(self, commit_pending_transaction: bool = False) -> None:
        """Commit or roll back the open write, then close the store if this adapter
        opened it (a store passed in stays open)."""
        if self._store is None:
            return
        try:
            if commit_pending_transaction:
                self.commit()
            else:
                self.rollback()
        finally:
            if self._owned_path is not None:
                self._store.close()
            self._store = None

    def destroy(self, configuration: str | os.PathLike[str]) -> None:
        """Delete the store directory; only one that this adapter opened itself."""
        path = os.path.abspath(os.fspath(configuration))
        if self._owned_path is None:
            raise StoreError("destroy() deletes only a store that this adapter opened "
                             "itself; this one was passed in: delete it through its owner")
        if path != self._owned_path:
            raise StoreError(f"destroy({path!r}): this adapter opened {self._owned_path}")
        self.close()
        shutil.rmtree(path, ignore_errors=True)
        self._owned_path = None

    def gc(self) -> None:
        """Bring the union-graph indices up to date."""
        self.quadstore.index()

    def _checkpoint(self) -> None:
        """Called between batches of SPARQL work; a subclass may raise to stop it."""

    # -- transactions ------------------------------------------------------------

    def commit(self) -> None:
        """Commit the open write transaction (if any)."""
        if self._txn is None:
            return
        try:
            self._flush()
        except BaseException:
            self.rollback()
            raise
        txn, self._txn = self._txn, None
        txn.commit()

    def rollback(self) -> None:
        """Abort the open write transaction (if any)."""
        self._pending = []
        if self._txn is None:
            return
        txn, self._txn = self._txn, None
        txn.abort()

    def _writer(self) -> WriteTxn:
        if self._txn is None:
            self._txn = self.quadstore.write()
        return self._txn

    def _flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            self._writer().add(pending)

    def _read(self) -> AbstractContextManager[Reader]:
        """The open write transaction (flushed), else a fresh read snapshot."""
        if self._txn is not None:
            self._flush()
            return nullcontext(self._txn)
        return self.quadstore.read()

    # -- graph names ------------------------------------------------------------------

    def _name(self, context: Any) -> str | None:
        """Store graph name of a context; None for the union of all graphs."""
        if context is None:
            return None
        if isinstance(context, ConjunctiveGraph):
            if context.default_union:
                return None
            default = (context.default_graph if isinstance(context, Dataset)
                       else context.default_context)
            return _graph_name(default.identifier)
        if isinstance(context, QuotedGraph):
            raise NotImplementedError(_FORMULA_MSG)
        if isinstance(context, Graph):
            return _graph_name(context.identifier)
        return _graph_name(context)

    def _write_name(self, context: Any) -> str:
        name = self._name(context)
        return DEFAULT_GRAPH if name is None else name

    def _context(self, name: str) -> Graph:
        return Graph(store=self, identifier=_graph_identifier(name))

    # -- writes --------------------------------------------------------------------

    def add(self, triple: tuple[Node, Node, Node], context: Any,
            quoted: bool = False) -> None:
        """Add a triple to a graph (``context`` None: the Dataset default graph)."""
        if quoted:
            raise NotImplementedError(_FORMULA_MSG)
        s, p, o = (_term(t) for t in triple)
        _check_triple(s, p, o)
        name = self._write_name(context)
        self._writer()
        self._pending.append((s, p, o, name))
        if len(self._pending) >= _FLUSH_AT:
            self._flush()
        Store.add(self, triple, context, quoted)

    def addN(self, quads: Iterable[tuple[Node, Node, Node, Any]]) -> None:  # noqa: N802
        """Add quads ``(s, p, o, context)``."""
        names: dict[int, str] = {}
        batch = []
        for s, p, o, c in quads:
            if isinstance(c, QuotedGraph):
                raise NotImplementedError(_FORMULA_MSG)
            name = names.get(id(c))
            if name is None:
                name = names[id(c)] = self._write_name(c)
            ts, tp, to = _term(s), _term(p), _term(o)
            _check_triple(ts, tp, to)
            batch.append((ts, tp, to, name))
            Store.add(self, (s, p, o), c)
        if batch:
            self._writer()
            self._pending.extend(batch)
            if len(self._pending) >= _FLUSH_AT:
                self._flush()

    def remove(self, triple: tuple[Node | None, Node | None, Node | None],
               context: Any = None) -> None:
        """Remove every triple matching the pattern from ``context`` (None: all graphs)."""
        name = self._name(context)
        try:
            s, p, o = (_pattern_term(t, i) for i, t in enumerate(triple))
        except _Unmatchable:
            return
        txn = self._writer()
        self._flush()
        txn.remove(s, p, o, name)
        Store.remove(self, triple, context)

    def add_graph(self, graph: Graph) -> None:
        """Register a (possibly empty) graph."""
        name = self._name(graph)
        if name is not None:
            self._graphs.add(name)

    def remove_graph(self, graph: Graph) -> None:
        """Remove a graph and all its triples."""
        name = self._name(graph)
        if name is None:
            self.remove((None, None, None))
            self._graphs.clear()
            return
        self._graphs.discard(name)
        with self._read() as txn:
            if not txn.has_graph(name):
                return
        self._writer().remove_graph(name)

    # -- reads ---------------------------------------------------------------------

    def triples(self, triple_pattern: tuple[Node | None, Node | None, Node | None],
                context: Any = None
                ) -> Generator[tuple[tuple[Node, Node, Node], Iterator[Graph]], None, None]:
        """Triples matching the pattern in ``context`` (None: the union of all graphs),
        each with an iterator over the graphs it is in."""
        name = self._name(context)
        s, p, o = triple_pattern
        try:
            ts, tp, to = _pattern_term(s, 0), _pattern_term(p, 1), _pattern_term(o, 2)
        except _Unmatchable:
            return
        with self._read() as txn:
            quads = list(txn.match(ts, tp, to, name))
        memo = _Memo()
        if s is not None:
            memo[ts] = s
        if p is not None:
            memo[tp] = p
        if o is not None:
            memo[to] = o
        if name is not None:
            ctx = context if isinstance(context, Graph) and not isinstance(
                context, ConjunctiveGraph) else self._context(name)
            one = (ctx,)
            for qs, qp, qo, _ in quads:
                yield (memo[qs], memo[qp], memo[qo]), iter(one)
            return
        grouped: dict[tuple[str, str, str], list[str]] = {}
        for qs, qp, qo, qg in quads:
            gs = grouped.get((qs, qp, qo))
            if gs is None:
                grouped[(qs, qp, qo)] = [qg]
            else:
                gs.append(qg)
        contexts = _ContextMemo(self)
        for (qs, qp, qo), gs in grouped.items():
            yield (memo[qs], memo[qp], memo[qo]), map(contexts.__getitem__, gs)

    def __len__(self, context: Any = None) -> int:
        """Triples in ``context``; with None, distinct triples of all graphs."""
        name = self._name(context)
        with self._read() as txn:
            if name is not None:
                return txn.count(g=name)
            if txn.graph_count() <= 1:
                return txn.count()
            return len({q[:3] for q in txn.match()})

    def contexts(self, triple: tuple[Node | None, Node | None, Node | None] | None = None
                 ) -> Generator[Graph, None, None]:
        """Every graph (registered empty ones too), or the graphs holding ``triple``."""
        if triple is None or triple == (None, None, None):
            with self._read() as txn:
                names = list(txn.graphs())
            known = set(names)
            names.extend(sorted(n for n in self._graphs if n not in known))
        else:
            try:
                pattern = [_pattern_term(t, i) for i, t in enumerate(triple)]
            except _Unmatchable:
                return (g for g in ())
            with self._read() as txn:
                names = list(dict.fromkeys(q[3] for q in txn.match(*pattern)))
        return (self._context(n) for n in names)

    # -- namespaces -----------------------------------------------------------------

    def bind(self, prefix: str, namespace: URIRef | str, override: bool = True) -> None:
        """Bind ``prefix`` to ``namespace`` (kept on commit, or at once with no open
        write transaction)."""
        key = prefix or _EMPTY_PREFIX
        ns = str(namespace)
        with self._read() as txn:
            bound_ns = self._local_ns.get(key) or txn.namespace(key)
            bound_prefix = self._local_prefix(ns) or txn.prefix(ns)
        if bound_ns == ns and bound_prefix == key:
            return
        if not override and (bound_ns is not None or bound_prefix is not None):
            return
        if self.quadstore.readonly:
            for p, n in list(self._local_ns.items()):
                if n == ns:
                    del self._local_ns[p]
            self._local_ns[key] = ns
        elif self._txn is not None:
            self._txn.bind(key, ns, override)
        else:
            with self.quadstore.write() as txn:
                txn.bind(key, ns, override)

    def _local_prefix(self, ns: str) -> str | None:
        return next((p for p, n in self._local_ns.items() if n == ns), None)

    def namespace(self, prefix: str) -> URIRef | None:
        """The namespace bound to ``prefix``, or None."""
        key = prefix or _EMPTY_PREFIX
        ns = self._local_ns.get(key)
        if ns is None:
            with self._read() as txn:
                ns = txn.namespace(key)
        return URIRef(ns) if ns is not None else None

    def prefix(self, namespace: URIRef | str) -> str | None:
        """The prefix bound to ``namespace``, or None."""
        ns = str(namespace)
        key = self._local_prefix(ns)
        if key is None:
            with self._read() as txn:
                key = txn.prefix(ns)
        if key is None:
            return None
        return "" if key == _EMPTY_PREFIX else key

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        """Every ``(prefix, namespace)`` binding."""
        with self._read() as txn:
            bound = txn.namespaces()
        bound.update(self._local_ns)
        for key, ns in bound.items():
            yield ("" if key == _EMPTY_PREFIX else key), URIRef(ns)

    def __repr__(self) -> str:
        where = self._store.path if self._store is not None else "not open"
        return f"<LmdbStore {where}>"


class _ContextMemo(dict):
    """Store graph name -> rdflib Graph, made once per ``triples()`` call."""

    def __init__(self, store: LmdbStore) -> None:
        super().__init__()
        self.store = store

    def __missing__(self, name: str) -> Graph:
        graph = self[name] = self.store._context(name)
        return graph


# --- the SPARQL fast path -------------------------------------------------------------

def enable_sparql_fast_path() -> None:
    """Let rdflib's SPARQL engine evaluate basic graph patterns over ``LmdbStore``
    natively (registers in rdflib's ``CUSTOM_EVALS``; other stores are unaffected)."""
    CUSTOM_EVALS[_EVAL_KEY] = _custom_eval


def disable_sparql_fast_path() -> None:
    """Undo ``enable_sparql_fast_path()``."""
    CUSTOM_EVALS.pop(_EVAL_KEY, None)


class _Pattern(NamedTuple):
    """A triple pattern: per position a constant term string or a variable key."""

    terms: tuple[str | None, str | None, str | None]
    vars: tuple[Any, Any, Any]


class _Target(NamedTuple):
    """Where a basic graph pattern is matched."""

    store: LmdbStore
    graph: str | None            # a graph name; None: the union (or GRAPH ?g)
    graph_var: Variable | None   # GRAPH ?g: bound to each named graph
    exclude: frozenset[str]      # graphs GRAPH ?g leaves out (the default graph)


def _custom_eval(ctx: QueryContext, part: CompValue) -> Any:
    """rdflib ``CUSTOM_EVALS`` hook: ``NotImplementedError`` hands a part back."""
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


native_eval = _custom_eval
"""The fast path's ``CUSTOM_EVALS`` hook (``NotImplementedError``: not handled)."""


def _target(ctx: QueryContext, graph: Any) -> _Target:
    store = getattr(graph, "store", None)
    if not isinstance(store, LmdbStore):
        raise NotImplementedError
    if isinstance(graph, ConjunctiveGraph) or type(graph) is Graph:
        return _Target(store, store._name(graph), None, frozenset())
    raise NotImplementedError


def _patterns(ctx: QueryContext, triples: list) -> tuple[list[_Pattern], list[tuple]]:
    """The BGP's patterns with the context's bindings substituted, and apart the
    triples whose predicate is a property path; ``_Unmatchable`` if a constant
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
                terms[i] = _pattern_term(value, i)
            else:
                paths.append(triple)
                break
        else:
            out.append(_Pattern(tuple(terms), tuple(keys)))  # type: ignore[arg-type]
    return out, paths


def _eval_bgp(ctx: QueryContext, part: CompValue, target: _Target,
              project: list[Variable] | None = None) -> Generator[FrozenBindings, None, None]:
    try:
        patterns, paths = _patterns(ctx, part.triples)
    except _Unmatchable:
        return _no_solutions()
    if not patterns or (paths and target.graph_var is not None):
        raise NotImplementedError
    if paths:
        return _with_paths(ctx, target, patterns, paths, project)
    return _solutions(ctx, target, patterns, project)


def _with_paths(ctx: QueryContext, target: _Target, patterns: list[_Pattern],
                paths: list[tuple], project: list[Variable] | None
                ) -> Generator[FrozenBindings, None, None]:
    """Plain patterns natively, then the property paths by rdflib, per solution."""
    for solution in _solutions(ctx, target, patterns, None):
        for row in evalBGP(ctx.thaw(solution), paths):
            yield row if project is None else row.project(project)


def _no_solutions() -> Generator[FrozenBindings, None, None]:
    yield from ()


def _solutions(ctx: QueryContext, target: _Target, patterns: list[_Pattern],
               project: list[Variable] | None) -> Generator[FrozenBindings, None, None]:
    """The solutions as rdflib bindings (only the ``project`` variables, if given)."""
    with target.store._read() as txn:
        cols, chunks = _solve(txn, target, patterns)
        base = dict(ctx.bindings)
        out = list(cols.items())
        if project is not None:
            keep = set(project)
            base = {k: v for k, v in base.items() if k in keep}
            out = [(k, c) for k, c in out if k in keep]
        keys = [k for k, _ in out]
        terms, graphs = _Memo(), _GraphMemo()
        conv = [(graphs if k == target.graph_var else terms, c) for k, c in out]
        checkpoint = target.store._checkpoint
        for rows in chunks:
            for start in range(0, len(rows), _CHECK_EVERY):
                checkpoint()      # the consumer's work per row counts too (FILTER...)
                for row in rows[start:start + _CHECK_EVERY]:
                    values = zip(keys, [m[row[c]] for m, c in conv], strict=False)
                    yield FrozenBindings(ctx, {**base, **dict(values)} if base else values)


class _GraphMemo(dict):
    """Store graph name -> rdflib graph identifier."""

    def __missing__(self, name: str) -> Node:
        node = self[name] = _graph_identifier(name)
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
    if not store._named_graphs_are_union:
        raise NotImplementedError
    default = dataset.default_graph if isinstance(dataset, Dataset) else dataset.default_context
    target = _Target(store, None, term, frozenset((_graph_name(default.identifier),)))
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
    except _Unmatchable:
        patterns, paths = None, []
    if paths:
        raise NotImplementedError
    return _counts(ctx, part.A, target, patterns)


def _countable(aggregates: list, target: _Target, patterns: list[_Pattern] | None) -> bool:
    """Whether the store's ``count()`` answers every aggregate: one pattern, no
    repeated variable, no ``GRAPH ?g``, and ``COUNT(DISTINCT ?v)`` only when ``?v``
    is the pattern's one variable (solutions are then the distinct matching triples)."""
    if patterns is None or len(patterns) != 1 or target.graph_var is not None:
        return False
    names = [v for v in patterns[0].vars if v is not None]
    if len(set(names)) != len(names):
        return False
    return all(not a.distinct or a.vars == "*" or len(names) == 1 for a in aggregates)


def _counts(ctx: QueryContext, aggregates: list, target: _Target,
            patterns: list[_Pattern] | None) -> Generator[FrozenBindings, None, None]:
    n_rows = 0
    seen: dict[Any, set] = {a.vars: set() for a in aggregates if a.distinct}
    if _countable(aggregates, target, patterns):
        assert patterns is not None
        with target.store._read() as txn:
            n = txn.count(*patterns[0].terms, target.graph, distinct=True)
        yield FrozenBindings(ctx, {a.res: Literal(n) for a in aggregates})
        return
    if patterns is not None:
        with target.store._read() as txn:
            cols, chunks = _solve(txn, target, patterns)
            checkpoint = target.store._checkpoint
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


# --- the join engine ---------------------------------------------------------------------
#
# A basic graph pattern is solved on term strings. The patterns are ordered up front
# (bound subject first, then object, then predicate; variables bound by earlier
# patterns count as bound). The first pattern is matched whole; its rows then flow in
# chunks through one stage per further pattern, so a consumer that stops early (LIMIT,
# ASK) stops the work. A stage joins either by one ``match()`` per distinct value of
# the shared variables (few rows upstream), or by one ``match()`` of the pattern's
# constants, hash-joined (many rows upstream). Positions 0-2 of a match are s, p, o;
# 3 is the graph, bound to the graph variable of ``GRAPH ?g``.

_CHUNK = 2000
_FIRST_PIECE = 64     # rows given to a stage's first call (then sized by its output)
_CHECK_EVERY = 1024   # solutions handed out between two checkpoints
_CACHE_MAX = 100_000


class _Step(NamedTuple):
    """One pattern placed in the plan."""

    terms: tuple[str | None, str | None, str | None]
    key_pos: list[int]      # positions whose values the rows bind ...
    key_cols: list[int]     # ... from these row columns
    new_pos: list[int]      # positions of the variables this step adds (as columns)
    same: list[tuple[int, int]]   # position pairs that must be equal (a repeated variable)


def _plan(patterns: list[_Pattern], graph_var: Variable | None
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


def _score(pat: _Pattern, cols: dict[Any, int]) -> int:
    """Selectivity guess: a bound subject counts most, then object, then predicate."""
    return sum(w for w, t, v in zip((4, 1, 2), pat.terms, pat.vars, strict=False)
               if t is not None or v in cols)


_Table = dict[tuple[str, ...], list[tuple[str, ...]]]


def _getter(positions: list[int]) -> Callable[[Quad], tuple[str, ...]]:
    """A function taking the values at ``positions`` of a quad, as a tuple."""
    if not positions:
        return lambda q: ()
    if len(positions) == 1:
        i = positions[0]
        return lambda q: (q[i],)
    return itemgetter(*positions)  # type: ignore[return-value]


class _Stage:
    """Joins row chunks with one pattern's matches."""

    def __init__(self, txn: Reader, target: _Target, step: _Step, upstream: int):
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
            exts = get(row_key(row))
            if exts:
                out.extend([row + ext for ext in exts])
        return out


def _solve(txn: Reader, target: _Target, patterns: list[_Pattern]
           ) -> tuple[dict[Any, int], Iterator[list[tuple[str, ...]]]]:
    """The solutions: variable -> column, and the rows (term strings) in chunks."""
    cols, steps = _plan(patterns, target.graph_var)

    checkpoint = target.store._checkpoint

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
