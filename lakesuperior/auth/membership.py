"""Which resources a write changes through membership: the check that keeps a
Direct or Indirect container from writing triples into a resource its writer
may not write (as Fedora 6's ``WebACFilter.isAuthorizedForMembershipResource``).

A container ``C`` with ``ldp:membershipResource X`` and ``ldp:hasMemberRelation``
puts ``(X, P, member)`` into ``X``'s representation for each child; with
``ldp:isMemberOfRelation`` and an ``ldp:insertedContentRelation Q``, ``(m, P, X)``
into each resource ``m`` that a child names with ``Q``. So whoever may create,
change or delete ``C`` or a child of ``C`` changes those resources too, and
needs acl:Write on them: ``AgentView`` checks the resources ``membership_targets``
names before the write (what it may remove) and after it (what it may add), in
the write's own transaction, which a refusal rolls back.

The container's own membership triples about itself (``X`` is ``C``, the
default) are its own business: Append or Write on it, already checked by the
write, is enough.
"""
from __future__ import annotations

from lakesuperior.model.containment import children_of
from lakesuperior.model.membership import MembershipConfig, read_config
from lakesuperior.model.namespaces import LDP_MEMBER_SUBJECT
from lakesuperior.model.uids import RES_PREFIX, parent_uid, res_uri, uid_of
from lakesuperior.store.reads import Reader

__all__ = ["membership_targets"]


def membership_targets(txn: Reader, uid: str) -> set[str]:
    """The uids of the resources (other than ``uid`` and its container) whose
    membership triples a write of ``uid`` can change, in the state of ``txn``: the
    membership resource of ``uid`` (a Direct or Indirect container) and of its
    container; with an inverse relation and an inserted-content relation, the
    resources the members name with it (``uid``'s own, or, for the container
    itself, its children's)."""
    found: set[str] = set()
    parent = parent_uid(uid)
    for container in (uid,) if parent is None else (uid, parent):
        cfg = read_config(txn, container)
        if cfg is None:
            continue
        if not cfg.inverse:
            found.update(_uids((cfg.resource,)))
        elif cfg.icr != LDP_MEMBER_SUBJECT:
            members = [uid] if container == parent else children_of(txn, container)
            for member in members:
                found.update(_uids(_inserted(txn, cfg, member)))
    found.discard(uid)
    if parent is not None:
        found.discard(parent)
    return found


def _inserted(txn: Reader, cfg: MembershipConfig, member: str) -> list[str]:
    """The objects of ``member``'s own ``(member, icr, o)`` triples."""
    res = res_uri(member)
    return [q[2] for q in txn.match(res, cfg.icr, None, res)]


def _uids(terms: tuple[str, ...] | list[str]) -> set[str]:
    """The uids of the repository resources among internal terms (others are
    outside the repository: nothing of ours changes)."""
    return {uid_of(t) for t in terms if t.startswith(RES_PREFIX)}
