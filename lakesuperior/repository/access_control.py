"""The access-control methods of ``Repository``: ACLs, decisions, agent views.

Each is a function of the repository, bound as a method in the class body of
``Repository`` (``acl = access_control.acl``: no base class), typed against
``core.Repository``. They use its ``snapshot``, ``_write``, ``settings`` and
``acl_state``, so each call is one
read snapshot or one write transaction like any other ``Repository`` call.
``Repository`` itself checks nothing: ``as_agent`` gives the view that does
(``agent_view``), and ``access`` the decisions it uses.
"""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from typing import TypeVar

from lakesuperior import rdfio
from lakesuperior.auth import acl as acls
from lakesuperior.auth.access import Access
from lakesuperior.auth.agent_view import AgentView, agent_of
from lakesuperior.auth.agents import ANONYMOUS, Agent
from lakesuperior.model.context import Context, WriteContext
from lakesuperior.model.lookup import require_model
from lakesuperior.model.uids import normalize_uid
from lakesuperior.rdfio import Triple
from lakesuperior.repository.core import Repository

__all__ = ["acl", "effective_acl", "has_acl", "set_acl", "update_acl", "delete_acl", "access",
           "as_user", "as_agent"]

_R = TypeVar("_R", bound=Repository)


def acl(repo: Repository, uid: str, *, base_uri: str | None = None) -> list[Triple]:
    """The triples of the ACL of ``uid`` (``<resource>/fcr:acl``), public URIs; the
    root always has one (stored, else the configured default);
    ``ResourceNotExistsError`` for another resource without one."""
    uid = normalize_uid(uid)
    with repo.snapshot(base_uri) as ctx:
        current = acls.current(ctx, uid, repo.acl_state.default_root)
        return ctx.urimap.triples_to_public(current)


def effective_acl(repo: Repository, uid: str, *,
                  base_uri: str | None = None) -> tuple[str | None, list[Triple]]:
    """The ACL that decides for ``uid``: ``(source, triples)``, ``source`` the uid
    whose ACL it is and the triples, public URIs: ``uid``'s own ACL whole, or
    the ``acl:default`` rules of the ancestor it inherits from (those that reach
    it; the ancestor's other rules are its own business); ``(None, [])`` when no
    ACL reaches it (nothing is granted there). ``ResourceNotExistsError`` /
    ``TombstoneError`` for what is not a live resource."""
    uid = normalize_uid(uid)
    with repo.snapshot(base_uri) as ctx:
        require_model(ctx.txn, uid)
        access = Access(ctx, repo.acl_state, ANONYMOUS)
        source = access.controlling(uid)
        if source is None:
            return None, []
        current = acls.current(ctx, source, repo.acl_state.default_root)
        if source != uid:
            nodes = {a.node for a in repo.acl_state.inherited(ctx.txn, access.gen, source)}
            current = [t for t in current if t[0] in nodes]
        return source, ctx.urimap.triples_to_public(current)


def has_acl(repo: Repository, uid: str) -> bool:
    """Whether an ACL is stored for ``uid``."""
    uid = normalize_uid(uid)
    with repo.snapshot() as ctx:
        return acls.has_acl(ctx.txn, uid)


def set_acl(repo: Repository, uid: str, *, data: bytes | None = None,
            media_type: str | None = None, triples: Iterable[Triple] | None = None,
            base_uri: str | None = None) -> bool:
    """Create or replace the ACL of ``uid`` from ``data`` of an RDF ``media_type``
    (relative to ``<resource>/fcr:acl``: ``<#readers>``) or public ``triples``; True
    if it is new. ``AclError`` for what ``auth.authorizations`` refuses."""
    uid = normalize_uid(uid)

    def write(ctx: WriteContext) -> bool:
        given = triples
        if data is not None:
            base = ctx.urimap.public_iri(uid).rstrip("/") + "/fcr:acl"
            given = rdfio.parse(data, media_type or rdfio.TURTLE, base)
        return acls.write(ctx, uid, given or [])
    return repo._write(write, base_uri)


def update_acl(repo: Repository, uid: str, sparql_update: str | bytes, *,
               base_uri: str | None = None) -> bool:
    """Apply a SPARQL Update to the ACL of ``uid`` (``<>`` is the ACL; the root's:
    the effective one); True if the ACL is new."""
    uid = normalize_uid(uid)

    def update(ctx: WriteContext) -> bool:
        current = acls.current(ctx, uid, repo.acl_state.default_root)
        return acls.update(ctx, uid, sparql_update, current, repo.config.query_timeout)
    return repo._write(update, base_uri)


def delete_acl(repo: Repository, uid: str) -> None:
    """Delete the ACL of ``uid`` (for the root: back to the configured default)."""
    uid = normalize_uid(uid)

    repo._write(lambda ctx: acls.remove(ctx, uid))


def access(repo: Repository, ctx: Context, agent: Agent) -> Access:
    """What ``agent`` may do in the snapshot ``ctx`` (see ``auth.access``)."""
    return Access(ctx, repo.acl_state, agent)


def as_user(repo: _R, name: str) -> _R:
    """This repository (same store and transactions) recording ``name`` as the agent
    of its writes (``fcrepo:createdBy`` / ``lastModifiedBy``); ``repo`` if that is
    the configured agent."""
    if name == repo.settings.agent:
        return repo
    other = copy.copy(repo)
    other.settings = dataclasses.replace(repo.settings, agent=name)
    return other


def as_agent(repo: Repository, agent: Agent | str | None, groups: Iterable[str] = (), *,
             name: str | None = None) -> AgentView:
    """The same API for one agent, enforcing Web Access Control on every call
    (``AccessDeniedError``): an ``Agent``, or a WebID (with the ``groups`` it is
    in and the ``name`` its writes record, default the WebID), or None (the
    anonymous agent). See ``agent_view``."""
    return AgentView(repo, agent_of(agent, groups, name))
