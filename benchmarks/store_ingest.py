"""Store micro-benchmark: ingest N workload resources, one commit each.

Each resource is the 200-triple graph of WORKLOAD.md in its own graph, plus one
containment quad ``(<parent> ldp:contains <child>)`` in the parent's graph.

    python benchmarks/store_ingest.py --count 10000 --json out.json [--no-sync]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid

from lakesuperior.bench.figures import machine, summarize
from lakesuperior.bench.workload import workload_triples
from lakesuperior.model.namespaces import DCTERMS_NS, LDP_CONTAINS
from lakesuperior.store.quadstore import QuadStore

# benchmarks/query_bench.py imports BASE, LDP_CONTAINS, machine and workload_triples from here.
BASE = "info:fcres"
TITLE = f"<{DCTERMS_NS}title>"


def run(count: int, path: str, sync: bool, seed: int) -> dict:
    rng = random.Random(seed)
    store = QuadStore(path, sync=sync)
    parent = f"<{BASE}/parent>"
    internal = [f"<{BASE}/ref{i}>" for i in range(5)]
    with store.write() as txn:
        for ref in internal:
            txn.add_graph(ref, [(ref, TITLE, '"ref"')])
        txn.add_graph(parent, [(parent, TITLE, '"parent"')])
    write_ms = []
    children = []
    for n in range(count):
        child = f"<{BASE}/parent/{uuid.uuid4()}>"
        triples = workload_triples(child, internal, rng)
        t0 = time.perf_counter()
        with store.write() as txn:
            txn.add_graph(child, triples)
            txn.add([(parent, LDP_CONTAINS, child, parent)])
        write_ms.append((time.perf_counter() - t0) * 1000)
        children.append(child)
        if n % 1000 == 999:
            print(f"\r{n + 1}/{count} written", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

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
    store.close()
    quads = count * 201 + 6
    return {
        "count": count, "sync": sync, "graph_size": 200,
        "write_ms": summarize(write_ms),
        "read_graph_ms": {k: v for k, v in summarize(read_ms).items() if k in ("median", "p95")},
        "list_children_ms": list_ms, "count_children_ms": count_ms,
        "index_catch_up_s": index_s, "index_entries_applied": applied,
        "store_bytes": size, "bytes_per_quad": size / quads,
        "machine": machine(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--path", help="store directory (default: a temp dir, removed after)")
    ap.add_argument("--no-sync", action="store_true", help="commit without fsync")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    path = args.path or tempfile.mkdtemp(prefix="lsup-bench-", dir=os.getcwd())
    try:
        res = run(args.count, path, not args.no_sync, args.seed)
    finally:
        if not args.path:
            shutil.rmtree(path, ignore_errors=True)
    w = res["write_ms"]
    print(f"N={res['count']} sync={res['sync']} write median {w['median']:.3f} ms "
          f"p95 {w['p95']:.3f} last1k/first1k {w['last_1k_median'] / w['first_1k_median']:.2f} "
          f"| read graph {res['read_graph_ms']['median']:.3f} ms | list children "
          f"{res['list_children_ms']:.1f} ms | count {res['count_children_ms']:.3f} ms | "
          f"index catch-up {res['index_catch_up_s']:.1f} s | {res['store_bytes'] / 1e6:.0f} MB "
          f"({res['bytes_per_quad']:.0f} B/quad)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
