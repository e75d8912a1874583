"""Queries over a repository: SPARQL 1.1, triple patterns and term search.

Usage::

    from lakesuperior.query import engine as query

    result = query.sparql_query(repo, "SELECT ?s WHERE { ?s a ldp:Container }")
    for row in result: ...                                 # an rdflib Result
    body = query.sparql_query(repo, q, fmt="application/sparql-results+json")  # bytes
    query.triple_match(repo, p="<http://purl.org/dc/terms/title>")
    query.term_search(repo, [("dcterms:title", "contains", "lake")])

The same functions are ``Repository.sparql_query`` / ``triple_match`` /
``term_search``.

What a query sees
    The repository's current resources and nothing else. Each live LDP
    resource is a named graph, named by its public URI; the default graph is
    the union of all of them (a triple held by several resources is one triple
    of the union). The model's other graphs (membership, versions, tombstones,
    buried resources, ...) never appear, so deleted resources are invisible.
    URIs are public (``base_uri + uid``) both ways: in results, and in the
    query, where a public URI of a resource finds it. A SPARQL ``BASE`` is the
    root (``<a/b>`` is the resource ``/a/b``) and the prefixes of
    ``QUERY_NAMESPACES`` (``ldp:``, ``fcrepo:``, ``dcterms:``, ``rdf:``...) need
    no ``PREFIX``. The protocol's ``default-graph-uri`` / ``named-graph-uri``, or
    ``FROM`` / ``FROM NAMED`` in the query, restrict the dataset to the given
    resources' graphs; nothing is ever fetched from the network (``SERVICE`` is
    refused).

How it runs
    One read snapshot per call (inside ``Repository.transaction()``, the open
    write transaction: a query sees the block's own writes). ``QueryView`` is a
    read-only rdflib ``Store`` over that snapshot: a subclass of ``LmdbStore``
    whose ``_read()`` is the snapshot seen through ``_PublicTxn``, which keeps
    only resource graphs and rewrites terms at the boundary (string operations
    on canonical terms). rdflib's evaluator and the native fast path of
    ``rdflib_store`` (basic graph patterns joined on term strings; ``COUNT`` of
    one pattern as one index count) both run on it.

Time limit
    ``timeout`` (default: the configuration's ``query_timeout``) bounds a whole
    call: parsing, evaluation and serialization. The view checks a deadline at
    every store access, every 1024 triples streamed and every batch of joined
    rows, and raises ``QueryTimeoutError``. As a backstop for work that never
    touches the store (rdflib's in-memory joins, sorting), a watchdog thread
    interrupts the calling thread shortly after the deadline with an
    asynchronous exception, turned into the same error. Only a single long C
    call that holds the GIL (a pathological regular expression) can outlast it.
"""
from __future__ import annotations

import ctypes
import datetime as dt
import decimal
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

from rdflib import Dataset
from rdflib.graph import ConjunctiveGraph, Graph
from rdflib.plugins.sparql import CUSTOM_EVALS
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.evaluate import evalPart
from rdflib.plugins.sparql.parser import parseQuery, parseUpdate
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.plugins.sparql.sparql import Query, QueryContext
from rdflib.query import Result
from rdflib.term import BNode, Literal, Node, URIRef, Variable

from lakesuperior import rdfio
from lakesuperior.exceptions import QueryTimeoutError, SparqlError, TermError
from lakesuperior.model.namespaces import DEFAULT_NAMESPACES
from lakesuperior.model.uids import UriMap, uid_of
from lakesuperior.store.rdflib_store import LmdbStore, native_eval

if TYPE_CHECKING:
    from lakesuperior.repository import Repository

__all__ = [
    "sparql_query", "triple_match", "term_search", "serialize_result", "QueryView",
    "QUERY_NAMESPACES", "RESULT_TYPES", "GRAPH_TYPES", "TERM_OPERATORS",
]

Triple = tuple[str, str, str]

#: Prefixes every query may use without declaring them.
QUERY_NAMESPACES = MappingProxyType(
    {k: v for k, v in DEFAULT_NAMESPACES.items() if k != "fcsystem"})

SPARQL_JSON = "application/sparql-results+json"
SPARQL_XML = "application/sparql-results+xml"
CSV = "text/csv"
TSV = "text/tab-separated-values"
#: Media types of SELECT / ASK results, preferred first.
RESULT_TYPES = (SPARQL_JSON, SPARQL_XML, CSV, TSV)
#: Media types of CONSTRUCT / DESCRIBE results, preferred first.
GRAPH_TYPES = (rdfio.TURTLE, rdfio.N_TRIPLES, rdfio.JSON_LD, rdfio.RDF_XML)
_FORMAT_NAMES = MappingProxyType({
    "json": SPARQL_JSON, "xml": SPARQL_XML, "csv": CSV, "tsv": TSV,
    "turtle": rdfio.TURTLE, "ttl": rdfio.TURTLE, "nt": rdfio.N_TRIPLES,
    "ntriples": rdfio.N_TRIPLES, "json-ld": rdfio.JSON_LD, "jsonld": rdfio.JSON_LD,
    "rdfxml": rdfio.RDF_XML, "rdf/xml": rdfio.RDF_XML,
})

#: ``term_search`` operators: ``_id`` matches an IRI object; the comparisons take the
#: string form of the object when the value is a ``str``, the typed value otherwise
#: (numbers, dates, rdflib literals); ``contains`` is a case-insensitive substring.
TERM_OPERATORS = ("_id", "=", "!=", "<", ">", "<=", ">=", "contains")

_RES = "<info:fcres/"           # every internal resource URI and resource graph name
_RES_LEN = len("<info:fcres")   # what public URIs replace (the "/" stays)
_CHECK_EVERY = 1024             # triples streamed between two deadline checks
_EVAL_KEY = "lakesuperior.query.engine"
_WATCHDOG_REPEAT = 0.05         # seconds between two interruptions of a stuck query


# --- the time limit -------------------------------------------------------------------

class _Deadline:
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


class _Interrupted(BaseException):
    """Raised asynchronously in a query's thread by its watchdog (a BaseException:
    ``except Exception`` in rdflib cannot swallow it)."""


def _async_raise(thread_id: int, exc: type[BaseException] | None) -> None:
    """Schedule ``exc`` in thread ``thread_id`` (None: cancel a scheduled one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None)


class _Watchdog:
    """Interrupts the thread that made it, ``after`` seconds on, until stopped."""

    def __init__(self, after: float):
        self._after = after
        self._target = threading.get_ident()
        self._lock = threading.Lock()
        self._armed = True
        self._fired = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lsup-query-watchdog",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        wait = self._after
        while not self._done.wait(wait):
            with self._lock:
                if not self._armed:
                    return
                self._fired = True
                _async_raise(self._target, _Interrupted)
            wait = _WATCHDOG_REPEAT   # again, in case a bare ``except:`` ate it

    def stop(self) -> None:
        """Disarm; cancel an interruption scheduled but not yet delivered. Safe
        against one delivered while stopping."""
        while True:
            try:
                with self._lock:
                    self._armed = False
                    if self._fired:
                        _async_raise(self._target, None)
                self._done.set()
                return
            except _Interrupted:
                continue


def _limited(deadline: _Deadline, work: Callable[[], Any]) -> Any:
    """Run ``work()`` under ``deadline``, with the watchdog as a backstop."""
    if deadline.limit is None:
        return work()
    dog = _Watchdog(deadline.limit + min(1.0, max(0.05, deadline.limit / 10)))
    dog.start()
    try:
        try:
            return work()
        finally:
            dog.stop()
    except _Interrupted:
        raise deadline.error() from None


# --- the public view of a snapshot -------------------------------------------------------

class _Unmatchable(Exception):
    """A pattern term no public triple can hold (an internal URI)."""


class _PublicTxn:
    """A read snapshot (a ``ReadTxn``) as a query sees it: resource graphs only, public
    URIs. ``default`` / ``named``: the internal names of the graphs making the default
    graph / the named graphs (None: every resource graph)."""

    def __init__(self, txn: Any, urimap: UriMap, deadline: _Deadline,
                 default: frozenset[str] | None = None, named: frozenset[str] | None = None):
        self.txn = txn
        self.urimap = urimap
        self.deadline = deadline
        self.check = deadline.check
        self.default = default
        self.named = named
        self.pub = urimap.pub_prefix

    # -- terms ---------------------------------------------------------------------

    def internal(self, term: str | None) -> str | None:
        """The stored form of a public pattern term."""
        if term is None:
            return None
        if term.startswith(_RES):
            raise _Unmatchable     # an internal URI typed in a query names nothing
        return self.urimap.to_internal(term)

    def public_quads(self, quads: Iterable[tuple[str, str, str, str]]) -> list:
        pub, n, res = self.pub, _RES_LEN, _RES
        return [(pub + s[n:] if s.startswith(res) else s, p,
                 pub + o[n:] if o.startswith(res) else o, pub + g[n:])
                for s, p, o, g in quads if g.startswith(res)]

    def public_graph(self, name: str) -> str:
        return self.pub + name[_RES_LEN:]

    def _named_graph(self, g: str) -> str | None:
        """The internal name of a named graph a query may see, or None."""
        try:
            name = self.internal(g)
        except _Unmatchable:
            return None
        if name is None or not name.startswith(_RES):
            return None
        if self.named is not None and name not in self.named:
            return None
        return name

    # -- the ReadTxn interface used by LmdbStore and its fast path ----------------------

    def match(self, s: str | None = None, p: str | None = None, o: str | None = None,
              g: str | None = None) -> list[tuple[str, str, str, str]]:
        self.check()
        try:
            s, o = self.internal(s), self.internal(o)
        except _Unmatchable:
            return []
        if g is not None:
            name = self._named_graph(g)
            if name is None:
                return []
            return self.public_quads(self.txn.match(s, p, o, name))
        if self.default is None:
            return self.public_quads(self.txn.match(s, p, o, None))
        quads: list[tuple[str, str, str, str]] = []
        for name in sorted(self.default):
            quads.extend(self.txn.match(s, p, o, name))
        return self.public_quads(quads)

    def count(self, s: str | None = None, p: str | None = None, o: str | None = None,
              g: str | None = None, *, distinct: bool = False) -> int:
        self.check()
        try:
            s, o = self.internal(s), self.internal(o)
        except _Unmatchable:
            return 0
        if g is not None:
            name = self._named_graph(g)
            return 0 if name is None else self.txn.count(s, p, o, name)
        if self.default is None:
            return self.txn.count(s, p, o, None, distinct=distinct, graph_prefix=_RES)
        quads = [q for name in self.default for q in self.txn.match(s, p, o, name)]
        return len({q[:3] for q in quads}) if distinct else len(quads)

    def has_graph(self, g: str) -> bool:
        name = self._named_graph(g)
        return name is not None and self.txn.has_graph(name)

    def graphs(self) -> Iterator[str]:
        self.check()
        if self.named is not None:
            names = sorted(n for n in self.named if self.txn.has_graph(n))
        else:
            names = [n for n in self.txn.graphs() if n.startswith(_RES)]
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

    def __init__(self, txn: _PublicTxn):
        super().__init__()
        self._public = txn
        self._named_graphs_are_union = txn.default is None and txn.named is None

    def _read(self) -> Any:
        return nullcontext(self._public)

    def _checkpoint(self) -> None:
        self._public.check()

    def triples(self, triple_pattern: Any, context: Any = None) -> Any:
        check = self._public.check
        for i, item in enumerate(super().triples(triple_pattern, context)):
            if not i % _CHECK_EVERY:
                check()
            yield item

    def __len__(self, context: Any = None) -> int:
        name = self._name(context)
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


class _QueryDataset(Dataset):
    """The Dataset a query runs on. rdflib's own evaluator uses members that rdflib
    7 deprecates (``contexts()``, ``default_context``, ``identifier``): here they
    warn nothing, and ``contexts()`` lists the named graphs only (rdflib's adds, and
    so would write, the default graph)."""

    @property
    def default_context(self) -> Graph:  # type: ignore[override]
        return self.default_graph

    @property
    def identifier(self) -> Any:  # type: ignore[override]
        return ConjunctiveGraph.identifier.fget(self)  # type: ignore[attr-defined]

    def contexts(self, triple: Any = None) -> Iterator[Graph]:  # type: ignore[override]
        return ConjunctiveGraph.contexts(self, triple)

    graphs = contexts  # type: ignore[assignment]


def _view_eval(ctx: QueryContext, part: CompValue) -> Any:
    """The fast path, for query views only (other stores keep their own choice)."""
    graph = ctx.graph
    if not isinstance(getattr(graph, "store", None), QueryView):
        raise NotImplementedError
    return native_eval(ctx, part)


# Registered once, on import (rdflib iterates this dict during every evaluation: adding
# to it later could race with a query running in another thread).
CUSTOM_EVALS[_EVAL_KEY] = _view_eval


# --- SPARQL ----------------------------------------------------------------------------

def _parse(text: str, base: str) -> Query:
    """Parse and translate a query; ``SparqlError`` with rdflib's message if it cannot
    be, and a clear refusal for an update."""
    if not isinstance(text, str):
        raise SparqlError(f"A SPARQL query must be a string, not {type(text).__name__}")
    if not text.strip():
        raise SparqlError("The SPARQL query is empty")
    try:
        tree = parseQuery(text)
    except Exception as e:   # pyparsing's ParseException, and what the parser raises
        if _is_update(text):
            raise SparqlError("SPARQL Update is not accepted by the query service: writes "
                              "go through the LDP API (PATCH a resource with "
                              "application/sparql-update)") from None
        raise SparqlError(f"SPARQL syntax error: {e}") from None
    try:
        query = translateQuery(tree, base=base, initNs=dict(QUERY_NAMESPACES))
    except Exception as e:   # unknown prefixes, invalid aggregates, ...
        raise SparqlError(f"Invalid SPARQL query: {e}") from None
    _refuse_service(query.algebra)
    return query


def _is_update(text: str) -> bool:
    try:
        parseUpdate(text)
    except Exception:
        return False
    return True


def _refuse_service(node: Any) -> None:
    """``SERVICE`` would make the server fetch from the network: refused."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, CompValue):
            if item.name == "ServiceGraphPattern":
                raise SparqlError("SERVICE is not supported: queries run on this "
                                  "repository's data only")
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _graph_names(uris: Iterable[Any], urimap: UriMap) -> frozenset[str]:
    """Internal names of the resource graphs among public graph URIs."""
    names = set()
    for uri in uris:
        try:
            term = rdfio.from_rdflib(URIRef(str(uri)))
        except TermError:
            raise SparqlError(f"Not an absolute IRI for a graph: {str(uri)!r:.200}") from None
        if term.startswith(_RES):
            continue
        name = urimap.to_internal(term)
        if name.startswith(_RES):
            names.add(name)
    return frozenset(names)


def _dataset(query: Query, default_uris: Sequence[Any], named_uris: Sequence[Any],
             urimap: UriMap) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """The dataset: the protocol's graph URIs, else the query's FROM / FROM NAMED,
    else everything. With any of them, what is not given is empty (SPARQL 1.1 13.2)."""
    clauses = query.algebra.get("datasetClause") or []
    query.algebra["datasetClause"] = None     # rdflib would copy, or fetch, graphs
    if default_uris or named_uris:
        return _graph_names(default_uris, urimap), _graph_names(named_uris, urimap)
    if clauses:
        return (_graph_names([c.default for c in clauses if c.default is not None], urimap),
                _graph_names([c.named for c in clauses if c.named is not None], urimap))
    return None, None


def _materialize(res: Mapping[str, Any], deadline: _Deadline) -> SPARQLResult:
    """Run the lazy part of an evaluation (SELECT rows) inside the snapshot."""
    res = dict(res)
    if res.get("type_") == "SELECT":
        rows = []
        check = deadline.check
        for i, row in enumerate(res["bindings"]):
            if not i % _CHECK_EVERY:
                check()
            rows.append(row)
        res["bindings"] = rows
    return SPARQLResult(res)


def _evaluate(repo: Repository, query: Query, urimap: UriMap, deadline: _Deadline,
              default: frozenset[str] | None, named: frozenset[str] | None,
              init_bindings: Mapping[Variable, Node] | None = None) -> SPARQLResult:
    with repo._read() as rctx:
        view = QueryView(_PublicTxn(rctx.txn, urimap, deadline, default, named))
        ds = _QueryDataset(store=view, default_union=True)
        ctx = QueryContext(ds, initBindings=dict(init_bindings or {}))
        ctx.graph = ds      # the union (or the given default graphs): not rdflib's global
        ctx.prologue = query.prologue
        return _materialize(evalPart(ctx, query.algebra), deadline)


def _urimap(repo: Repository, base_uri: str | None) -> UriMap:
    if base_uri is None or base_uri.rstrip("/") == repo.urimap.base:
        return repo.urimap
    return UriMap(base_uri)


def _catch_up(repo: Repository) -> None:
    """Bring the union-graph indices up to date before the clock starts (a query
    after a large ingest would otherwise spend its time limit indexing)."""
    if not repo._in_own_txn() and repo.store.pending():
        repo.store.index()


def sparql_query(repo: Repository, query: str, *, fmt: str | None = None,
                 base_uri: str | None = None, timeout: float | None = None,
                 default_graph_uris: Sequence[str] = (),
                 named_graph_uris: Sequence[str] = ()) -> Result | bytes:
    """Run a SPARQL 1.1 query over the current resources (see the module docstring).

    Returns the rdflib ``Result`` (rows fully read), or with ``fmt`` (a media type
    of ``RESULT_TYPES`` / ``GRAPH_TYPES``, or ``json``, ``xml``, ``csv``, ``tsv``,
    ``turtle``, ``nt``, ``json-ld``, ``rdfxml``) the serialized bytes.
    ``base_uri``: public base of the resources (default: configured);
    ``timeout``: seconds (default: ``query_timeout``; 0 or less: none);
    ``default_graph_uris`` / ``named_graph_uris``: the dataset, as public URIs
    of resources (SPARQL Protocol). ``SparqlError`` for a syntax error, an
    update, ``SERVICE`` or a format that does not fit the query form;
    ``QueryTimeoutError`` when the time limit is reached.
    """
    media_type = _media_type(fmt) if fmt is not None else None
    urimap = _urimap(repo, base_uri)
    limit = repo.config.query_timeout if timeout is None else timeout
    _catch_up(repo)
    deadline = _Deadline(limit if limit and limit > 0 else None)

    def work() -> Result | bytes:
        parsed = _parse(query, urimap.base + "/")
        default, named = _dataset(parsed, default_graph_uris, named_graph_uris, urimap)
        if media_type is not None:
            _check_form(parsed, media_type)
        result = _evaluate(repo, parsed, urimap, deadline, default, named)
        if media_type is None:
            return result
        return serialize_result(result, media_type)

    return _limited(deadline, work)


def _media_type(fmt: str) -> str:
    mtype = _FORMAT_NAMES.get(fmt.lower(), rdfio.normalize_media_type(fmt))
    if mtype not in RESULT_TYPES and mtype not in GRAPH_TYPES:
        raise SparqlError(f"Unknown result format {fmt!r}; use one of "
                          f"{', '.join(RESULT_TYPES + GRAPH_TYPES)}")
    return mtype


def query_form(query: Query) -> str:
    """``SELECT``, ``ASK``, ``CONSTRUCT`` or ``DESCRIBE``."""
    return {"SelectQuery": "SELECT", "AskQuery": "ASK", "ConstructQuery": "CONSTRUCT",
            "DescribeQuery": "DESCRIBE"}.get(query.algebra.name, query.algebra.name)


def _check_form(query: Query, media_type: str) -> None:
    graph = query_form(query) in ("CONSTRUCT", "DESCRIBE")
    if graph != (media_type in GRAPH_TYPES):
        offered = GRAPH_TYPES if graph else RESULT_TYPES
        raise SparqlError(f"A {query_form(query)} query cannot be written as {media_type}; "
                          f"use one of {', '.join(offered)}")


# --- serializing results --------------------------------------------------------------------

def serialize_result(result: Result, media_type: str) -> bytes:
    """Serialize a query result: SELECT / ASK as ``RESULT_TYPES``, CONSTRUCT / DESCRIBE
    as ``GRAPH_TYPES`` (``SparqlError`` if the type does not fit the result)."""
    mtype = _media_type(media_type)
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        if mtype not in GRAPH_TYPES:
            raise SparqlError(f"A {result.type} result cannot be written as {mtype}; use "
                              f"one of {', '.join(GRAPH_TYPES)}")
        assert result.graph is not None
        return rdfio.serialize(rdfio.graph_to_triples(result.graph), mtype,
                               namespaces=QUERY_NAMESPACES)
    if mtype not in RESULT_TYPES:
        raise SparqlError(f"A {result.type} result cannot be written as {mtype}; use one "
                          f"of {', '.join(RESULT_TYPES)}")
    writer = {SPARQL_JSON: _json, SPARQL_XML: _xml, CSV: _csv, TSV: _tsv}[mtype]
    if result.type == "ASK":
        return writer([], None, bool(result.askAnswer))
    names = [str(v) for v in (result.vars or [])]
    return writer(names, _rows(result, names), None)


def _rows(result: Result, names: list[str]) -> Iterator[list[Node | None]]:
    keys = [Variable(n) for n in names]
    for row in result.bindings:
        yield [row.get(k) for k in keys]


def _json_term(node: Node) -> dict[str, str]:
    if isinstance(node, URIRef):
        return {"type": "uri", "value": str(node)}
    if isinstance(node, BNode):
        return {"type": "bnode", "value": str(node)}
    out = {"type": "literal", "value": str(node)}
    if node.language:  # type: ignore[attr-defined]
        out["xml:lang"] = node.language  # type: ignore[attr-defined]
    elif node.datatype is not None:  # type: ignore[attr-defined]
        out["datatype"] = str(node.datatype)  # type: ignore[attr-defined]
    return out


def _json(names: list[str], rows: Iterable[list[Node | None]] | None,
          boolean: bool | None) -> bytes:
    """SPARQL 1.1 Query Results JSON Format."""
    if rows is None:
        return json.dumps({"head": {}, "boolean": boolean}).encode()
    bindings = [{n: _json_term(v) for n, v in zip(names, row, strict=False) if v is not None}
                for row in rows]
    doc = {"head": {"vars": names}, "results": {"bindings": bindings}}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def _xml_text(text: str) -> str:
    """XML 1.0 cannot hold most control characters: they are written as U+FFFD."""
    return xml_escape("".join(c if c >= " " or c in "\t\n\r" else "\ufffd" for c in text)
                      if any(c < " " for c in text) else text)


def _xml_term(node: Node) -> str:
    if isinstance(node, URIRef):
        return f"<uri>{_xml_text(str(node))}</uri>"
    if isinstance(node, BNode):
        return f"<bnode>{_xml_text(str(node))}</bnode>"
    attr = ""
    if node.language:  # type: ignore[attr-defined]
        attr = f" xml:lang={quoteattr(node.language)}"  # type: ignore[attr-defined]
    elif node.datatype is not None:  # type: ignore[attr-defined]
        attr = f" datatype={quoteattr(str(node.datatype))}"  # type: ignore[attr-defined]
    return f"<literal{attr}>{_xml_text(str(node))}</literal>"


def _xml(names: list[str], rows: Iterable[list[Node | None]] | None,
         boolean: bool | None) -> bytes:
    """SPARQL Query Results XML Format."""
    out = ['<?xml version="1.0" encoding="utf-8"?>\n'
           '<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head>']
    out.extend(f"<variable name={quoteattr(n)}/>" for n in names)
    out.append("</head>\n")
    if rows is None:
        out.append(f"<boolean>{'true' if boolean else 'false'}</boolean>\n")
    else:
        out.append("<results>\n")
        for row in rows:
            out.append("<result>")
            out.extend(f"<binding name={quoteattr(n)}>{_xml_term(v)}</binding>"
                       for n, v in zip(names, row, strict=False) if v is not None)
            out.append("</result>\n")
        out.append("</results>\n")
    out.append("</sparql>\n")
    return "".join(out).encode()


def _csv_text(text: str) -> str:
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_field(node: Node | None) -> str:
    if node is None:
        return ""
    return _csv_text(f"_:{node}" if isinstance(node, BNode) else str(node))


def _csv(names: list[str], rows: Iterable[list[Node | None]] | None,
         boolean: bool | None) -> bytes:
    """SPARQL 1.1 CSV results (RFC 4180, CRLF). ASK: a ``_askResult`` column."""
    if rows is None:
        return f"_askResult\r\n{'true' if boolean else 'false'}\r\n".encode()
    lines = [",".join(_csv_text(n) for n in names)]
    lines.extend(",".join(_csv_field(v) for v in row) for row in rows)
    return ("\r\n".join(lines) + "\r\n").encode()


def _tsv_field(node: Node | None) -> str:
    return "" if node is None else rdfio.from_rdflib(node)


def _tsv(names: list[str], rows: Iterable[list[Node | None]] | None,
         boolean: bool | None) -> bytes:
    """SPARQL 1.1 TSV results: terms in N-Triples syntax (tabs and newlines escaped)."""
    if rows is None:
        return f"?_askResult\n{'true' if boolean else 'false'}\n".encode()
    lines = ["\t".join("?" + n for n in names)]
    lines.extend("\t".join(_tsv_field(v) for v in row) for row in rows)
    return ("\n".join(lines) + "\n").encode()


# --- triple patterns ------------------------------------------------------------------------

def _pattern_text(term: Any, role: str) -> str | None:
    if term is None:
        return None
    if isinstance(term, Node):
        return rdfio.from_rdflib(term)
    if isinstance(term, str):
        rdfio.to_rdflib(term)       # TermError unless a canonical term
        return term
    raise TermError(f"A {role} must be a canonical term string or an rdflib term, "
                    f"not {type(term).__name__}")


def triple_match(repo: Repository, s: Any = None, p: Any = None, o: Any = None, *,
                 base_uri: str | None = None) -> list[Triple]:
    """The triples of the current resources matching a pattern (None: any term), as
    canonical N-Triples strings with public URIs, each triple once. Terms: canonical
    strings (``<http://...>``, ``"lit"@en``) or rdflib terms."""
    ts, tp, to = _pattern_text(s, "subject"), _pattern_text(p, "predicate"), \
        _pattern_text(o, "object")
    urimap = _urimap(repo, base_uri)
    _catch_up(repo)
    with repo._read() as rctx:
        view = _PublicTxn(rctx.txn, urimap, _Deadline(None))
        if (ts is not None and ts[0] == '"') or (tp is not None and tp[0] != "<"):
            return []
        try:
            si, oi = view.internal(ts), view.internal(to)
        except _Unmatchable:
            return []
        quads = list(rctx.txn.match(si, tp, oi, None))
    pub, n, res = urimap.pub_prefix, _RES_LEN, _RES
    return list(dict.fromkeys([
        (pub + a[n:] if a.startswith(res) else a, b, pub + c[n:] if c.startswith(res) else c)
        for a, b, c, g in quads if g.startswith(res)]))


# --- term search --------------------------------------------------------------------------

_COMPARE = {"=": "=", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="}


def _predicate(value: Any) -> URIRef:
    """A predicate: canonical ``<iri>``, a bare IRI, ``prefix:name`` of
    ``QUERY_NAMESPACES`` or a URIRef."""
    if isinstance(value, URIRef):
        iri = str(value)
    elif isinstance(value, str):
        iri = value[1:-1] if value.startswith("<") and value.endswith(">") else value
        prefix, sep, local = iri.partition(":")
        if sep and prefix in QUERY_NAMESPACES and not local.startswith("//"):
            iri = QUERY_NAMESPACES[prefix] + local
    else:
        raise SparqlError(f"A search predicate must be an IRI, not {value!r:.100}")
    try:
        rdfio.from_rdflib(URIRef(iri))
    except TermError:
        raise SparqlError(f"A search predicate must be an absolute IRI: {iri!r:.200}") from None
    return URIRef(iri)


def _search_value(op: str, value: Any) -> tuple[Node, bool]:
    """The value bound for a term, and whether to compare the object's string form."""
    if op == "_id":
        if isinstance(value, URIRef):
            return value, False
        if isinstance(value, str):
            iri = value[1:-1] if value.startswith("<") and value.endswith(">") else value
            try:
                rdfio.from_rdflib(URIRef(iri))
            except TermError:
                raise SparqlError(f"'_id' needs an absolute IRI, not {iri!r:.200}") from None
            return URIRef(iri), False
        raise SparqlError(f"'_id' needs an IRI, not {value!r:.100}")
    if isinstance(value, (Literal, URIRef)):
        return value, False
    if isinstance(value, str):
        return Literal(value), True
    if isinstance(value, (bool, int, float, decimal.Decimal, dt.date, dt.datetime, dt.time)):
        return Literal(value), False
    raise SparqlError(f"Cannot search for a value of type {type(value).__name__}")


def _term_block(i: int, op: str, as_string: bool) -> str:
    """One term's graph pattern: variables only, never a user value."""
    pattern = f"?s ?p{i} ?o{i} ."
    if op == "_id":
        return f"?s ?p{i} ?v{i} ."
    if op == "contains":
        return f"{pattern} FILTER(CONTAINS(LCASE(STR(?o{i})), LCASE(STR(?v{i}))))"
    left = f"STR(?o{i})" if as_string else f"?o{i}"
    return f"{pattern} FILTER({left} {_COMPARE[op]} ?v{i})"


def _term_parts(term: Any) -> tuple[Any, Any, Any]:
    if isinstance(term, Mapping):
        try:
            return term["pred"], term["op"], term["val"]
        except KeyError as e:
            raise SparqlError(f"A search term needs 'pred', 'op' and 'val' ({e} missing)") \
                from None
    try:
        pred, op, val = term
    except (TypeError, ValueError):
        raise SparqlError("A search term is (predicate, operator, value)") from None
    return pred, op, val


def term_search(repo: Repository, terms: Iterable[Any], *, or_logic: bool = False,
                base_uri: str | None = None, timeout: float | None = None) -> list[str]:
    """The uids of the resources with triples matching the terms, sorted.

    Each term is ``(predicate, operator, value)`` (or a mapping with ``pred``,
    ``op``, ``val``); operators are ``TERM_OPERATORS``. Terms combine with AND
    (the same subject) or, with ``or_logic``, OR. The query is built from the
    operators only; predicates and values are bound as parameters (rdflib
    ``initBindings``), never written into the query text. A subject that is a
    hash URI (``<res#frag>``) counts for its resource; subjects outside the
    repository are left out.
    """
    blocks: list[str] = []
    bindings: dict[Variable, Node] = {}
    for i, term in enumerate(terms):
        pred, op, val = _term_parts(term)
        if op not in TERM_OPERATORS:
            raise SparqlError(f"Unknown search operator {op!r}; use one of "
                              f"{', '.join(TERM_OPERATORS)}")
        value, as_string = _search_value(op, val)
        bindings[Variable(f"p{i}")] = _predicate(pred)
        bindings[Variable(f"v{i}")] = value
        blocks.append(_term_block(i, op, as_string))
    if not blocks:
        raise SparqlError("A term search needs at least one term")
    if or_logic:
        where = " UNION ".join("{ " + b + " }" for b in blocks)
    else:
        where = " ".join(blocks)
    text = f"SELECT DISTINCT ?s WHERE {{ {where} }}"
    urimap = _urimap(repo, base_uri)
    limit = repo.config.query_timeout if timeout is None else timeout
    _catch_up(repo)
    deadline = _Deadline(limit if limit and limit > 0 else None)

    def work() -> list[str]:
        parsed = _parse(text, urimap.base + "/")
        result = _evaluate(repo, parsed, urimap, deadline, None, None, bindings)
        uids = set()
        for row in result.bindings:
            subject = row.get(Variable("s"))
            if isinstance(subject, URIRef):
                internal = urimap.to_internal(f"<{subject}>")
                if internal.startswith(_RES):
                    uids.add(uid_of(internal))
        return sorted(uids)

    return _limited(deadline, work)


# Used by the HTTP layer to render results without serializing them first.
def result_table(result: Result) -> tuple[list[str], list[list[str | None]]]:
    """Variable names and rows of canonical term strings (None: unbound) of a
    SELECT result; CONSTRUCT / DESCRIBE: ``s``, ``p``, ``o``; ASK: ``boolean``."""
    if result.type == "ASK":
        return ["boolean"], [['"true"' if result.askAnswer else '"false"']]
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        assert isinstance(result.graph, Graph)
        return ["s", "p", "o"], [list(t) for t in sorted(rdfio.graph_to_triples(result.graph))]
    names = [str(v) for v in (result.vars or [])]
    rows = [[None if v is None else rdfio.from_rdflib(v) for v in row]
            for row in _rows(result, names)]
    return names, rows
