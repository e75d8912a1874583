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

from lakesuperior.exceptions import AclError
from lakesuperior.model.namespaces import ACL, FOAF, RDF_TYPE, VCARD
from lakesuperior.model.uids import RES_PREFIX, ROOT_UID, uid_of
from lakesuperior.rdfio import Triple

__all__ = ["MODES", "Authorization", "check", "parse", "DEFAULT_ROOT_ACL", "acl_uri"]

#: The access modes (``acl:`` local names); Write implies Append.
MODES = ("Read", "Write", "Append", "Control")
_MODE_TERMS = {getattr(ACL, m): m for m in MODES}
EVERYONE = FOAF.Agent
AUTHENTICATED = ACL.AuthenticatedAgent
_AGENT_CLASSES = (EVERYONE, AUTHENTICATED)
_ACL_PREFIX = ACL.prefix
GROUP = VCARD.Group
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
    """One ``acl:Authorization``: who (``agents``: WebID terms, ``agent_classes``,
    ``groups``: group terms), what (``modes``, with Append added to Write) and where
    (``access_to`` / ``defaults``: uids; ``access_to_class``: type terms)."""

    node: str
    modes: frozenset[str]
    agents: frozenset[str] = frozenset()
    agent_classes: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    access_to: frozenset[str] = frozenset()
    defaults: frozenset[str] = frozenset()
    access_to_class: frozenset[str] = frozenset()


def acl_uri(uid: str) -> str:
    """The internal URI of the ACL document of ``uid`` (``<info:fcres/a/fcr:acl>``)."""
    return RES_PREFIX + ("" if uid == ROOT_UID else uid) + "/fcr:acl>"


def _local_uid(term: str) -> str | None:
    return uid_of(term) if term.startswith(RES_PREFIX) and term.endswith(">") else None


def check(triples: Iterable[Triple], uid: str, show: Callable[[str], str]) -> None:
    """Refuse an ACL this server does not store (``AclError``, naming the triple
    or node): subjects other than the document and its hash URIs, ``acl:`` terms
    on a node that is not an ``acl:Authorization``, an authorization without a
    mode, an agent or a target, unknown modes and agent classes, and targets
    (``acl:accessTo``, ``acl:default``) other than ``uid`` or groups outside
    the repository. Terms are internal; ``show`` makes them public for messages."""
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
        typed = any(p == RDF_TYPE and o == ACL.Authorization for _, p, o in own)
        uses_acl = any(p.startswith(_ACL_PREFIX) for _, p, _ in own)
        if uses_acl and not typed:
            raise AclError(uid, f"{show(node)} uses acl: properties but is not an "
                                "acl:Authorization")
        if typed:
            _check_authorization(uid, show(node), own, show)


def _check_authorization(uid: str, name: str, own: list[Triple],
                         show: Callable[[str], str]) -> None:
    modes = [o for _, p, o in own if p == ACL.mode]
    if not modes:
        raise AclError(uid, f"The authorization {name} has no acl:mode")
    for o in modes:
        if o not in _MODE_TERMS:
            raise AclError(uid, f"The authorization {name} has an unknown acl:mode {show(o)} "
                                "(acl:Read, acl:Write, acl:Append or acl:Control)")
    if not any(p in (ACL.agent, ACL.agentClass, ACL.agentGroup) for _, p, _ in own):
        raise AclError(uid, f"The authorization {name} names no agent (acl:agent, "
                            "acl:agentClass or acl:agentGroup)")
    if not any(p in (ACL.accessTo, ACL.default, ACL.accessToClass) for _, p, _ in own):
        raise AclError(uid, f"The authorization {name} names no resource (acl:accessTo, "
                            "acl:default or acl:accessToClass)")
    for _, p, o in own:
        if p in (ACL.accessTo, ACL.default):
            if _local_uid(o) != uid or "#" in o:
                own_uri = show(RES_PREFIX + uid + ">")
                raise AclError(uid, f"acl:{p.rsplit('#', 1)[-1][:-1]} of {name} is {show(o)}: "
                                    f"an ACL controls its own resource only, {own_uri}")
        elif p == ACL.agentClass and o not in _AGENT_CLASSES:
            raise AclError(uid, f"Unsupported acl:agentClass {show(o)} in {name}: use "
                                "foaf:Agent (everyone) or acl:AuthenticatedAgent")
        elif p == ACL.agentGroup and _local_uid(o) is None:
            raise AclError(uid, f"acl:agentGroup {show(o)} of {name} is outside this "
                                "repository: groups are vcard:Group resources here")
        elif p in (ACL.agent, ACL.accessToClass, ACL.agentGroup) and not o.startswith("<"):
            raise AclError(uid, f"{show(p)} of {name} must be an IRI, not {o[:80]}")


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
            access_to_class=frozenset(props.get(ACL.accessToClass, ()))))
    return out
