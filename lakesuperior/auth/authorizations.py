"""WebAC authorizations: what an ACL document says, checked and parsed.

An ACL is an RDF source at ``<resource>/fcr:acl`` holding ``acl:Authorization``
nodes, each a hash URI of the ACL document (``<.../fcr:acl#readers>``). Its
triples are stored with internal URIs (``to_internal``), so an ACL does not
depend on the public base URI of a request. ``check`` refuses what this server
will not store (Fedora API 1.0 section 5: ACLs and groups local to the
repository); ``parse`` turns the stored triples into ``Authorization`` values.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from lakesuperior.exceptions import AclError
from lakesuperior.model.namespaces import ACL, FOAF, RDF_TYPE, VCARD
from lakesuperior.model.uids import RES_PREFIX, ROOT_UID, is_descendant, uid_of
from lakesuperior.rdfio import Triple

__all__ = ["MODES", "Authorization", "check", "parse", "DEFAULT_ROOT_ACL", "acl_uri",
           "origin_of"]

#: The access modes (``acl:`` local names); Write implies Append.
MODES = ("Read", "Write", "Append", "Control")
_MODE_TERMS = {getattr(ACL, m): m for m in MODES}
EVERYONE = FOAF.Agent
AUTHENTICATED = ACL.AuthenticatedAgent
GROUP = VCARD.Group
_RES_LEN = len(RES_PREFIX)
HAS_MEMBER = VCARD.hasMember

#: The root ACL when none is stored and none is configured (as Fedora 6): every
#: agent may read everything; only administrators (who bypass WebAC) may write.
DEFAULT_ROOT_ACL = """\
@prefix acl: <http://www.w3.org/ns/auth/acl#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .

<#default> a acl:Authorization ;
    acl:agentClass foaf:Agent ;
    acl:mode acl:Read ;
    acl:accessTo <./> ;
    acl:default <./> .
"""


@dataclass(frozen=True)
class Authorization:
    """One ``acl:Authorization``: who (``agents``: WebID terms, or literals naming a
    user by name or WebID, as Fedora 6 reads them; ``agent_classes``,
    ``groups``: group terms; ``origins``: the web origins its ``acl:origin`` names,
    ``origin_of`` each, the only ones it grants to when it names any), what
    (``modes``, with Append added to Write) and where (``access_to`` /
    ``defaults``: uids; ``access_to_class``: type terms)."""

    node: str
    modes: frozenset[str]
    agents: frozenset[str] = frozenset()
    agent_classes: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    access_to: frozenset[str] = frozenset()
    defaults: frozenset[str] = frozenset()
    access_to_class: frozenset[str] = frozenset()
    origins: frozenset[str] = frozenset()


_DEFAULT_PORTS = {"http": 80, "https": 443}
#: What an ``acl:origin`` that names no http(s) origin is read as: an origin no
#: request has, so that its rule grants nothing (rather than to every origin).
NO_ORIGIN = "-"


def origin_of(value: str) -> str | None:
    """The web origin ``scheme://host:port`` (lower case, the port always given) of
    an origin or URL (an ``Origin`` header, an ``acl:origin`` IRI with or without
    ``<>``); None for anything that is not an http(s) origin (``null`` included)."""
    text = value.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return f"{scheme}://{parts.hostname.lower()}:{port or _DEFAULT_PORTS[scheme]}"


def acl_uri(uid: str) -> str:
    """The internal URI of the ACL document of ``uid`` (``<info:fcres/a/fcr:acl>``)."""
    return RES_PREFIX + ("" if uid == ROOT_UID else uid) + "/fcr:acl>"


def _local_uid(term: str) -> str | None:
    """The uid of an internal resource URI (``<info:fcres/a>``), else None."""
    if term.startswith(RES_PREFIX) and term.endswith(">") and term[_RES_LEN] in "/>":
        return uid_of(term)
    return None


def check(triples: Iterable[Triple], uid: str, show: Callable[[str], str]) -> None:
    """Refuse an ACL this server does not store (``AclError``, naming the triple
    or node): subjects other than the document and its hash URIs, and in an
    ``acl:Authorization``, an ``acl:accessTo`` outside ``uid`` and what is below
    it, an ``acl:default`` other than ``uid``, or an ``acl:agentGroup`` outside
    the repository (Fedora API 1.0 section 5.5). Anything else is stored and
    grants nothing unless ``parse`` finds it an authorization: untyped nodes,
    authorizations without a mode or an agent, unknown modes, agent classes and
    predicates. Terms are internal; ``show`` makes them public for messages."""
    doc = acl_uri(uid)
    hashed = doc[:-1] + "#"
    nodes: dict[str, list[Triple]] = {}
    for t in triples:
        s = t[0]
        if s != doc and not s.startswith(hashed):
            raise AclError(uid, f"An ACL describes its own authorizations (hash URIs such "
                                f"as <#readers>): the subject {show(s)} is not one")
        nodes.setdefault(s, []).append(t)
    for node, own in nodes.items():
        if any(p == RDF_TYPE and o == ACL.Authorization for _, p, o in own):
            _check_authorization(uid, show(node), own, show)


def _check_authorization(uid: str, name: str, own: list[Triple],
                         show: Callable[[str], str]) -> None:
    own_uri = show(RES_PREFIX + uid + ">")
    for _, p, o in own:
        target = _local_uid(o) if "#" not in o else None
        if p == ACL.accessTo and (target is None or not (
                target == uid or is_descendant(target, uid))):
            raise AclError(uid, f"acl:accessTo of {name} is {show(o)}: an ACL controls its "
                                f"own resource or a resource below it ({own_uri} or "
                                "below)")
        if p == ACL.default and target != uid:
            raise AclError(uid, f"acl:default of {name} is {show(o)}: an ACL is inherited "
                                f"from its own resource, {own_uri}, by what is below it")
        if p == ACL.agentGroup and _local_uid(o) is None:
            raise AclError(uid, f"acl:agentGroup {show(o)} of {name} is outside this "
                                "repository: groups are vcard:Group resources here")


def parse(triples: Iterable[Triple]) -> list[Authorization]:
    """The authorizations among stored (internal, checked) ACL triples."""
    nodes: dict[str, dict[str, set[str]]] = {}
    for s, p, o in triples:
        nodes.setdefault(s, {}).setdefault(p, set()).add(o)
    out = []
    for node, props in nodes.items():
        if ACL.Authorization not in props.get(RDF_TYPE, ()):
            continue
        modes = {_MODE_TERMS[m] for m in props.get(ACL.mode, ()) if m in _MODE_TERMS}
        if "Write" in modes:
            modes.add("Append")
        out.append(Authorization(
            node=node, modes=frozenset(modes),
            agents=frozenset(props.get(ACL.agent, ())),
            agent_classes=frozenset(props.get(ACL.agentClass, ())),
            groups=frozenset(props.get(ACL.agentGroup, ())),
            access_to=frozenset(u for o in props.get(ACL.accessTo, ())
                                if (u := _local_uid(o)) is not None),
            defaults=frozenset(u for o in props.get(ACL.default, ())
                               if (u := _local_uid(o)) is not None),
            access_to_class=frozenset(props.get(ACL.accessToClass, ())),
            origins=frozenset(origin_of(o) or NO_ORIGIN for o in props.get(ACL.origin, ()))))
    return out
