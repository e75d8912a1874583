"""Archival Groups (Fedora 6): a container versioned with its descendants as one unit.

A container created with the type ``fcrepo:ArchivalGroup`` (``Link:
<http://fedora.info/definitions/v4/repository#ArchivalGroup>; rel="type"``)
keeps that server-managed type for life. Its descendants belong to it: every
change among them makes one version of the group (``model.versions``). A group
cannot be created inside another group, nor made of a binary.
"""
from __future__ import annotations

from collections.abc import Iterable

from lakesuperior.exceptions import ArchivalGroupError, InvalidTypeLinkError
from lakesuperior.model.interaction import CONTAINERS, NON_RDF_SOURCE, model_name
from lakesuperior.model.namespaces import FCREPO, FCREPO_NS, LDP_NS, RDF_TYPE
from lakesuperior.model.uids import ROOT_UID, parent_of, res_uri
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader

ARCHIVAL_GROUP = FCREPO.ArchivalGroup
ARCHIVAL_GROUP_IRI = ARCHIVAL_GROUP[1:-1]
#: ``rel="type"`` values that are not interaction models and are accepted (and
#: ignored) at creation, as Fedora 6 does.
_IGNORED_TYPES = frozenset((FCREPO_NS + "VersionedResource",
                            "http://mementoweb.org/ns#OriginalResource"))


def requested(type_iris: Iterable[str]) -> bool:
    """Whether the bare IRIs of a request's ``rel="type"`` links ask for an
    Archival Group. Any type that is neither an LDP type, the Archival Group
    nor one Fedora ignores is refused (``InvalidTypeLinkError``), as
    Fedora 6 refuses an invalid interaction model."""
    asked = False
    for iri in type_iris:
        if iri == ARCHIVAL_GROUP_IRI:
            asked = True
        elif not iri.startswith(LDP_NS) and iri not in _IGNORED_TYPES:
            raise InvalidTypeLinkError(None, f"Invalid interaction model: <{iri}> "
                                                 "(rel=\"type\" may name an LDP type or "
                                                 f"<{ARCHIVAL_GROUP_IRI}>)")
    return asked


def is_group(txn: Reader, uid: str) -> bool:
    """Whether the live resource at ``uid`` is an Archival Group."""
    res = res_uri(uid)
    return txn.count(res, RDF_TYPE, ARCHIVAL_GROUP, res) > 0


def group_of(txn: Reader, uid: str) -> str | None:
    """The Archival Group ``uid`` is or belongs to (itself or an ancestor), or None."""
    cur = uid
    while cur != ROOT_UID:
        if is_group(txn, cur):
            return cur
        cur = parent_of(cur)
    return None


def group_in(txn: Reader, uid: str, own: Iterable[Triple]) -> str | None:
    """``group_of`` for a resource whose own triples ``own`` were read: its own type
    is not looked up again."""
    if uid == ROOT_UID:
        return None
    if any(t[1] == RDF_TYPE and t[2] == ARCHIVAL_GROUP for t in own):
        return uid
    return group_of(txn, parent_of(uid))


def not_for_binary(uid: str | None, model: str = NON_RDF_SOURCE) -> InvalidTypeLinkError:
    """The error for an Archival Group that would not be a container."""
    what = "Binary resources" if model == NON_RDF_SOURCE else f"A {model_name(model)}"
    return InvalidTypeLinkError(uid, f"{what} cannot be created as an ArchivalGroup: only "
                                     "a container can be one")


def check_new(txn: Reader, uid: str, model: str) -> list[Triple]:
    """The type triple of a new Archival Group at ``uid`` with interaction model
    ``model``; refused for a binary or a resource inside another group."""
    if model not in CONTAINERS:
        raise not_for_binary(uid, model)
    outer = group_of(txn, parent_of(uid)) if uid != ROOT_UID else None
    if outer is not None:
        raise ArchivalGroupError(uid, f"Cannot create the Archival Group {uid} inside "
                                      f"the Archival Group {outer}: groups cannot be nested")
    return [(res_uri(uid), RDF_TYPE, ARCHIVAL_GROUP)]


def kept(old: Iterable[Triple], uid: str) -> list[Triple]:
    """The Archival Group type among a resource's ``old`` triples (a replacement
    keeps it)."""
    res = res_uri(uid)
    return [t for t in old if t[1] == RDF_TYPE and t[2] == ARCHIVAL_GROUP and t[0] == res]
