"""Queries over a read snapshot of the repository: SPARQL 1.1, triple patterns, term search.

Usage (the same functions are ``Repository.sparql_query`` / ``triple_match`` /
``term_search``, which also bring the store's indices up to date first and apply
the configured ``query_timeout``)::

    from lakesuperior import query

    result = query.sparql_query(repo, "SELECT ?s WHERE { ?s a ldp:Container }")
    body = query.sparql_query(repo, q, fmt="application/sparql-results+json")  # bytes
    query.triple_match(repo, p="<http://purl.org/dc/terms/title>")
    query.term_search(repo, [("dcterms:title", "contains", "lake")])

The modules, each holding one thing:

``sparql``      the SPARQL entry: parse, dataset, evaluation on one snapshot
``view``        what a query sees: resource graphs only, public URIs (``QueryView``)
``fast_path``   rdflib algebra evaluated natively on an ``LmdbStore`` (an rdflib hook)
``joins``       the BGP join planner and evaluator on term strings
``results``     result serializers (SPARQL JSON, XML, CSV, TSV; RDF for graphs)
``search``      ``triple_match`` and ``term_search``
``deadlines``   the time limit, checked as the work goes
"""
from lakesuperior.query.fast_path import (
    disable_sparql_fast_path,
    enable_sparql_fast_path,
    native_eval,
)
from lakesuperior.query.results import (
    CSV,
    GRAPH_TYPES,
    RESULT_TYPES,
    SPARQL_JSON,
    SPARQL_XML,
    TSV,
    format_media_type,
    result_table,
    serialize_result,
)
from lakesuperior.query.search import TERM_OPERATORS, term_search, triple_match
from lakesuperior.query.sparql import query_form, sparql_query
from lakesuperior.query.view import QUERY_NAMESPACES, QueryView, Snapshots

__all__ = [
    "sparql_query", "triple_match", "term_search", "serialize_result", "result_table",
    "query_form", "format_media_type", "QueryView", "Snapshots",
    "enable_sparql_fast_path", "disable_sparql_fast_path", "native_eval",
    "QUERY_NAMESPACES", "RESULT_TYPES", "GRAPH_TYPES", "TERM_OPERATORS",
    "SPARQL_JSON", "SPARQL_XML", "CSV", "TSV",
]
