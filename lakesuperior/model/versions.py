"""Versions (Mementos): a resource's states, named by their Memento datetime.

A version of ``uid`` at ``20240131120000`` (UTC, one-second resolution, as
Fedora 6's memento paths) is listed in the small graph ``<info:fchist{uid}>``::

    <info:fcres{uid}> fcrepo:hasVersion <info:fcres{uid}/fcr:versions/{id}> .
    <info:fcres{uid}/fcr:versions/{id}> rdfs:label "..." .      # if labelled

**Shared storage.** The newest version is *live* when it has no snapshot graph:
its state is the resource's own graph (containment excepted), stored once. Only
the newest version may be live. Before a resource's own graph changes
(``on_change``), a live newest version older than the change is *settled*: the
old state is moved into ``<info:fcsnap{uid}/fcr:versions/{id}>``, the one copy
of a state that is no longer current. So auto-versioning (``versioning.auto``)
stores nothing twice: each state is in exactly one record, the current one in
the resource's graph. Binary content is content-addressed in the binary store
and never copied: a version's description names its digest.

**Kept versions.** A version a caller made (``create``) or imported
(``import_version``) is *kept*: ``<.../fcr:versions/{id}> a fcsystem:KeptVersion``
in the history graph. Two automatic versions of one second fold into one (the
later state replaces the earlier: a Memento names the state at that second), but
a kept version never changes: a state written in its second (or before it, if
ids already ran ahead) gets the next free second (``_next_id``). Version ids
therefore never go back in time, and run ahead of the clock by a second for each
kept version made in the same second as a change.

**Archival Groups** (``model.archival``): a change anywhere in a group adds the
change's datetime to the group's list (``fcsystem:hasGroupVersion`` in the
group's history graph); each member keeps its own states as above. A member's
TimeMap is the group's list from the member's first version on, and its memento
at a group datetime is its newest own state at or before it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import overload

from lakesuperior.exceptions import (
    InvalidVersionError,
    ResourceNotExistsError,
    VersionExistsError,
)
from lakesuperior.model import archival
from lakesuperior.model.context import Context, WriteContext
from lakesuperior.model.events import record_change
from lakesuperior.model.literals import datetime_literal, lexical, literal_term
from lakesuperior.model.namespaces import (
    FCREPO_HAS_VERSION,
    FCSYSTEM,
    LDP_CONTAINS,
    RDF_TYPE,
    RDFS_LABEL,
)
from lakesuperior.model.uids import UriMap, graph, res_uri, snap_graph, version_uri
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader

#: A datetime of an Archival Group's version list (in the group's history graph).
HAS_GROUP_VERSION = FCSYSTEM.hasGroupVersion
#: The type of a kept version (made or imported by a caller: its state never changes).
KEPT_VERSION = FCSYSTEM.KeptVersion

_FORMAT = "%Y%m%d%H%M%S"
_UNKNOWN = object()


@dataclass(frozen=True)
class VersionInfo:
    """One version of a resource."""

    id: str            #: the Memento datetime, yyyyMMddHHmmss (UTC)
    uid: str           #: the resource's uid
    uri: str           #: public IRI of the version (``<resource>/fcr:versions/<id>``)
    created: str       #: xsd:dateTime literal term of the Memento datetime
    label: str | None  #: the label given to create_version, if any


def version_id(ctx: Context) -> str:
    """The id of a version taken now: the call's time, yyyyMMddHHmmss (UTC)."""
    return ctx.now.strftime(_FORMAT)


def check_version_id(version_id: str) -> str:
    """``version_id`` if it is well formed; ``InvalidVersionError`` if not."""
    if not (isinstance(version_id, str) and len(version_id) == 14 and version_id.isdigit()):
        raise InvalidVersionError(None, f"Invalid version id {version_id!r:.40}: expected "
                                        "yyyyMMddHHmmss")
    return version_id


def id_of_datetime(ctx: Context, when: datetime) -> str:
    """The version id of a Memento datetime given by a client: an aware datetime
    not after the call's time (``InvalidVersionError`` otherwise)."""
    if not isinstance(when, datetime) or when.tzinfo is None:
        raise InvalidVersionError(None, "A Memento datetime must be a timezone-aware datetime")
    when = when.astimezone(UTC)
    if when.year < 1000:
        raise InvalidVersionError(None, f"Memento datetime {when.isoformat()} is before "
                                        "the year 1000")
    if when.replace(microsecond=0) > ctx.now:
        raise InvalidVersionError(None, f"Memento datetime {when.isoformat()} is in the future")
    return when.strftime(_FORMAT)


def datetime_of_id(version_id: str) -> datetime:
    """The Memento datetime (aware, UTC) of a well-formed version id, read without
    ``strptime`` (a format parse per call)."""
    v = version_id
    return datetime(int(v[0:4]), int(v[4:6]), int(v[6:8]), int(v[8:10]), int(v[10:12]),
                    int(v[12:14]), tzinfo=UTC)


def _vid(term: str) -> str:
    return term[term.rfind("/") + 1:-1]


def own_ids(ctx: Context, uid: str) -> list[str]:
    """The ids of the resource's own versions, oldest first."""
    return _own_ids(ctx.txn, uid)


def _own_ids(txn: Reader, uid: str) -> list[str]:
    res = res_uri(uid)
    return sorted(_vid(q[2]) for q in txn.match(res, FCREPO_HAS_VERSION, None,
                                                graph("hist", uid)))


def live_version(txn: Reader, uid: str) -> str | None:
    """The id of the resource's live version (the one whose state is the current
    graph: see "Shared storage"), or None."""
    own = _own_ids(txn, uid)
    if own and not txn.has_graph(snap_graph(uid, own[-1])):
        return own[-1]
    return None


def group_ids(ctx: Context, group: str) -> list[str]:
    """The ids of an Archival Group's versions, oldest first."""
    res = res_uri(group)
    return sorted(_vid(q[2]) for q in ctx.txn.match(res, HAS_GROUP_VERSION, None,
                                                    graph("hist", group)))


class VersionList(Sequence[VersionInfo]):
    """A resource's versions, oldest first (``list_versions``): the ids and labels
    read in the call's snapshot, each ``VersionInfo`` made when first asked for
    (a GET needs only the newest id, for its ETag, whatever the number of versions)."""

    __slots__ = ("uid", "ids", "own", "_labels", "_urimap", "_made")

    def __init__(self, urimap: UriMap | None, uid: str, ids: list[str],
                 labels: dict[str, str], own: list[str] | None = None):
        self.uid = uid
        #: The version ids (yyyyMMddHHmmss), oldest first.
        self.ids = ids
        #: The resource's own version ids (``ids`` without the other versions of
        #: its Archival Group), oldest first.
        self.own = ids if own is None else own
        self._labels = labels
        self._urimap = urimap
        self._made: list[VersionInfo | None] = [None] * len(ids)

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> VersionInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[VersionInfo]: ...

    def __getitem__(self, index: int | slice) -> VersionInfo | list[VersionInfo]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.ids)))]
        made = self._made[index]
        if made is None:
            assert self._urimap is not None   # an empty list makes none
            vid = self.ids[index]
            when = datetime_of_id(vid)
            made = self._made[index] = VersionInfo(
                vid, self.uid, self._urimap.to_public(version_uri(self.uid, vid))[1:-1],
                datetime_literal(when), self._labels.get(vid))
        return made


def no_versions(uid: str) -> VersionList:
    """The version list of a resource that has none."""
    return VersionList(None, uid, [], {})


def list_versions(ctx: Context, uid: str, group: str | None | object = _UNKNOWN
                  ) -> VersionList:
    """Versions of a resource, oldest first; in an Archival Group, the group's
    versions since the resource's first one. One read of the resource's history
    graph (its version ids and labels), and the group's list in a group.
    ``group``: the resource's Archival Group (or None), if the caller knows it."""
    res = res_uri(uid)
    own: list[str] = []
    labels: dict[str, str] = {}
    for s, p, o in ctx.txn.triples(graph("hist", uid)):
        if p == FCREPO_HAS_VERSION:
            if s == res:
                own.append(_vid(o))
        elif p == RDFS_LABEL:
            labels[_vid(s)] = lexical(o)
    if not own:
        return no_versions(uid)
    own.sort()
    if group is _UNKNOWN:
        group = archival.group_of(ctx.txn, uid)
    if group is None:
        return VersionList(ctx.urimap, uid, own, labels)
    assert isinstance(group, str)
    ids = [v for v in group_ids(ctx, group) if v >= own[0]]
    return VersionList(ctx.urimap, uid, ids, labels, own)


def _own_triples(ctx: Context, uid: str) -> list[Triple]:
    """The resource's triples but its containment (not read)."""
    return ctx.txn.triples(res_uri(uid), omit=LDP_CONTAINS)


def settle(ctx: WriteContext, uid: str, keep: str | None = None,
           current: list[Triple] | None = None, own: list[str] | None = None) -> list[str]:
    """Store the state of a live newest version (unless it is ``keep``) in its own
    snapshot graph: the resource's own graph (``current``, if the caller has read
    it) is about to change. Return the ids of the resource's versions (``own``,
    if the caller has read them in this write)."""
    if own is None:
        own = own_ids(ctx, uid)
    if not own or own[-1] == keep:
        return own
    snap = snap_graph(uid, own[-1])
    if not ctx.txn.has_graph(snap):
        state = (_own_triples(ctx, uid) if current is None
                 else [t for t in current if t[1] != LDP_CONTAINS])
        ctx.txn.add_graph(snap, state, canonical=True)
    return own


def _live_at(ctx: WriteContext, uid: str, vid: str, own: list[str], label: str | None = None,
             kept: bool = False) -> None:
    """Make ``vid`` a live version (the current state), newest of ``own`` (``kept``:
    one a caller made)."""
    if own and own[-1] == vid:
        snap = snap_graph(uid, vid)
        if ctx.txn.has_graph(snap):
            ctx.txn.remove_graph(snap)       # the later state of the second wins
        if label is None and not kept:
            return
    _add_id(ctx, uid, vid, label, kept)


def _add_id(ctx: WriteContext, uid: str, vid: str, label: str | None = None,
            kept: bool = False) -> None:
    hist = graph("hist", uid)
    vuri = version_uri(uid, vid)
    quads = [(res_uri(uid), FCREPO_HAS_VERSION, vuri, hist)]
    if label is not None:
        ctx.txn.remove(vuri, RDFS_LABEL, None, hist)
        quads.append((vuri, RDFS_LABEL, literal_term(str(label)), hist))
    if kept:
        quads.append((vuri, RDF_TYPE, KEPT_VERSION, hist))
    ctx.txn.add(quads)


def add_group_id(ctx: WriteContext, group: str, vid: str, kept: bool = False) -> None:
    """Add ``vid`` to an Archival Group's version list (``kept``: a version a caller
    made or imported)."""
    hist = graph("hist", group)
    vuri = version_uri(group, vid)
    quads = [(res_uri(group), HAS_GROUP_VERSION, vuri, hist)]
    if kept:
        quads.append((vuri, RDF_TYPE, KEPT_VERSION, hist))
    ctx.txn.add(quads)


def _is_kept(txn: Reader, uid: str, vid: str) -> bool:
    """Whether version ``vid`` in ``uid``'s history graph is kept."""
    return any(True for _ in txn.match(version_uri(uid, vid), RDF_TYPE, KEPT_VERSION,
                                       graph("hist", uid)))


def _next_id(ctx: Context, uid: str, own: list[str], group: str | None = None) -> str:
    """The id of a state of ``uid`` written now: the call's second, unless versions
    (``own``, and the Archival Group ``group``'s) already reach it: then the newest
    of them if it is automatic (the two fold), else the second after it (a kept
    version never changes). Ids never go back in time."""
    vid = version_id(ctx)
    tops = [(own[-1], uid)] if own else []
    if group is not None:
        listed = group_ids(ctx, group)
        if listed:
            tops.append((listed[-1], group))
    newest = max((top for top, _ in tops), default="")
    if newest < vid:
        return vid
    if any(top == newest and _is_kept(ctx.txn, owner, top) for top, owner in tops):
        later = datetime.strptime(newest, _FORMAT) + timedelta(seconds=1)
        return later.strftime(_FORMAT)
    return newest


def group_version_id(ctx: Context, group: str) -> str:
    """The id of a version of the whole Archival Group ``group`` made now."""
    return _next_id(ctx, group, own_ids(ctx, group), group)


def on_change(ctx: WriteContext, uid: str, group: str | None,
              current: list[Triple] | None = None, own: list[str] | None = None) -> None:
    """Call before a resource's own graph (``current``, if read) is written, created
    or changed: settle its live version and, with ``versioning.auto``, make the new
    state a live version at the call's datetime (and a version of its Archival
    Group ``group``). ``own``: the resource's version ids, if read in this write."""
    auto = ctx.settings.versioning_auto
    if own is None:
        own = own_ids(ctx, uid)
    vid = _next_id(ctx, uid, own, group) if auto else None
    settle(ctx, uid, keep=vid, current=current, own=own)
    if vid is None:
        return
    _live_at(ctx, uid, vid, own)
    if group is not None:
        add_group_id(ctx, group, vid)


def create(ctx: WriteContext, uid: str, label: str | None = None,
           vid: str | None = None) -> str:
    """A kept version of the current state at the call's datetime, or the next free
    second (``_next_id``; ``vid``: the id of a group's version, given); live:
    nothing is copied until the resource changes. Return its id."""
    own = own_ids(ctx, uid)
    if vid is None:
        vid = _next_id(ctx, uid, own)
    _live_at(ctx, uid, vid, settle(ctx, uid, keep=vid, own=own), label, kept=True)
    record_change(ctx, uid, "version")
    return vid


def import_version(ctx: WriteContext, uid: str, vid: str, triples: list[Triple] | None, *,
                   canonical: bool = False, own: list[str] | None = None,
                   group: str | None | object = _UNKNOWN) -> list[str]:
    """Add a kept version at ``vid`` (a historic version: a migration's) with the
    state ``triples`` (``canonical``: every term known canonical, as for
    ``add_graph``), or (None) the current state: a live version if ``vid`` is the
    newest (nothing copied until the resource changes), else a copy of it.
    ``VersionExistsError`` if there is one at that datetime. ``own``: the
    resource's version ids and ``group`` its Archival Group (or None), if read in
    this write. Returns the version ids with ``vid`` (``own`` for the next one)."""
    if own is None:
        own = own_ids(ctx, uid)
    if vid in own:
        raise VersionExistsError(uid, f"{uid} already has a version at {vid}")
    newest = not own or own[-1] < vid
    if newest:
        settle(ctx, uid, own=own)
    if triples is not None:
        ctx.txn.add_graph(snap_graph(uid, vid), [t for t in triples if t[1] != LDP_CONTAINS],
                          canonical=canonical)
    elif not newest:
        ctx.txn.add_graph(snap_graph(uid, vid), _own_triples(ctx, uid), canonical=True)
    _add_id(ctx, uid, vid, kept=True)
    if group is _UNKNOWN:
        group = archival.group_of(ctx.txn, uid)
    if group is not None:
        assert isinstance(group, str)
        add_group_id(ctx, group, vid, kept=True)
    record_change(ctx, uid, "version")
    return own + [vid] if newest else sorted(own + [vid])


def resolve(ctx: Context, uid: str, vid: str) -> str:
    """The own version that holds the state of version ``vid`` of ``uid``: ``vid``
    itself, or in an Archival Group the newest own version at or before it;
    ``ResourceNotExistsError`` if there is none."""
    check_version_id(vid)
    own = own_ids(ctx, uid)
    group = archival.group_of(ctx.txn, uid)
    if group is None:
        if vid in own:
            return vid
    elif vid in group_ids(ctx, group):
        older = [v for v in own if v <= vid]
        if older:
            return older[-1]
    raise ResourceNotExistsError(uid, f"Resource {uid} has no version {vid}")


def read_snapshot(ctx: Context, uid: str, vid: str) -> list[Triple]:
    """The triples of a version; ``ResourceNotExistsError`` if there is none."""
    own_vid = resolve(ctx, uid, vid)
    triples = ctx.txn.triples(snap_graph(uid, own_vid))
    if triples:
        return triples
    if own_vid == own_ids(ctx, uid)[-1]:
        return _own_triples(ctx, uid)     # the live version: the current state
    raise ResourceNotExistsError(uid, f"Resource {uid} has no version {vid}")


def delete(ctx: WriteContext, uid: str, vid: str) -> None:
    """Remove a version (in an Archival Group: the group's version at ``vid``)."""
    check_version_id(vid)
    group = archival.group_of(ctx.txn, uid)
    if group is not None:
        if vid not in group_ids(ctx, group):
            raise ResourceNotExistsError(uid, f"Resource {uid} has no version {vid}")
        vuri = version_uri(group, vid)
        ctx.txn.remove(res_uri(group), HAS_GROUP_VERSION, vuri, graph("hist", group))
        ctx.txn.remove(vuri, RDF_TYPE, KEPT_VERSION, graph("hist", group))
        return
    if vid not in own_ids(ctx, uid):
        raise ResourceNotExistsError(uid, f"Resource {uid} has no version {vid}")
    hist = graph("hist", uid)
    vuri = version_uri(uid, vid)
    ctx.txn.remove(res_uri(uid), FCREPO_HAS_VERSION, vuri, hist)
    ctx.txn.remove(vuri, None, None, hist)
    ctx.txn.remove_graph(snap_graph(uid, vid))


def purge(ctx: WriteContext, uid: str) -> None:
    """Remove every version of a resource."""
    for vid in own_ids(ctx, uid):
        ctx.txn.remove_graph(snap_graph(uid, vid))
    ctx.txn.remove_graph(graph("hist", uid))
