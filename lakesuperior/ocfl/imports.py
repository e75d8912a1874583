"""Import a Fedora 6 OCFL storage root (OCFL 1.0 or 1.1, the mutable head
included) into a repository.

Objects are imported parents first, each in one write transaction: a broken
object (a damaged inventory, a digest that does not match, a missing file, an
unknown extension, a header that fails Fedora's checks, an id outside
``info:fedora``) is reported with its file and writes nothing, and the objects
below it are not imported. Every resource gets its current state (containment
from its path, dates and agents from its headers), then every Memento at its
datetime, then its ACL; deletions come last, at their dates. An object whose
resource exists already is skipped, so an interrupted import resumes where it
stopped. A child process reads the objects (checked, their RDF parsed) ahead of
the writes, on another core (``ocfl.readahead``). See docs/ocfl.md.
"""
from __future__ import annotations

import json
import os
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from lakesuperior import rdfio
from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.config import Config
from lakesuperior.exceptions import (
    ChecksumValidationError,
    LakesuperiorError,
    OcflError,
    TombstoneError,
)
from lakesuperior.http.digests import URN_NAMES
from lakesuperior.model.interaction import NON_RDF_SOURCE
from lakesuperior.model.uids import ROOT_UID, is_descendant
from lakesuperior.ocfl import fedora
from lakesuperior.ocfl.readahead import Prepared, ReadAhead
from lakesuperior.ocfl.reading import Entry, FedoraObject, VersionView
from lakesuperior.ocfl.storage import (
    hash_file,
    object_path,
    open_root,
    parse_instant,
    read_file,
)
from lakesuperior.repository import Repository
from lakesuperior.store.binaries import normalize_digest

__all__ = ["ImportReport", "import_ocfl", "import_config", "IMPORT_IRI_CACHE",
           "READ_AHEAD_MIN"]

_URN_ALGOS = {v: k for k, v in URN_NAMES.items()} | {k: k for k in URN_NAMES}
#: The most IRIs the import's repository keeps in its IRI cache (``import_config``).
IMPORT_IRI_CACHE = 8192
#: A storage root of at least this many objects is read ahead by a child process
#: (``ocfl.readahead``; ``import_ocfl(read_ahead=None)``): below, starting it
#: costs more than it saves.
READ_AHEAD_MIN = 32


@dataclass
class ImportReport:
    """What ``import_ocfl`` imported, skipped (already there) and could not import."""

    path: str
    objects: int = 0
    resources: int = 0
    binaries: int = 0
    acls: int = 0
    versions: int = 0
    tombstones: int = 0
    skipped: int = 0
    read_ahead: int = 0         #: objects the reader process read (``ocfl.readahead``)
    seconds: float = 0.0
    failed: list[tuple[str, str]] = field(default_factory=list)   #: (object, why)

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_ocfl(src: str, config: Config, *, progress: Progress = QUIET,
                read_ahead: bool | None = None) -> ImportReport:
    """Import the Fedora 6 storage root ``src`` into the repository of ``config``
    (created if there is none). ``OcflError`` for a root this cannot read (nothing
    is written); a broken object is listed in ``failed``. ``read_ahead``: read the
    objects ahead in a child process (None: if there are at least
    ``READ_AHEAD_MIN``)."""
    t0 = time.perf_counter()
    root = open_root(os.path.abspath(src))
    report = ImportReport(root.path)
    listing = _list_objects(root.path, root.objects(), report)
    if read_ahead is None:
        read_ahead = len(listing) >= READ_AHEAD_MIN
    with ExitStack() as stack:
        repo = stack.enter_context(Repository(config=import_config(config)))
        ahead = stack.enter_context(ReadAhead([(oid, d) for _, oid, d in listing])
                                    ) if read_ahead else None
        deletions: list[tuple[str, datetime]] = []
        failed_roots: list[str] = []
        progress.start("Importing from OCFL", len(listing))
        try:
            for _depth, oid, obj_dir in listing:
                prepared = ahead.next(oid) if ahead is not None else None
                report.read_ahead += prepared is not None
                try:
                    uid = fedora.uid_of_id(oid, oid)
                except OcflError as e:
                    report.failed.append((oid, str(e)))
                    progress.advance()
                    continue
                below = next((f for f in failed_roots if is_descendant(uid, f)), None)
                if below is not None:
                    report.failed.append((oid, f"not imported: the object of its ancestor "
                                               f"{fedora.fedora_id(below)} was not"))
                    progress.advance()
                    continue
                try:
                    _import_object(repo, prepared or _read(obj_dir, oid), uid, report,
                                   deletions)
                except (OcflError, LakesuperiorError) as e:
                    failed_roots.append(uid)
                    report.failed.append((oid, _message(e, oid)))
                progress.advance()
        finally:
            progress.finish()
        if ahead is not None:
            ahead.close()
        _bury(repo, deletions, report)
        repo.index()
    report.seconds = time.perf_counter() - t0
    return report


def import_config(config: Config) -> Config:
    """The configuration the import opens the repository with: ``config`` without
    automatic versioning (each version is imported at its date), referential
    integrity (a link may point to an object imported later) and with foreign
    subjects allowed (as Fedora); its IRI cache at most ``IMPORT_IRI_CACHE``: the
    import writes each resource's IRIs (its own, its versions', its graphs') once,
    and what recurs, the vocabulary, is far fewer, so a larger cache would only
    grow the import's memory with IRIs never read again."""
    return config.with_(versioning_auto=False, referential_integrity="off",
                        allow_foreign_subjects=True,
                        iri_cache=min(config.iri_cache, IMPORT_IRI_CACHE))


def _message(e: Exception, oid: str) -> str:
    text = str(e)
    return text if isinstance(e, OcflError) else f"{oid}: {text}"


def _list_objects(root_path: str, dirs: Any, report: ImportReport
                  ) -> list[tuple[int, str, str]]:
    """(depth, id, directory) of every object, parents first; an object whose id
    cannot be read, or that is not where the layout puts its id, fails here."""
    out = []
    for obj_dir in dirs:
        rel = os.path.relpath(obj_dir, root_path).replace(os.sep, "/")
        try:
            oid = json.loads(read_file(os.path.join(obj_dir, "inventory.json"))
                             .decode("utf-8")).get("id")
        except (OSError, ValueError, AttributeError) as e:
            report.failed.append((rel, f"{rel}/inventory.json cannot be read: {e}"))
            continue
        if not isinstance(oid, str):
            report.failed.append((rel, f"{rel}/inventory.json has no id"))
            continue
        if object_path(oid) != rel:
            report.failed.append((oid, f"{oid}: the object is at {rel}, not where the 0004 "
                                       f"layout puts its id ({object_path(oid)})"))
            continue
        depth = 0 if oid == fedora.INFO_FEDORA else oid.count("/")
        out.append((depth, oid, obj_dir))
    out.sort()
    return out


def _exists(repo: Repository, uid: str) -> bool:
    try:
        return repo.exists(uid)
    except TombstoneError:
        return True


def _read(obj_dir: str, oid: str) -> Prepared:
    """The object ``oid`` in ``obj_dir`` and its versions, read now."""
    obj = FedoraObject(obj_dir, oid)
    return obj, obj.versions()


def _import_object(repo: Repository, prepared: Prepared, uid: str, report: ImportReport,
                   deletions: list[tuple[str, datetime]]) -> None:
    """Import the object ``prepared`` (of the resource ``uid``)."""
    obj, versions = prepared
    head = versions[-1]
    with repo.snapshot():       # one read snapshot for what is looked up before the write
        if _done(repo, obj, uid, head, report, deletions):
            return
    writer = _ObjectImport(repo, obj, versions)
    with repo.transaction():
        writer.run()
    report.objects += 1
    report.resources += writer.resources
    report.binaries += writer.binaries
    report.acls += writer.acls
    report.versions += writer.versions
    deletions.extend(writer.deletions)


def _done(repo: Repository, obj: FedoraObject, uid: str, head: VersionView,
          report: ImportReport, deletions: list[tuple[str, datetime]]) -> bool:
    """Whether the object was imported before (skipped: its deletions still to make
    are added to ``deletions``); ``OcflError`` if its parent is missing."""
    oid = obj.where
    already = _exists(repo, uid) if uid != ROOT_UID else _root_done(repo, head, oid)
    if already:
        report.skipped += 1
        for rid, entry in head.entries.items():
            ruid = obj.uid_of(rid, oid)
            if entry.deleted and _live(repo, ruid):
                deletions.append((ruid, _date(entry.headers, "lastModifiedDate", oid)))
        return True
    parent = (head.entries.get(obj.id) or Entry({}, "")).headers.get("parent")
    if uid != ROOT_UID and isinstance(parent, str):
        puid = fedora.uid_of_id(parent, f"{oid}: {fedora.ROOT_HEADER}")
        if not _exists(repo, puid):
            raise OcflError(f"{oid}: its parent {parent} is neither in the repository nor "
                            "imported from the storage root")
    return False


def _root_done(repo: Repository, head: VersionView, oid: str) -> bool:
    """Whether the repository root (which every repository has) was imported: it
    has versions, or it was last modified when the object's root says."""
    if repo.versions(ROOT_UID):
        return True
    entry = head.entries.get(oid)
    stamp = repo.info(ROOT_UID).last_modified
    return entry is not None and stamp is not None and parse_instant(
        stamp, oid) == _date(entry.headers, "lastModifiedDate", oid)


def _live(repo: Repository, uid: str) -> bool:
    try:
        return repo.exists(uid)
    except TombstoneError:
        return False


def _date(h: dict[str, Any], name: str, where: str) -> datetime:
    return parse_instant(h.get(name), f"{where}: {name}")


class _ObjectImport:
    """Writes one object's resources (inside the caller's transaction)."""

    def __init__(self, repo: Repository, obj: FedoraObject, versions: list[VersionView]):
        self.repo = repo
        self.obj = obj
        self.all = versions
        self.resources = self.binaries = self.acls = self.versions = 0
        self.deletions: list[tuple[str, datetime]] = []

    def run(self) -> None:
        ids: dict[str, int] = {}
        for view in self.all:
            for rid in view.entries:
                ids.setdefault(rid, rid.count("/"))
        for rid in sorted(ids, key=lambda r: (ids[r], r)):
            self._resource(rid)

    def _resource(self, rid: str) -> None:
        uid = self.obj.uid_of(rid, self.obj.where)
        present = [(v, v.entries[rid]) for v in self.all if rid in v.entries]
        live = [(v, e) for v, e in present if not e.deleted]
        if not live:
            return          # deleted before any state was kept: nothing to restore
        view, entry = live[-1]
        h = entry.headers
        created = _date(h, "createdDate", entry.header_path)
        modified = _date(h, "lastModifiedDate", entry.header_path)
        repo = self.repo
        creator = h.get("createdBy") or repo.settings.agent
        who = (h.get("lastModifiedBy") or repo.settings.agent) if modified > created \
            else creator
        # The current state, written at its last modification by its agent, with
        # its creation's date and agent; a binary's description's triples, if any,
        # then (as an update of the same moment).
        with repo.clock(modified):
            writer = repo.as_user(who)
            self._write_state(writer, uid, view, entry, (created, creator))
            desc = entry.description or {}
            user = self._rdf(view, desc["contentPath"]) if entry.binary and desc.get(
                "contentPath") else []
            if user:
                writer.update_delta(uid, [], user, handling="lenient")
        self.resources += 1
        self.binaries += entry.binary
        self._mementos(uid, rid, present, view)
        if entry.acl is not None and not present[-1][1].deleted:
            self._acl(uid, view, entry.acl)
        last = present[-1][1]
        if last.deleted:
            self.deletions.append((uid, _date(last.headers, "lastModifiedDate",
                                              last.header_path)))

    def _mementos(self, uid: str, rid: str, present: list[tuple[VersionView, Entry]],
                  current: VersionView) -> None:
        """The resource's Mementos as Fedora's TimeMap lists them, at their versions'
        dates (one per second here, the later state winning): in an Archival Group
        the versions in which the resource changed (the group lists them all), else
        those that changed the resource's header (an ACL alone makes none). The
        Memento of the version that gave the current state (``current``) is made of
        that state as written (neither read nor parsed again)."""
        chosen: dict[str, tuple[datetime, VersionView, Entry]] = {}
        before: Any = None
        group = self.obj.root_headers is not None and \
            self.obj.root_headers.get("archivalGroup") is True
        for view, entry in present:
            if view.mutable:
                continue
            mark = entry.fingerprint(view.state) if group else \
                view.state.get(entry.header_path)
            changed = mark != before
            before = mark
            if entry.deleted or not changed:
                continue
            when = view.when(entry)
            chosen[when.strftime("%Y%m%d%H%M%S")] = (when, view, entry)
        items: list[tuple[datetime, dict[str, Any]]] = []
        contents: list[tuple[VersionView, str, dict[str, str]]] = []
        with ExitStack() as streams:
            for when, view, entry in chosen.values():
                self.versions += 1
                if view is current and entry.headers.get("externalHandling") is None:
                    items.append((when, {}))          # the current state, as written
                    continue
                inputs = self._memento(view, entry, streams, contents)
                if inputs is not None:
                    items.append((when, inputs))
            if not items:
                return
            try:
                self.repo.import_versions(uid, items)
            except ChecksumValidationError as e:
                raise self._mismatch(contents, e) from None

    def _memento(self, view: VersionView, entry: Entry, streams: ExitStack,
                 contents: list[tuple[VersionView, str, dict[str, str]]]
                 ) -> dict[str, Any] | None:
        """What ``import_versions`` takes for the Memento of ``entry`` in ``view``:
        its triples, or a binary's content (opened in ``streams``; its file and
        digests added to ``contents``); None for an external binary (no content)."""
        h = entry.headers
        if not entry.binary:
            return {"triples": self._rdf(view, h["contentPath"])}
        if h.get("externalHandling") is not None:
            return None
        path = h["contentPath"]
        digests = self._digests(h, view.state[path])
        contents.append((view, path, digests))
        return {"stream": streams.enter_context(self.obj.open(view.state, path, view.name)),
                "digests": digests, "media_type": h.get("mimeType"),
                "filename": h.get("filename") or None}                # Fedora: "" for none

    def _mismatch(self, contents: list[tuple[VersionView, str, dict[str, str]]],
                  error: ChecksumValidationError) -> OcflError:
        """The error naming the first of ``contents`` that does not match its digests
        (found by reading them again: only when one did not)."""
        for view, path, digests in contents:
            if not self._matches(view, path, digests):
                return OcflError(f"{self.obj.where}: {self.obj.file_name(view.state, path)} "
                                 f"({path}, {view.name}) does not match its digest: {error}")
        return OcflError(f"{self.obj.where}: a content file does not match its digest: {error}")

    def _matches(self, view: VersionView, path: str, digests: dict[str, str]) -> bool:
        for algorithm, want in digests.items():
            with self.obj.open(view.state, path, view.name) as fh:
                if hash_file(fh, algorithm)[0] != _hex(algorithm, want):
                    return False
        return True

    def _rdf(self, view: VersionView, path: str) -> rdfio.Parsed:
        return self.obj.rdf(view, path, self.repo.urimap)

    def _write_state(self, repo: Repository, uid: str, view: VersionView, entry: Entry,
                     created: tuple[datetime, str]) -> None:
        """The resource's current state, with ``created``: its creation's date and
        agent."""
        h = entry.headers
        stamp: dict[str, Any] = {"created": created[0], "created_by": created[1]}
        if not entry.binary:
            repo.create_or_replace(uid, triples=self._rdf(view, h["contentPath"]),
                                   interaction_model=h["interactionModel"], handling="lenient",
                                   archival_group=h.get("archivalGroup") is True, **stamp)
            return
        kw: dict[str, Any] = dict(media_type=h.get("mimeType"),
                                  filename=h.get("filename") or None)   # Fedora: "" for none
        if h.get("externalHandling") is not None:
            repo.create_or_replace(uid, external=h.get("externalUrl"),
                                   external_handling=h["externalHandling"],
                                   interaction_model=NON_RDF_SOURCE, handling="lenient",
                                   **kw, **stamp)
            return
        path = h["contentPath"]
        digests = self._digests(h, view.state[path])
        try:
            with self.obj.open(view.state, path, view.name) as stream:
                repo.create_or_replace(uid, stream=stream, digests=digests,
                                       interaction_model=NON_RDF_SOURCE,
                                       handling="lenient", **kw, **stamp)
        except ChecksumValidationError as e:
            raise OcflError(f"{self.obj.where}: {self.obj.file_name(view.state, path)} "
                            f"({path}, {view.name}) does not match its digest: {e}") from None

    def _digests(self, h: dict[str, Any], inventory_digest: str) -> dict[str, str]:
        """The digests the content must match: the inventory's and the headers'."""
        out = {self.obj.inv.algorithm: inventory_digest}
        for urn in h.get("digests") or ():
            _, name, value = str(urn).split(":", 2)
            algo = _URN_ALGOS.get(name.lower())
            if algo is not None:
                out.setdefault(algo, value.lower())
        return out

    def _acl(self, uid: str, view: VersionView, h: dict[str, Any]) -> None:
        triples = self._rdf(view, h["contentPath"])
        self.repo.set_acl(uid, triples=triples)
        self.acls += 1


def _hex(algorithm: str, digest: str) -> str:
    """A digest as ``store.binaries`` compares it (hex or base64 given), or itself."""
    try:
        return normalize_digest(algorithm, digest)
    except LakesuperiorError:
        return digest


def _bury(repo: Repository, deletions: list[tuple[str, datetime]],
          report: ImportReport) -> None:
    """Delete (leaving tombstones) the resources Fedora marks deleted, at their
    dates: each one whose parent was not deleted at the same time or before it."""
    when_of = dict(deletions)
    tops = []
    for uid, when in deletions:
        parent = uid.rsplit("/", 1)[0] or ROOT_UID
        if parent in when_of and when_of[parent] <= when:
            continue
        tops.append((when, uid))
    for when, uid in sorted(tops):
        if not _live(repo, uid):
            continue
        with repo.transaction(), repo.clock(when):
            repo.delete(uid)
        report.tombstones += 1
