"""Pattern queries: ``triple_match`` (straight on the indices) and ``term_search``
(predicate / operator / value terms, run as a SPARQL query with bound parameters)."""
from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from rdflib.term import Identifier, Literal, Node, URIRef, Variable

from lakesuperior import rdfio
from lakesuperior.exceptions import SparqlError, TermError
from lakesuperior.model.context import Context
from lakesuperior.model.uids import uid_of
from lakesuperior.query.deadlines import Deadline
from lakesuperior.query.sparql import evaluate, parse
from lakesuperior.query.view import (
    QUERY_NAMESPACES,
    RES,
    GraphFilter,
    PublicTxn,
    Snapshots,
    Triple,
)
from lakesuperior.store.rdflib_store import Unmatchable

__all__ = ["triple_match", "term_search", "TERM_OPERATORS"]

#: ``term_search`` operators: ``_id`` matches an IRI object; the comparisons take the
#: string form of the object when the value is a ``str``, the typed value otherwise
#: (numbers, dates, rdflib literals); ``contains`` is a case-insensitive substring;
#: ``text`` is one of a literal's lexical form (never an IRI).
TERM_OPERATORS = ("_id", "=", "!=", "<", ">", "<=", ">=", "contains", "text")


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


def triple_match(source: Snapshots, s: Any = None, p: Any = None, o: Any = None, *,
                 base_uri: str | None = None,
                 graph_filter: Callable[[Context], GraphFilter | None] | None = None
                 ) -> list[Triple]:
    """The triples of the current resources matching a pattern (None: any term), as
    canonical N-Triples strings with public URIs, each triple once, straight from the
    store's indices. Terms: canonical strings (``<http://...>``, ``"lit"@en``) or
    rdflib terms. ``graph_filter``: as for ``sparql_query``."""
    ts, tp, to = _pattern_text(s, "subject"), _pattern_text(p, "predicate"), \
        _pattern_text(o, "object")
    if (ts is not None and ts[0] == '"') or (tp is not None and tp[0] != "<"):
        return []
    with source.snapshot(base_uri) as ctx:
        visible = graph_filter(ctx) if graph_filter is not None else None
        view = PublicTxn(ctx.txn, ctx.urimap, Deadline(None), visible=visible)
        try:
            si, oi = view.internal(ts), view.internal(to)
        except Unmatchable:
            return []
        return view.public_triples(view.seen(ctx.txn.match(si, tp, oi, None)))


# --- term search --------------------------------------------------------------------------

#: What a comparison operator writes into the query text (nothing else is written).
_COMPARE = MappingProxyType({"=": "=", "!=": "!=", "<": "<", ">": ">", "<=": "<=", ">=": ">="})


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


def _search_value(op: str, value: Any) -> tuple[Identifier, bool]:
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
    if op == "text":
        return (f"{pattern} FILTER(isLiteral(?o{i}) && "
                f"CONTAINS(LCASE(STR(?o{i})), LCASE(STR(?v{i}))))")
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


def term_search(source: Snapshots, terms: Iterable[Any], *, or_logic: bool = False,
                base_uri: str | None = None, timeout: float | None = None,
                graph_filter: Callable[[Context], GraphFilter | None] | None = None
                ) -> list[str]:
    """The uids of the resources with triples matching the terms, sorted.

    Each term is ``(predicate, operator, value)`` (or a mapping with ``pred``,
    ``op``, ``val``); operators are ``TERM_OPERATORS``; a predicate of None is any
    predicate. Terms combine with AND
    (the same subject) or, with ``or_logic``, OR. The query is built from the
    operators only; predicates and values are bound as parameters (rdflib
    ``initBindings``), never written into the query text. A subject that is a
    hash URI (``<res#frag>``) counts for its resource; subjects outside the
    repository are left out. ``timeout``: seconds (None, 0 or less: none);
    ``graph_filter``: as for ``sparql_query``.
    """
    if isinstance(terms, (str, bytes, Mapping)) or not hasattr(terms, "__iter__"):
        raise SparqlError(f"Give the search terms as a list of (predicate, operator, value), "
                          f"not {type(terms).__name__}")
    blocks: list[str] = []
    bindings: dict[str, Identifier] = {}
    for i, term in enumerate(terms):
        pred, op, val = _term_parts(term)
        if op not in TERM_OPERATORS:
            raise SparqlError(f"Unknown search operator {op!r}; use one of "
                              f"{', '.join(TERM_OPERATORS)}")
        value, as_string = _search_value(op, val)
        if pred is not None:
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
    deadline = Deadline(timeout if timeout and timeout > 0 else None)
    with source.snapshot(base_uri) as ctx:
        urimap = ctx.urimap
        parsed = parse(text, urimap.base + "/")
        visible = graph_filter(ctx) if graph_filter is not None else None
        result = evaluate(ctx, parsed, deadline, None, None, bindings, visible=visible)
    uids = set()
    for row in result.bindings:
        subject = row.get(Variable("s"))
        if isinstance(subject, URIRef):
            internal = urimap.to_internal(f"<{subject}>")
            if internal.startswith(RES):
                uids.add(uid_of(internal))
    return sorted(uids)
