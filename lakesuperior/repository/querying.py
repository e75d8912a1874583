"""The query methods of ``Repository`` (bound in its class body): SPARQL, triple
patterns and term search, each over one read snapshot (``lakesuperior.query``)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lakesuperior import query as queries
from lakesuperior.exceptions import SparqlError
from lakesuperior.query.view import GraphFilterFactory
from lakesuperior.repository.core import Repository

__all__ = ["sparql_query", "triple_match", "term_search"]


def sparql_query(repo: Repository, query: str, *, fmt: str | None = None,
                 base_uri: str | None = None, timeout: float | None = None,
                 max_rows: int | None = None,
                 default_graph_uris: Iterable[str] = (),
                 named_graph_uris: Iterable[str] = (),
                 graph_filter: GraphFilterFactory | None = None) -> Any:
    """A SPARQL 1.1 query over the current resources (public URIs; each resource
    a named graph, the default graph their union): an rdflib ``Result``, or the
    serialized bytes with ``fmt``; ``timeout`` in seconds (default:
    ``query_timeout``; 0: none); ``max_rows``: the most rows the result, or an
    ``ORDER BY``, may hold (default: ``query_max_rows``; 0: no bound);
    ``graph_filter``: given the query's snapshot, the resource graphs it may see
    (None: all; see ``as_agent``). See ``lakesuperior.query.sparql_query``."""
    graphs = [_uris(default_graph_uris, "default_graph_uris"),
              _uris(named_graph_uris, "named_graph_uris")]
    timeout = _query_timeout(repo, timeout)
    if max_rows is None:
        max_rows = repo.config.query_max_rows
    elif isinstance(max_rows, bool) or not isinstance(max_rows, int):
        raise SparqlError(f"max_rows must be a number of rows, not {max_rows!r:.50}")
    return queries.sparql_query(repo, query, fmt=fmt, base_uri=base_uri, timeout=timeout,
                                max_rows=max_rows, default_graph_uris=graphs[0],
                                named_graph_uris=graphs[1], graph_filter=graph_filter)


def triple_match(repo: Repository, s: Any = None, p: Any = None, o: Any = None, *,
                 base_uri: str | None = None,
                 graph_filter: GraphFilterFactory | None = None
                 ) -> list[tuple[str, str, str]]:
    """Triples of the current resources matching a pattern (None: any), as
    canonical term strings with public URIs. See ``lakesuperior.query.triple_match``."""
    return queries.triple_match(repo, s, p, o, base_uri=base_uri,
                                graph_filter=graph_filter)


def term_search(repo: Repository, terms: Iterable[Any], *, or_logic: bool = False,
                base_uri: str | None = None, timeout: float | None = None,
                graph_filter: GraphFilterFactory | None = None) -> list[str]:
    """uids of the resources matching ``(predicate, operator, value)`` terms.
    See ``lakesuperior.query.term_search``."""
    return queries.term_search(repo, terms, or_logic=or_logic, base_uri=base_uri,
                               timeout=_query_timeout(repo, timeout),
                               graph_filter=graph_filter)


def _query_timeout(repo: Repository, timeout: float | None) -> float | None:
    if timeout is None:
        return repo.config.query_timeout
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise SparqlError(f"timeout must be a number of seconds, not {timeout!r:.50}")
    return timeout


def _uris(value: Iterable[str], name: str) -> tuple[str, ...]:
    """A list of graph URIs; ``SparqlError`` for one string or a non-iterable."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise SparqlError(f"{name} is a list of URIs, not {type(value).__name__}")
    return tuple(value)
