"""SPARQL 1.1 queries over a read snapshot of the repository's current resources.

What a query sees
    The repository's current resources and nothing else. Each live LDP resource is
    a named graph, named by its public URI; the default graph is the union of all
    of them (a triple held by several resources is one triple of the union). The
    model's other graphs (membership, versions, tombstones, buried resources, ...)
    never appear, so deleted resources are invisible. URIs are public
    (``base_uri + uid``) both ways: in results, and in the query, where a public URI
    of a resource finds it. A SPARQL ``BASE`` is the root (``<a/b>`` is the resource
    ``/a/b``) and the prefixes of ``QUERY_NAMESPACES`` (``ldp:``, ``fcrepo:``,
    ``dcterms:``, ``rdf:``...) need no ``PREFIX``. The protocol's
    ``default-graph-uri`` / ``named-graph-uri``, or ``FROM`` / ``FROM NAMED`` in the
    query, restrict the dataset to the given resources' graphs; nothing is ever
    fetched from the network (``SERVICE`` is refused).

How it runs
    One snapshot per call (``Snapshots.snapshot()``; inside
    ``Repository.transaction()`` that is the open write transaction: a query sees
    the block's own writes), seen through ``QueryView`` (``view``). rdflib's
    evaluator and the native fast path (``fast_path``: basic graph patterns joined on
    term strings, ``COUNT`` of one pattern as one index count) both run on it.
    ``timeout`` counts from the call's start and is checked as the evaluation
    goes, and ``max_rows`` bounds the rows of the result (the triples of a
    CONSTRUCT or DESCRIBE) and of an ``ORDER BY``: see ``deadlines``. ``REGEX``
    and ``REPLACE`` run on RE2, in linear time and within a budget per match: see
    ``rdf.regex``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.evaluate import evalPart
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.plugins.sparql.sparql import Query, QueryContext
from rdflib.query import Result
from rdflib.term import Identifier, URIRef

from lakesuperior import rdfio
from lakesuperior.exceptions import LakesuperiorError, SparqlError, TermError
from lakesuperior.model.context import Context
from lakesuperior.model.uids import UriMap
from lakesuperior.query.deadlines import CHECK_EVERY, Deadline
from lakesuperior.query.fast_path import register_view_eval
from lakesuperior.query.results import (
    GRAPH_TYPES,
    RESULT_TYPES,
    format_media_type,
    serialize_result,
)
from lakesuperior.query.view import (
    QUERY_NAMESPACES,
    RES,
    GraphFilter,
    PublicTxn,
    QueryDataset,
    QueryView,
    Snapshots,
)
from lakesuperior.rdf import regex
from lakesuperior.rdf.sparql_parser import parse_query, parse_update

__all__ = ["sparql_query", "query_form", "parse", "evaluate"]


def sparql_query(source: Snapshots, query: str, *, fmt: str | None = None,
                 base_uri: str | None = None, timeout: float | None = None,
                 max_rows: int | None = None,
                 default_graph_uris: Sequence[str] = (),
                 named_graph_uris: Sequence[str] = (),
                 graph_filter: Callable[[Context], GraphFilter | None] | None = None
                 ) -> Result | bytes:
    """Run a SPARQL 1.1 query over the current resources (see the module docstring).

    Returns the rdflib ``Result`` (rows fully read), or with ``fmt`` (a media type
    of ``RESULT_TYPES`` / ``GRAPH_TYPES``, or ``json``, ``xml``, ``csv``, ``tsv``,
    ``turtle``, ``nt``, ``json-ld``, ``rdfxml``) the serialized bytes.
    ``base_uri``: public base of the resources (default: configured);
    ``timeout``: seconds (None, 0 or less: none); ``max_rows``: the most rows the
    result (or an ``ORDER BY``) may hold (None, 0 or less: no bound);
    ``default_graph_uris`` / ``named_graph_uris``: the dataset, as public URIs
    of resources (SPARQL Protocol); ``graph_filter``: given the query's snapshot,
    the resource graphs it may see (None: all; ``Repository.as_agent`` passes
    the agent's readable resources). ``SparqlError`` for a syntax error, an
    update, ``SERVICE`` or a format that does not fit the query form;
    ``QueryTimeoutError`` when the time limit is reached, ``QueryTooLargeError``
    past ``max_rows``.
    """
    media_type = format_media_type(fmt) if fmt is not None else None
    deadline = Deadline(timeout if timeout and timeout > 0 else None,
                        max_rows if max_rows and max_rows > 0 else None)
    with source.snapshot(base_uri) as ctx:
        parsed = parse(query, ctx.urimap.base + "/", deadline.check)
        default, named = _dataset(parsed, default_graph_uris, named_graph_uris, ctx.urimap)
        if media_type is not None:
            _check_form(parsed, media_type)
        visible = graph_filter(ctx) if graph_filter is not None else None
        result = evaluate(ctx, parsed, deadline, default, named, visible=visible)
    if media_type is None:
        return result
    return serialize_result(result, media_type)


def parse(text: str, base: str, check: Callable[[], None] | None = None) -> Query:
    """Parse and translate a query; ``SparqlError`` with rdflib's message if it cannot
    be, and a clear refusal for an update. ``check``: the deadline's, called as a
    long query's parse goes (``rdf.sparql_parser``): its error ends the parse."""
    if not isinstance(text, str):
        raise SparqlError(f"A SPARQL query must be a string, not {type(text).__name__}")
    if not text.strip():
        raise SparqlError("The SPARQL query is empty")
    try:
        tree = parse_query(text, check)
    except LakesuperiorError:   # the deadline's, from ``check``
        raise
    except Exception as e:   # pyparsing's ParseException, and what the parser raises
        if _is_update(text, check):
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


def _is_update(text: str, check: Callable[[], None] | None = None) -> bool:
    try:
        parse_update(text, check)
    except LakesuperiorError:   # the deadline's
        raise
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
        if term.startswith(RES):
            continue
        name = urimap.to_internal(term)
        if name.startswith(RES):
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


def _materialize(res: Mapping[str, Any], deadline: Deadline) -> SPARQLResult:
    """Run the lazy part of an evaluation (SELECT rows) inside the snapshot, the rows
    (the triples of a graph) bounded by ``deadline.max_rows``."""
    res = dict(res)
    if res.get("type_") == "SELECT":
        rows = []
        check = deadline.check
        for i, row in enumerate(res["bindings"]):
            if not i % CHECK_EVERY:
                check()
                deadline.rows(i)
            rows.append(row)
        deadline.rows(len(rows))
        res["bindings"] = rows
    elif res.get("graph") is not None:
        deadline.rows(len(res["graph"]), "The graph of the result")
    return SPARQLResult(res)


def evaluate(ctx: Context, query: Query, deadline: Deadline,
             default: frozenset[str] | None = None, named: frozenset[str] | None = None,
             init_bindings: Mapping[str, Identifier] | None = None, *,
             visible: GraphFilter | None = None) -> SPARQLResult:
    """Evaluate a parsed query on a snapshot, rows fully read. ``default`` / ``named``:
    internal names of the graphs of the dataset (None: every resource graph);
    ``visible``: the resource graphs the query may see (None: all)."""
    register_view_eval()
    regex.install(query.algebra, deadline.check)
    view = QueryView(PublicTxn(ctx.txn, ctx.urimap, deadline, default, named, visible))
    ds = QueryDataset(store=view, default_union=True)
    qctx = QueryContext(ds, initBindings=dict(init_bindings or {}))
    qctx.graph = ds      # the union (or the given default graphs): not rdflib's global
    qctx.prologue = query.prologue
    try:
        return _materialize(evalPart(qctx, query.algebra), deadline)
    except LakesuperiorError:
        raise
    except Exception as e:
        # rdflib's evaluator raises what it meets (TypeError for ORDER BY on an
        # error, re.error for an invalid REGEX, ValueError for a LIMIT beyond any
        # index...): the query asked for something it cannot compute.
        raise SparqlError(f"The query cannot be evaluated: {type(e).__name__}: "
                          f"{str(e)[:300]}") from None


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
