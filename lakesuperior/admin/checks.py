"""Checks over a whole repository: fixity of every binary, referential integrity,
and which resources use a content file."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.admin.stats import binary_uids
from lakesuperior.model.checks import FixityResult, IntegrityReport
from lakesuperior.model.namespaces import PREMIS_HAS_MESSAGE_DIGEST
from lakesuperior.model.nonrdf import digest_urn
from lakesuperior.model.uids import graph_kind, normalize_uid, parent_uid, uid_of_graph
from lakesuperior.model.versions import live_version
from lakesuperior.repository import Repository

__all__ = ["FixityReport", "check_fixity", "check_refint", "content_users", "integrity_rows"]


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
                 progress: Progress = QUIET) -> FixityReport:
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
    rows = [("broken_link", uid, target) for uid, target in report.broken_links]
    rows += [("dangling_child", uid, child) for uid, child in report.dangling_children]
    rows += [("missing_parent", uid, parent_uid(uid) or "") for uid in report.missing_parent]
    rows += [("not_contained", uid, parent_uid(uid) or "") for uid in report.not_contained]
    rows += [("missing_content", uid, "") for uid in report.missing_content]
    return rows


def content_users(repo: Repository, digests: Iterable[str]) -> dict[str, list[str]]:
    """The resources whose description names each content digest (store
    algorithm), sorted: a live binary by its uid, a version by its memento path
    (``/a/fcr:versions/20240101000000``), a deleted binary as ``/a (deleted)``."""
    algo = repo.binaries.algorithm
    out: dict[str, list[str]] = {}
    with repo.snapshot() as ctx:
        txn = ctx.txn
        for digest in digests:
            users = set()
            for _s, _p, _o, g in txn.match(None, PREMIS_HAS_MESSAGE_DIGEST,
                                           digest_urn(algo, digest), None):
                kind = graph_kind(g)
                if kind is not None:
                    uid = uid_of_graph(g)
                    users.add(uid + (" (deleted)" if kind == "bury" else ""))
                    live = live_version(txn, uid) if kind == "res" else None
                    if live is not None:     # a version sharing the current record
                        users.add(f"{uid}/fcr:versions/{live}")
            out[digest] = sorted(users)
    return out
