"""A repository seen by one agent: the ``Repository`` methods, with Web Access
Control enforced (``Repository.as_agent``).

Every call checks the agent's modes on the resources it touches, in the
snapshot or write transaction the call itself runs in, and raises the domain
``AccessDeniedError`` (no HTTP in it) when a mode is missing; a refused call
has read or written nothing. The HTTP layer serves every LDP request through
a view, so the rules have one implementation. Modes:

- Read: ``exists``, ``get`` (whose embedded children, inbound references and
  membership triples come from readable resources only), ``info``, ``versions``, ``get_version``,
  ``fixity_check``; inside ``transaction()``, where a write checks its
  preconditions against it, ``info`` needs Read, Write or Append.
- Write: ``create_or_replace``, ``update``, ``update_delta``,
  ``create_version``, ``import_version``, ``import_versions``, ``delete_version``,
  ``revert_to_version``, ``resurrect``; ``delete`` and
  ``forget`` need Write on everything they remove.
- Append (or Write): ``create`` under a container or RDF source (under a
  binary or what does not exist: Write); a new resource by
  ``create_or_replace`` under it; an ``update`` that only inserts
  (``INSERT DATA``, ``INSERT ... WHERE`` without a ``DELETE`` template or with
  an empty one) and an ``update_delta`` that removes nothing.
- Write on the resources a write changes through membership (``auth.membership``):
  the membership resource of a Direct or Indirect container created, changed or
  deleted, or of the container of a member written.
- Control: the ACL methods (``acl``, ``effective_acl``, ``set_acl``, ``update_acl``,
  ``delete_acl``, ``has_acl``).
- Queries (``sparql_query``, ``triple_match``, ``term_search``) answer from
  the resources the agent may read.
- ``integrity_check``, ``stats`` and ``cleanup``: administrators only.

``require``, ``require_create``, ``require_put`` and ``require_update`` make
a write's check alone, so that a caller can refuse the write before it judges
its input (the HTTP layer: permission before validation, as Fedora 6).

An administrator (``Agent.admin``) passes every check; its name is still the
one its writes record. Not offered: ``snapshot`` (raw reads), ``close`` and
making other views (``as_agent``, ``as_user``): those belong to whoever holds
the ``Repository``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from lakesuperior.auth.access import Access, load_visible
from lakesuperior.auth.agents import Agent
from lakesuperior.auth.membership import membership_targets
from lakesuperior.exceptions import AccessDeniedError
from lakesuperior.model.containment import subtree
from lakesuperior.model.context import Context
from lakesuperior.model.interaction import NON_RDF_SOURCE
from lakesuperior.model.lookup import model_at
from lakesuperior.model.membership import has_membership
from lakesuperior.model.uids import ROOT_UID, normalize_uid, parent_uid, res_uri
from lakesuperior.rdf.sparql_parser import parse_update

__all__ = ["AgentView", "ANONYMOUS_NAME", "inserts_only", "agent_of"]

#: The user name recorded for the writes of the anonymous agent.
ANONYMOUS_NAME = "anonymous"

_T = TypeVar("_T")


def agent_of(agent: Agent | str | None, groups: Iterable[str] = (),
             name: str | None = None) -> Agent:
    """The ``Agent`` of ``Repository.as_agent``'s arguments: an ``Agent`` as it is; a
    WebID with the ``groups`` it is in (its ``name``: default the WebID); None:
    the anonymous agent. ``TypeError`` for anything else."""
    if isinstance(agent, Agent):
        return agent
    if agent is not None and not isinstance(agent, str):
        raise TypeError(f"as_agent takes an Agent, a WebID or None, not "
                        f"{type(agent).__name__}")
    return Agent(name=name or agent, webid=agent, groups=tuple(groups))


def inserts_only(text: str | bytes) -> bool:
    """Whether a SPARQL Update only adds triples (``INSERT DATA``, or ``INSERT ...
    WHERE`` whose ``DELETE`` template is absent or empty, beside empty ``DELETE
    DATA``): what acl:Append allows (Fedora API 1.0 section 5.7.1; as in Fedora 6's
    ``WebACFilter``, an empty template deletes nothing). False for what does not
    parse and for an update that inserts nothing."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        ops = parse_update(text).request or ()   # None: no operation (empty, a prologue)
    except Exception:   # pyparsing errors, bad UTF-8: the update itself will say
        return False
    inserts = False
    for op in ops:
        if op.name == "InsertData":
            inserts = True
        elif op.name == "Modify" and _no_quads(dict.get(op, "delete")):
            inserts = inserts or dict.get(op, "insert") is not None
        elif not (op.name == "DeleteData" and _no_quads(op)):
            return False
    return inserts


def _no_quads(clause: Any) -> bool:
    """Whether a parsed update template (a clause holding ``quads``) names no triple."""
    quads = None if clause is None else dict.get(clause, "quads")
    if quads is None:
        return True
    if dict.get(quads, "triples"):
        return False
    return not any(dict.get(graph, "triples") for graph in dict.get(quads, "quadsNotTriples") or ())


def _may_create(access: Access, parent: str) -> None:
    """Write on ``parent``; Append does for an existing container or RDF source (as
    Fedora 6: a binary, its description or what does not exist need Write)."""
    if access.allows(parent, "Write"):
        return
    model = model_at(access.ctx.txn, parent)
    if model is not None and model != NON_RDF_SOURCE:
        access.require(parent, "Append", "Write")
    else:
        access.require(parent, "Write")


def _may_put(access: Access, uid: str) -> None:
    """Write on ``uid``; for a new resource, Append on its container does too."""
    if access.allows(uid, "Write"):
        return
    parent = parent_uid(uid)
    txn = access.ctx.txn
    if (parent is not None and not txn.has_graph(res_uri(uid))
            and access.allows(parent, "Append")):
        return
    access.require(uid, "Write")


def _may_update(access: Access, uid: str, sparql_update: str | bytes | None) -> None:
    """Write on ``uid``, or Append for an update that only inserts (parsed only for an
    agent with Append and without Write: a parse costs milliseconds per kilobyte, and
    an agent with neither is refused without it)."""
    if access.allows(uid, "Write"):
        return
    if not access.allows(uid, "Append"):
        access.require(uid, "Write")
    only_inserts = sparql_update is not None and inserts_only(sparql_update)
    access.require(uid, *(("Write", "Append") if only_inserts else ("Write",)))


class AgentView:
    """The ``Repository`` API for one agent, enforcing WebAC (module docstring).

    Made by ``Repository.as_agent``; holds no state of its own beyond the agent.
    """

    def __init__(self, repository: Any, agent: Agent):
        self.agent = agent
        self._repo = repository.as_user(agent.name or ANONYMOUS_NAME)

    def __repr__(self) -> str:
        who = self.agent.webid or self.agent.name or ANONYMOUS_NAME
        return f"<AgentView {who} of {self._repo!r}>"

    @property
    def base_uri(self) -> str:
        return self._repo.base_uri

    @property
    def config(self) -> Any:
        return self._repo.config

    @property
    def external(self) -> Any:
        """Where external content may come from (``Repository.external``)."""
        return self._repo.external

    # -- checks ---------------------------------------------------------------------------

    def _access(self, ctx: Context) -> Access:
        return self._repo.access(ctx, self.agent)

    @contextmanager
    def _reading(self, check: Callable[[Access], None],
                 base_uri: str | None = None) -> Iterator[None]:
        """One snapshot for the check and the call inside the block."""
        if self.agent.admin:
            yield
            return
        with self._repo.snapshot(base_uri) as ctx:
            check(self._access(ctx))
            yield

    def _writing(self, check: Callable[[Access], None], call: Callable[[], _T],
                 written: tuple[str, ...] = (),
                 made: Callable[[_T], str] | None = None, tree: bool = False) -> _T:
        """``call()`` after ``check``, both in one write (``Repository.transact``).

        ``written``: the uids the call writes (``tree``: with everything under
        them, a delete), and ``made(result)`` the one it creates: the resources
        whose membership triples that changes (``membership_targets``, before and
        after the call) need Write too, and a refusal after the call rolls it back."""
        if self.agent.admin:
            return call()
        repo = self._repo

        def checked() -> _T:
            with repo.snapshot() as ctx:
                check(self._access(ctx))
                before = [d for u in written for d in subtree(ctx.txn, u)] if tree else written
                targets = set().union(*(membership_targets(ctx.txn, u) for u in before))
            result = call()
            if written or made is not None:
                uids = written if made is None else (*written, made(result))
                with repo.snapshot() as ctx:
                    access = self._access(ctx)
                    targets.update(*(membership_targets(ctx.txn, u) for u in uids))
                    for target in sorted(targets):
                        access.require(target, "Write")
            return result
        return repo.transact(checked)

    def _admin_only(self, what: str) -> None:
        if not self.agent.admin:
            raise AccessDeniedError(ROOT_UID, "Control", self.agent.authenticated,
                                    f"{what} is for administrators only")

    def modes(self, uid: str) -> frozenset[str]:
        """The modes (``Read``, ``Write``, ``Append``, ``Control``) granted on ``uid``."""
        uid = normalize_uid(uid)
        with self._repo.snapshot() as ctx:
            return self._access(ctx).modes(uid)

    # -- the checks of a write, alone -----------------------------------------------------
    # Each write method checks the same in its own transaction; these let a caller
    # (the HTTP layer) refuse a write before it judges the request's body or headers.

    def _check(self, check: Callable[[Access], None]) -> None:
        if not self.agent.admin:
            with self._repo.snapshot() as ctx:
                check(self._access(ctx))

    def require(self, uid: str, *modes: str) -> None:
        """``AccessDeniedError`` (naming the first of ``modes``) unless one of ``modes``
        is granted on ``uid``."""
        uid = normalize_uid(uid)
        self._check(lambda a: a.require(uid, *modes))

    def require_create(self, parent: str) -> None:
        """The check of ``create`` under ``parent``: Append (or Write) on an existing
        container or RDF source; Write on a binary or what does not exist."""
        parent = normalize_uid(parent)
        self._check(lambda a: _may_create(a, parent))

    def require_put(self, uid: str) -> None:
        """The check of ``create_or_replace``: Write on ``uid``; for a new resource,
        Append on its container does too."""
        uid = normalize_uid(uid)
        self._check(lambda a: _may_put(a, uid))

    def require_update(self, uid: str, sparql_update: str | bytes | None) -> None:
        """The check of ``update``: Write, or Append for an update that only inserts
        (``inserts_only``; None: an update not known to be one)."""
        uid = normalize_uid(uid)
        self._check(lambda a: _may_update(a, uid, sparql_update))

    # -- transactions ---------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[AgentView]:
        """``Repository.transaction``: the calls of the block, checked each, in one
        atomic write transaction."""
        with self._repo.transaction():
            yield self

    def transact(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """``Repository.transact``: ``fn``'s calls (of this view: checked each) in one
        atomic write, its commit shared with other threads' writes."""
        return self._repo.transact(fn, *args, **kwargs)

    # -- reading --------------------------------------------------------------------------

    def exists(self, uid: str) -> bool:
        uid = normalize_uid(uid)
        with self._reading(lambda a: a.require(uid, "Read")):
            return self._repo.exists(uid)

    def get(self, uid: str, **kwargs: Any) -> Any:
        """``Repository.get``; embedded children, inbound references and membership
        triples come only from resources (containers) the agent may read: such a
        view is ``per_agent``."""
        uid = normalize_uid(uid)
        base_uri = kwargs.pop("base_uri", None)
        if self.agent.admin:
            return self._repo.get(uid, base_uri=base_uri, **kwargs)
        with self._repo.snapshot(base_uri) as ctx:
            access = self._access(ctx)
            access.require(uid, "Read")
            gathered = (kwargs.get("embed_children") or kwargs.get("incl_inbound")
                        or (kwargs.get("incl_membership", True)
                            and has_membership(ctx.txn, uid)))
            visible = access.graph_filter() if gathered else None
            if visible is None:
                return self._repo.get(uid, base_uri=base_uri, **kwargs)
            return load_visible(ctx, uid, visible, **kwargs)

    def reads_everything(self) -> bool:
        """Whether the agent may read every resource (an administrator, or only the
        root ACL and it lets the agent read all): its views are everyone's."""
        if self.agent.admin:
            return True
        with self._repo.snapshot() as ctx:
            return self._access(ctx).everything_readable()

    def info(self, uid: str, *, base_uri: str | None = None, own_triples: bool = False) -> Any:
        uid = normalize_uid(uid)
        if self._repo.in_transaction:
            def check(a: Access) -> None:
                if not a.allows(uid, "Read", "Append"):
                    _may_put(a, uid)
        else:
            def check(a: Access) -> None:
                a.require(uid, "Read")
        with self._reading(check, base_uri):
            return self._repo.info(uid, base_uri=base_uri, own_triples=own_triples)

    def binary_uids(self, uids: Iterable[str]) -> set[str]:
        """``Repository.binary_uids``, of the resources the agent may read."""
        found = self._repo.binary_uids(uids)
        if self.agent.admin or not found:
            return found
        with self._repo.snapshot() as ctx:
            access = self._access(ctx)
            return {u for u in found if access.allows(u, "Read")}

    def versions(self, uid: str) -> list[Any]:
        uid = normalize_uid(uid)
        with self._reading(lambda a: a.require(uid, "Read")):
            return self._repo.versions(uid)

    def get_version(self, uid: str, version_id: str, *, base_uri: str | None = None) -> Any:
        uid = normalize_uid(uid)
        with self._reading(lambda a: a.require(uid, "Read"), base_uri):
            return self._repo.get_version(uid, version_id, base_uri=base_uri)

    def fixity_check(self, uid: str) -> Any:
        uid = normalize_uid(uid)
        with self._reading(lambda a: a.require(uid, "Read")):
            return self._repo.fixity_check(uid)

    # -- writing --------------------------------------------------------------------------

    def create(self, parent_uid: str, **kwargs: Any) -> Any:
        parent = normalize_uid(parent_uid)
        return self._writing(lambda a: _may_create(a, parent),
                             lambda: self._repo.create(parent, **kwargs),
                             made=lambda res: res.uid)

    def create_or_replace(self, uid: str, **kwargs: Any) -> tuple[str, Any]:
        uid = normalize_uid(uid)
        return self._writing(lambda a: _may_put(a, uid),
                             lambda: self._repo.create_or_replace(uid, **kwargs), (uid,))

    def update(self, uid: str, sparql_update: str | bytes, **kwargs: Any) -> Any:
        uid = normalize_uid(uid)
        return self._writing(lambda a: _may_update(a, uid, sparql_update),
                             lambda: self._repo.update(uid, sparql_update, **kwargs), (uid,))

    def update_delta(self, uid: str, remove: Iterable[Any] | None, add: Iterable[Any] | None,
                     **kwargs: Any) -> Any:
        uid = normalize_uid(uid)
        remove = list(remove) if remove is not None else []
        modes = ("Write",) if remove else ("Write", "Append")
        return self._writing(lambda a: a.require(uid, *modes),
                             lambda: self._repo.update_delta(uid, remove, add, **kwargs), (uid,))

    def delete(self, uid: str, *, soft: bool = True) -> None:
        uid = normalize_uid(uid)
        self._writing(lambda a: a.require_tree(uid, "Write"),
                      lambda: self._repo.delete(uid, soft=soft), (uid,), tree=True)

    def resurrect(self, uid: str) -> Any:
        uid = normalize_uid(uid)
        return self._writing(lambda a: a.require(uid, "Write"), lambda: self._repo.resurrect(uid),
                             (uid,))

    def forget(self, uid: str) -> None:
        uid = normalize_uid(uid)
        self._writing(lambda a: a.require_tree(uid, "Write"), lambda: self._repo.forget(uid),
                      (uid,))

    def create_version(self, uid: str, **kwargs: Any) -> str:
        uid = normalize_uid(uid)
        return self._writing(lambda a: a.require(uid, "Write"),
                             lambda: self._repo.create_version(uid, **kwargs))

    def delete_version(self, uid: str, version_id: str) -> None:
        uid = normalize_uid(uid)
        self._writing(lambda a: a.require(uid, "Write"),
                      lambda: self._repo.delete_version(uid, version_id))

    def import_version(self, uid: str, when: Any, **kwargs: Any) -> str:
        uid = normalize_uid(uid)
        return self._writing(lambda a: a.require(uid, "Write"),
                             lambda: self._repo.import_version(uid, when, **kwargs))

    def import_versions(self, uid: str, versions: Any, **kwargs: Any) -> list[str]:
        uid = normalize_uid(uid)
        return self._writing(lambda a: a.require(uid, "Write"),
                             lambda: self._repo.import_versions(uid, versions, **kwargs))

    def revert_to_version(self, uid: str, version_id: str) -> Any:
        uid = normalize_uid(uid)
        return self._writing(lambda a: a.require(uid, "Write"),
                             lambda: self._repo.revert_to_version(uid, version_id), (uid,))

    # -- access control lists -------------------------------------------------------------

    def acl(self, uid: str, *, base_uri: str | None = None) -> list[tuple[str, str, str]]:
        uid = normalize_uid(uid)
        with self._reading(lambda a: a.require(uid, "Control"), base_uri):
            return self._repo.acl(uid, base_uri=base_uri)

    def effective_acl(self, uid: str, *,
                      base_uri: str | None = None) -> tuple[str | None, list[tuple[str, str, str]]]:
        uid = normalize_uid(uid)
        with self._reading(lambda a: a.require(uid, "Control"), base_uri):
            return self._repo.effective_acl(uid, base_uri=base_uri)

    def has_acl(self, uid: str) -> bool:
        uid = normalize_uid(uid)
        with self._reading(lambda a: a.require(uid, "Control")):
            return self._repo.has_acl(uid)

    def set_acl(self, uid: str, **kwargs: Any) -> bool:
        uid = normalize_uid(uid)
        return self._writing(lambda a: a.require(uid, "Control"),
                             lambda: self._repo.set_acl(uid, **kwargs))

    def update_acl(self, uid: str, sparql_update: str | bytes, **kwargs: Any) -> bool:
        uid = normalize_uid(uid)
        return self._writing(lambda a: a.require(uid, "Control"),
                             lambda: self._repo.update_acl(uid, sparql_update, **kwargs))

    def delete_acl(self, uid: str) -> None:
        uid = normalize_uid(uid)
        self._writing(lambda a: a.require(uid, "Control"), lambda: self._repo.delete_acl(uid))

    # -- queries --------------------------------------------------------------------------

    def _graph_filter(self, ctx: Context) -> Callable[[str], bool] | None:
        return None if self.agent.admin else self._access(ctx).graph_filter()

    def sparql_query(self, query: str, **kwargs: Any) -> Any:
        """``Repository.sparql_query`` over the resources the agent may read."""
        return self._repo.sparql_query(query, graph_filter=self._graph_filter, **kwargs)

    def triple_match(self, s: Any = None, p: Any = None, o: Any = None,
                     **kwargs: Any) -> list[tuple[str, str, str]]:
        """``Repository.triple_match`` over the resources the agent may read."""
        return self._repo.triple_match(s, p, o, graph_filter=self._graph_filter, **kwargs)

    def term_search(self, terms: Iterable[Any], **kwargs: Any) -> list[str]:
        """``Repository.term_search`` among the resources the agent may read."""
        return self._repo.term_search(terms, graph_filter=self._graph_filter, **kwargs)

    # -- administration -------------------------------------------------------------------

    def integrity_check(self) -> Any:
        self._admin_only("The integrity check")
        return self._repo.integrity_check()

    def stats(self) -> dict[str, Any]:
        self._admin_only("Repository statistics")
        return self._repo.stats()

    def cleanup(self, **kwargs: Any) -> dict[str, int]:
        self._admin_only("Clean-up")
        return self._repo.cleanup(**kwargs)
