"""The read-only HTML view: template contexts built from canonical term strings.

Nothing here touches the repository; the LDP views pass in what they read.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from lakesuperior.model.namespaces import DEFAULT_NAMESPACES, RDF_TYPE
from lakesuperior.rdfio import Triple
from lakesuperior.store.terms import literal_parts

PAGE_SIZE = 100  #: children shown per page
#: the highest page number read (a larger one is the last page): its children's
#: range stays an index Python can slice with
MAX_PAGE = 10**9
_LINK_SCHEMES = frozenset({"http", "https"})   #: IRIs shown as links; others as text

def compact(iri: str, namespaces: Mapping[str, str] = DEFAULT_NAMESPACES) -> str:
    """``prefix:local`` for an IRI in a known namespace, else the IRI."""
    for prefix, ns in namespaces.items():
        if iri.startswith(ns) and len(iri) > len(ns):
            return f"{prefix}:{iri[len(ns):]}"
    return iri


@dataclass
class Term:
    """One RDF term for display: ``kind`` is ``iri``, ``bnode`` or ``literal``."""

    kind: str
    text: str                    #: what to show
    href: str | None = None      #: link target (IRIs)
    note: str | None = None      #: datatype or language of a literal


def term(value: str) -> Term:
    """A display ``Term`` of a canonical N-Triples term string."""
    if value.startswith("<"):
        iri = value[1:-1]
        # Only web IRIs become links: a javascript: or data: IRI in a graph must
        # not run in our origin when clicked.
        linkable = iri.split(":", 1)[0].lower() in _LINK_SCHEMES
        return Term("iri", compact(iri), iri if linkable else None)
    if value.startswith("_:"):
        return Term("bnode", value)
    text, lang, datatype = literal_parts(value)   # unescaped by the term codec
    if lang is not None:
        return Term("literal", text, note=lang)
    if datatype is not None:
        return Term("literal", text, note=compact(datatype))
    return Term("literal", text)


@dataclass
class Subject:
    """The properties of one subject: predicate -> objects, in input order."""

    term: Term
    properties: list[tuple[Term, list[Term]]] = field(default_factory=list)
    own: bool = False            #: the page's own subject (shown without a heading)


def group(triples: Iterable[Triple], first: str, *, skip: Iterable[str] = ()) -> list[Subject]:
    """Triples grouped by subject (``first`` first) then predicate; ``skip``: predicates
    of ``first`` left out."""
    skipped = set(skip)
    by_subject: dict[str, dict[str, list[str]]] = {}
    for s, p, o in triples:
        if p in skipped and s == first:
            continue
        by_subject.setdefault(s, {}).setdefault(p, []).append(o)
    order = sorted(by_subject, key=lambda s: (s != first, s))
    out = []
    for s in order:
        preds = by_subject[s]
        props = [(term(p), [term(o) for o in sorted(preds[p])])
                 for p in sorted(preds, key=lambda p: (p != RDF_TYPE, compact(p[1:-1])))]
        out.append(Subject(term(s), props, own=s == first))
    return out


def breadcrumbs(base: str, uid: str) -> list[tuple[str, str]]:
    """(label, URL) from the root down to ``uid``."""
    crumbs = [("root", base + "/")]
    path = ""
    for segment in [s for s in uid.split("/") if s]:
        path += "/" + segment
        crumbs.append((segment, base + path))
    return crumbs


#: Containers with at most this many children list them sorted by name across
#: pages; larger ones in the store's order of their children (each page sorted),
#: so that a page reads a bounded number of children however many there are.
SORT_LIMIT = 1000


def children_range(page: int) -> tuple[int, int]:
    """The children to read for ``page``: enough to know whether the container is
    small enough to sort (``SORT_LIMIT``), and that page in the store's order."""
    return 0, max(SORT_LIMIT + 1, max(page, 1) * PAGE_SIZE)


def page_of(read: Sequence[str], total: int, page: int) -> tuple[list[str], int, int]:
    """One page of children: (uids, page number clamped to range, page count).

    ``read``: the children ``children_range`` read (in the store's order), of
    ``total``: all of them when there are at most ``SORT_LIMIT``, sorted; else the
    page's slice of the store's order, sorted within the page."""
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(page, 1), pages)
    start = (page - 1) * PAGE_SIZE
    if total <= SORT_LIMIT:
        return sorted(read)[start:start + PAGE_SIZE], page, pages
    return sorted(read[start:start + PAGE_SIZE]), page, pages


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"  # pragma: no cover
