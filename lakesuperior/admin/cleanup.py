"""Clean-up: binary content no description refers to, leftover upload files."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.model.checks import referenced_digests
from lakesuperior.model.context import Context
from lakesuperior.repository import Repository

__all__ = ["CleanupReport", "cleanup", "referenced"]


@dataclass
class CleanupReport:
    """What ``cleanup`` removed (or, with ``dry_run``, would remove)."""

    dry_run: bool
    orphans: list[tuple[str, int]] = field(default_factory=list)     #: (digest, bytes)
    temp_files: list[tuple[str, int]] = field(default_factory=list)  #: (file name, bytes)

    @property
    def bytes_freed(self) -> int:
        return sum(n for _, n in self.orphans) + sum(n for _, n in self.temp_files)


def referenced(repo: Repository) -> set[str]:
    """Digests of the content that live resources, tombstones and versions name."""
    with repo.store.read() as txn:
        return referenced_digests(Context(txn, repo.settings, repo.binaries, repo.urimap))


def cleanup(repo: Repository, *, dry_run: bool = False, min_age: float = 3600.0,
            progress: Progress = QUIET) -> CleanupReport:
    """Remove binary content files no description refers to (left by purges,
    replacements whose old content is no longer versioned, and aborted writes)
    and leftover temporary upload files, when older than ``min_age`` seconds
    (younger ones may belong to a write in progress).

    Content still named by a live resource, a tombstone or a version is kept.
    """
    report = CleanupReport(dry_run)
    binaries = repo.binaries
    keep = referenced(repo)
    limit = time.time() - min_age
    stored = list(binaries)
    progress.start("Looking for orphan binaries", len(stored))
    try:
        for digest in stored:
            progress.advance()
            if digest in keep:
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
