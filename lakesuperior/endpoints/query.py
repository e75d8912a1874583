"""The SPARQL 1.1 Protocol query service, mounted at ``/query``.

``/query/sparql`` takes a query as ``GET ?query=``, as a ``POST`` form
(``application/x-www-form-urlencoded``, field ``query``) or as a ``POST`` body
(``application/sparql-query``), with ``default-graph-uri`` / ``named-graph-uri``
naming the dataset (public URIs of resources). Results follow ``Accept``:
SELECT and ASK as ``application/sparql-results+json`` (first choice),
``+xml``, ``text/csv`` or ``text/tab-separated-values``; CONSTRUCT and DESCRIBE
as Turtle (first choice), N-Triples, JSON-LD or RDF/XML. A client that prefers
``text/html`` (a browser) gets a query form with the results as a table.

Public URIs are the request's own root plus ``http.base_path`` (the LDP root). The
query runs through ``Repository.sparql_query`` (one read snapshot, the
configured ``query_timeout``). Errors go through ``errors`` like every other
error: a syntax error is 400 with the parser's message, as is a query the
evaluator cannot compute (ORDER BY an error, an invalid REGEX), an unknown
result format 406, an update 400 (writes go through LDP), an overlong query
413, a query over the time limit 503, a query from a client that already runs
``query_max_per_agent`` of them 429 with ``Retry-After`` (``query.slots``: a
user counts by name, anonymous requests by the address they come from).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Blueprint, Response, current_app, render_template, request

from lakesuperior import query as api
from lakesuperior.endpoints import authn, errors, html
from lakesuperior.endpoints.access import request_repository
from lakesuperior.endpoints.call import base_path, public_root
from lakesuperior.endpoints.errors import BadRequest, NotAcceptable
from lakesuperior.endpoints.tx import ATOMIC_ID
from lakesuperior.exceptions import (
    LakesuperiorError,
    PayloadTooLargeError,
    UnsupportedMediaTypeError,
)
from lakesuperior.http import mediatypes

__all__ = ["bp", "MAX_QUERY_LENGTH", "query_slot"]

bp = Blueprint("query", __name__)

#: Longest query accepted, in characters (a parser's time grows with its input).
MAX_QUERY_LENGTH = 100_000
#: Rows shown on the HTML page.
HTML_ROWS = 1000

HTML = "text/html"
FORM = "application/x-www-form-urlencoded"
SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"

_ALL_TYPES = mediatypes.Offers((*api.RESULT_TYPES, *api.GRAPH_TYPES))
_PAGE_OR_RESULTS = mediatypes.Offers((*_ALL_TYPES, HTML))
_RESULT_TYPES = mediatypes.Offers(api.RESULT_TYPES)
_GRAPH_TYPES = mediatypes.Offers(api.GRAPH_TYPES)
_UPDATE_REFUSED = ("SPARQL Update is not accepted by the query service: writes go through "
                   "the LDP API (PATCH a resource with application/sparql-update)")
_CONTENT_TYPES = {
    api.SPARQL_JSON: api.SPARQL_JSON,
    api.SPARQL_XML: api.SPARQL_XML + "; charset=utf-8",
    api.CSV: api.CSV + "; charset=utf-8",
    api.TSV: api.TSV + "; charset=utf-8",
    "text/turtle": "text/turtle; charset=utf-8",
    "application/n-triples": "application/n-triples; charset=utf-8",
    "application/ld+json": "application/ld+json",
    "application/rdf+xml": "application/rdf+xml; charset=utf-8",
}


# --- the request ------------------------------------------------------------------------

class _Request:
    """What a protocol request asks: the query text and the dataset."""

    __slots__ = ("query", "default_graphs", "named_graphs")

    def __init__(self, query: str | None, default_graphs: list[str],
                 named_graphs: list[str]):
        self.query = query
        self.default_graphs = default_graphs
        self.named_graphs = named_graphs


def _check_length(text: str) -> str:
    if len(text) > MAX_QUERY_LENGTH:
        raise PayloadTooLargeError(f"The query is {len(text)} characters long; the "
                                   f"longest accepted is {MAX_QUERY_LENGTH}")
    return text


def _one(values: list[str], name: str) -> str | None:
    if len(values) > 1:
        raise BadRequest(f"Give one '{name}' parameter, not {len(values)}")
    return values[0] if values else None


def _parse_request() -> _Request:
    """Read the query and dataset from a GET or POST (SPARQL 1.1 Protocol 2.1)."""
    args = request.args
    if "update" in args:
        raise BadRequest(_UPDATE_REFUSED)
    if request.method in ("GET", "HEAD"):
        return _Request(_maybe(_one(args.getlist("query"), "query")),
                        args.getlist("default-graph-uri"), args.getlist("named-graph-uri"))
    ctype = (request.mimetype or "").lower()
    length = request.content_length
    if length is not None and length > MAX_QUERY_LENGTH * 4:
        raise PayloadTooLargeError(f"The request body ({length} bytes) is too long for a "
                                   f"query (at most {MAX_QUERY_LENGTH} characters)")
    if ctype == FORM:
        form = request.form
        if "update" in form:
            raise BadRequest(_UPDATE_REFUSED)
        if "query" in args:
            raise BadRequest("A POSTed form carries the query in its body, not in the URL")
        return _Request(_maybe(_one(form.getlist("query"), "query")),
                        form.getlist("default-graph-uri"), form.getlist("named-graph-uri"))
    if ctype == SPARQL_QUERY:
        if "query" in args:
            raise BadRequest("An application/sparql-query body is the query: do not give "
                             "'query' in the URL too")
        raw = request.get_data(cache=False)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BadRequest(f"The query is not valid UTF-8 (byte {e.start})") from None
        return _Request(_check_length(text), args.getlist("default-graph-uri"),
                        args.getlist("named-graph-uri"))
    if ctype == SPARQL_UPDATE:
        raise BadRequest(_UPDATE_REFUSED)
    raise UnsupportedMediaTypeError(
        f"POST a query as {FORM} (field 'query') or as {SPARQL_QUERY}, "
        f"not {ctype or 'a body without Content-Type'}")


def _maybe(text: str | None) -> str | None:
    return None if text is None else _check_length(text)


def _base() -> str:
    """Public base URI of the resources (the LDP endpoint) for this request."""
    return public_root() + base_path()


# --- the view -----------------------------------------------------------------------------

@bp.route("/sparql", methods=["GET", "POST"], endpoint="sparql")
def sparql() -> Response:
    if ATOMIC_ID in request.headers:
        raise BadRequest("SPARQL queries do not take part in HTTP transactions: the query "
                         "endpoint answers from committed changes only. Send the query "
                         "without Atomic-ID (after the commit to see the transaction's "
                         "changes)")
    accept = request.headers.get("Accept")
    wants_html = mediatypes.negotiate(accept, _PAGE_OR_RESULTS) == HTML
    if wants_html:
        return _page()
    if mediatypes.negotiate(accept, _ALL_TYPES) is None:
        raise NotAcceptable(f"Query results are available as {', '.join(_ALL_TYPES)}, "
                            f"or as {HTML} for the query page")
    req = _parse_request()
    if req.query is None:
        raise BadRequest("No query: give it as the 'query' parameter (GET or form POST) or "
                         f"as an {SPARQL_QUERY} body")
    with query_slot():
        result = _run(req)
        offered = _GRAPH_TYPES if result.type in ("CONSTRUCT", "DESCRIBE") else _RESULT_TYPES
        media_type = mediatypes.negotiate(accept, offered)
        if media_type is None:
            raise NotAcceptable(f"A {result.type} result is available as "
                                f"{', '.join(offered)}")
        body = api.serialize_result(result, media_type)
    return Response(body, content_type=_CONTENT_TYPES[media_type], headers={"Vary": "Accept"})


@contextmanager
def query_slot() -> Iterator[None]:
    """One of the client's query slots for the block (429 if it has none left)."""
    agent = authn.request_agent()
    key = (agent.webid or agent.name if agent.authenticated
           else f"anonymous@{request.remote_addr}")
    with current_app.extensions["lakesuperior"].queries.slot(str(key)):
        yield


def _run(req: _Request) -> Any:
    return request_repository().sparql_query(req.query or "", base_uri=_base(),
                                     default_graph_uris=req.default_graphs,
                                     named_graph_uris=req.named_graphs)


def _page() -> Response:
    """The HTML query page: the form, and the results of a submitted query."""
    context: dict[str, Any] = {"query": "", "error": None, "result": None,
                               "max_rows": HTML_ROWS, "base": None}
    status = 200
    try:
        context["base"] = _base()
        req = _parse_request()
        if req.query is not None:
            context["query"] = req.query
            with query_slot():
                result = _run(req)
                names, rows = api.result_table(result)
            context["result"] = {
                "form": result.type, "names": names, "total": len(rows),
                "rows": [[None if v is None else html.term(v) for v in row]
                         for row in rows[:HTML_ROWS]],
            }
    except (LakesuperiorError, errors.HttpError) as e:
        status = errors.status_of(e)
        context["error"] = {"status": status, "message": str(e)}
    body = render_template("query.html", namespaces=api.QUERY_NAMESPACES, **context)
    response = Response(body, status=status, content_type="text/html; charset=utf-8",
                        headers={"Vary": "Accept"})
    if 400 <= status < 500:
        response.headers.add("Link", errors.constrained_by_link())
    return response

