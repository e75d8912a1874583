"""Creating, replacing and updating resources inside one write transaction.

Every function takes the ``Context`` of the call, validates everything it can
before writing, and raises on refused input; the repository aborts the
transaction on any exception, so a failed call writes nothing.

Write pattern of a new resource (the hot path): one ``add_graph`` for its
graph, one ``add`` for the containment triple in the parent (an append), one
update of the parent's ``fcrepo:lastModified``, and for a child of a
Direct/Indirect container one ``add`` of its membership triples.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lakesuperior import rdfio
from lakesuperior.exceptions import (
    IncompatibleLdpTypeError,
    InvalidResourceError,
    InvalidTripleError,
    ResourceNotExistsError,
    ServerManagedTermError,
)
from lakesuperior.model import archival, containment, interaction, membership, nonrdf, versions
from lakesuperior.model.context import Context, WriteContext
from lakesuperior.model.events import record_change
from lakesuperior.model.inputs import BinaryInput, RdfInput
from lakesuperior.model.interaction import (
    BASIC_CONTAINER,
    CONTAINERS,
    MEMBERSHIP_CONTAINERS,
    NON_RDF_SOURCE,
    model_name,
)
from lakesuperior.model.literals import datetime_literal, literal_term
from lakesuperior.model.lookup import is_tombstone, model_at, require_model, tombstone_error
from lakesuperior.model.namespaces import LDP_CONTAINS, RDF_TYPE
from lakesuperior.model.resource import RdfSource, ResourceInfo, view
from lakesuperior.model.server_managed import (
    BINARY_PREDICATES,
    binary_values,
    is_server_managed,
    renewed_server_triples,
    server_triples,
)
from lakesuperior.model.uids import child_uid, parent_of, parent_uid, res_uri
from lakesuperior.model.validation import InputChecker
from lakesuperior.rdfio import Triple

# --- create / replace ---------------------------------------------------------------------

@dataclass(frozen=True)
class Creation:
    """A resource's creation date and agent as terms, when a write records given
    ones (a migration's); each None: the call's (a new resource's) or the kept one
    (a replaced resource's)."""

    date: str | None
    agent: str | None

    @classmethod
    def of(cls, uid: str, ctx: Context, created: datetime | None,
           created_by: str | None) -> Creation:
        """The stamp of ``created`` (an aware datetime, not after the call's time)
        and ``created_by``; ``InvalidResourceError`` for a bad one."""
        if created is not None:
            if not isinstance(created, datetime) or created.tzinfo is None:
                raise InvalidResourceError(uid, f"created must be a timezone-aware "
                                                f"datetime, not {created!r:.60}")
            if created > ctx.now:
                raise InvalidResourceError(uid, f"created ({created.isoformat()}) is after "
                                                f"the write's time ({ctx.now.isoformat()})")
        if created_by is not None and (not isinstance(created_by, str) or not created_by):
            raise InvalidResourceError(uid, f"created_by must be an agent's name, "
                                            f"not {created_by!r:.60}")
        return cls(None if created is None else datetime_literal(created),
                   None if created_by is None else literal_term(created_by))


def create_or_replace(ctx: WriteContext, uid: str, inp: RdfInput | BinaryInput,
                      handling: str = "strict", *, archival_group: bool = False,
                      current: ResourceInfo | None = None, created: datetime | None = None,
                      created_by: str | None = None) -> tuple[str, RdfSource]:
    """PUT semantics: ``('create' | 'replace', view)``. Missing intermediate
    path segments are created as basic containers. ``archival_group``: the
    resource is (created as) an Archival Group. ``current``: the resource's state
    (``resource.load_state``) read in this write transaction, nothing written since.
    ``created``, ``created_by``: the creation date and agent to record (``Creation``)."""
    txn = ctx.txn
    stamp = Creation.of(uid, ctx, created, created_by)
    model = model_at(txn, uid) if current is None else current.interaction_model
    if model is not None:
        group = archival.is_group(txn, uid) if current is None else current.group == uid
        if archival_group and not group:
            raise IncompatibleLdpTypeError(uid, f"{uid} exists and is not an Archival "
                                                "Group: a resource becomes one only when "
                                                "it is created")
        return "replace", replace(ctx, uid, model, inp, handling, current, stamp)
    if is_tombstone(txn, uid):
        raise tombstone_error(txn, uid)
    parent_model = ensure_parent(ctx, uid, create_missing=True)
    return "create", create_at(ctx, uid, inp, handling, parent_model,
                               archival_group=archival_group, stamp=stamp)


def create_child(ctx: WriteContext, parent: str, candidate: str, inp: RdfInput | BinaryInput,
                 handling: str = "strict", *, archival_group: bool = False) -> RdfSource:
    """POST semantics: create under ``parent`` at ``candidate`` (the slug or a
    minted uuid) or, if that is taken, at a fresh uuid. Only the IRI an RDF
    input was resolved against (its ``base``, the body's ``<>``) moves to the
    new resource; any other IRI, the taken slug's included, is data."""
    txn = ctx.txn
    parent_model = require_model(txn, parent)
    check_can_contain(parent, parent_model, candidate)
    uid = candidate
    if txn.has_graph(res_uri(uid)) or is_tombstone(txn, uid):
        uid = child_uid(parent, str(uuid.uuid4()))
    iri = ctx.urimap.public_iri(uid)
    base = getattr(inp, "base", None) or ctx.urimap.public_iri(candidate)
    if base != iri:
        inp = inp.rebased(base, iri)
    return create_at(ctx, uid, inp, handling, parent_model, archival_group=archival_group)


def check_binary_target(ctx: Context, uid: str, *, parent: str | None = None) -> None:
    """Refuse, before a binary's content is stored, a write that cannot make a binary
    at ``uid``: a POST under ``parent``, or (``parent`` None) a PUT. Read-only; the
    write transaction checks again (the state may change in between)."""
    txn = ctx.txn
    if parent is not None:
        check_can_contain(parent, require_model(txn, parent), uid)
        return
    model = model_at(txn, uid)
    if model is not None:
        if model != NON_RDF_SOURCE:
            raise IncompatibleLdpTypeError(uid, f"{uid} is a {model_name(model)}: it cannot "
                                                "be replaced with a binary")
        return
    cur = uid
    while (model := model_at(txn, cur)) is None:
        if is_tombstone(txn, cur):
            raise tombstone_error(txn, cur)
        cur = parent_of(cur)
    check_can_contain(cur, model, uid)


def check_can_contain(parent: str, parent_model: str, uid: str) -> None:
    """``IncompatibleLdpTypeError`` unless a ``parent_model`` resource may contain others."""
    if parent_model not in CONTAINERS:
        raise IncompatibleLdpTypeError(
            uid, f"Cannot create {uid}: {parent} is a {model_name(parent_model)}, "
                 f"which cannot contain other resources")


def ensure_parent(ctx: WriteContext, uid: str, *, create_missing: bool) -> str:
    """Check (and with ``create_missing``, make) the ancestors of a new resource;
    return the parent's interaction model."""
    txn = ctx.txn
    missing = []
    cur = parent_of(uid)
    while True:
        model = model_at(txn, cur)
        if model is not None:
            break
        if is_tombstone(txn, cur):
            raise tombstone_error(txn, cur)
        if not create_missing:
            raise ResourceNotExistsError(cur, f"Cannot create {uid}: its parent {cur} "
                                              "does not exist")
        missing.append(cur)
        cur = parent_of(cur)
    check_can_contain(cur, model, uid)
    for mid in reversed(missing):
        triples = server_triples(ctx, mid, BASIC_CONTAINER)
        versions.on_change(ctx, mid, archival.group_of(txn, mid))
        containment.write_graph(ctx, mid, triples)
        record_change(ctx, mid, "create", triples)
        attach(ctx, mid, triples, model)
        model = BASIC_CONTAINER
    return model


def attach(ctx: WriteContext, uid: str, triples: list[Triple], parent_model: str) -> None:
    """Containment (and membership) of a new resource in its parent."""
    parent = parent_of(uid)
    containment.add_child(ctx, parent, uid)
    if parent_model in MEMBERSHIP_CONTAINERS:
        cfg = membership.read_config(ctx.txn, parent, parent_model)
        membership.on_child_added(ctx, cfg, uid, triples)


def _user_triples(ctx: Context, uid: str, model: str, inp: RdfInput,
                  handling: str, dropped: list[Triple],
                  has_membership: bool | None = None) -> list[Triple]:
    """The checked, deduplicated client triples of an RDF input, membership
    configuration completed; ``dropped`` gets what referential integrity dropped."""
    checker = InputChecker(ctx, uid, handling, model, has_membership)
    user = checker.check(inp.triples)
    if not inp.distinct or checker.may_repeat:
        user = list(dict.fromkeys(user))
    dropped.extend(checker.dropped)
    return membership.complete_config(uid, model, user)


def _canonical(inp: RdfInput | BinaryInput) -> bool:
    """Whether every term a create or replace writes is canonical: the server's own
    triples are built by ``store.terms``, the stored ones were checked on their
    way in, and the client's are canonical when ``rdfio`` parsed them."""
    return isinstance(inp, BinaryInput) or inp.canonical


def create_at(ctx: WriteContext, uid: str, inp: RdfInput | BinaryInput, handling: str,
              parent_model: str, *, archival_group: bool = False,
              stamp: Creation = Creation(None, None)) -> RdfSource:
    """Create a resource whose parent exists and can contain it (an Archival Group
    with ``archival_group``); ``stamp``: its creation date and agent, if not the call's."""
    dropped: list[Triple] = []
    if isinstance(inp, BinaryInput):
        model = NON_RDF_SOURCE
        user = nonrdf.user_triples(ctx, uid, inp)
        sm = (server_triples(ctx, uid, model, created=stamp.date, created_by=stamp.agent)
              + nonrdf.content_triples(uid, inp))
    else:
        model = inp.model or BASIC_CONTAINER
        if model == NON_RDF_SOURCE:
            raise IncompatibleLdpTypeError(uid, "RDF input cannot make a NonRDFSource")
        user = _user_triples(ctx, uid, model, inp, handling, dropped)
        sm = server_triples(ctx, uid, model, created=stamp.date, created_by=stamp.agent)
    if archival_group:
        sm += archival.check_new(ctx.txn, uid, model)
        group: str | None = uid
    else:
        group = archival.group_of(ctx.txn, parent_of(uid))
    triples = sm + user
    versions.on_change(ctx, uid, group)
    containment.write_graph(ctx, uid, triples, canonical=_canonical(inp))
    record_change(ctx, uid, "create", triples)
    attach(ctx, uid, triples, parent_model)
    res = view(ctx, uid, triples, model=model, extra=membership.triples_about(ctx.txn, uid),
               contained=[])    # new: no children
    res.dropped = dropped
    return res


def replace(ctx: WriteContext, uid: str, model: str, inp: RdfInput | BinaryInput,
            handling: str = "strict", current: ResourceInfo | None = None,
            stamp: Creation = Creation(None, None)) -> RdfSource:
    """Replace the state of an existing resource (its interaction model stays);
    ``current`` as for ``create_or_replace``; ``stamp``: a creation date and agent
    to record instead of the kept ones."""
    txn = ctx.txn
    if model == NON_RDF_SOURCE and not inp.is_binary:
        raise IncompatibleLdpTypeError(uid, f"{uid} is a binary (ldp:NonRDFSource): it "
                                            "cannot be replaced with RDF; update its "
                                            "description instead")
    if model != NON_RDF_SOURCE and inp.is_binary:
        raise IncompatibleLdpTypeError(uid, f"{uid} is a {model_name(model)}: it cannot be "
                                            "replaced with a binary")
    interaction.check_change(uid, model, inp.model)
    if current is None or current.own is None:
        old = containment.own_triples(txn, uid)
        group = archival.group_of(txn, uid)
        own_ids = membership_known = None
    else:
        old, group = current.own, current.group
        own_ids, membership_known = current.version_list.own, current.has_membership
    extra_sm: list[Triple] = []
    dropped: list[Triple] = []
    if isinstance(inp, BinaryInput):
        old_user = [t for t in old if not is_server_managed(t[1], t[2])]
        user = nonrdf.user_triples(ctx, uid, inp, old_user)
        extra_sm = nonrdf.content_triples(uid, inp)
    else:
        user = _user_triples(ctx, uid, model, inp, handling, dropped, membership_known)
    extra_sm += archival.kept(old, uid)
    new = (renewed_server_triples(ctx, uid, model, old, created=stamp.date,
                                  created_by=stamp.agent) + extra_sm + user)
    versions.on_change(ctx, uid, group, old, own_ids)
    containment.write_graph(ctx, uid, new, canonical=_canonical(inp), keep_children=True)
    record_change(ctx, uid, "update", new)
    after_change(ctx, uid, model, old, new)
    res = _view_after_write(ctx, uid, model, new, group, membership_known)
    res.dropped = dropped
    return res


def state_of(ctx: Context, uid: str, model: str, inp: RdfInput | BinaryInput,
             handling: str, when: datetime) -> list[Triple]:
    """The triples the resource at ``uid`` (interaction model ``model``) has with
    input ``inp``, dated ``when``: the state of a historic version."""
    if (model == NON_RDF_SOURCE) != inp.is_binary:
        what = "binary content" if inp.is_binary else "RDF"
        raise IncompatibleLdpTypeError(uid, f"{uid} is a {model_name(model)}: a version of "
                                            f"it cannot be made of {what}")
    then = Context(ctx.txn, ctx.settings, ctx.binaries, ctx.urimap, now=when, agent=ctx.agent)
    if isinstance(inp, BinaryInput):
        return (server_triples(then, uid, model) + nonrdf.content_triples(uid, inp)
                + nonrdf.user_triples(then, uid, inp))
    return (server_triples(then, uid, model)
            + _user_triples(then, uid, model, inp, handling, []))


def _view_after_write(ctx: Context, uid: str, model: str, own: list[Triple],
                      group: str | None, has_membership: bool | None = None) -> RdfSource:
    """The view a replace or update returns: the resource's own triples (its
    containment is not read: ``get`` shows it); ``group``: its Archival Group;
    ``has_membership``: whether it has membership triples (None: look)."""
    extra = [] if has_membership is False else membership.triples_about(ctx.txn, uid)
    return view(ctx, uid, own, model=model, extra=extra,
                versions=versions.list_versions(ctx, uid, group), contained=None)


def after_change(ctx: WriteContext, uid: str, model: str, old: list[Triple],
                 new: list[Triple]) -> None:
    """Keep membership right after a resource's own triples changed."""
    txn = ctx.txn
    if model in MEMBERSHIP_CONTAINERS:
        old_cfg = membership.config_from_triples(uid, model, old)
        new_cfg = membership.config_from_triples(uid, model, new)
        if old_cfg != new_cfg:
            membership.rebuild(ctx, uid, new_cfg)
    parent = parent_uid(uid)
    if parent is not None:
        parent_model = model_at(txn, parent)
        if parent_model == interaction.INDIRECT_CONTAINER:
            cfg = membership.read_config(txn, parent, parent_model)
            membership.on_child_changed(ctx, cfg, uid, old, new)


# --- updates ------------------------------------------------------------------------------

def apply_delta(ctx: WriteContext, uid: str, removed: Iterable[Triple], added: Iterable[Triple],
                handling: str = "strict", *, old: list[Triple] | None = None,
                model: str | None = None) -> RdfSource:
    """Remove and add triples (public or internal URIs, no wildcards).

    Removing a server-managed triple is refused under strict handling and
    ignored under lenient; added triples go through the same checks as a PUT.
    On a binary, ``ebucore:hasMimeType`` and ``ebucore:filename`` are set as
    ``nonrdf.DescriptionEdit`` says.
    """
    txn = ctx.txn
    if model is None:
        model = require_model(txn, uid)
    if old is None:
        old = containment.own_triples(txn, uid)
    to_internal = ctx.urimap.to_internal
    removed_int = {(to_internal(s), p, to_internal(o)) for s, p, o in removed}
    edit = None
    if model == NON_RDF_SOURCE:
        edit = nonrdf.DescriptionEdit(uid)
        kept_removed, added = edit.split(
            removed_int, ((to_internal(s), p, to_internal(o)) for s, p, o in added))
        removed_int = set(kept_removed)
    sm_removed = [t for t in removed_int if is_server_managed(t[1], t[2])]
    if sm_removed and handling != "lenient":
        shown = "; ".join(f"{t[1]} {t[2][:100]}" for t in sm_removed[:5])
        raise ServerManagedTermError(uid, f"Server-managed triples cannot be removed from "
                                          f"{uid}: {shown}")
    checker = InputChecker(ctx, uid, handling, model)
    added_checked = checker.check(added)
    old_user = [t for t in old if not is_server_managed(t[1], t[2])]
    kept = [t for t in old_user if t not in removed_int]
    present = set(kept)
    user = kept + [t for t in dict.fromkeys(added_checked) if t not in present]
    user = membership.complete_config(uid, model, user)
    sm = renewed_server_triples(ctx, uid, model, old) + archival.kept(old, uid)
    if edit is not None:
        binary_sm, user = edit.apply(binary_values(old, uid), user)
        sm += binary_sm
    new = sm + user
    group = archival.group_of(txn, uid)
    versions.on_change(ctx, uid, group, old)
    containment.write_graph(ctx, uid, new, keep_children=True)
    record_change(ctx, uid, "update", new)
    after_change(ctx, uid, model, old, new)
    res = _view_after_write(ctx, uid, model, new, group)
    res.dropped = checker.dropped
    return res


def update_delta(ctx: WriteContext, uid: str, remove: Iterable[Any] | None,
                 add: Iterable[Any] | None, handling: str = "strict") -> RdfSource:
    """Remove triples matching patterns (``None`` is a wildcard) and add triples.

    Terms are canonical N-Triples strings (public or internal URIs) or rdflib
    terms; ``<>`` and ``<#frag>`` mean the resource and its hash URIs. A
    wildcard pattern never removes server-managed triples; a pattern that names
    a server-managed predicate (or rdf:type with an LDP/Fedora class) is refused
    under strict handling.
    """
    txn = ctx.txn
    model = require_model(txn, uid)
    old = containment.own_triples(txn, uid)
    pub = ctx.urimap.public_iri(uid)
    to_internal = ctx.urimap.to_internal

    def term(value: Any) -> str:
        if value is None:
            raise InvalidTripleError(uid, "None is only allowed in remove patterns")
        t = (value if isinstance(value, str) and not hasattr(value, "n3")
             else rdfio.from_rdflib(value))
        if t == "<>":
            t = "<" + pub + ">"
        elif t.startswith("<#"):
            t = "<" + pub + t[1:]
        return to_internal(t)

    def pattern_term(value: Any) -> str | None:
        return None if value is None else term(value)

    removed: list[Triple] = []
    for pattern in _triples_of(remove):
        s, p, o = (pattern_term(x) for x in pattern)
        if (p is not None and is_server_managed(p, o or "")
                and (p != RDF_TYPE or o is not None)):
            if handling == "strict":
                raise ServerManagedTermError(uid, f"Server-managed triples cannot be "
                                                  f"removed from {uid}: {p} {o or '*'}")
            continue
        for t in old:
            if t[1] == LDP_CONTAINS or is_server_managed(t[1], t[2]):
                continue
            if (s is None or t[0] == s) and (p is None or t[1] == p) and (o is None or t[2] == o):
                removed.append(t)
    added = [(term(s), term(p), term(o)) for s, p, o in _triples_of(add)]
    return apply_delta(ctx, uid, removed, added, handling, old=old, model=model)


def _triples_of(value: Any) -> list[tuple[Any, Any, Any]]:
    """The triples (or patterns) of an rdflib Graph or an iterable of 3-sequences."""
    if value is None:
        return []
    if hasattr(value, "triples") and hasattr(value, "serialize"):  # an rdflib Graph
        return list(value)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InvalidTripleError(None, f"Give triples as an rdflib Graph or an iterable of "
                                       f"(s, p, o), not {type(value).__name__}")
    out = []
    for t in value:
        if isinstance(t, (str, bytes)) or not hasattr(t, "__iter__"):
            raise InvalidTripleError(None, f"Not a triple: {t!r:.200}")
        t = tuple(t)
        if len(t) != 3:
            raise InvalidTripleError(None, f"Not a triple: {t!r:.200}")
        out.append(t)
    return out


# -- versions a caller makes ------------------------------------------------------------

def make_version(ctx: WriteContext, uid: str, label: str | None = None) -> str:
    """A version of ``uid``'s current state (in an Archival Group, of the whole
    group); its id."""
    require_model(ctx.txn, uid)
    group = archival.group_of(ctx.txn, uid)
    if group is None:
        return versions.create(ctx, uid, label)
    vid = versions.group_version_id(ctx, group)
    for u in containment.subtree(ctx.txn, group):
        versions.create(ctx, u, label if u == uid else None, vid)
    versions.add_group_id(ctx, group, vid, kept=True)
    return vid


def import_versions(ctx: WriteContext, uid: str, model: str,
                    items: list[tuple[str, RdfInput | BinaryInput | None]], handling: str, *,
                    known: bool = False) -> list[str]:
    """Add each version ``vid`` of ``uid`` holding its input, in the order given
    (``(vid, inp)``; ``inp`` None: the current state, live if ``vid`` is its newest
    version: stored once, as ``versions.create``); their ids. The resource's
    versions and Archival Group are read once for all. ``known``: ``model`` was
    read in this write, nothing written since (it is not read again)."""
    if not known:
        require_model(ctx.txn, uid)
    own = versions.own_ids(ctx, uid)
    group = archival.group_of(ctx.txn, uid)
    for vid, inp in items:
        state = None if inp is None else state_of(ctx, uid, model, inp, handling,
                                                  versions.datetime_of_id(vid))
        own = versions.import_version(ctx, uid, vid, state,
                                      canonical=inp is not None and _canonical(inp),
                                      own=own, group=group)
    return [vid for vid, _ in items]


def revert_to_version(ctx: WriteContext, uid: str, version_id: str) -> RdfSource:
    """Restore a version's user triples (for a binary, its content too); the
    current state stays a version."""
    txn = ctx.txn
    model = require_model(txn, uid)
    snap = versions.read_snapshot(ctx, uid, version_id)
    if not ctx.settings.versioning_auto:
        versions.create(ctx, uid)
    current = containment.own_triples(txn, uid)
    old_user = [t for t in current if not is_server_managed(t[1], t[2])]
    new_user = [t for t in snap if not is_server_managed(t[1], t[2])]
    if model == NON_RDF_SOURCE:
        keep = [t for t in current if t[1] not in BINARY_PREDICATES]
        current = keep + binary_values(snap, uid)
    return apply_delta(ctx, uid, old_user, new_user, "lenient", old=current, model=model)
