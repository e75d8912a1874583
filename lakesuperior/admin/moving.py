"""Moving a repository's binary content from one backend to the other
(``lsup-admin binaries move --to s3|file``).

Every binary the store names (live resources, tombstones, versions: one read
snapshot) is copied from the other backend into ``to``, streamed and hashed on
the way: a copy that does not hash to its digest is not kept and is reported
(``corrupt``), content absent from the source too (``missing``). Content the
target holds already is skipped, so an interrupted move resumes where it
stopped and a second run copies only what was written meanwhile. Nothing is
removed from the source (reads keep being served from it while the move
runs) unless ``remove_source``, which is refused until the configuration names
``to`` as the backend: only then does nothing read the source any more.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from lakesuperior.admin.cleanup import referenced
from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.config import BINARY_BACKENDS
from lakesuperior.exceptions import AdminError, BinaryNotFoundError
from lakesuperior.repository import Repository
from lakesuperior.store.backends import BinaryBackend, open_backend

__all__ = ["MoveReport", "move_binaries"]


@dataclass
class MoveReport:
    """What ``move_binaries`` did."""

    source: str
    target: str
    copied: int = 0
    copied_bytes: int = 0
    present: int = 0                                    #: already in the target: skipped
    removed: int = 0                                    #: removed from the source
    missing: list[str] = field(default_factory=list)    #: in neither backend
    corrupt: list[str] = field(default_factory=list)    #: source content not matching

    @property
    def ok(self) -> bool:
        return not (self.missing or self.corrupt)


def move_binaries(repo: Repository, to: str, *, remove_source: bool = False,
                  progress: Progress = QUIET) -> MoveReport:
    """Copy every binary ``repo`` names into the backend ``to`` (see the module doc)."""
    if to not in BINARY_BACKENDS:
        raise AdminError(f"Unknown binary backend {to!r}: one of {', '.join(BINARY_BACKENDS)}")
    if remove_source and repo.config.binaries_backend != to:
        raise AdminError(f"The configuration still names binaries.backend: "
                         f"{repo.config.binaries_backend}, which the server reads from: set "
                         f"it to {to} (and restart the server) before removing the source")
    source = open_backend(repo.config, "file" if to == "s3" else "s3")
    target = repo.binaries if repo.config.binaries_backend == to else open_backend(
        repo.config, to)
    report = MoveReport(source.describe(), target.describe())
    wanted = sorted(referenced(repo))
    progress.start(f"Copying binaries to {to}", len(wanted))
    try:
        keep = frozenset(wanted)
        for digest in wanted:
            _move_one(source, target, digest, report, keep)
            progress.advance()
    finally:
        progress.finish()
    if remove_source and report.ok:
        for digest in wanted:
            report.removed += source.delete(digest)
    return report


def _move_one(source: BinaryBackend, target: BinaryBackend, digest: str,
              report: MoveReport, keep: frozenset[str]) -> None:
    if digest in target:
        report.present += 1
        return
    try:
        fh = source.open(digest)
    except BinaryNotFoundError:
        report.missing.append(digest)
        return
    with fh:
        info = target.put(fh)
    if info.digest != digest:              # the source's bytes changed: not kept
        if info.digest not in keep:
            target.delete(info.digest)
        report.corrupt.append(digest)
        return
    report.copied += 1
    report.copied_bytes += info.size
