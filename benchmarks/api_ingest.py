"""Python-API ingest benchmark (the WORKLOAD.md workload, issue 3 targets).

Creates ``--count`` children of one container through ``Repository``, each a
fresh 200-triple graph about itself (50 links to 5 external URIs, 50 links to
5 repository resources, 100 distinct 64-character Unicode literals), given as
Turtle bytes and/or as an rdflib Graph (``--input turtle|graph|both``; with
``both`` the two alternate, request by request, in the same container). Only
the API call is timed. Then times ``get`` of one child (with and without
building ``imr``) and of the container with all its children.

Prints one line of text and writes JSON (``--output``)::

    python benchmarks/api_ingest.py --count 10000 --output api_ingest.json
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid

from lakesuperior import Repository
from lakesuperior.admin.files import dir_bytes
from lakesuperior.bench.figures import machine, summarize, write_json
from lakesuperior.bench.workload import GRAPH_SIZE, workload_graph, workload_turtle


def summary(ms: list[float]) -> dict:
    if not ms:
        return {}
    out = summarize(ms)
    first, last = out["first_1k_median"], out["last_1k_median"]
    out["last_first_ratio"] = round(last / first, 4) if first and last is not None else None
    return out


def time_calls(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--input", choices=("turtle", "graph", "both"), default="both")
    ap.add_argument("--method", choices=("put", "post"), default="put")
    ap.add_argument("--parent", default="/bench")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data-dir", help="repository directory (default: a temp dir, removed)")
    ap.add_argument("--no-sync", action="store_true", help="do not fsync each commit")
    ap.add_argument("--gets", type=int, default=1000, help="repetitions of the get timings")
    ap.add_argument("--output", help="JSON file")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    tmp = None
    data_dir = args.data_dir
    if data_dir is None:
        tmp = data_dir = tempfile.mkdtemp(prefix="lsup-api-bench-")
    base = "http://localhost:8000/rest"
    repo = Repository(data_dir, base_uri=base, sync=not args.no_sync)
    interrupted = False
    try:
        parent = args.parent
        repo.create_or_replace(parent)
        internal = []
        for i in range(5):
            uid = f"/bench-ref-{i}"
            repo.create_or_replace(uid)
            internal.append(base + uid)
        kinds = {"turtle": ["turtle"], "graph": ["graph"], "both": ["turtle", "graph"]}[args.input]
        times: dict[str, list[float]] = {k: [] for k in kinds}
        last_uid = None
        wall0 = time.perf_counter()
        try:
            for i in range(args.count):
                kind = kinds[i % len(kinds)]
                seg = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                uid = f"{parent}/{seg}"
                if kind == "turtle":
                    kw = {"data": workload_turtle(rng, internal), "media_type": "text/turtle"}
                else:
                    kw = {"graph": workload_graph(rng, internal, base + uid)}
                t0 = time.perf_counter()
                if args.method == "put":
                    repo.create_or_replace(uid, **kw)
                else:
                    last_uid = repo.create(parent, **kw).uid
                times[kind].append((time.perf_counter() - t0) * 1e3)
                if args.method == "put":
                    last_uid = uid
                if (i + 1) % 1000 == 0:
                    print(f"\r{i + 1}/{args.count}", end="", file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            interrupted = True
        print(file=sys.stderr)
        wall = time.perf_counter() - wall0
        done = sum(len(v) for v in times.values())

        post: dict = {}
        if last_uid is not None and not interrupted:
            post["get_ms"] = summary(time_calls(lambda: repo.get(last_uid).triples, args.gets))
            post["get_imr_ms"] = summary(time_calls(lambda: repo.get(last_uid).imr, args.gets))
            reps = 5
            post["container_get_s"] = round(statistics.median(
                time_calls(lambda: repo.get(parent).triples, reps)) / 1e3, 4)
            post["python_retrieval_s"] = post["container_get_s"]
            post["container_children"] = len(repo.get(parent).children)
            post["sparql_count_s"] = None
        repo.close()
        store_bytes = dir_bytes(data_dir)
        result = {
            "mode": "python", "method": args.method, "input": args.input, "count": done,
            "graph_size": GRAPH_SIZE, "sync": not args.no_sync,
            "latency_ms": summary([t for k in kinds for t in times[k]] if len(kinds) == 1
                                  else _interleave(times, kinds)),
            "latency_ms_by_input": {k: summary(v) for k, v in times.items()},
            "wall_s": round(wall, 3), "requests_per_s": round(done / wall, 1) if wall else None,
            "store_bytes": store_bytes,
            "bytes_per_triple": round(store_bytes / max(1, done * GRAPH_SIZE), 1),
            "post_run": post, "machine": machine(), "interrupted": interrupted,
        }
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    lat = result["latency_ms"]
    by = " ".join(f"{k}:{v.get('median')}ms" for k, v in result["latency_ms_by_input"].items())
    print(f"api_ingest {args.method} n={done} median={lat.get('median')}ms p95={lat.get('p95')}ms "
          f"first1k={lat.get('first_1k_median')} last1k={lat.get('last_1k_median')} [{by}] "
          f"get={post.get('get_ms', {}).get('median')}ms "
          f"get+imr={post.get('get_imr_ms', {}).get('median')}ms "
          f"container_get={post.get('container_get_s')}s "
          f"({post.get('container_children')} children)")
    write_json(args.output, result)
    return 0


def _interleave(times: dict[str, list[float]], kinds: list[str]) -> list[float]:
    """All latencies in request order."""
    out = []
    seqs = [times[k] for k in kinds]
    for i in range(max(len(s) for s in seqs)):
        for s in seqs:
            if i < len(s):
                out.append(s[i])
    return out


if __name__ == "__main__":
    sys.exit(main())
