"""Backup and restore.

A backup is a directory::

    DEST/manifest.json   what was copied: counts, digest algorithm, formats, versions
    DEST/ldprs/          the LMDB store, copied from one read snapshot
    DEST/ldpnr/          the binaries that snapshot refers to, re-hashed as copied
                         (with the S3 backend, only with ``with_binaries``)
    DEST/users.json      the users (names, password hashes, admin flags), mode 0600

It is itself a data directory (``LSUP_DATA_DIR=DEST`` opens it). The store
copy is taken from one LMDB read snapshot, so it is consistent while other
processes (a running server) keep writing; the union-graph index, which is
derived data, is rebuilt from that snapshot inside the backup rather than
copied, so it always matches it. Both operations build their result in a
staging directory beside the destination and rename it into place only when it
is complete and verified; an interruption (``KeyboardInterrupt``) removes it,
and a backup removes the staging directories killed backups left beside its
destination (``files.stale_staging``).

With the S3 binary backend (``binaries.backend: s3``) a backup copies the
objects only when asked (``with_binaries``): by default it records in the
manifest where they are and, for each object the snapshot refers to, its
digest and size (``s3_objects``), after checking that each exists; the objects
stay in the bucket, whose own protection (versioning, replication) is the
binaries' backup. A restore then checks that every object the store names is
in the configured backend, and fails if one is not. A backup with ``ldpnr/``
restores into either backend: its files are re-hashed and stored there; if the
restore then fails, the objects it added to the bucket are deleted again.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from lakesuperior.admin.checks import content_users
from lakesuperior.admin.cleanup import referenced
from lakesuperior.admin.files import (
    dir_bytes,
    has_content,
    inside,
    promote,
    remove_stale_staging,
    staging_dir,
    unlink,
)
from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.auth.users import USERS_FILE, UserDB
from lakesuperior.config import Config
from lakesuperior.exceptions import AdminError, BinaryNotFoundError
from lakesuperior.repository import Repository
from lakesuperior.store import private
from lakesuperior.store.backends import open_backend
from lakesuperior.store.binaries import BinaryStore
from lakesuperior.store.quadstore import FORMAT_VERSION
from lakesuperior.version import __version__

__all__ = ["BACKUP_FORMAT", "MANIFEST", "BackupReport", "backup", "read_manifest",
           "RestoreReport", "restore"]

BACKUP_KIND = "lakesuperior-backup"
BACKUP_FORMAT = 1
MANIFEST = "manifest.json"
_COUNT_KEYS = ("resources", "tombstones", "versions", "binaries", "binary_bytes", "quads",
               "graphs")


@dataclass
class BackupReport:
    """What ``backup`` wrote, and the source content it could not copy."""

    path: str
    counts: dict[str, int]
    store_bytes: int
    seconds: float
    missing_binaries: list[str] = field(default_factory=list)
    corrupt_binaries: list[str] = field(default_factory=list)
    #: digest of missing or corrupt content -> the resources using it (``content_users``)
    users: dict[str, list[str]] = field(default_factory=dict)
    #: stale staging directories of killed backups removed beside ``path``
    stale_removed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing_binaries or self.corrupt_binaries)

    @property
    def problems(self) -> list[str]:
        """One line per missing or corrupt content file, naming the resources using it."""
        out = [f"MISSING content of {self._named(d)} (digest {d}): not in the source "
               "repository" for d in self.missing_binaries]
        out += [f"CORRUPT content of {self._named(d)} (digest {d}): the source file does "
                "not match its digest; not copied" for d in self.corrupt_binaries]
        return out

    def _named(self, digest: str) -> str:
        return ", ".join(self.users.get(digest) or ["no resource"])


@dataclass
class RestoreReport:
    """What ``restore`` restored, and the problems the backup already recorded."""

    path: str
    counts: dict[str, int]
    seconds: float
    problems: list[str] = field(default_factory=list)
    #: stale staging directories of killed restores removed beside ``path``
    stale_removed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _counts(repo: Repository) -> dict[str, int]:
    st = repo.stats()
    counts = {k: int(st[k]) for k in ("resources", "tombstones", "versions", "binaries",
                                      "binary_bytes")}
    counts["quads"] = int(st["store"]["quads"])
    counts["graphs"] = int(st["store"]["graphs"])
    return counts


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


def _list_binary(src: Any, digest: str, listed: dict[str, int], missing: list[str]) -> None:
    """Record a stored object's size under its digest (not copied), or that it is missing."""
    try:
        listed[digest] = src.size(digest)
    except BinaryNotFoundError:
        missing.append(digest)


def backup(repo: Repository, dest: str | os.PathLike, *, with_binaries: bool = False,
           progress: Progress = QUIET) -> BackupReport:
    """Write a backup of ``repo`` to the new directory ``dest`` (see the module doc).

    Safe while other processes write: the store is copied from one read
    snapshot, and exactly the binaries that snapshot refers to are copied
    (each re-hashed on the way); with the S3 backend they are only listed,
    unless ``with_binaries`` (see the module doc). Content missing or altered in
    the source is reported (``missing_binaries``, ``corrupt_binaries``), not copied.
    ``AdminError`` if ``dest`` exists or lies inside the data directory.
    """
    t0 = time.perf_counter()
    dest = os.path.abspath(os.fspath(dest))
    if os.path.lexists(dest):
        raise AdminError(f"The backup destination {dest} exists already: give a new path")
    if inside(dest, repo.config.data_dir):
        raise AdminError(f"The backup destination {dest} is inside the data directory")
    stale = [name for name, _ in remove_stale_staging(os.path.dirname(dest))]
    staging = staging_dir(dest, "partial")
    try:
        progress.start("Copying the store", None)
        store_dir = os.path.join(staging, "ldprs")
        # Compacting: every table rewritten in key order (no free pages, full
        # leaves), from one snapshot (QuadStore.copy).
        repo.copy_store(store_dir, compact=True)
        # The union index is derived; its copy comes from a later snapshot than
        # the main copy, so drop it and rebuild it from the main copy.
        shutil.rmtree(os.path.join(store_dir, "index"), ignore_errors=True)
        progress.finish()
        copies = with_binaries or repo.config.binaries_backend == "file"
        cfg = repo.config.with_(data_dir=staging, sync=False, binaries_backend="file")
        with Repository(config=cfg) as copy:
            progress.start("Rebuilding the union index of the copy", None)
            copy.index()
            progress.finish()
            wanted = sorted(referenced(copy))
            keep = frozenset(wanted)
            missing: list[str] = []
            corrupt: list[str] = []
            listed: dict[str, int] = {}
            progress.start("Copying binaries" if copies else "Listing binaries", len(wanted))
            try:
                for digest in wanted:
                    if copies:
                        _copy_binary(repo.binaries, copy.binaries, digest, missing, corrupt,
                                     keep)
                    else:
                        _list_binary(repo.binaries, digest, listed, missing)
                    progress.advance()
            finally:
                progress.finish()
            counts = _counts(copy)
            if not copies:              # the objects stay where the restore will find them
                counts.update(binaries=len(listed), binary_bytes=sum(listed.values()))
            users = content_users(copy, missing + corrupt)
        manifest = {
            "kind": BACKUP_KIND, "backup_format": BACKUP_FORMAT,
            "lakesuperior_version": __version__,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "source": os.path.abspath(repo.config.data_dir),
            "store_format": int(FORMAT_VERSION), "digest_algorithm": repo.binaries.algorithm,
            "counts": counts, "missing_binaries": missing, "corrupt_binaries": corrupt,
            "binary_users": users,
            **({} if copies else {"s3_objects": {
                "location": repo.binaries.describe(), "objects": listed}}),
            "users": UserDB(repo.config.data_dir).copy_to(staging),
        }
        with open(os.path.join(staging, MANIFEST), "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=2)
        for name in ("lock.mdb", os.path.join("index", "lock.mdb")):
            unlink(os.path.join(store_dir, name))
        promote(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BackupReport(dest, counts, dir_bytes(dest), time.perf_counter() - t0,
                        missing, corrupt, users, stale)


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
    if store_format != int(FORMAT_VERSION):
        raise AdminError(f"The backup in {src} holds a store of format {store_format!r}; "
                         f"this Lakesuperior reads format {int(FORMAT_VERSION)}. Restore it "
                         "with the Lakesuperior that made it, then migrate.")
    counts = manifest.get("counts")
    if not isinstance(counts, dict) or any(not isinstance(counts.get(k), int)
                                           for k in _COUNT_KEYS):
        raise AdminError(f"The backup manifest {path} has no valid counts")
    if not os.path.isfile(os.path.join(src, "ldprs", "data.mdb")):
        raise AdminError(f"The backup in {src} is incomplete: ldprs/data.mdb is missing")
    return manifest


def restore(src: str | os.PathLike, config: Config, *,
            progress: Progress = QUIET) -> RestoreReport:
    """Restore the backup in ``src`` into ``config.data_dir``, which must be empty
    or not exist, and verify the result: every binary re-hashed, the store
    opened and its counts compared with the manifest, every binary the store
    refers to present. Nothing is left in the data directory unless all of
    that succeeds (problems already recorded in the backup's manifest are
    reported, not fatal).
    """
    t0 = time.perf_counter()
    src = os.path.abspath(os.fspath(src))
    manifest = read_manifest(src)
    data_dir = os.path.abspath(config.data_dir)
    if inside(data_dir, src) or inside(src, data_dir):
        raise AdminError("The backup and the data directory must not contain each other")
    if os.path.exists(data_dir) and (not os.path.isdir(data_dir) or has_content(data_dir)):
        raise AdminError(f"The data directory {data_dir} is not empty: restore into an "
                         "empty or new directory")
    algo = manifest.get("digest_algorithm")
    if algo != config.digest_algorithm:
        raise AdminError(f"The backup stores binaries by {algo} digest, but the "
                         f"configuration says digest_algorithm: {config.digest_algorithm}; "
                         f"set digest_algorithm to {algo} (LSUP_DIGEST_ALGORITHM={algo})")
    listed = manifest.get("s3_objects")
    if isinstance(listed, dict) and config.binaries_backend != "s3":
        raise AdminError(f"The backup in {src} lists its binaries as objects in "
                         f"{listed.get('location')}, not copied: restore it with "
                         "binaries.backend: s3 and that bucket configured")
    stale = [name for name, _ in remove_stale_staging(os.path.dirname(data_dir))]
    staging = staging_dir(data_dir, "restoring")
    problems: list[str] = []
    dst_bin: Any = None
    created: list[str] = []     # objects this restore put in an object store
    try:
        progress.start("Copying the store", None)
        src_store = os.path.join(src, "ldprs")
        for dirpath, _dirs, files in os.walk(src_store):
            rel = os.path.relpath(dirpath, src_store)
            target = os.path.normpath(os.path.join(staging, "ldprs", rel))
            private.make_dirs(target)
            for name in files:
                if name != "lock.mdb":
                    private.copy_file(os.path.join(dirpath, name), os.path.join(target, name))
        progress.finish()
        src_bin = BinaryStore(os.path.join(src, "ldpnr"), algo) if os.path.isdir(
            os.path.join(src, "ldpnr")) else None
        dst_bin = open_backend(config.with_(data_dir=staging))
        # An object store outlives the staging folder: what a failed restore put
        # there is removed again (objects it already held are left alone).
        outside = config.binaries_backend != "file"
        digests = list(src_bin) if src_bin is not None else []
        keep = frozenset(digests)
        corrupt: list[str] = []
        progress.start("Copying and verifying binaries", len(digests))
        try:
            for digest in digests:
                if outside and not dst_bin.exists(digest):
                    created.append(digest)
                _copy_binary(src_bin, dst_bin, digest, corrupt, corrupt, keep)
                progress.advance()
        finally:
            progress.finish()
        nothing = "; nothing was written to the data directory"
        if corrupt:
            raise AdminError(f"Restore verification failed: {len(corrupt)} binaries in the "
                             f"backup do not match their digest (first: {corrupt[0]})"
                             + nothing)
        if os.path.isfile(os.path.join(src, USERS_FILE)):
            UserDB(src).users()      # StoreError if the backup's user file is unusable
            private.copy_file(os.path.join(src, USERS_FILE), os.path.join(staging, USERS_FILE))
        progress.start("Verifying the restored repository", None)
        known = set(manifest.get("missing_binaries") or []) | set(
            manifest.get("corrupt_binaries") or [])
        users = manifest.get("binary_users")
        users = users if isinstance(users, dict) else {}
        problems += [f"binary {d} was already missing or corrupt when the backup was made"
                     + (f" (used by {', '.join(map(str, users[d]))})"
                        if isinstance(users.get(d), list) and users[d] else "")
                     for d in sorted(known)]
        with Repository(config=config.with_(data_dir=staging)) as repo:
            repo.index()
            absent = sorted(d for d in referenced(repo) if d not in repo.binaries)
            unexpected = [d for d in absent if d not in known]
            if unexpected:
                where = (repo.binaries.describe() if isinstance(listed, dict)
                         else "the backup")
                raise AdminError(f"Restore verification failed: {len(unexpected)} binaries "
                                 f"the store refers to are missing from {where} (first: "
                                 f"{unexpected[0]})" + nothing)
            counts = _counts(repo)
            for key in _COUNT_KEYS:
                if counts[key] != manifest["counts"][key]:
                    raise AdminError(f"Restore verification failed: {key} is {counts[key]} "
                                     f"but the backup recorded {manifest['counts'][key]}"
                                     + nothing)
        progress.finish()
        promote(staging, data_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for digest in created:
            with suppress(Exception):   # the restore's own error is the one to see
                dst_bin.delete(digest)
        raise
    return RestoreReport(data_dir, counts, time.perf_counter() - t0, problems, stale)
