"""Web Access Control decisions: the effective ACL of a resource, and what an
agent may do there (as Fedora 6's ``WebACRolesProvider`` reads ACLs).

The effective ACL of a resource is its own ACL; else, walking up its
ancestors (containment follows the path), the first ACL with an ``acl:default``
rule naming its own resource: ancestors whose ACL has none are skipped, so an
ACL without ``acl:default`` decides for its own resource only. The root's ACL
is the one stored at ``/fcr:acl``, else the configured one, else
``authorizations.DEFAULT_ROOT_ACL``; when no ACL above a resource has an
``acl:default`` rule, nothing is granted there. Only nodes typed
``acl:Authorization`` count, and only those with a mode and an agent grant
anything. A rule applies to the resource of its own ACL through
``acl:accessTo`` naming it (or ``acl:accessToClass`` and one of the resource's
``rdf:type``); to a resource that inherits it if it has ``acl:default``, its
``acl:accessTo`` list is empty or names the ACL's resource or this one, and,
if it has ``acl:accessToClass``, the resource has one of those types. It grants
its modes to the agents it names: ``acl:agent`` (WebIDs), ``acl:agentClass``
(``foaf:Agent``: everyone; ``acl:AuthenticatedAgent``), ``acl:agentGroup`` (a
group the ``Agent`` is said to be in, or a ``vcard:Group`` resource listing the
agent's WebID with ``vcard:hasMember``). As Fedora 6 reads them, an ``acl:agent``
or ``vcard:hasMember`` literal names a user too: one whose user name or WebID is
its text. A rule with ``acl:origin`` grants only to requests whose ``Origin`` is
one of those it names (a request without ``Origin``, from a program, has none).
Administrators are granted everything.

Cost: ``AclState`` (one per repository) keeps what it parsed for one ACL
generation (``auth.acl``): each check reads the generation token (one record),
and nothing else while no ACL changes, except the resource's types for an
``acl:accessToClass`` rule and a group's membership for an ``acl:agentGroup``
rule, when such a rule is the one left to decide. A check of a whole tree
(``require_tree``, a delete) decides for each resource in it.
"""
from __future__ import annotations

from collections.abc import Callable

from lakesuperior.auth import acl
from lakesuperior.auth import authorizations as auth
from lakesuperior.auth.agents import Agent
from lakesuperior.auth.authorizations import AUTHENTICATED, EVERYONE, GROUP, HAS_MEMBER
from lakesuperior.exceptions import AccessDeniedError
from lakesuperior.model.containment import own_triples, subtree
from lakesuperior.model.context import Context
from lakesuperior.model.literals import literal_term
from lakesuperior.model.lookup import require_model, types_of
from lakesuperior.model.membership import triples_about
from lakesuperior.model.namespaces import LDP_CONTAINS, RDF_TYPE
from lakesuperior.model.resource import RdfSource, read_children, view
from lakesuperior.model.server_managed import is_server_managed
from lakesuperior.model.uids import RES_PREFIX, ROOT_UID, ancestors, is_descendant, res_uri, uid_of
from lakesuperior.model.versions import list_versions
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader

__all__ = ["AclState", "Access", "ALL_MODES", "load_visible"]

ALL_MODES = frozenset(auth.MODES)
_RES_LEN = len(RES_PREFIX)


class _Generation:
    """What one ACL generation says: the uids with an ACL, their parsed
    authorizations (filled on first use)."""

    __slots__ = ("token", "acls", "auths", "inherited")

    def __init__(self, token: str | None, acls: frozenset[str]):
        self.token = token
        self.acls = acls
        self.auths: dict[str, list[auth.Authorization]] = {}
        #: uid -> the rules of its ACL that what is below it inherits (acl:default)
        self.inherited: dict[str, list[auth.Authorization]] = {}


class AclState:
    """The access-control cache of one repository, valid across snapshots until
    the ACL generation changes. ``root``: the stored triples of the root ACL used
    while none is stored at ``/fcr:acl``."""

    def __init__(self, root: list[Triple]):
        self.default_root = list(root)
        self._root = auth.parse(self.default_root)
        self._current = _Generation(None, frozenset())

    def generation(self, txn: Reader) -> _Generation:
        token = acl.generation(txn)
        cur = self._current
        if cur.token != token:
            cur = _Generation(token, acl.registry(txn))
            self._current = cur
        return cur

    def authorizations(self, txn: Reader, gen: _Generation, uid: str) -> list[auth.Authorization]:
        """The authorizations of the ACL of ``uid`` (of the root: the effective one)."""
        found = gen.auths.get(uid)
        if found is None:
            found = auth.parse(acl.stored(txn, uid)) if uid in gen.acls else self._root
            gen.auths[uid] = found
        return found

    def inherited(self, txn: Reader, gen: _Generation, uid: str) -> list[auth.Authorization]:
        """The rules of the ACL of ``uid`` (which has one) with an ``acl:default``
        naming ``uid``: what inherits from it; none, and it is skipped."""
        found = gen.inherited.get(uid)
        if found is None:
            found = [a for a in self.authorizations(txn, gen, uid) if uid in a.defaults]
            gen.inherited[uid] = found
        return found


class Access:
    """What ``agent`` may do in the snapshot of ``ctx``."""

    def __init__(self, ctx: Context, state: AclState, agent: Agent):
        self.ctx = ctx
        self.agent = agent
        self.state = state
        self.gen = state.generation(ctx.txn)
        inner = ctx.urimap.to_internal
        self._webid = inner(f"<{agent.webid}>") if agent.webid else None
        #: the literal terms that name the agent: its user name and WebID as text
        self._literals = frozenset(literal_term(x) for x in (agent.name, agent.webid) if x)
        #: the terms a group lists the agent with (``vcard:hasMember``)
        self._member_terms = ((self._webid,) if self._webid else ()) + tuple(self._literals)
        self._groups = frozenset(inner(f"<{g}>") for g in agent.groups)
        self._members: dict[str, bool] = {}
        self._types: dict[str, frozenset[str]] = {}
        self._modes: dict[str, frozenset[str]] = {}

    # -- the effective ACL ----------------------------------------------------------------

    def controlling(self, uid: str) -> str | None:
        """The uid whose ACL decides for ``uid``: ``uid`` itself if it has an ACL (the
        root always has one), else the nearest ancestor whose ACL has an
        ``acl:default`` rule; None if there is none."""
        acls = self.gen.acls
        if uid in acls or uid == ROOT_UID:
            return uid
        for a in ancestors(uid):
            if (a in acls or a == ROOT_UID) and self._inherited_rules(a):
                return a
        return None

    def _inherited_rules(self, src: str) -> list[auth.Authorization]:
        return self.state.inherited(self.ctx.txn, self.gen, src)

    def modes(self, uid: str) -> frozenset[str]:
        """The modes granted to the agent on ``uid``."""
        if self.agent.admin:
            return ALL_MODES
        found = self._modes.get(uid)
        if found is None:
            src = self.controlling(uid)
            granted: set[str] = set()
            if src == uid:
                rules = self.state.authorizations(self.ctx.txn, self.gen, uid)
            else:
                rules = self._inherited_rules(src) if src is not None else []
            for a in rules:
                if a.modes <= granted or not self._applies(a, uid, src):
                    continue
                if self._matches(a):
                    granted |= a.modes
            found = self._modes[uid] = frozenset(granted)
        return found

    def allows(self, uid: str, *modes: str) -> bool:
        """Whether any of ``modes`` is granted on ``uid``."""
        have = self.modes(uid)
        return any(m in have for m in modes)

    def require(self, uid: str, *modes: str) -> None:
        """``AccessDeniedError`` (naming the first of ``modes``) unless one is granted."""
        if not self.allows(uid, *modes):
            raise AccessDeniedError(uid, modes[0], self.agent.authenticated)

    def require_tree(self, uid: str, mode: str) -> None:
        """``mode`` on ``uid`` and on everything under it (a delete, a purge): on
        each resource of the tree (live, or buried under a tombstone) and on each
        one below with its own ACL; the error names the first without it."""
        self.require(uid, mode)
        if self.agent.admin:
            return
        txn = self.ctx.txn
        kind = "res" if txn.has_graph(res_uri(uid)) else "bury"
        for u in subtree(txn, uid, kind)[1:]:
            self.require(u, mode)
        for u in sorted(self.gen.acls):
            if is_descendant(u, uid):
                self.require(u, mode)

    # -- SPARQL ---------------------------------------------------------------------------

    def everything_readable(self) -> bool:
        """Whether the agent may read every resource (no per-graph filter needed):
        an administrator, or only the root ACL and it lets the agent read the
        root and, by default, everything under it."""
        if self.agent.admin:
            return True
        if self.gen.acls - {ROOT_UID}:
            return False
        return "Read" in self.modes(ROOT_UID) and any(
            "Read" in a.modes and not a.access_to_class
            and (not a.access_to or ROOT_UID in a.access_to) and self._matches(a)
            for a in self._inherited_rules(ROOT_UID))

    def graph_filter(self) -> Callable[[str], bool] | None:
        """None when everything is readable, else a predicate telling whether a
        resource graph (internal name) may be seen."""
        if self.everything_readable():
            return None
        seen: dict[str, bool] = {}

        def visible(g: str) -> bool:
            ok = seen.get(g)
            if ok is None:
                uid = g[_RES_LEN:-1] or ROOT_UID
                ok = seen[g] = "Read" in self.modes(uid)
            return ok
        return visible

    # -- matching -------------------------------------------------------------------------

    def _applies(self, a: auth.Authorization, uid: str, src: str | None) -> bool:
        """Whether rule ``a`` of the ACL of ``src`` applies to ``uid`` (``src`` is
        ``uid``, or the ancestor it inherits from and ``a`` one of its inherited rules)."""
        if uid == src:
            if uid in a.access_to:
                return True
            return bool(a.access_to_class) and self._has_class(uid, a.access_to_class)
        if a.access_to and src not in a.access_to and uid not in a.access_to:
            return False
        return not a.access_to_class or self._has_class(uid, a.access_to_class)

    def _has_class(self, uid: str, classes: frozenset[str]) -> bool:
        types = self._types.get(uid)
        if types is None:
            types = self._types[uid] = frozenset(types_of(self.ctx.txn, uid))
        return not types.isdisjoint(classes)

    def _matches(self, a: auth.Authorization) -> bool:
        if a.origins and self.agent.origin not in a.origins:
            return False          # acl:origin: only requests from the pages it names
        if EVERYONE in a.agent_classes:
            return True
        if AUTHENTICATED in a.agent_classes and self.agent.authenticated:
            return True
        if self._webid is not None and self._webid in a.agents:
            return True
        if not self._literals.isdisjoint(a.agents):
            return True
        return any(g in self._groups or self._is_member(g) for g in a.groups)

    def _is_member(self, group: str) -> bool:
        """Whether the agent (its WebID, or a literal of its name or WebID) is a
        ``vcard:hasMember`` of a ``vcard:Group`` resource of this repository (the
        group node may be a hash URI of it)."""
        if not self._member_terms:
            return False
        found = self._members.get(group)
        if found is None:
            txn = self.ctx.txn
            doc = res_uri(uid_of(group))
            found = bool(any(txn.count(group, HAS_MEMBER, m, doc) for m in self._member_terms)
                         and txn.count(group, RDF_TYPE, GROUP, doc))
            self._members[group] = found
        return found


def load_visible(ctx: Context, uid: str, visible: Callable[[str], bool], *,
                 incl_children: bool = True, incl_inbound: bool = False,
                 incl_srv_mgd: bool = True, embed_children: bool = False,
                 incl_membership: bool = True,
                 children_range: tuple[int, int] | None = None) -> RdfSource:
    """``resource.load`` for an agent that may not read everything: embedded
    children, inbound references and membership triples come only from the
    resource graphs (containers, for membership) ``visible`` accepts (the
    resource itself is checked by the caller)."""
    txn = ctx.txn
    res = res_uri(uid)
    own = own_triples(txn, uid)
    if not own:
        require_model(txn, uid)
    children, total = read_children(txn, uid, children_range)
    extra: list[Triple] = []
    found = triples_about(txn, uid, visible) if incl_membership else []
    extra.extend(found)
    if incl_inbound:
        extra.extend((s, p, o) for s, p, o, g in txn.match(None, None, res, None)
                     if g != res and p != LDP_CONTAINS and g.startswith(RES_PREFIX)
                     and visible(g))
    if embed_children:
        for child in children:
            if visible(child):
                extra.extend(t for t in txn.triples(child, omit=LDP_CONTAINS)
                             if incl_srv_mgd or not is_server_managed(t[1], t[2]))
    v = view(ctx, uid, own, extra=extra, incl_children=incl_children,
             incl_srv_mgd=incl_srv_mgd, versions=list_versions(ctx, uid),
             contained=children)
    v.child_count = total
    v.per_agent = True
    v.has_membership = bool(found)
    return v
