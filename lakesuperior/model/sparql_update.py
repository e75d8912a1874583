"""SPARQL Update on one resource (LDP PATCH).

The resource's triples (user and server-managed, containment excepted) are
loaded into an rdflib Graph under their public URIs, rdflib's update engine
runs the request with the resource's URI as base (so ``<>`` is the resource),
and the difference between before and after is applied like any other change:
server-managed triples added or removed are refused (strict) or ignored
(lenient), added triples pass the single-subject and referential-integrity
checks. Deleting containment (``ldp:contains``) is refused under strict handling.

Only ``INSERT DATA``, ``DELETE DATA``, ``DELETE WHERE`` and
``DELETE/INSERT ... WHERE`` are accepted: graph management (LOAD, CLEAR, DROP,
CREATE, ADD, MOVE, COPY), named graphs (``GRAPH``, ``WITH``, ``USING``) and
``SERVICE`` are refused, so an update never reaches the network or another
resource.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pyparsing import ParseResults
from rdflib import BNode, URIRef, Variable
from rdflib.plugins.sparql.sparql import Update
from rdflib.plugins.sparql.update import evalUpdate

from lakesuperior.exceptions import QueryTimeoutError, ServerManagedTermError, SparqlError
from lakesuperior.model.containment import own_triples
from lakesuperior.model.context import WriteContext
from lakesuperior.model.lifecycle import apply_delta
from lakesuperior.model.lookup import require_model
from lakesuperior.model.namespaces import LDP_CONTAINS, bare_iri
from lakesuperior.model.resource import RdfSource
from lakesuperior.rdf import regex
from lakesuperior.rdf.sparql_parser import checked_call, parse_update
from lakesuperior.rdf.update_algebra import translate_update
from lakesuperior.rdfio import graph_to_triples, triples_to_graph

_ALLOWED = ("InsertData", "DeleteData", "DeleteWhere", "Modify")
#: The operations that evaluate a pattern (``evaluate`` checks their time).
_PATTERNS = ("DeleteWhere", "Modify")


def time_limit(seconds: float | None) -> Callable[[], None] | None:
    """A check that raises ``QueryTimeoutError`` once ``seconds`` have passed from
    now (``query_timeout``); None for no limit (None or 0)."""
    if not seconds or seconds <= 0:
        return None
    end = time.monotonic() + seconds

    def check() -> None:
        if time.monotonic() > end:
            raise QueryTimeoutError(f"The update ran over the time limit of {seconds:g} s "
                                    "(query_timeout) and was stopped: nothing was changed")
    return check


def evaluate(graph: Any, request: Any, timeout: float | None = None) -> None:
    """Run a parsed SPARQL Update on an rdflib ``graph``; any failure of the
    evaluation is a ``SparqlError``. ``timeout``: the seconds a ``WHERE`` (of
    ``DELETE/INSERT ... WHERE``, ``DELETE WHERE``) may take, checked as it goes
    (the data forms need none)."""
    check = time_limit(timeout) if any(op.name in _PATTERNS for op in request.algebra) \
        else None
    try:
        if check is None:
            evalUpdate(graph, request)
        else:
            checked_call(lambda: evalUpdate(graph, request), check)
    except SparqlError:
        raise
    except Exception as e:
        raise SparqlError(f"The SPARQL update failed: {e}") from None


def parse(text: str | bytes, base: str, timeout: float | None = None) -> Update:
    """Parse and translate a SPARQL Update (``<>`` is ``base``); ``SparqlError``
    with rdflib's message. It reads no state: ``Repository.update`` parses
    before its write, which a long update would otherwise hold. ``timeout``: the
    seconds its parse may take (``QueryTimeoutError`` past them)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SparqlError(f"The update is not valid UTF-8: {e.reason}") from None
    if not isinstance(text, str):
        raise SparqlError(f"A SPARQL update must be a string, not {type(text).__name__}")
    try:
        parsed = parse_update(text, time_limit(timeout))
    except QueryTimeoutError:
        raise
    except Exception as e:  # pyparsing.ParseException and friends
        raise SparqlError(f"SPARQL Update syntax error: {e}") from None
    if not parsed.request:
        raise SparqlError("The SPARQL update is empty")
    for op in parsed.request:
        _check_operation(op)
    try:
        translated = translate_update(parsed, base=base)
    except Exception as e:
        raise SparqlError(f"Invalid SPARQL update: {e}") from None
    regex.install(translated.algebra, _no_deadline)   # REGEX / REPLACE on RE2
    return translated


def _no_deadline() -> None:
    """An update has no time limit; each of its regular-expression matches has a
    budget (``rdf.regex``)."""


def _check_operation(op: Any) -> None:
    name = getattr(op, "name", None)
    if name not in _ALLOWED:
        raise SparqlError(f"SPARQL Update operation {name} is not supported on a resource; "
                          "use INSERT DATA, DELETE DATA, DELETE WHERE or DELETE/INSERT WHERE")
    if name == "Modify" and ("withClause" in op or "using" in op):
        raise SparqlError("WITH and USING (named graphs) are not supported in a resource update")
    _refuse(op, ("GraphGraphPattern", "ServiceGraphPattern", "QuadsNotTriples"))
    # SPARQL 1.1 grammar, notes 8 and 9: no variables in the DATA forms, no blank
    # nodes in what is deleted.
    if name in ("InsertData", "DeleteData") and _has(op, Variable):
        raise SparqlError(f"Variables are not allowed in {_KEYWORDS[name]}")
    deleted = dict.get(op, "delete") if name == "Modify" else op
    if name != "InsertData" and deleted is not None and _has(deleted, BNode):
        raise SparqlError(f"Blank nodes are not allowed in {_KEYWORDS[name]}: a blank node "
                          "in a deletion cannot name an existing node")


_KEYWORDS = {"InsertData": "INSERT DATA", "DeleteData": "DELETE DATA",
             "DeleteWhere": "DELETE WHERE", "Modify": "the DELETE template"}


def _nodes(node: Any) -> Any:
    """Every node of a parse tree."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, dict):
            stack.extend(cur.values())
        elif isinstance(cur, (list, tuple, ParseResults)):
            stack.extend(cur)


def _has(node: Any, kind: type) -> bool:
    return any(isinstance(n, kind) for n in _nodes(node))


def _refuse(node: Any, names: tuple[str, ...]) -> None:
    """Walk a parse tree; refuse named graphs and SERVICE."""
    for cur in _nodes(node):
        name = getattr(cur, "name", None)
        if name in names:
            what = "SERVICE" if name == "ServiceGraphPattern" else "Named graphs (GRAPH)"
            raise SparqlError(f"{what} not supported in a resource update")


def _refuse_containment_delete(uid: str, request: Any) -> None:
    """``ServerManagedTermError`` for an update whose DELETE names ``ldp:contains``
    (Fedora API 3.7: containment is changed by creating and deleting resources)."""
    contains = URIRef(bare_iri(LDP_CONTAINS))
    for op in request.algebra:
        # dict.get: rdflib's CompValue.get answers other things for missing keys
        if op.name == "Modify":
            delete = dict.get(op, "delete")
            triples = dict.get(delete, "triples") if isinstance(delete, dict) else None
        elif op.name in ("DeleteData", "DeleteWhere"):
            triples = dict.get(op, "triples")
        else:
            triples = None
        if triples and any(t[1] == contains for t in triples):
            raise ServerManagedTermError(
                uid, f"Containment ({LDP_CONTAINS}) cannot be deleted with PATCH: delete "
                     "the contained resource instead")


def update(ctx: WriteContext, uid: str, text: str | bytes | Update,
           handling: str = "strict", timeout: float | None = None) -> RdfSource:
    """Apply a SPARQL Update to resource ``uid`` (a binary's description for a
    binary): its text, or what ``parse`` made of it with the resource's public IRI
    as base. ``timeout``: as for ``evaluate``."""
    txn = ctx.txn
    model = require_model(txn, uid)
    request = text if isinstance(text, Update) else parse(text, ctx.urimap.public_iri(uid))
    if handling == "strict":
        _refuse_containment_delete(uid, request)
    old = own_triples(txn, uid)
    before = ctx.urimap.triples_to_public(old)
    graph = triples_to_graph(before)
    evaluate(graph, request, timeout)
    after = graph_to_triples(graph)
    before_set = set(before)
    after_set = set(after)
    removed = [t for t in before if t not in after_set]
    added = [t for t in after if t not in before_set]
    return apply_delta(ctx, uid, removed, added, handling, old=old, model=model)
