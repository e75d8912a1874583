"""What a query sees: a read snapshot with resource graphs only, under public URIs.

``PublicTxn`` wraps a read snapshot (a ``Reader``: ``ReadTxn`` or ``WriteTxn``) with the
``Reader`` interface the rdflib adapter and its fast path use: it keeps only resource
graphs and rewrites terms at the boundary (string operations on canonical terms; an
internal URI typed into a query names nothing). ``QueryView`` is the read-only rdflib
``Store`` over it (a subclass of ``LmdbStore`` whose ``read()`` is that view), made per query, and
``QueryDataset`` the rdflib ``Dataset`` a query runs on. A query reads from
``Snapshots``: anything with a ``snapshot(base_uri)`` context manager giving a model
``Context``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from types import MappingProxyType
from typing import Any, Protocol

from rdflib import Dataset
from rdflib.graph import ConjunctiveGraph, Graph

from lakesuperior.exceptions import SparqlError
from lakesuperior.model.context import Context
from lakesuperior.model.namespaces import DEFAULT_NAMESPACES
from lakesuperior.model.uids import RES_PREFIX, UriMap
from lakesuperior.query.deadlines import CHECK_EVERY, Deadline
from lakesuperior.rdfio import Triple
from lakesuperior.store.rdflib_store import LmdbStore, Unmatchable
from lakesuperior.store.reads import Reader

__all__ = ["QUERY_NAMESPACES", "RES", "Triple", "Snapshots", "PublicTxn", "QueryView",
           "QueryDataset", "GraphFilter", "GraphFilterFactory"]


#: Prefixes every query may use without declaring them.
QUERY_NAMESPACES = MappingProxyType(
    {k: v for k, v in DEFAULT_NAMESPACES.items() if k != "fcsystem"})

RES = RES_PREFIX + "/"      # every internal resource URI and resource graph name
_RES_LEN = len(RES_PREFIX)  # what public URIs replace (the "/" stays)


class Snapshots(Protocol):
    """Where queries read (``Repository`` is one)."""

    def snapshot(self, base_uri: str | None = None) -> AbstractContextManager[Context]:
        """One read snapshot of the repository, with public URIs under ``base_uri``
        (default: the configured base)."""
        ...


#: A predicate on the internal names of resource graphs: those a query may see.
GraphFilter = Callable[[str], bool]
#: Given a query's snapshot, its ``GraphFilter`` (None: every graph is seen).
GraphFilterFactory = Callable[[Context], GraphFilter | None]


class PublicTxn:
    """A read snapshot (a ``Reader``) as a query sees it: resource graphs only, public
    URIs. ``default`` / ``named``: the internal names of the graphs making the default
    graph / the named graphs (None: every resource graph). ``visible``: the resource
    graphs the query may see at all (None: every one; else every pattern is
    matched quad by quad and counts are counted from the matches, so that no
    row, count or graph name comes from a hidden graph)."""

    def __init__(self, txn: Reader, urimap: UriMap, deadline: Deadline,
                 default: frozenset[str] | None = None, named: frozenset[str] | None = None,
                 visible: GraphFilter | None = None):
        self.txn = txn
        self.urimap = urimap
        self.deadline = deadline
        self.check = deadline.check
        self.default = default
        self.named = named
        self.visible = visible
        self.pub = urimap.pub_prefix

    # -- terms ---------------------------------------------------------------------

    def internal(self, term: str | None) -> str | None:
        """The stored form of a public pattern term."""
        if term is None:
            return None
        if term.startswith(RES):
            raise Unmatchable     # an internal URI typed in a query names nothing
        return self.urimap.to_internal(term)

    def public_quads(self, quads: Iterable[tuple[str, str, str, str]]) -> list:
        pub, n, res = self.pub, _RES_LEN, RES
        return [(pub + s[n:] if s.startswith(res) else s, p,
                 pub + o[n:] if o.startswith(res) else o, pub + g[n:])
                for s, p, o, g in quads if g.startswith(res)]

    def public_triples(self, quads: Iterable[tuple[str, str, str, str]]) -> list[Triple]:
        """The distinct triples of the resource graphs among ``quads``, public URIs."""
        pub, n, res = self.pub, _RES_LEN, RES
        return list(dict.fromkeys([
            (pub + s[n:] if s.startswith(res) else s, p, pub + o[n:] if o.startswith(res) else o)
            for s, p, o, g in quads if g.startswith(res)]))

    def seen(self, quads: Iterable[tuple[str, str, str, str]]
             ) -> Iterable[tuple[str, str, str, str]]:
        """``quads`` without those of hidden graphs (all of them without a filter)."""
        visible = self.visible
        if visible is None:
            return quads
        res = RES
        return [q for q in quads if q[3].startswith(res) and visible(q[3])]

    def public_graph(self, name: str) -> str:
        return self.pub + name[_RES_LEN:]

    def _named_graph(self, g: str) -> str | None:
        """The internal name of a named graph a query may see, or None."""
        try:
            name = self.internal(g)
        except Unmatchable:
            return None
        if name is None or not name.startswith(RES):
            return None
        if self.named is not None and name not in self.named:
            return None
        if self.visible is not None and not self.visible(name):
            return None
        return name

    # -- the Reader interface used by LmdbStore and its fast path ----------------------

    def match(self, s: str | None = None, p: str | None = None, o: str | None = None,
              g: str | None = None) -> list[tuple[str, str, str, str]]:
        self.check()
        try:
            s, o = self.internal(s), self.internal(o)
        except Unmatchable:
            return []
        if g is not None:
            name = self._named_graph(g)
            if name is None:
                return []
            return self.public_quads(self.txn.match(s, p, o, name))
        if self.default is None:
            return self.public_quads(self.seen(self.txn.match(s, p, o, None)))
        quads: list[tuple[str, str, str, str]] = []
        for name in sorted(self.default):
            quads.extend(self.txn.match(s, p, o, name))
        return self.public_quads(self.seen(quads))

    def count(self, s: str | None = None, p: str | None = None, o: str | None = None,
              g: str | None = None, *, distinct: bool = False) -> int:
        self.check()
        try:
            s, o = self.internal(s), self.internal(o)
        except Unmatchable:
            return 0
        if g is not None:
            name = self._named_graph(g)
            return 0 if name is None else self.txn.count(s, p, o, name)
        if self.default is None and self.visible is None:
            return self.txn.count(s, p, o, None, distinct=distinct, graph_prefix=RES)
        if self.default is None:
            quads = list(self.seen(self.txn.match(s, p, o, None)))
        else:
            quads = list(self.seen([q for name in self.default
                                    for q in self.txn.match(s, p, o, name)]))
        return len({q[:3] for q in quads}) if distinct else len(quads)

    def has_graph(self, g: str) -> bool:
        name = self._named_graph(g)
        return name is not None and self.txn.has_graph(name)

    def graphs(self) -> Iterator[str]:
        self.check()
        if self.named is not None:
            names = sorted(n for n in self.named if self.txn.has_graph(n))
        else:
            names = [n for n in self.txn.graphs() if n.startswith(RES)]
        if self.visible is not None:
            names = [n for n in names if self.visible(n)]
        return iter([self.public_graph(n) for n in names])

    def graph_count(self) -> int:
        return sum(1 for _ in self.graphs())

    def triples(self, g: str) -> list[Triple]:
        return [q[:3] for q in self.match(None, None, None, g)]

    def namespaces(self) -> dict[str, str]:
        return self.txn.namespaces()

    def namespace(self, prefix: str) -> str | None:
        return self.txn.namespace(prefix)

    def prefix(self, namespace: str) -> str | None:
        return self.txn.prefix(namespace)


_READ_ONLY = ("The query view is read-only: writes go through the LDP API "
              "(PUT, POST, PATCH with SPARQL Update, DELETE)")


class QueryView(LmdbStore):
    """A read-only rdflib ``Store`` over one snapshot of the repository's current
    resources, with public URIs (see the module docstring). Made per query."""

    def __init__(self, txn: PublicTxn):
        super().__init__()
        self._public = txn
        self.named_graphs_are_union = (txn.default is None and txn.named is None
                                       and txn.visible is None)

    def read(self) -> Any:
        return nullcontext(self._public)

    def checkpoint(self) -> None:
        self._public.check()

    @property
    def deadline(self) -> Deadline:
        """The time limit (and row bound) of the query this view serves."""
        return self._public.deadline

    def triples(self, triple_pattern: Any, context: Any = None) -> Any:
        check = self._public.check
        for i, item in enumerate(super().triples(triple_pattern, context)):
            if not i % CHECK_EVERY:
                check()
            yield item

    def __len__(self, context: Any = None) -> int:
        name = self.context_name(context)
        if name is None:
            return self._public.count(distinct=True)
        return self._public.count(g=name)

    # -- no writes ----------------------------------------------------------------------

    def open(self, configuration: Any, create: bool = True) -> int:
        raise SparqlError(_READ_ONLY)

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise SparqlError(_READ_ONLY)

    add = addN = remove = add_graph = remove_graph = destroy = gc = _refuse  # noqa: N815

    def bind(self, prefix: str, namespace: Any, override: bool = True) -> None:
        """Namespace bindings live in this view only."""
        key = prefix or ":"
        ns = str(namespace)
        if not override and (key in self._local_ns or ns in self._local_ns.values()):
            return
        for p, n in list(self._local_ns.items()):
            if n == ns:
                del self._local_ns[p]
        self._local_ns[key] = ns

    def __repr__(self) -> str:
        return f"<QueryView {self._public.urimap.base}>"


class QueryDataset(Dataset):
    """The Dataset a query runs on. rdflib's own evaluator uses members that rdflib
    7 deprecates (``contexts()``, ``default_context``, ``identifier``): here they
    warn nothing, and ``contexts()`` lists the named graphs only (rdflib's adds, and
    so would write, the default graph)."""

    @property  # type: ignore[misc]
    def default_context(self) -> Graph:
        return self.default_graph

    @property
    def identifier(self) -> Any:
        return ConjunctiveGraph.identifier.fget(self)  # type: ignore[attr-defined]

    def contexts(self, triple: Any = None) -> Iterator[Graph]:  # type: ignore[override]
        return ConjunctiveGraph.contexts(self, triple)

    graphs = contexts  # type: ignore[assignment]
