"""The search page, ``GET /search?q=``: the resources with a literal value (a
title, a description, any property) that contains the words, case-insensitively.

It runs ``term_search`` with one ``text`` term on any predicate through the
request's repository (``endpoints.access``): a non-administrator finds only the
resources it may read, filtered as the SPARQL endpoint filters them. A search
takes one of the client's query slots (``query_max_per_agent``) and the
``query_timeout``, like a SPARQL query. Results are listed in uid order,
``PAGE_SIZE`` a page, each with its title (``dcterms:title``, ``dc:title``,
``rdfs:label`` or ``skos:prefLabel``) linking to its page; a binary links to
its description's page (``fcr:metadata``), not to its content.
"""
from __future__ import annotations

from dataclasses import dataclass

from flask import Blueprint, Response, render_template, request

from lakesuperior.auth.agent_view import AgentView
from lakesuperior.endpoints.access import request_repository
from lakesuperior.endpoints.call import base_path, public_root
from lakesuperior.endpoints.errors import BadRequest
from lakesuperior.endpoints.query import query_slot
from lakesuperior.model.namespaces import DCTERMS, LDP_NON_RDF_SOURCE, RDF_TYPE, RDFS_LABEL
from lakesuperior.repository import Repository
from lakesuperior.store.terms import literal_parts

__all__ = ["bp", "PAGE_SIZE", "MAX_QUERY"]

bp = Blueprint("search", __name__)

PAGE_SIZE = 50
#: Longest search text, in characters.
MAX_QUERY = 500
#: Where a result's title comes from, first found first.
TITLES = (DCTERMS.title, "<http://purl.org/dc/elements/1.1/title>", RDFS_LABEL,
          "<http://www.w3.org/2004/02/skos/core#prefLabel>")


@dataclass(frozen=True)
class Hit:
    """One result: its uid, its title (the uid when it has none), its page."""

    uid: str
    title: str
    href: str
    binary: bool


@bp.get("/search", endpoint="search")
def search() -> Response:
    text = request.args.get("q", "").strip()
    if len(text) > MAX_QUERY:
        raise BadRequest(f"The search text is {len(text)} characters long; the longest "
                         f"accepted is {MAX_QUERY}")
    try:
        page = max(1, int(request.args.get("page", "1")))
    except ValueError:
        raise BadRequest("'page' must be a page number") from None
    base = public_root() + base_path()
    hits: list[Hit] = []
    total = 0
    if text:
        repo = request_repository()
        with query_slot():
            uids = repo.term_search([(None, "text", text)], base_uri=base)
        total = len(uids)
        start = (page - 1) * PAGE_SIZE
        hits = [_hit(repo, base, uid) for uid in uids[start:start + PAGE_SIZE]]
    pages = max(1, -(-total // PAGE_SIZE))
    body = render_template("search.html", search_query=text, hits=hits, total=total,
                           page=page, pages=pages)
    return Response(body, content_type="text/html; charset=utf-8")


def _hit(repo: Repository | AgentView, base: str, uid: str) -> Hit:
    iri = f"<{base}{uid}>"
    binary = bool(repo.triple_match(iri, RDF_TYPE, LDP_NON_RDF_SOURCE, base_uri=base))
    title = uid
    for predicate in TITLES:
        found = sorted(o for _s, _p, o in repo.triple_match(iri, predicate, base_uri=base)
                       if o.startswith('"'))
        if found:
            title = literal_parts(found[0])[0]
            break
    href = base + uid + ("/fcr:metadata" if binary else "")
    return Hit(uid, title, href, binary)
