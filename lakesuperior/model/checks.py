"""Administrative checks: fixity, integrity, statistics, clean-up of orphan files."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from lakesuperior.exceptions import BinaryNotFoundError, IncompatibleLdpTypeError
from lakesuperior.model import interaction
from lakesuperior.model.context import Context
from lakesuperior.model.lookup import require_model
from lakesuperior.model.namespaces import (
    FCREPO_HAS_PARENT,
    FCREPO_HAS_VERSION,
    LDP_CONTAINS,
    PREMIS_HAS_MESSAGE_DIGEST,
    RDF_TYPE,
)
from lakesuperior.model.nonrdf import parse_digest_urn
from lakesuperior.model.uids import (
    RES_PREFIX,
    graph_kind,
    parent_uid,
    res_uri,
    uid_of,
    uid_of_graph,
)
from lakesuperior.store.backends import BinaryBackend
from lakesuperior.store.quadstore import QuadStore


@dataclass(frozen=True)
class FixityResult:
    """Outcome of a fixity check: ``ok`` is True when the content still hashes
    to the recorded digest."""

    uid: str
    algorithm: str
    expected: str
    actual: str | None
    size: int | None
    ok: bool
    message: str = ""


def fixity_check(ctx: Context, uid: str) -> FixityResult:
    """Re-hash a binary's content and compare it with its recorded digest."""
    txn = ctx.txn
    model = require_model(txn, uid)
    if model != interaction.NON_RDF_SOURCE:
        raise IncompatibleLdpTypeError(uid, f"{uid} is a {interaction.model_name(model)}: only "
                                            "binaries have a fixity to check")
    res = res_uri(uid)
    store = ctx.binaries
    algo = store.algorithm
    expected = None
    for q in txn.match(res, PREMIS_HAS_MESSAGE_DIGEST, None, res):
        a, value = parse_digest_urn(q[2])
        if a == algo:
            expected = value
    if expected is None:
        return FixityResult(uid, algo, "", None, None, False,
                            f"No {algo} digest is recorded for {uid}")
    try:
        actual = store.compute(expected, [algo])[algo]
        size = store.size(expected)
    except BinaryNotFoundError:
        return FixityResult(uid, algo, expected, None, None, False,
                            "The content file is missing")
    ok = actual == expected
    return FixityResult(uid, algo, expected, actual, size, ok,
                        "" if ok else "The content does not match its digest")


@dataclass
class IntegrityReport:
    """Problems found by ``integrity_check`` (empty lists: all is well)."""

    resources: int = 0
    missing_parent: list[str] = field(default_factory=list)
    not_contained: list[str] = field(default_factory=list)
    dangling_children: list[tuple[str, str]] = field(default_factory=list)
    missing_content: list[str] = field(default_factory=list)
    broken_links: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing_parent or self.not_contained or self.dangling_children
                    or self.missing_content or self.broken_links)


def integrity_check(ctx: Context) -> IntegrityReport:
    """Walk every live resource: parents exist and contain their children, every
    containment triple points at a live resource, binaries have their content,
    links to repository resources resolve (informative: deleting a resource does
    not rewrite the links to it)."""
    txn = ctx.txn
    report = IntegrityReport()
    store = ctx.binaries
    for g in txn.graphs():
        if graph_kind(g) != "res":
            continue
        uid = uid_of_graph(g)
        report.resources += 1
        res = res_uri(uid)
        parent = parent_uid(uid)
        if parent is not None:
            if not txn.has_graph(res_uri(parent)):
                report.missing_parent.append(uid)
            elif not txn.count(res_uri(parent), LDP_CONTAINS, res, res_uri(parent)):
                report.not_contained.append(uid)
        for _s, p, o in txn.triples(g):
            if p == LDP_CONTAINS:
                if not txn.has_graph(o):
                    report.dangling_children.append((uid, uid_of(o)))
            elif p == PREMIS_HAS_MESSAGE_DIGEST and store is not None:
                algo, value = parse_digest_urn(o)
                if algo == store.algorithm and value not in store:
                    report.missing_content.append(uid)
            elif (o.startswith(RES_PREFIX) and p not in (FCREPO_HAS_PARENT, RDF_TYPE)
                  and not txn.has_graph(res_uri(uid_of(o)))):
                report.broken_links.append((uid, uid_of(o)))
    return report


def stats(ctx: Context, store: QuadStore) -> dict[str, Any]:
    """Counts and sizes of the repository (binaries: the content files that
    descriptions name, leftovers counted apart)."""
    txn = ctx.txn
    counts = {"resources": 0, "tombstones": 0, "versions": 0}
    for g in txn.graphs():
        kind = graph_kind(g)
        if kind == "res":
            counts["resources"] += 1
        elif kind == "tomb":
            counts["tombstones"] += 1
        elif kind == "hist":
            counts["versions"] += txn.count(None, FCREPO_HAS_VERSION, None, g)
    out: dict[str, Any] = dict(counts)
    out.update(_content_files(ctx))
    out["store"] = store.stats()
    return out


def _content_files(ctx: Context) -> dict[str, int]:
    """Content files a description names (``binaries``, ``binary_bytes``) and those
    none does (``unreferenced_files``, ``unreferenced_bytes``: left by purges and
    aborted writes, removed by the clean-up)."""
    out = dict.fromkeys(("binaries", "binary_bytes", "unreferenced_files",
                         "unreferenced_bytes"), 0)
    if ctx.binaries is None:
        return out
    named = referenced_digests(ctx)
    for digest, size, _mtime in ctx.binaries.objects():
        count, total = (("binaries", "binary_bytes") if digest in named
                        else ("unreferenced_files", "unreferenced_bytes"))
        out[count] += 1
        out[total] += size
    return out


def referenced_digests(ctx: Context) -> set[str]:
    """Every content digest (store algorithm) named by a live, buried or versioned
    description."""
    algo = ctx.binaries.algorithm
    out = set()
    for _s, _p, o, _g in ctx.txn.match(None, PREMIS_HAS_MESSAGE_DIGEST, None, None):
        a, value = parse_digest_urn(o)
        if a == algo:
            out.add(value)
    return out


def remove_orphans(binaries: BinaryBackend, referenced: set[str], min_age: float) -> int:
    """Delete content files no description names, older than ``min_age`` seconds
    (younger ones may belong to a write not yet committed)."""
    limit = time.time() - min_age
    removed = 0
    for digest, _size, mtime in list(binaries.objects()):
        if digest not in referenced and mtime <= limit:
            removed += bool(binaries.delete(digest))
    return removed


__all__ = ["FixityResult", "IntegrityReport", "fixity_check", "integrity_check", "stats",
           "referenced_digests", "remove_orphans"]
