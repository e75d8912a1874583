"""rdflib Store adapter over the quad store.

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

SPARQL: rdflib calls ``triples()`` once per pattern per partial solution.
``lakesuperior.query.enable_sparql_fast_path()`` lets basic graph patterns, ``GRAPH ?g``
over one, and ``COUNT`` over one be evaluated natively on this adapter's quad store
(the join engine lives in ``lakesuperior.query``). What that fast path uses here:
``read()`` (the transaction reads go through), ``context_name()``, ``checkpoint()``
(called between batches of work: a subclass may raise from it to stop a query, a
time limit), ``named_graphs_are_union`` (a subclass sets it false when the graphs
``GRAPH ?g`` ranges over are not the graphs of the union: ``GRAPH ?g`` then goes to
rdflib), and the term helpers ``pattern_term``, ``graph_name``, ``graph_identifier``,
``TermMemo``.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Generator, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from rdflib.graph import DATASET_DEFAULT_GRAPH_ID, ConjunctiveGraph, Dataset, Graph, QuotedGraph
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.evaluate import evalQuery
from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.plugins.sparql.sparql import Query, Update
from rdflib.plugins.sparql.update import evalUpdate
from rdflib.query import Result
from rdflib.store import NO_STORE, VALID_STORE, Store
from rdflib.term import BNode, Identifier, Node, URIRef

from lakesuperior.exceptions import StoreError, TermError
from lakesuperior.rdf.sparql_parser import parse_query, parse_update
from lakesuperior.rdf.update_algebra import translate_update
from lakesuperior.rdfio import from_rdflib, to_rdflib
from lakesuperior.store.quadstore import QuadStore, Reader, WriteTxn

__all__ = [
    "LmdbStore", "DEFAULT_GRAPH", "BNODE_GRAPH_PREFIX", "Quad", "Unmatchable", "TermMemo",
    "graph_name", "graph_identifier", "pattern_term",
]

DEFAULT_GRAPH = f"<{DATASET_DEFAULT_GRAPH_ID}>"
"""The store graph holding rdflib's Dataset default graph."""
BNODE_GRAPH_PREFIX = "urn:x-lsup:bnode-graph:"
"""Graphs named by a blank node ``_:x`` are stored as ``<urn:x-lsup:bnode-graph:x>``."""

_EMPTY_PREFIX = ":"    # the store cannot key an empty prefix; ":" is no valid prefix
_FLUSH_AT = 50_000     # buffered quads written per batch
_FORMULA_MSG = "Lakesuperior stores no N3 formulae (quoted graphs)"

Quad = tuple[str, str, str, str]


class Unmatchable(Exception):
    """A pattern term that no stored quad can match (e.g. a literal subject): a signal
    between ``pattern_term`` and its callers, never raised to a user."""


# --- terms and graph names ---------------------------------------------------------

def graph_name(identifier: Node) -> str:
    """The store graph name of an rdflib graph identifier."""
    if isinstance(identifier, BNode):
        return f"<{BNODE_GRAPH_PREFIX}{identifier}>"
    if isinstance(identifier, URIRef):
        return from_rdflib(identifier)
    if isinstance(identifier, str):
        return from_rdflib(URIRef(identifier))
    raise TermError(f"A graph name must be an IRI or a blank node, not {identifier!r:.80}")


def graph_identifier(name: str) -> URIRef | BNode:
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


def pattern_term(node: Any, position: int) -> str | None:
    """A bound pattern term as a string (None = wildcard); ``Unmatchable`` if no
    stored quad can hold it at ``position`` (0 subject, 1 predicate, 2 object)."""
    if node is None:
        return None
    if isinstance(node, Graph):
        raise NotImplementedError(_FORMULA_MSG)
    try:
        text = from_rdflib(node)
    except TermError:
        raise Unmatchable from None
    if (position == 0 and text[0] == '"') or (position == 1 and text[0] != "<"):
        raise Unmatchable
    return text


class TermMemo(dict):
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
    named_graphs_are_union = True

    def __init__(self, configuration: str | os.PathLike[str] | None = None,
                 identifier: Identifier | None = None, *, quadstore: QuadStore | None = None,
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

    def open(self, configuration: str | os.PathLike[str],  # type: ignore[override]
             create: bool = True) -> int:
        """Open the store in directory ``configuration`` (a path, not rdflib's
        ``(str, str)`` form); ``NO_STORE`` if there is none and ``create`` is false."""
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

    def checkpoint(self) -> None:
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

    def read(self) -> AbstractContextManager[Reader]:
        """The open write transaction (flushed), else a fresh read snapshot."""
        if self._txn is not None:
            self._flush()
            return nullcontext(self._txn)
        return self.quadstore.read()

    # -- graph names ------------------------------------------------------------------

    def context_name(self, context: Any) -> str | None:
        """Store graph name of a context; None for the union of all graphs."""
        if context is None:
            return None
        if isinstance(context, ConjunctiveGraph):
            if context.default_union:
                return None
            default = (context.default_graph if isinstance(context, Dataset)
                       else context.default_context)
            return graph_name(default.identifier)
        if isinstance(context, QuotedGraph):
            raise NotImplementedError(_FORMULA_MSG)
        if isinstance(context, Graph):
            return graph_name(context.identifier)
        return graph_name(context)

    def _write_name(self, context: Any) -> str:
        name = self.context_name(context)
        return DEFAULT_GRAPH if name is None else name

    def _context(self, name: str) -> Graph:
        return Graph(store=self, identifier=graph_identifier(name))

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
        name = self.context_name(context)
        try:
            s, p, o = (pattern_term(t, i) for i, t in enumerate(triple))
        except Unmatchable:
            return
        txn = self._writer()
        self._flush()
        txn.remove(s, p, o, name)
        Store.remove(self, triple, context)

    def add_graph(self, graph: Graph) -> None:
        """Register a (possibly empty) graph."""
        name = self.context_name(graph)
        if name is not None:
            self._graphs.add(name)

    def remove_graph(self, graph: Graph) -> None:
        """Remove a graph and all its triples."""
        name = self.context_name(graph)
        if name is None:
            self.remove((None, None, None))
            self._graphs.clear()
            return
        self._graphs.discard(name)
        with self.read() as txn:
            if not txn.has_graph(name):
                return
        self._writer().remove_graph(name)

    # -- reads ---------------------------------------------------------------------

    def triples(self, triple_pattern: tuple[Node | None, Node | None, Node | None],
                context: Any = None
                ) -> Generator[tuple[tuple[Node, Node, Node], Iterator[Graph]], None, None]:
        """Triples matching the pattern in ``context`` (None: the union of all graphs),
        each with an iterator over the graphs it is in."""
        name = self.context_name(context)
        s, p, o = triple_pattern
        try:
            ts, tp, to = pattern_term(s, 0), pattern_term(p, 1), pattern_term(o, 2)
        except Unmatchable:
            return
        with self.read() as txn:
            quads = list(txn.match(ts, tp, to, name))
        memo = TermMemo()
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
        name = self.context_name(context)
        with self.read() as txn:
            if name is not None:
                return txn.count(g=name)
            if txn.graph_count() <= 1:
                return txn.count()
            return len({q[:3] for q in txn.match()})

    def contexts(self, triple: tuple[Node | None, Node | None, Node | None] | None = None
                 ) -> Generator[Graph, None, None]:
        """Every graph (registered empty ones too), or the graphs holding ``triple``."""
        if triple is None or triple == (None, None, None):
            with self.read() as txn:
                names = list(txn.graphs())
            known = set(names)
            names.extend(sorted(n for n in self._graphs if n not in known))
        else:
            try:
                pattern = [pattern_term(t, i) for i, t in enumerate(triple)]
            except Unmatchable:
                names = []
            else:
                with self.read() as txn:
                    names = list(dict.fromkeys(q[3] for q in txn.match(*pattern)))
        return (self._context(n) for n in names)

    # -- namespaces -----------------------------------------------------------------

    def bind(self, prefix: str, namespace: URIRef | str, override: bool = True) -> None:
        """Bind ``prefix`` to ``namespace`` (kept on commit, or at once with no open
        write transaction)."""
        key = prefix or _EMPTY_PREFIX
        ns = str(namespace)
        with self.read() as txn:
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
            with self.read() as txn:
                ns = txn.namespace(key)
        return URIRef(ns) if ns is not None else None

    def prefix(self, namespace: URIRef | str) -> str | None:
        """The prefix bound to ``namespace``, or None."""
        ns = str(namespace)
        key = self._local_prefix(ns)
        if key is None:
            with self.read() as txn:
                key = txn.prefix(ns)
        if key is None:
            return None
        return "" if key == _EMPTY_PREFIX else key

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        """Every ``(prefix, namespace)`` binding."""
        with self.read() as txn:
            bound = txn.namespaces()
        bound.update(self._local_ns)
        for key, ns in bound.items():
            yield ("" if key == _EMPTY_PREFIX else key), URIRef(ns)

    # -- SPARQL ------------------------------------------------------------------

    def query(self, query: Any, initNs: Mapping[str, Any],  # noqa: N803
              initBindings: Mapping[str, Identifier], queryGraph: Any,  # noqa: N803
              **kwargs: Any) -> Result:
        """``Graph.query`` on this store: what rdflib's SPARQL processor does, with
        the text parsed by ``rdf.sparql_parser``, so that threads querying their own
        adapters at once cannot break rdflib's shared grammar."""
        base = kwargs.get("base")
        if not isinstance(query, Query):
            query = translateQuery(parse_query(_sparql_text(query)), base, initNs)
        return SPARQLResult(evalQuery(self._query_graph(queryGraph), query,
                                      initBindings or {}, base))

    def update(self, update: Any, initNs: Mapping[str, Any],  # noqa: N803
               initBindings: Mapping[str, Identifier], queryGraph: Any,  # noqa: N803
               **kwargs: Any) -> None:
        """``Graph.update`` on this store, parsed as ``query`` is."""
        if not isinstance(update, Update):
            update = translate_update(parse_update(_sparql_text(update)), init_ns=initNs)
        evalUpdate(self._query_graph(queryGraph), update, initBindings or {})

    def _query_graph(self, name: Any) -> Graph:
        """The graph rdflib names to a store's ``query``: ``"__UNION__"`` for a
        union dataset, a Dataset's default graph for a Dataset, else one graph."""
        if name == "__UNION__":
            return Dataset(store=self, default_union=True)
        if name == DATASET_DEFAULT_GRAPH_ID:
            return Dataset(store=self)
        return Graph(store=self, identifier=name)

    def __repr__(self) -> str:
        where = self._store.path if self._store is not None else "not open"
        return f"<LmdbStore {where}>"


def _sparql_text(text: Any) -> str:
    """A query or update as rdflib's processor takes it: text, bytes or a file."""
    if hasattr(text, "read"):
        text = text.read()
    return text.decode("utf-8") if isinstance(text, bytes) else text


class _ContextMemo(dict):
    """Store graph name -> rdflib Graph, made once per ``triples()`` call."""

    def __init__(self, store: LmdbStore) -> None:
        super().__init__()
        self.store = store

    def __missing__(self, name: str) -> Graph:
        graph = self[name] = self.store._context(name)
        return graph
