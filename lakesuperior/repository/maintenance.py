"""The archivists' methods of ``Repository`` (bound in its class body): fixity and
integrity checks, statistics, and clean-up of unreferenced binary content."""
from __future__ import annotations

from typing import Any

from lakesuperior.model import checks
from lakesuperior.model.uids import normalize_uid
from lakesuperior.repository.core import Repository

__all__ = ["fixity_check", "integrity_check", "stats", "cleanup"]


def fixity_check(repo: Repository, uid: str) -> checks.FixityResult:
    """Re-hash a binary's content against its recorded digest."""
    uid = normalize_uid(uid)
    with repo.snapshot() as ctx:
        return checks.fixity_check(ctx, uid)

def integrity_check(repo: Repository) -> checks.IntegrityReport:
    """Check containment, parents, binary content and links of every resource."""
    with repo.snapshot() as ctx:
        return checks.integrity_check(ctx)

def stats(repo: Repository) -> dict[str, Any]:
    """Counts (resources, tombstones, versions, binaries) and store sizes."""
    with repo.snapshot() as ctx:
        return checks.stats(ctx, repo.store)

def cleanup(repo: Repository, *, min_age: float = 3600.0) -> dict[str, int]:
    """Remove binary content no description refers to (left by purges and by
    aborted writes, which store the file before the transaction) and
    leftover temporary files, when older than ``min_age`` seconds."""
    with repo.snapshot() as ctx:
        referenced = checks.referenced_digests(ctx)
    return {"orphans": checks.remove_orphans(repo.binaries, referenced, min_age),
            "temp_files": repo.binaries.remove_temp_files(min_age)}
