"""Export a repository as an OCFL storage root that Fedora 6 opens as its own.

One OCFL object per resource outside an Archival Group (id ``info:fedora/<path>``,
the root ``info:fedora``), with its binary description and ACL inside it; one
object per Archival Group holding all its descendants. One OCFL version per
version (Memento) of the resource (of the group), oldest first, dated by its
Memento-Datetime; the current state, when it is not the newest version, is one
more version dated by its last modification; a tombstone ends with a version in
which the resource's headers say ``deleted: true`` and its content is gone, as
Fedora writes a delete. See docs/ocfl.md for the whole mapping.

The whole export reads one snapshot. A new export is written into a staging
directory beside the destination and renamed into place at the end; ``since``
adds versions to an existing root, each object's inventory replaced last.
"""
from __future__ import annotations

import bisect
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from lakesuperior.admin.files import has_content, promote, remove_stale_staging, staging_dir
from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.auth import acl as acls
from lakesuperior.config import Config
from lakesuperior.exceptions import OcflError
from lakesuperior.http.digests import URN_NAMES
from lakesuperior.model import interaction
from lakesuperior.model.archival import ARCHIVAL_GROUP
from lakesuperior.model.context import Context
from lakesuperior.model.namespaces import (
    EBUCORE_FILENAME,
    FCSYSTEM_HAS_TOMBSTONE,
    LDP_CONTAINS,
    RDF_TYPE,
)
from lakesuperior.model.uids import (
    ROOT_UID,
    graph,
    graph_kind,
    parent_uid,
    res_uri,
    snap_graph,
    uid_of,
    uid_of_graph,
)
from lakesuperior.model.versions import datetime_of_id, group_ids, own_ids
from lakesuperior.ocfl import fedora
from lakesuperior.ocfl.filesink import FileSink
from lakesuperior.ocfl.objects import CURRENT_STATE, ObjectWriter, drop_head
from lakesuperior.ocfl.snapshot import ResourceState, deleted_at
from lakesuperior.ocfl.storage import (
    DIGESTS,
    OCFL_VERSIONS,
    Inventory,
    StorageRoot,
    create_root,
    object_path,
    open_root,
    read_inventory,
)
from lakesuperior.rdfio import Triple
from lakesuperior.repository import Repository

__all__ = ["ExportReport", "export_ocfl", "export_config", "EXPORT_IRI_CACHE"]

_MESSAGE = "A version exported by Lakesuperior"
#: How many resources' Archival Groups the export remembers (the latest; a miss
#: costs two index lookups per ancestor).
_GROUP_CACHE = 1024
#: The most IRIs the exported repository keeps in its IRI cache (``export_config``).
EXPORT_IRI_CACHE = 4096


@dataclass
class ExportReport:
    """What ``export_ocfl`` wrote."""

    path: str
    ocfl_version: str
    digest: str
    objects: int = 0
    objects_unchanged: int = 0
    resources: int = 0
    binaries: int = 0
    acls: int = 0
    tombstones: int = 0
    versions: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def export_config(config: Config) -> Config:
    """The configuration to open the repository to export with: ``config`` with its
    IRI cache at most ``EXPORT_IRI_CACHE``. The export reads each resource once,
    so of the IRIs it reads only the vocabulary recurs: a larger cache would only
    grow its memory with IRIs never read again (the store's default keeps 100,000,
    about 25 MB)."""
    return config.with_(iri_cache=min(config.iri_cache, EXPORT_IRI_CACHE))


def export_ocfl(repo: Repository, dest: str, *, ocfl_version: str = "1.1",
                digest: str = "sha512", since: datetime | None = None,
                progress: Progress = QUIET) -> ExportReport:
    """Write the repository as an OCFL storage root in ``dest`` (new or empty), or
    with ``since`` add to the existing export in ``dest`` the versions of the
    objects changed since then (by the versions they had when it was written)."""
    if ocfl_version not in OCFL_VERSIONS:
        raise OcflError(f"Unknown OCFL version {ocfl_version!r}: give "
                        f"{' or '.join(OCFL_VERSIONS)}")
    if digest not in DIGESTS:
        raise OcflError(f"Unsupported inventory digest {digest!r}: give "
                        f"{' or '.join(DIGESTS)}")
    t0 = time.perf_counter()
    dest = os.path.abspath(dest)
    report = ExportReport(dest, ocfl_version, digest)
    if since is not None:
        if since.tzinfo is None:
            raise OcflError("--since needs a date-time with a time zone (or UTC)")
        root = open_root(dest)
        _export(repo, root, digest, since, report, progress)
    else:
        if os.path.exists(dest) and (not os.path.isdir(dest) or has_content(dest)):
            raise OcflError(f"The export destination {dest} is not empty: give a new or "
                            "empty directory (or --since to add to an earlier export)")
        remove_stale_staging(os.path.dirname(dest))
        staging = staging_dir(dest, "exporting")
        try:
            root = create_root(staging, ocfl_version)
            _export(repo, root, digest, None, report, progress)
            promote(staging, dest)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    report.seconds = time.perf_counter() - t0
    return report


def _export(repo: Repository, root: StorageRoot, digest: str, since: datetime | None,
            report: ExportReport, progress: Progress) -> None:
    with repo.snapshot() as ctx:
        txn = ctx.txn
        tops = [g for g in txn.graphs() if graph_kind(g) in ("res", "bury")]
        progress.start("Exporting to OCFL", len(tops))
        groups: dict[str, str | None] = {}
        try:
            with FileSink() as sink:
                for g in tops:
                    # its triples, read once: whether it is a group, then its state
                    uid, current = uid_of_graph(g), txn.triples(g, omit=LDP_CONTAINS)
                    group = _group_of(ctx, uid, groups, current)
                    if group is None or group == uid:
                        _ObjectExport(ctx, root, sink, uid, group == uid, digest,
                                      report, current).run(since)
                    progress.advance()
        finally:
            progress.finish()


def _is_group(ctx: Context, uid: str) -> bool:
    txn = ctx.txn
    res = res_uri(uid)
    return bool(txn.count(res, RDF_TYPE, ARCHIVAL_GROUP, res)
                or txn.count(res, RDF_TYPE, ARCHIVAL_GROUP, graph("bury", uid)))


def _group_of(ctx: Context, uid: str, cache: dict[str, str | None],
              triples: list[Triple] | None = None) -> str | None:
    """The Archival Group ``uid`` is or belongs to, live or buried (the answers
    cached: at most ``_GROUP_CACHE``, the latest); ``triples``: those of its graph,
    if read."""
    if uid == ROOT_UID:
        return None
    if uid in cache:
        return cache[uid]
    parent = parent_uid(uid) or ROOT_UID
    if triples is None:
        is_group = _is_group(ctx, uid)
    else:
        res = res_uri(uid)
        is_group = any(o == ARCHIVAL_GROUP and p == RDF_TYPE and s == res
                       for s, p, o in triples)
    found = uid if is_group else _group_of(ctx, parent, cache)
    if len(cache) >= _GROUP_CACHE:
        del cache[next(iter(cache))]
    cache[uid] = found
    return found


@dataclass
class _Member:
    """One member of an object as the export reads it once: its own version ids
    (oldest first), its current triples, when it was deleted, its current state."""

    own: list[str]
    current: list[Triple]
    gone: datetime | None
    now: ResourceState


class _ObjectExport:
    """The versions of one OCFL object (a resource, or an Archival Group and its
    members), written one after the other."""

    def __init__(self, ctx: Context, root: StorageRoot, sink: FileSink, uid: str,
                 is_group: bool, digest: str, report: ExportReport,
                 current: list[Triple] | None = None):
        self.ctx = ctx
        self.root = root
        self.sink = sink
        self.uid = uid
        self.is_group = is_group
        self.digest = digest
        self.report = report
        self.root_id = fedora.fedora_id(uid)
        self._read: dict[str, _Member] = {}      # the members read so far, by uid
        self._current = current                 # the triples of ``uid``, if read
        self.members = self._members() if is_group else [uid]

    def _members(self) -> list[str]:
        """The group and its descendants, live and buried, parents first."""
        txn = self.ctx.txn
        out: list[str] = []
        todo = [self.uid]
        while todo:
            u = todo.pop()
            out.append(u)
            live = txn.has_graph(res_uri(u))
            kind = "res" if live else "bury"
            todo.extend(uid_of(q[2]) for q in txn.match(res_uri(u), LDP_CONTAINS, None,
                                                        graph(kind, u)))
            todo.extend(uid_of(q[2]) for q in txn.match(res_uri(u), FCSYSTEM_HAS_TOMBSTONE,
                                                        None, graph("grave", u)))
        return sorted(set(out), key=lambda m: (m.count("/"), m))

    # -- the versions ------------------------------------------------------------------

    def _version_ids(self) -> list[str]:
        if self.is_group:
            return group_ids(self.ctx, self.uid)
        return own_ids(self.ctx, self.uid)

    def _member(self, uid: str) -> _Member:
        """What every version of ``uid`` needs, read once per object."""
        m = self._read.get(uid)
        if m is None:
            txn = self.ctx.txn
            # a live resource's graph is never empty (its types, its dates)
            current = (self._current if uid == self.uid and self._current is not None
                       else txn.triples(res_uri(uid), omit=LDP_CONTAINS)
                       or txn.triples(graph("bury", uid), omit=LDP_CONTAINS))
            gone = deleted_at(txn, uid)
            m = self._read[uid] = _Member(own_ids(self.ctx, uid), current, gone,
                                          ResourceState.of(uid, current, gone))
        return m

    def _state_at(self, uid: str, vid: str | None) -> ResourceState | None:
        """``uid`` as it was at version ``vid`` (None: now); None if it did not exist."""
        m = self._member(uid)
        if vid is None:
            return m.now
        older = bisect.bisect_right(m.own, vid)
        if not older:
            return None
        at = m.own[older - 1]
        if m.gone is not None and m.gone <= datetime_of_id(vid):
            return m.now
        snap = self.ctx.txn.triples(snap_graph(uid, at))
        if snap:
            return ResourceState.of(uid, [t for t in snap if t[1] != LDP_CONTAINS], None)
        if at != m.own[-1] or not m.current:
            return None
        # the live version: the current state, stored once
        return m.now if m.gone is None else ResourceState.of(uid, m.current, None)

    def _plan(self) -> Iterator[tuple[datetime, str | None, list[ResourceState]]]:
        """(created, vid or None for the current state, member states) per version."""
        last: list[ResourceState] | None = None
        last_when: datetime | None = None
        for vid in self._version_ids():
            when = datetime_of_id(vid)
            states = [s for s in (self._state_at(m, vid) for m in self.members) if s]
            if not states or states[0].uid != self.uid:
                continue
            last, last_when = states, when
            yield when, vid, states
        now = [s for s in (self._state_at(m, None) for m in self.members) if s]
        if last is not None and len(last) == len(now) and all(
                a is b or a.key() == b.key() for a, b in zip(last, now, strict=True)):
            return
        when = max(s.changed for s in now)
        if last_when is not None and when < last_when:
            when = last_when
        yield when, None, now

    def _unchanged_since(self, since: datetime) -> bool:
        """Whether no member changed (nor was deleted) at or after ``since``."""
        states = [s for s in (self._state_at(m, None) for m in self.members) if s]
        return all(s.changed < since for s in states)

    # -- writing ---------------------------------------------------------------------------

    def run(self, since: datetime | None) -> None:
        obj_dir = self.root.object_dir(self.root_id)
        inv = Inventory(self.root_id, self.digest, self.root.version)
        if since is not None and os.path.exists(os.path.join(obj_dir, "inventory.json")):
            inv = read_inventory(obj_dir, self.root_id)
            if inv.id != self.root_id:
                raise OcflError(f"{self.root_id}: {object_path(self.root_id)} holds the "
                                f"object {inv.id!r}")
        head = inv.versions[-1].created if inv.versions else None
        if since is not None and head is not None and self._unchanged_since(since):
            self.report.objects_unchanged += 1
            return
        plan = [p for p in self._plan() if head is None or p[0] > head]
        if not plan:
            self.report.objects_unchanged += 1
            return
        new = not inv.versions
        if new:
            if since is not None:   # what an interrupted export left of a new object
                shutil.rmtree(obj_dir, ignore_errors=True)
            self.root.make_object_dir(self.root_id, self.sink)
        else:
            drop_head(obj_dir)
        writer = ObjectWriter(obj_dir, inv, self.sink, new=new)
        try:
            for i, (when, vid, states) in enumerate(plan):
                final = i == len(plan) - 1
                head_state = vid is None and bool(inv.versions)
                if head_state:
                    writer.start_head()
                user = None
                for state in states:
                    self._write_resource(writer, state, vid, when, acl=final)
                    user = user or state.modified_by
                if head_state:
                    writer.commit_head(when, user, CURRENT_STATE)
                else:
                    writer.commit(when, user, CURRENT_STATE if vid is None else _MESSAGE)
                    self.report.versions += 1
            writer.finish()
        except BaseException:
            writer.discard()
            if new:
                shutil.rmtree(obj_dir, ignore_errors=True)
            raise
        self.report.objects += 1
        self.report.files += writer.files_written
        self.report.bytes += writer.bytes_written
        for state in plan[-1][2] if plan else []:
            self.report.resources += 1
            self.report.tombstones += state.deleted is not None
            self.report.binaries += state.model == interaction.NON_RDF_SOURCE

    def _write_resource(self, writer: ObjectWriter, s: ResourceState, vid: str | None,
                        when: datetime, *, acl: bool) -> None:
        rid = fedora.fedora_id(s.uid)
        binary = s.model == interaction.NON_RDF_SOURCE
        model = fedora.NON_RDF if binary else (
            s.model[1:-1] if s.model in interaction.CONTAINERS
            else interaction.BASIC_CONTAINER[1:-1])
        common: dict[str, Any] = dict(
            archivalGroupId=(fedora.fedora_id(self.uid)
                             if self.is_group and s.uid != self.uid else None),
            createdDate=s.created, createdBy=s.created_by,
            lastModifiedDate=s.deleted or s.modified, lastModifiedBy=s.modified_by,
            mementoCreatedDate=when if vid is not None else None,
            deleted=s.deleted is not None)
        # Fedora names the root its own parent
        parent = fedora.fedora_id(parent_uid(s.uid) or ROOT_UID)
        is_root = s.uid == self.uid
        content = fedora.content_file(self.root_id, rid, container=not binary)
        fields: dict[str, Any] = dict(
            id=rid, parent=parent, interactionModel=model,
            stateToken=fedora.state_token(rid, str(s.deleted or s.modified)),
            archivalGroup=is_root and self.is_group, objectRoot=is_root, **common)
        if s.deleted is not None:
            digests: list[str] = []
            fields["contentSize"] = -1          # as Fedora writes a deletion
        elif binary:
            fields.update(mimeType=s.mimetype or "application/octet-stream",
                          filename=s.filename or "", contentSize=s.size)
            if s.external_url:
                fields.update(externalUrl=s.external_url,
                              externalHandling=s.external_handling)
                digests = [f"urn:{URN_NAMES[a]}:{v}" for a, v in sorted(s.digests.items())]
            else:
                digests = self._binary(writer, s, content)
                fields["contentPath"] = content
        else:
            body = fedora.rdf_content(s.user)
            d = writer.add_bytes(content, body)
            fields.update(contentPath=content, contentSize=len(body))
            digests = [f"urn:{URN_NAMES[self.digest]}:{d}"]
        fields["digests"] = digests
        if s.deleted is not None and binary:
            fields.update(mimeType=s.mimetype or "application/octet-stream")
        writer.add_bytes(fedora.header_path(self.root_id, rid),
                         _json(fedora.headers(**fields)))
        if binary:
            self._description(writer, s, rid, common)
        if acl and s.deleted is None:
            self._acl(writer, s, rid, binary, common)

    def _binary(self, writer: ObjectWriter, s: ResourceState, logical: str) -> list[str]:
        store = self.ctx.binaries
        address = s.digests.get(store.algorithm)
        if address is None:
            raise OcflError(f"{s.uid}: no {store.algorithm} digest is recorded, so its "
                            "content cannot be found in the binary store")
        d = writer.add_stream(logical, lambda: store.open(address), s.digests.get(self.digest),
                              f"{fedora.fedora_id(s.uid)} ({logical})")
        digests = dict(s.digests)
        digests[self.digest] = d
        return [f"urn:{URN_NAMES[a]}:{v}" for a, v in sorted(digests.items())]

    def _description(self, writer: ObjectWriter, s: ResourceState, rid: str,
                     common: dict[str, Any]) -> None:
        did = f"{rid}/{fedora.FCR_METADATA}"
        path = fedora.content_file(self.root_id, rid, "desc", container=False)
        fields = dict(common, id=did, parent=rid, interactionModel=fedora.DESCRIPTION,
                      stateToken=fedora.state_token(did, str(s.deleted or s.modified)),
                      objectRoot=False, archivalGroup=False)
        if s.deleted is None:
            body = fedora.rdf_content(t for t in s.user if t[1] != EBUCORE_FILENAME)
            d = writer.add_bytes(path, body)
            fields.update(contentPath=path, contentSize=len(body),
                          digests=[f"urn:{URN_NAMES[self.digest]}:{d}"])
        else:
            fields.update(contentSize=-1, digests=[])
        writer.add_bytes(fedora.header_path(self.root_id, rid, "desc"),
                         _json(fedora.headers(**fields)))

    def _acl(self, writer: ObjectWriter, s: ResourceState, rid: str, binary: bool,
             common: dict[str, Any]) -> None:
        triples = acls.stored(self.ctx.txn, s.uid)
        if not triples:
            return
        aid = f"{rid}/{fedora.FCR_ACL}"
        path = fedora.content_file(self.root_id, rid, "acl", container=not binary)
        body = fedora.rdf_content(triples)
        d = writer.add_bytes(path, body)
        fields = dict(common, id=aid, parent=rid, interactionModel=fedora.ACL,
                      stateToken=fedora.state_token(aid, str(s.modified)),
                      objectRoot=False, archivalGroup=False, contentPath=path,
                      contentSize=len(body), digests=[f"urn:{URN_NAMES[self.digest]}:{d}"],
                      mementoCreatedDate=None)
        writer.add_bytes(fedora.header_path(self.root_id, rid, "acl"),
                         _json(fedora.headers(**fields)))
        self.report.acls += 1


def _json(doc: dict[str, Any]) -> bytes:
    """A header file as Fedora's Jackson mapper writes it: compact, UTF-8."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

