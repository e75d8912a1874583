"""Clean-up: binary content no description refers to, leftover upload files, and
staging directories of killed backups, restores and migrations."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from lakesuperior.admin.files import remove_stale_staging
from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.model.checks import referenced_digests
from lakesuperior.repository import Repository

__all__ = ["CleanupReport", "cleanup", "referenced"]


@dataclass
class CleanupReport:
    """What ``cleanup`` removed (or, with ``dry_run``, would remove), and what it
    left because it was younger than ``min_age``."""

    dry_run: bool
    min_age: float = 3600.0
    orphans: list[tuple[str, int]] = field(default_factory=list)     #: (digest, bytes)
    temp_files: list[tuple[str, int]] = field(default_factory=list)  #: (file name, bytes)
    #: stale staging directories beside the data directory: (name, bytes)
    staging_dirs: list[tuple[str, int]] = field(default_factory=list)
    #: orphans and temporary files left for being younger than ``min_age``: (name, bytes)
    young: list[tuple[str, int]] = field(default_factory=list)

    @property
    def bytes_freed(self) -> int:
        return sum(n for _, n in self.orphans + self.temp_files + self.staging_dirs)


def referenced(repo: Repository) -> set[str]:
    """Digests of the content that live resources, tombstones and versions name."""
    with repo.snapshot() as ctx:
        return referenced_digests(ctx)


def cleanup(repo: Repository, *, dry_run: bool = False, min_age: float = 3600.0,
            progress: Progress = QUIET) -> CleanupReport:
    """Remove binary content files no description refers to (left by purges,
    replacements whose old content is no longer versioned, and aborted writes)
    and leftover temporary upload files, when older than ``min_age`` seconds
    (younger ones may belong to a write in progress: they are listed in
    ``young``), and the stale staging directories beside the data directory
    (see ``files.stale_staging``).

    Content still named by a live resource, a tombstone or a version is kept.
    """
    report = CleanupReport(dry_run, min_age)
    binaries = repo.binaries
    keep = referenced(repo)
    limit = time.time() - min_age
    stored = list(binaries.objects())
    progress.start("Looking for orphan binaries", len(stored))
    try:
        for digest, size, mtime in stored:
            progress.advance()
            if digest in keep:
                continue
            if mtime > limit:
                report.young.append((digest, size))
                continue
            if dry_run or binaries.delete(digest):
                report.orphans.append((digest, size))
    finally:
        progress.finish()
    for name, size, mtime in list(binaries.leftovers()):
        if mtime > limit:
            report.young.append((name, size))
        elif dry_run or binaries.remove_leftover(name):
            report.temp_files.append((name, size))
    parent = os.path.dirname(os.path.abspath(repo.config.data_dir))
    report.staging_dirs = remove_stale_staging(parent, dry_run=dry_run)
    return report
