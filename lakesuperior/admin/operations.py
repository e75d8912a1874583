"""Repository administration: statistics, checks, clean-up, backup, restore, migration.

The logic behind ``lsup-admin``, usable without click. Every function works on
an open ``Repository`` or on a ``Config`` and returns a report; nothing here
prints. Long operations tell an optional ``Progress`` how far they are, and
can be interrupted (``KeyboardInterrupt``) at any point without damaging a
repository: backup, restore and migrate build their result in a temporary
directory beside the destination and rename it into place only when it is
complete and verified; an interrupted run removes the temporary directory.

A backup is a directory::

    DEST/manifest.json   what was copied: counts, digest algorithm, formats, versions
    DEST/ldprs/          the LMDB store, copied from one read snapshot
    DEST/ldpnr/          the binaries that snapshot refers to, re-hashed as copied

It is itself a data directory (``LSUP_DATA_DIR=DEST`` opens it). The store
copy is taken from one LMDB read snapshot, so it is consistent while other
processes (a running server) keep writing; the union-graph index, which is
derived data, is rebuilt from that snapshot inside the backup rather than
copied, so it always matches it.
"""
from __future__ import annotations

import heapq
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lakesuperior.config import Config
from lakesuperior.exceptions import (
    BinaryNotFoundError,
    InvalidDigestError,
    LakesuperiorError,
    UnsupportedDigestError,
)
from lakesuperior.model import interaction
from lakesuperior.model.checks import FixityResult, IntegrityReport, referenced_digests
from lakesuperior.model.context import Context
from lakesuperior.model.literals import lexical
from lakesuperior.model.namespaces import EBUCORE_FILENAME, LDP_CONTAINS, LDP_NS, RDF_TYPE
from lakesuperior.model.nonrdf import parse_digest_urn
from lakesuperior.model.server_managed import is_server_managed
from lakesuperior.model.uids import graph_kind, normalize_uid, uid_of_graph

if TYPE_CHECKING:
    from lakesuperior.admin.http import HttpClient
    from lakesuperior.repository import Repository

__all__ = [
    "AdminError", "NoRepositoryError", "MigrationError", "Progress",
    "store_exists", "open_repository", "bootstrap", "repository_stats", "binary_uids",
    "check_fixity", "FixityReport", "check_refint", "integrity_rows", "cleanup",
    "CleanupReport", "backup", "BackupReport", "read_manifest", "restore",
    "RestoreReport", "migrate", "MigrationReport",
]

BACKUP_KIND = "lakesuperior-backup"
BACKUP_FORMAT = 1
MANIFEST = "manifest.json"
_COUNT_KEYS = ("resources", "tombstones", "versions", "binaries", "binary_bytes", "quads",
               "graphs")
_LDP_TYPE_PREFIX = "<" + LDP_NS
_IANA_DESCRIBEDBY = "<http://www.iana.org/assignments/relation/describedby>"
_IANA_DESCRIBES = "<http://www.iana.org/assignments/relation/describes>"
_RDF_ACCEPT = "application/n-triples, text/turtle;q=0.9, application/ld+json;q=0.5"
_WANT_DIGEST = "sha-512, sha-256, sha, md5"
_OMIT_MEMBERSHIP = ('return=representation; omit="http://www.w3.org/ns/ldp#PreferMembership"')


# --- errors and progress -------------------------------------------------------------------

class AdminError(LakesuperiorError):
    """An administrative operation cannot be done as asked; nothing was changed."""


class NoRepositoryError(AdminError):
    """The data directory holds no repository."""


class MigrationError(AdminError):
    """The migration source failed or sent something that is not usable."""


class Progress:
    """Receives the progress of a long operation; this one ignores it.

    ``start(label, total)`` opens a phase (``total`` None when unknown),
    ``advance(n)`` counts work done, ``finish()`` closes the phase.
    """

    def start(self, label: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass


_QUIET = Progress()


# --- opening ---------------------------------------------------------------------------------

def store_exists(config: Config) -> bool:
    """Whether ``config.data_dir`` holds a quad store (of any format)."""
    return os.path.isfile(os.path.join(config.store_dir, "data.mdb"))


def open_repository(config: Config, **overrides: Any) -> Repository:
    """Open the existing repository of ``config``; ``NoRepositoryError`` if there is none.

    A store of another format raises ``StoreFormatError`` (from the store).
    """
    if not store_exists(config):
        raise NoRepositoryError(
            f"No repository in {os.path.abspath(config.data_dir)}: create one with "
            "`lsup-admin bootstrap`, or name the right one with --data-dir or --config")
    from lakesuperior.repository import Repository
    return Repository(config=config, **overrides)


def _has_content(path: str) -> bool:
    try:
        with os.scandir(path) as it:
            return any(True for _ in it)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        return True


def bootstrap(config: Config, *, wipe: bool = False) -> dict[str, Any]:
    """Create a repository (with its root) in ``config.data_dir``.

    If the directory already holds a store or binaries, ``wipe=True`` deletes
    them first (only the ``ldprs`` and ``ldpnr`` subdirectories, nothing else in
    the data directory); without it ``AdminError`` is raised. The deletion
    first renames both directories aside, so an interruption leaves either the
    old repository or none, never half of one.
    """
    data_dir = os.path.abspath(config.data_dir)
    existing = [p for p in (config.store_dir, config.binary_dir) if _has_content(p)]
    if existing and not wipe:
        raise AdminError(f"{data_dir} holds a repository already; wiping it needs an "
                         "explicit confirmation")
    os.makedirs(data_dir, exist_ok=True)
    for leftover in os.listdir(data_dir):
        if leftover.startswith(".lsup-wipe-"):
            shutil.rmtree(os.path.join(data_dir, leftover), ignore_errors=True)
    if existing:
        trash = tempfile.mkdtemp(prefix=".lsup-wipe-", dir=data_dir)
        for path in (config.store_dir, config.binary_dir):
            if os.path.lexists(path):
                os.rename(path, os.path.join(trash, os.path.basename(path)))
        shutil.rmtree(trash, ignore_errors=True)
    from lakesuperior.repository import Repository
    with Repository(config=config) as repo:
        st = repo.stats()
    return {"data_dir": data_dir, "wiped": bool(existing), "resources": st["resources"]}


# --- statistics and checks ------------------------------------------------------------

def _resource_types(repo: Repository, type_term: str | None = None) -> dict[str, set[str]]:
    """Resource graph -> its LDP rdf:types (one union-index scan)."""
    out: dict[str, set[str]] = {}
    with repo.store.read() as txn:
        for s, _p, o, g in txn.match(None, RDF_TYPE, type_term, None):
            if s == g and o.startswith(_LDP_TYPE_PREFIX) and graph_kind(g) == "res":
                out.setdefault(g, set()).add(o)
    return out


def repository_stats(repo: Repository) -> dict[str, Any]:
    """``Repository.stats()`` plus resources counted by interaction model
    (``by_model``: ``ldp:BasicContainer`` -> n, ...) and the data directory."""
    out = dict(repo.stats())
    models = interaction.INTERACTION_MODELS
    by_model: dict[str, int] = {interaction.model_name(m): 0 for m in models}
    for types in _resource_types(repo).values():
        name = interaction.model_name(interaction.model_of(types))
        by_model[name] = by_model.get(name, 0) + 1
    out["by_model"] = by_model
    out["data_dir"] = os.path.abspath(repo.config.data_dir)
    return out


def binary_uids(repo: Repository) -> list[str]:
    """Uids of every live binary (LDP-NR), sorted."""
    return sorted(uid_of_graph(g) for g in _resource_types(repo, interaction.NON_RDF_SOURCE))


@dataclass
class FixityReport:
    """Outcome of ``check_fixity``: one result per binary checked."""

    results: list[FixityResult] = field(default_factory=list)

    @property
    def failures(self) -> list[FixityResult]:
        return [r for r in self.results if not r.ok]

    @property
    def ok(self) -> bool:
        return not self.failures


def check_fixity(repo: Repository, uids: Sequence[str] | None = None, *,
                 progress: Progress = _QUIET) -> FixityReport:
    """Re-hash binaries against their recorded digests: ``uids``, or all of them.

    A uid that is missing or not a binary raises (``ResourceNotExistsError``,
    ``IncompatibleLdpTypeError``...); a missing or altered content file is a
    failed result, not an exception.
    """
    todo = binary_uids(repo) if uids is None else [normalize_uid(u) for u in uids]
    report = FixityReport()
    progress.start("Checking fixity", len(todo))
    try:
        for uid in todo:
            report.results.append(repo.fixity_check(uid))
            progress.advance()
    finally:
        progress.finish()
    return report


def check_refint(repo: Repository) -> IntegrityReport:
    """Links to missing repository resources and broken containment (see
    ``Repository.integrity_check``)."""
    return repo.integrity_check()


def integrity_rows(report: IntegrityReport) -> list[tuple[str, str, str]]:
    """The problems of an integrity report as ``(problem, resource, target)`` rows."""
    from lakesuperior.model.uids import parent_uid
    rows = [("broken_link", uid, target) for uid, target in report.broken_links]
    rows += [("dangling_child", uid, child) for uid, child in report.dangling_children]
    rows += [("missing_parent", uid, parent_uid(uid) or "") for uid in report.missing_parent]
    rows += [("not_contained", uid, parent_uid(uid) or "") for uid in report.not_contained]
    rows += [("missing_content", uid, "") for uid in report.missing_content]
    return rows


@dataclass
class CleanupReport:
    """What ``cleanup`` removed (or, with ``dry_run``, would remove)."""

    dry_run: bool
    orphans: list[tuple[str, int]] = field(default_factory=list)     #: (digest, bytes)
    temp_files: list[tuple[str, int]] = field(default_factory=list)  #: (file name, bytes)

    @property
    def bytes_freed(self) -> int:
        return sum(n for _, n in self.orphans) + sum(n for _, n in self.temp_files)


def cleanup(repo: Repository, *, dry_run: bool = False, min_age: float = 3600.0,
            progress: Progress = _QUIET) -> CleanupReport:
    """Remove binary content files no description refers to (left by purges,
    replacements whose old content is no longer versioned, and aborted writes)
    and leftover temporary upload files, when older than ``min_age`` seconds
    (younger ones may belong to a write in progress).

    Content still named by a live resource, a tombstone or a version is kept.
    """
    report = CleanupReport(dry_run)
    binaries = repo.binaries
    with repo.store.read() as txn:
        referenced = referenced_digests(Context(txn, repo.settings, binaries, repo.urimap))
    limit = time.time() - min_age
    stored = list(binaries)
    progress.start("Looking for orphan binaries", len(stored))
    try:
        for digest in stored:
            progress.advance()
            if digest in referenced:
                continue
            try:
                st = os.stat(binaries.path(digest))
            except FileNotFoundError:
                continue
            if st.st_mtime > limit:
                continue
            if dry_run or binaries.delete(digest):
                report.orphans.append((digest, st.st_size))
    finally:
        progress.finish()
    tmp = os.path.join(binaries.root, "tmp")
    try:
        entries = sorted(os.scandir(tmp), key=lambda e: e.name)
    except FileNotFoundError:
        entries = []
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if not entry.is_file(follow_symlinks=False) or st.st_mtime > limit:
            continue
        if not dry_run:
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                continue
        report.temp_files.append((entry.name, st.st_size))
    return report


# --- backup and restore ------------------------------------------------------------------

@dataclass
class BackupReport:
    path: str
    counts: dict[str, int]
    store_bytes: int
    seconds: float
    missing_binaries: list[str] = field(default_factory=list)
    corrupt_binaries: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing_binaries or self.corrupt_binaries)


@dataclass
class RestoreReport:
    path: str
    counts: dict[str, int]
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _inside(path: str, parent: str) -> bool:
    path, parent = os.path.realpath(path), os.path.realpath(parent)
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def _staging_dir(dest: str, tag: str) -> str:
    """A new empty directory beside ``dest`` (same file system, so it can be
    renamed into place)."""
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    return tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.{tag}-", dir=parent)


def _fsync_tree(root: str) -> None:
    """Flush every file and directory under ``root`` to disk."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(dirpath, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _counts(repo: Repository) -> tuple[dict[str, int], int]:
    st = repo.stats()
    counts = {k: int(st[k]) for k in ("resources", "tombstones", "versions", "binaries",
                                      "binary_bytes")}
    counts["quads"] = int(st["store"]["quads"])
    counts["graphs"] = int(st["store"]["graphs"])
    return counts, int(st["store"]["store_bytes"])


def _referenced(repo: Repository) -> set[str]:
    with repo.store.read() as txn:
        return referenced_digests(Context(txn, repo.settings, repo.binaries, repo.urimap))


def backup(repo: Repository, dest: str | os.PathLike, *,
           progress: Progress = _QUIET) -> BackupReport:
    """Write a backup of ``repo`` to the new directory ``dest`` (see the module doc).

    Safe while other processes write: the store is copied from one read
    snapshot, and exactly the binaries that snapshot refers to are copied
    (each re-hashed on the way). Content missing or altered in the source is
    reported (``missing_binaries``, ``corrupt_binaries``), not copied.
    ``AdminError`` if ``dest`` exists or lies inside the data directory.
    """
    from lakesuperior.repository import Repository
    from lakesuperior.version import __version__

    t0 = time.perf_counter()
    dest = os.path.abspath(os.fspath(dest))
    if os.path.lexists(dest):
        raise AdminError(f"The backup destination {dest} exists already: give a new path")
    if _inside(dest, repo.config.data_dir):
        raise AdminError(f"The backup destination {dest} is inside the data directory")
    staging = _staging_dir(dest, "partial")
    try:
        progress.start("Copying the store", None)
        store_dir = os.path.join(staging, "ldprs")
        # Not compact: LMDB's compacting copy crashes on this store's dupsort
        # tables (py-lmdb 3.0 / LMDB 0.9.x); a plain copy is just as consistent.
        repo.store.copy(store_dir, compact=False)
        # The union index is derived; its copy comes from a later snapshot than
        # the main copy, so drop it and rebuild it from the main copy.
        shutil.rmtree(os.path.join(store_dir, "index"), ignore_errors=True)
        progress.finish()
        cfg = repo.config.with_(data_dir=staging, sync=False)
        with Repository(config=cfg) as copy:
            progress.start("Rebuilding the union index of the copy", None)
            copy.store.index()
            progress.finish()
            wanted = sorted(_referenced(copy))
            keep = frozenset(wanted)
            missing: list[str] = []
            corrupt: list[str] = []
            progress.start("Copying binaries", len(wanted))
            try:
                for digest in wanted:
                    _copy_binary(repo.binaries, copy.binaries, digest, missing, corrupt, keep)
                    progress.advance()
            finally:
                progress.finish()
            counts, _ = _counts(copy)
        manifest = {
            "kind": BACKUP_KIND, "backup_format": BACKUP_FORMAT,
            "lakesuperior_version": __version__,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "source": os.path.abspath(repo.config.data_dir),
            "store_format": _store_format(), "digest_algorithm": repo.binaries.algorithm,
            "counts": counts, "missing_binaries": missing, "corrupt_binaries": corrupt,
        }
        with open(os.path.join(staging, MANIFEST), "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=2)
        for name in ("lock.mdb", os.path.join("index", "lock.mdb")):
            _unlink(os.path.join(store_dir, name))
        _fsync_tree(staging)
        os.rename(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BackupReport(dest, counts, _dir_bytes(dest), time.perf_counter() - t0,
                        missing, corrupt)


def _copy_binary(src: Any, dst: Any, digest: str, missing: list[str],
                 corrupt: list[str], keep: set[str] | frozenset[str] = frozenset()) -> None:
    """Copy one content file, re-hashing it; a file that no longer hashes to its
    name is not kept (unless its content is another wanted binary, ``keep``)."""
    try:
        fh = src.open(digest)
    except BinaryNotFoundError:
        missing.append(digest)
        return
    with fh:
        info = dst.put(fh)
    if info.digest != digest:
        if info.digest not in keep:
            dst.delete(info.digest)
        corrupt.append(digest)


def _store_format() -> int:
    from lakesuperior.store.quadstore import FORMAT_VERSION
    return int(FORMAT_VERSION)


def _dir_bytes(path: str) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(dirpath, name)).st_blocks * 512
            except FileNotFoundError:
                continue
    return total


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def read_manifest(src: str | os.PathLike) -> dict[str, Any]:
    """The manifest of the backup in ``src``; ``AdminError`` if ``src`` is not a
    backup this Lakesuperior can restore."""
    src = os.path.abspath(os.fspath(src))
    if not os.path.isdir(src):
        raise AdminError(f"No backup at {src}: it is not a directory")
    path = os.path.join(src, MANIFEST)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise AdminError(f"{src} is not a Lakesuperior backup (it has no {MANIFEST})") from None
    except (OSError, ValueError) as e:
        raise AdminError(f"Cannot read the backup manifest {path}: {e}") from e
    if not isinstance(manifest, dict) or manifest.get("kind") != BACKUP_KIND:
        raise AdminError(f"{path} is not a Lakesuperior backup manifest")
    fmt = manifest.get("backup_format")
    if not isinstance(fmt, int) or fmt > BACKUP_FORMAT:
        raise AdminError(f"The backup in {src} has format {fmt!r}; this Lakesuperior "
                         f"reads backup format {BACKUP_FORMAT}: upgrade Lakesuperior")
    store_format = manifest.get("store_format")
    if store_format != _store_format():
        raise AdminError(f"The backup in {src} holds a store of format {store_format!r}; "
                         f"this Lakesuperior reads format {_store_format()}. Restore it "
                         "with the Lakesuperior that made it, then migrate.")
    counts = manifest.get("counts")
    if not isinstance(counts, dict) or any(not isinstance(counts.get(k), int)
                                           for k in _COUNT_KEYS):
        raise AdminError(f"The backup manifest {path} has no valid counts")
    if not os.path.isfile(os.path.join(src, "ldprs", "data.mdb")):
        raise AdminError(f"The backup in {src} is incomplete: ldprs/data.mdb is missing")
    return manifest


def restore(src: str | os.PathLike, config: Config, *,
            progress: Progress = _QUIET) -> RestoreReport:
    """Restore the backup in ``src`` into ``config.data_dir``, which must be empty
    or not exist, and verify the result: every binary re-hashed, the store
    opened and its counts compared with the manifest, every binary the store
    refers to present. Nothing is left in the data directory unless all of
    that succeeds (problems already recorded in the backup's manifest are
    reported, not fatal).
    """
    from lakesuperior.repository import Repository
    from lakesuperior.store.binaries import BinaryStore

    t0 = time.perf_counter()
    src = os.path.abspath(os.fspath(src))
    manifest = read_manifest(src)
    data_dir = os.path.abspath(config.data_dir)
    if _inside(data_dir, src) or _inside(src, data_dir):
        raise AdminError("The backup and the data directory must not contain each other")
    if os.path.exists(data_dir) and (not os.path.isdir(data_dir) or _has_content(data_dir)):
        raise AdminError(f"The data directory {data_dir} is not empty: restore into an "
                         "empty or new directory")
    algo = manifest.get("digest_algorithm")
    if algo != config.digest_algorithm:
        raise AdminError(f"The backup stores binaries by {algo} digest, but the "
                         f"configuration says digest_algorithm: {config.digest_algorithm}; "
                         f"set digest_algorithm to {algo} (LSUP_DIGEST_ALGORITHM={algo})")
    staging = _staging_dir(data_dir, "restoring")
    problems: list[str] = []
    try:
        progress.start("Copying the store", None)
        src_store = os.path.join(src, "ldprs")
        for dirpath, _dirs, files in os.walk(src_store):
            rel = os.path.relpath(dirpath, src_store)
            target = os.path.normpath(os.path.join(staging, "ldprs", rel))
            os.makedirs(target, exist_ok=True)
            for name in files:
                if name != "lock.mdb":
                    shutil.copyfile(os.path.join(dirpath, name), os.path.join(target, name))
        progress.finish()
        src_bin = BinaryStore(os.path.join(src, "ldpnr"), algo) if os.path.isdir(
            os.path.join(src, "ldpnr")) else None
        dst_bin = BinaryStore(os.path.join(staging, "ldpnr"), algo)
        digests = list(src_bin) if src_bin is not None else []
        keep = frozenset(digests)
        corrupt: list[str] = []
        progress.start("Copying and verifying binaries", len(digests))
        try:
            for digest in digests:
                _copy_binary(src_bin, dst_bin, digest, corrupt, corrupt, keep)
                progress.advance()
        finally:
            progress.finish()
        nothing = "; nothing was written to the data directory"
        if corrupt:
            raise AdminError(f"Restore verification failed: {len(corrupt)} binaries in the "
                             f"backup do not match their digest (first: {corrupt[0]})"
                             + nothing)
        progress.start("Verifying the restored repository", None)
        known = set(manifest.get("missing_binaries") or []) | set(
            manifest.get("corrupt_binaries") or [])
        problems += [f"binary {d} was already missing or corrupt when the backup was made"
                     for d in sorted(known)]
        with Repository(config=config.with_(data_dir=staging)) as repo:
            repo.store.index()
            absent = sorted(d for d in _referenced(repo) if d not in repo.binaries)
            unexpected = [d for d in absent if d not in known]
            if unexpected:
                raise AdminError(f"Restore verification failed: {len(unexpected)} binaries "
                                 f"the store refers to are missing from the backup (first: "
                                 f"{unexpected[0]})" + nothing)
            counts, _ = _counts(repo)
            for key in _COUNT_KEYS:
                if counts[key] != manifest["counts"][key]:
                    raise AdminError(f"Restore verification failed: {key} is {counts[key]} "
                                     f"but the backup recorded {manifest['counts'][key]}"
                                     + nothing)
        progress.finish()
        _fsync_tree(staging)
        if os.path.isdir(data_dir):
            os.rmdir(data_dir)
        os.rename(staging, data_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return RestoreReport(data_dir, counts, time.perf_counter() - t0, problems)


# --- migration ------------------------------------------------------------------------------

@dataclass
class MigrationReport:
    """What ``migrate`` copied, skipped and failed to copy."""

    source: str
    dest: str
    rdf_sources: int = 0
    binaries: int = 0
    binary_bytes: int = 0
    triples: int = 0
    seconds: float = 0.0
    unverified: list[str] = field(default_factory=list)   #: binaries the source gave no digest for
    skipped: list[tuple[str, str]] = field(default_factory=list)   #: (url, why)
    failed: list[tuple[str, str]] = field(default_factory=list)    #: (url, error)

    @property
    def copied(self) -> int:
        return self.rdf_sources + self.binaries

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["copied"] = self.copied
        return out


class _Failure(Exception):
    """One resource could not be copied (``MigrationError`` unless skipping errors)."""


class _Source:
    """The LDP server being migrated: URL <-> uid mapping and its requests."""

    def __init__(self, url: str, client: HttpClient):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise AdminError(f"The migration source must be an http(s) URL, not {url!r}")
        self.base = url.split("#")[0].split("?")[0].rstrip("/")
        self.client = client

    def url(self, uid: str) -> str:
        return self.base + uid

    def uid(self, url_or_path: str) -> str | None:
        """The uid of a URL (or a path) under the source, or None if outside it.

        Fragments, queries and ``fcr:`` sub-paths (metadata, versions, ACLs) are
        cut off: they name parts of the resource.
        """
        text = url_or_path.strip()
        if "://" in text:
            if text == self.base:
                return "/"
            if not text.startswith(self.base + "/"):
                return None
            text = text[len(self.base):]
        elif not text.startswith("/"):
            text = "/" + text
        text = text.split("#")[0].split("?")[0]
        segments = []
        for seg in text.split("/"):
            if seg.lower().startswith("fcr:"):
                break
            if seg:
                segments.append(seg)
        return "/" + "/".join(segments)

    def term_uid(self, term: str) -> str | None:
        """The uid of an IRI term (``<...>``) under the source, or None."""
        if term.startswith("<") and term.endswith(">"):
            return self.uid(term[1:-1])
        return None


def _parse_digest_header(value: str | None) -> dict[str, str]:
    """``Digest: sha-512=<base64>, md5=<base64>`` -> {hashlib name: hex}."""
    from lakesuperior.store.binaries import normalize_algorithm, normalize_digest
    out: dict[str, str] = {}
    for part in (value or "").split(","):
        name, sep, val = part.strip().partition("=")
        if not sep:
            continue
        try:
            algo = normalize_algorithm(name)
            out[algo] = normalize_digest(algo, val.strip())
        except (UnsupportedDigestError, InvalidDigestError):
            continue
    return out


def _read_list_file(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        raise AdminError(f"Cannot read the list file {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise AdminError(f"The list file {path} is not UTF-8 text: {e}") from e
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def migrate(source_url: str, config: Config, *, start: Iterable[str] = ("/",),
            list_file: str | None = None, auth: tuple[str, str] | None = None,
            skip_errors: bool = False, timeout: float = 60.0,
            progress: Progress = _QUIET, client: HttpClient | None = None) -> MigrationReport:
    """Copy the resources of an LDP / Fedora server into a new repository in
    ``config.data_dir`` (empty or new).

    The crawl begins at ``start`` (paths or URLs under ``source_url``) and at
    each line of ``list_file``, and follows containment and every link to
    another resource under ``source_url``, parents before children. For each
    resource it copies the client triples (server-managed ones are dropped and
    made anew; links to the source become links to the new repository) with
    the interaction model, and for a binary its content, verified against
    every digest the source gives (``Digest`` header, ``premis:hasMessageDigest``),
    its media type and file name. A resource the source answers 404 or 410
    for is skipped (a link to a deleted resource); any other error stops the
    migration with ``MigrationError`` and leaves nothing behind, unless
    ``skip_errors``, which records it and goes on. Versions and tombstones are
    not copied.
    """
    from lakesuperior.admin.http import HttpClient, HttpError
    from lakesuperior.repository import Repository

    t0 = time.perf_counter()
    dest = os.path.abspath(config.data_dir)
    if os.path.exists(dest) and (not os.path.isdir(dest) or _has_content(dest)):
        raise AdminError(f"The migration destination {dest} is not empty: give a new or "
                         "empty directory")
    own_client = client is None
    http = client or HttpClient(auth=auth, timeout=timeout)
    src = _Source(source_url, http)
    starts = list(start)
    if list_file:
        starts += _read_list_file(list_file)
    queue: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    seq = 0

    def enqueue(uid: str) -> None:
        nonlocal seq
        if uid not in seen:
            seen.add(uid)
            seq += 1
            heapq.heappush(queue, (uid.count("/") if uid != "/" else 0, seq, uid))

    for item in starts:
        uid = src.uid(item)
        if uid is None:
            raise AdminError(f"Starting point {item!r} is not under the source {src.base}")
        enqueue(uid)
    if not queue:
        raise AdminError("Nothing to migrate: the list of starting points is empty")
    try:
        _probe(src, queue[0][2])   # the source must answer before anything is created
    except BaseException:
        if own_client:
            http.close()
        raise
    start_uids = set(seen)
    report = MigrationReport(src.base, dest)
    staging = _staging_dir(dest, "migrating")
    cfg = config.with_(data_dir=staging, sync=False, referential_integrity="off",
                       allow_foreign_subjects=True)
    try:
        with Repository(config=cfg) as repo:
            progress.start("Migrating", None)
            try:
                while queue:
                    _, _, uid = heapq.heappop(queue)
                    url = src.url(uid)
                    try:
                        _migrate_one(src, repo, uid, url, report, enqueue,
                                     uid in start_uids)
                    except _Failure as e:
                        if not skip_errors:
                            raise MigrationError(f"{url}: {e}") from None
                        report.failed.append((url, str(e)))
                    except HttpError as e:
                        if not skip_errors:
                            raise MigrationError(str(e)) from e
                        report.failed.append((url, str(e)))
                    except LakesuperiorError as e:
                        if not skip_errors:
                            raise MigrationError(f"{url}: {e}") from e
                        report.failed.append((url, str(e)))
                    progress.advance()
            finally:
                progress.finish()
            progress.start("Indexing the new repository", None)
            repo.store.index()
            progress.finish()
        _fsync_tree(staging)
        if os.path.isdir(dest):
            os.rmdir(dest)
        os.rename(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if own_client:
            http.close()
    report.seconds = time.perf_counter() - t0
    return report


def _probe(src: _Source, uid: str) -> None:
    """Check that the source answers like an LDP server (``MigrationError`` if not)."""
    from lakesuperior.admin.http import HttpError
    url = src.url(uid)
    try:
        resp = src.client.request("HEAD", url, headers={"Accept": _RDF_ACCEPT})
    except HttpError as e:
        raise MigrationError(f"Cannot reach the migration source: {e}") from e
    if resp.status in (401, 403):
        raise MigrationError(f"The migration source refused access to {url} ({resp.status} "
                             f"{resp.reason}): give credentials with --auth USER:PASS")
    if not resp.ok:
        raise MigrationError(f"The migration source answered {resp.status} {resp.reason} "
                             f"for {url}")
    if _model_from_links(resp) is None:
        raise MigrationError(f"{url} does not answer like an LDP server (no Link header "
                             "with rel=\"type\" naming an LDP interaction model)")


def _model_from_links(resp: Any) -> str | None:
    types = {"<" + t + ">" for t in resp.link_targets("type")}
    return interaction.model_of(types)


def _get_rdf(src: _Source, url: str) -> list[tuple[str, str, str]]:
    """GET an RDF representation and parse it (``_Failure`` if it is not RDF)."""
    from lakesuperior import rdfio
    resp = src.client.request("GET", url, headers={"Accept": _RDF_ACCEPT,
                                                   "Prefer": _OMIT_MEMBERSHIP})
    if not resp.ok:
        raise _Failure(f"GET answered {resp.status} {resp.reason}: {resp.excerpt()}")
    ctype = resp.content_type
    if ctype not in rdfio.PARSEABLE:
        raise _Failure(f"GET answered {ctype or 'no media type'}, which is not RDF")
    try:
        return rdfio.parse(resp.body, ctype, url)
    except LakesuperiorError as e:
        raise _Failure(f"the {ctype} representation is not valid RDF: {e}") from e


def _migrate_one(src: _Source, repo: Repository, uid: str, url: str,
                 report: MigrationReport, enqueue: Any, is_start: bool) -> None:
    head = src.client.request("HEAD", url, headers={"Accept": _RDF_ACCEPT})
    if head.status in (404, 410) and is_start:
        raise _Failure(f"the starting point answered {head.status} {head.reason}")
    if head.status in (404, 410):
        why = "deleted (410 Gone)" if head.status == 410 else "not found (404)"
        report.skipped.append((url, why))
        return
    if not head.ok:
        raise _Failure(f"HEAD answered {head.status} {head.reason}")
    model = _model_from_links(head)
    if model is None:
        raise _Failure("the response has no LDP interaction model (Link rel=\"type\"): "
                       "is this an LDP server?")
    if model == interaction.NON_RDF_SOURCE:
        described = head.link_targets("describedby")
        triples = _get_rdf(src, described[0] if described else url + "/fcr:metadata")
    else:
        triples = _get_rdf(src, url)
    user, digests, filename = _convert(src, repo, uid, triples, enqueue)
    if model == interaction.NON_RDF_SOURCE:
        _copy_content(src, repo, uid, url, user, digests, filename, report)
    else:
        if uid != "/" or user:
            data = "".join(f"{s} {p} {o} .\n" for s, p, o in user).encode("utf-8")
            repo.create_or_replace(uid, data=data, media_type="application/n-triples",
                                   interaction_model=model, handling="lenient")
        report.rdf_sources += 1
    report.triples += len(user)


def _convert(src: _Source, repo: Repository, uid: str,
             triples: list[tuple[str, str, str]], enqueue: Any):
    """Client triples with source links rewritten to the new repository, the
    digests and file name a binary description records; enqueue linked resources."""
    old, new = "<" + src.base, "<" + repo.base_uri
    n = len(old)

    def rebase(term: str) -> str:
        if term.startswith(old) and term[n:n + 1] in ("/", ">", "#", "?"):
            return new + term[n:]
        return term

    user = []
    digests: dict[str, str] = {}
    filename = None
    for s, p, o in triples:
        if p == LDP_CONTAINS:
            child = src.term_uid(o)
            if child is not None:
                enqueue(child)
            continue
        if is_server_managed(p, o):
            algo, value = parse_digest_urn(o)
            if algo:
                digests[algo] = value.lower()
            continue
        if p in (_IANA_DESCRIBEDBY, _IANA_DESCRIBES):
            continue
        for term in (s, o):
            linked = src.term_uid(term)
            if linked is not None and linked != uid:
                enqueue(linked)
        if p == EBUCORE_FILENAME and filename is None and o.startswith('"'):
            filename = lexical(o)
            continue
        user.append((rebase(s), p, rebase(o)))
    return user, digests, filename


def _copy_content(src: _Source, repo: Repository, uid: str, url: str,
                  user: list[tuple[str, str, str]], digests: dict[str, str],
                  filename: str | None, report: MigrationReport) -> None:
    resp, stream = src.client.open("GET", url, headers={"Want-Digest": _WANT_DIGEST})
    try:
        if resp.status != 200:
            raise _Failure(f"GET of the content answered {resp.status} {resp.reason}"
                           + (" (external content is not migrated)"
                              if 300 <= resp.status < 400 else ""))
        for algo, value in _parse_digest_header(resp.headers.get("Digest")).items():
            if digests.setdefault(algo, value) != value:
                raise _Failure(f"the source's {algo} digests disagree: {digests[algo]} in "
                               f"the description, {value} in the Digest header")
        if not digests:
            report.unverified.append(url)
        mimetype = resp.headers.get("Content-Type") or "application/octet-stream"
        with repo.transaction():
            _, res = repo.create_or_replace(uid, stream=stream, media_type=mimetype.strip(),
                                            interaction_model=interaction.NON_RDF_SOURCE,
                                            digests=digests or None, filename=filename,
                                            handling="lenient")
            if user:
                repo.update_delta(uid, None, user, handling="lenient")
        report.binaries += 1
        report.binary_bytes += res.size
    finally:
        stream.close()


def iter_rows(report: MigrationReport) -> Iterator[tuple[str, str, str]]:
    """The skipped and failed resources of a migration as ``(status, url, why)`` rows."""
    for url, why in report.skipped:
        yield "skipped", url, why
    for url, why in report.failed:
        yield "failed", url, why
