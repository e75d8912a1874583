"""Query micro-benchmark: SPARQL through rdflib over ``LmdbStore``, and pattern reads.

Loads N workload resources (WORKLOAD.md's 200 triples each, ``lakesuperior.bench.workload``,
plus ``rdf:type ldp:Container`` and a ``dcterms:title``), each in its own graph, then
times (median of --repeat runs, the union of all graphs as the default graph):

* ``SELECT (COUNT(?s) AS ?c) WHERE { ?s a ldp:Container }``      (N resources)
* ``SELECT ?s ?t WHERE { ?s a ldp:Container . ?s dcterms:title ?t }`` (N rows)
* ``triples((None, P, None))`` returning 2N triples as strings via the QuadStore
  (and, for reference, as rdflib terms through the adapter)

each with the native fast path and, unless --no-baseline, with rdflib's evaluator.

    python benchmarks/query_bench.py --count 10000 --json out.json
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

import rdflib

from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.workload import workload_triples
from lakesuperior.query import disable_sparql_fast_path, enable_sparql_fast_path
from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.rdflib_store import LmdbStore
from lakesuperior.store.terms import literal

BASE = "info:fcres"
LDP_CONTAINS = "<http://www.w3.org/ns/ldp#contains>"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
LDP_CONTAINER = "<http://www.w3.org/ns/ldp#Container>"
DC_TITLE = "<http://purl.org/dc/terms/title>"
LIT_P = "<http://ex.org/lit_p#l0>"   # two triples per resource
COUNT_Q = ("SELECT (COUNT(?s) AS ?c) WHERE { ?s a <http://www.w3.org/ns/ldp#Container> }")
JOIN_Q = ("SELECT ?s ?t WHERE { ?s a <http://www.w3.org/ns/ldp#Container> . "
          "?s <http://purl.org/dc/terms/title> ?t }")
BATCH = 1000


def load(store: QuadStore, count: int, seed: int) -> float:
    """Write ``count`` resources (one graph each) plus containment; seconds taken."""
    rng = random.Random(seed)
    parent = f"<{BASE}/parent>"
    internal = [f"<{BASE}/ref{i}>" for i in range(5)]
    t0 = time.perf_counter()
    with store.write() as txn:
        for ref in internal:
            txn.add_graph(ref, [(ref, DC_TITLE, '"ref"')])
        txn.add_graph(parent, [(parent, DC_TITLE, '"parent"')])
    for start in range(0, count, BATCH):
        with store.write() as txn:
            for n in range(start, min(count, start + BATCH)):
                child = f"<{BASE}/parent/{uuid.UUID(int=rng.getrandbits(128))}>"
                triples = workload_triples(child, internal, rng)
                triples.append((child, RDF_TYPE, LDP_CONTAINER))
                triples.append((child, DC_TITLE, literal(f"Resource {n}")))
                txn.add_graph(child, triples)
                txn.add([(parent, LDP_CONTAINS, child, parent)])
        print(f"\r{min(count, start + BATCH)}/{count} loaded", end="", file=sys.stderr,
              flush=True)
    print(file=sys.stderr)
    return time.perf_counter() - t0


def timed(fn: Callable[[], Any], repeat: int) -> tuple[dict[str, float], Any]:
    """First run and median of ``repeat`` runs, in ms."""
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return {"first_ms": times[0], "median_ms": statistics.median(times)}, result


def run(count: int, path: str, seed: int, repeat: int, baseline: bool) -> dict:
    store = QuadStore(path, sync=False)
    try:
        load_s = load(store, count, seed)
        t0 = time.perf_counter()
        store.index()
        index_s = time.perf_counter() - t0
        ds = rdflib.Dataset(store=LmdbStore(quadstore=store), default_union=True)
        out: dict[str, Any] = {"count": count, "load_s": load_s, "index_catch_up_s": index_s}

        def count_q() -> int:
            return int(list(ds.query(COUNT_Q))[0][0])

        def join_q() -> int:
            return len(list(ds.query(JOIN_Q)))

        def match_strings() -> int:
            with store.read() as txn:
                return sum(1 for _ in txn.match(None, LIT_P, None))

        def triples_rdflib() -> int:
            p = rdflib.URIRef(LIT_P[1:-1])
            return sum(1 for _ in ds.triples((None, p, None)))

        modes = [("fast", True)] + ([("rdflib", False)] if baseline else [])
        for name, fast in modes:
            if fast:
                enable_sparql_fast_path()
            try:
                res, n = timed(count_q, repeat if fast else 1)
                assert n == count, n
                out[f"count_{name}"] = res
                res, n = timed(join_q, repeat if fast else 1)
                assert n == count, n
                out[f"join_{name}"] = res
            finally:
                disable_sparql_fast_path()
        res, n = timed(match_strings, repeat)
        assert n == 2 * count, n
        out["match_p_strings"] = {**res, "rows": n}
        res, n = timed(triples_rdflib, repeat)
        assert n == 2 * count, n
        out["triples_p_rdflib"] = {**res, "rows": n}
        out["store_bytes"] = store.disk_size()
        out["machine"] = machine()
        return out
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--path", help="store directory (default: a temp dir, removed after)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the (slow) runs through rdflib's evaluator alone")
    args = ap.parse_args(argv)
    path = args.path or tempfile.mkdtemp(prefix="lsup-qbench-", dir=os.getcwd())
    try:
        res = run(args.count, path, args.seed, args.repeat, not args.no_baseline)
    finally:
        if not args.path:
            shutil.rmtree(path, ignore_errors=True)
    line = (f"N={res['count']} | COUNT {res['count_fast']['median_ms']:.1f} ms | "
            f"join {res['join_fast']['median_ms']:.1f} ms | "
            f"match(p) {res['match_p_strings']['rows']} strings "
            f"{res['match_p_strings']['median_ms']:.1f} ms | "
            f"rdflib triples(p) {res['triples_p_rdflib']['median_ms']:.1f} ms")
    if "count_rdflib" in res:
        line += (f" | rdflib evaluator: COUNT {res['count_rdflib']['median_ms']:.0f} ms, "
                 f"join {res['join_rdflib']['median_ms']:.0f} ms")
    print(line)
    write_json(args.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
