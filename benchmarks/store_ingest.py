"""Store micro-benchmark: ingest N workload resources, one commit each.

Each resource is the 200-triple graph of WORKLOAD.md in its own graph, plus one
containment quad ``(<parent> ldp:contains <child>)`` in the parent's graph.

    python benchmarks/store_ingest.py --count 10000 --json out.json [--no-sync] [--canonical]

``--indexer process`` runs the background indexer (``store/background.py``) in a
second process during the ingest, as a deployment does (a ``Repository`` or an
``lsup-server`` worker holds it): the log stays short. Without it the log keeps
every entry until the final ``store.index()``, so its B-tree is deeper than in
any deployment. ``--canonical`` passes ``canonical=True`` (terms known canonical, as ``rdfio.parse``
gives them: the Repository's path); without it every term is validated. The
results include each table's pages (``QuadStore.table_stats()``) after indexing
and the bytes LMDB wrote per commit (``wchar`` of ``/proc/self/io``, Linux).
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid

from lakesuperior.bench.figures import machine, summarize, write_json
from lakesuperior.bench.workload import workload_triples
from lakesuperior.model.namespaces import DCTERMS_NS, LDP_CONTAINS
from lakesuperior.store.background import IndexerThread
from lakesuperior.store.quadstore import QuadStore

# benchmarks/commit_floor.py makes the same store write with these two functions.
BASE = "info:fcres"
TITLE = f"<{DCTERMS_NS}title>"


def seed_store(store: QuadStore) -> tuple[str, list[str]]:
    """Write the parent and the 5 resources each workload graph links to:
    ``(parent, internal)``."""
    parent = f"<{BASE}/parent>"
    internal = [f"<{BASE}/ref{i}>" for i in range(5)]
    with store.write() as txn:
        for ref in internal:
            txn.add_graph(ref, [(ref, TITLE, '"ref"')])
        txn.add_graph(parent, [(parent, TITLE, '"parent"')])
    return parent, internal


def write_resource(store: QuadStore, parent: str, child: str,
                   triples: list[tuple[str, str, str]], canonical: bool = False) -> None:
    """The timed store write: ``child``'s graph and its containment quad, one commit."""
    with store.write() as txn:
        txn.add_graph(child, triples, canonical=canonical)
        txn.add([(parent, LDP_CONTAINS, child, parent)], canonical=canonical)


def _written() -> int:
    """Bytes this process has passed to write calls (LMDB writes its dirty pages)."""
    try:
        with open("/proc/self/io") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("wchar"))
    except (OSError, StopIteration):
        return 0


def _index_in_background(path: str, sync: bool, ready, stop, applied) -> None:
    """Body of the ``--indexer process`` child: the store's background indexer,
    from ``ready`` until ``stop``; the log entries it applied go to ``applied``."""
    store = QuadStore(path, sync=sync)
    indexer = IndexerThread(store).start()
    ready.set()
    stop.wait()
    indexer.stop()
    applied.value = indexer.applied
    store.close()


def run(count: int, path: str, sync: bool, seed: int, canonical: bool = False,
        indexer: str = "none") -> dict:
    rng = random.Random(seed)
    store = QuadStore(path, sync=sync)
    parent, internal = seed_store(store)
    stop = worker = applied_during = None
    if indexer == "process":
        ctx = multiprocessing.get_context("spawn")
        ready, stop, applied_during = ctx.Event(), ctx.Event(), ctx.Value("q", 0)
        worker = ctx.Process(target=_index_in_background,
                             args=(path, sync, ready, stop, applied_during))
        worker.start()
        ready.wait()
    write_ms = []
    written = []
    children = []
    for n in range(count):
        child = f"<{BASE}/parent/{uuid.uuid4()}>"
        triples = workload_triples(child, internal, rng)
        w0 = _written()
        t0 = time.perf_counter()
        write_resource(store, parent, child, triples, canonical)
        write_ms.append((time.perf_counter() - t0) * 1000)
        written.append(_written() - w0)
        children.append(child)
        if n % 1000 == 999:
            print(f"\r{n + 1}/{count} written", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if worker is not None:
        stop.set()
        worker.join()

    read_ms = []
    for child in rng.sample(children, min(1000, len(children))):
        t0 = time.perf_counter()
        with store.read() as txn:
            got = txn.triples(child)
        read_ms.append((time.perf_counter() - t0) * 1000)
        assert len(got) == 200, len(got)

    def timed(fn, repeat=5):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            result = fn()
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times), result

    def list_children():
        with store.read() as txn:
            return list(txn.match(parent, LDP_CONTAINS, None, parent))

    def count_children():
        with store.read() as txn:
            return txn.count(parent, LDP_CONTAINS, None, parent)

    list_ms, listed = timed(list_children)
    count_ms, counted = timed(count_children, 50)
    assert len(listed) == count and counted == count, (len(listed), counted)
    t0 = time.perf_counter()
    applied = store.index()
    index_s = time.perf_counter() - t0
    size = store.disk_size()
    tables = store.table_stats()
    store.close()
    quads = count * 201 + 6
    return {
        "count": count, "sync": sync, "canonical": canonical, "indexer": indexer,
        "graph_size": 200,
        "bytes_written_per_commit": statistics.median(written),
        "write_ms": summarize(write_ms),
        "read_graph_ms": {k: v for k, v in summarize(read_ms).items() if k in ("median", "p95")},
        "list_children_ms": list_ms, "count_children_ms": count_ms,
        "index_catch_up_s": index_s, "index_entries_applied": applied,
        "index_entries_applied_during_ingest": applied_during.value if worker else 0,
        "store_bytes": size, "bytes_per_quad": size / quads,
        "main_bytes_per_quad": tables["main"]["file_pages"] * tables["main"]["page_size"] / quads,
        "tables": tables,
        "machine": machine(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--path", help="store directory (default: a temp dir, removed after)")
    ap.add_argument("--no-sync", action="store_true", help="commit without fsync")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--canonical", action="store_true",
                    help="terms known canonical (canonical=True, as rdfio.parse gives them)")
    ap.add_argument("--indexer", choices=("none", "process"), default="none",
                    help="process: the background indexer runs in a second process during "
                         "the ingest, as deployed (default: none, the log is applied at the end)")
    args = ap.parse_args(argv)
    path = args.path or tempfile.mkdtemp(prefix="lsup-bench-", dir=os.getcwd())
    try:
        res = run(args.count, path, not args.no_sync, args.seed, args.canonical, args.indexer)
    finally:
        if not args.path:
            shutil.rmtree(path, ignore_errors=True)
    w = res["write_ms"]
    ratio = (f"{w['last_1k_median'] / w['first_1k_median']:.2f}"
             if w["first_1k_median"] and w["last_1k_median"] is not None else "n/a")
    print(f"N={res['count']} sync={res['sync']} indexer={res['indexer']} "
          f"write median {w['median']:.3f} ms "
          f"p95 {w['p95']:.3f} last1k/first1k {ratio} "
          f"| read graph {res['read_graph_ms']['median']:.3f} ms | list children "
          f"{res['list_children_ms']:.1f} ms | count {res['count_children_ms']:.3f} ms | "
          f"index catch-up {res['index_catch_up_s']:.1f} s | {res['store_bytes'] / 1e6:.0f} MB "
          f"({res['bytes_per_quad']:.0f} B/quad, main {res['main_bytes_per_quad']:.0f}) | "
          f"{res['bytes_written_per_commit'] / 4096:.1f} pages written per commit")
    write_json(args.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
