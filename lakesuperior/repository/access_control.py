"""The access-control methods of ``Repository``: ACLs, decisions, agent views.

``Repository`` inherits them from ``AccessControl``; they use its public
members only (``snapshot``, ``transact``, ``settings``, ``acl_state``), so
each call is one read snapshot or one write transaction like any other
``Repository`` call. ``Repository`` itself checks nothing: ``as_agent`` gives
the view that does (``agent_view``), and ``access`` the decisions it uses.
"""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from lakesuperior import rdfio
from lakesuperior.auth import acl
from lakesuperior.auth.access import Access, AclState
from lakesuperior.auth.agent_view import AgentView, agent_of
from lakesuperior.auth.agents import Agent
from lakesuperior.model.context import Context, Settings, WriteContext
from lakesuperior.model.uids import normalize_uid
from lakesuperior.rdfio import Triple

__all__ = ["AccessControl"]



_T = TypeVar("_T")


class _Repository(Protocol):
    settings: Settings
    acl_state: AclState

    def snapshot(self, base_uri: str | None = None) -> AbstractContextManager[Context]: ...

    def transact(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any: ...

    def _write(self, fn: Callable[[WriteContext], _T], base_uri: str | None = None) -> _T: ...


_R = TypeVar("_R", bound="_Repository")


class AccessControl:
    """ACLs (``acl``, ``has_acl``, ``set_acl``, ``update_acl``, ``delete_acl``),
    decisions (``access``) and the views of one user or agent (``as_user``,
    ``as_agent``)."""

    def acl(self: _Repository, uid: str, *, base_uri: str | None = None) -> list[Triple]:
        """The triples of the ACL of ``uid`` (``<resource>/fcr:acl``), public URIs; the
        root always has one (stored, else the configured default);
        ``ResourceNotExistsError`` for another resource without one."""
        uid = normalize_uid(uid)
        with self.snapshot(base_uri) as ctx:
            current = acl.current(ctx, uid, self.acl_state.default_root)
            return ctx.urimap.triples_to_public(current)

    def has_acl(self: _Repository, uid: str) -> bool:
        """Whether an ACL is stored for ``uid``."""
        uid = normalize_uid(uid)
        with self.snapshot() as ctx:
            return acl.has_acl(ctx.txn, uid)

    def set_acl(self: _Repository, uid: str, *, data: bytes | None = None,
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
            return acl.write(ctx, uid, given or [])
        return self._write(write, base_uri)

    def update_acl(self: _Repository, uid: str, sparql_update: str | bytes, *,
                   base_uri: str | None = None) -> bool:
        """Apply a SPARQL Update to the ACL of ``uid`` (``<>`` is the ACL; the root's:
        the effective one); True if the ACL is new."""
        uid = normalize_uid(uid)

        def update(ctx: WriteContext) -> bool:
            current = acl.current(ctx, uid, self.acl_state.default_root)
            return acl.update(ctx, uid, sparql_update, current)
        return self._write(update, base_uri)

    def delete_acl(self: _Repository, uid: str) -> None:
        """Delete the ACL of ``uid`` (for the root: back to the configured default)."""
        uid = normalize_uid(uid)

        self._write(lambda ctx: acl.remove(ctx, uid))

    def access(self: _Repository, ctx: Context, agent: Agent) -> Access:
        """What ``agent`` may do in the snapshot ``ctx`` (see ``auth.access``)."""
        return Access(ctx, self.acl_state, agent)

    def as_user(self: _R, name: str) -> _R:
        """This repository (same store and transactions) recording ``name`` as the agent
        of its writes (``fcrepo:createdBy`` / ``lastModifiedBy``); ``self`` if that is
        the configured agent."""
        if name == self.settings.agent:
            return self
        other = copy.copy(self)
        other.settings = dataclasses.replace(self.settings, agent=name)
        return other

    def as_agent(self, agent: Agent | str | None, groups: Iterable[str] = (), *,
                 name: str | None = None) -> AgentView:
        """The same API for one agent, enforcing Web Access Control on every call
        (``AccessDeniedError``): an ``Agent``, or a WebID (with the ``groups`` it is
        in and the ``name`` its writes record, default the WebID), or None (the
        anonymous agent). See ``agent_view``."""
        return AgentView(self, agent_of(agent, groups, name))
