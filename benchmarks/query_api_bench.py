"""Query benchmark through the Python API and the HTTP endpoint (issue 5 targets).

Loads ``--count`` workload resources (``lakesuperior.bench.workload``: 200 triples
each, 50 of them links to 5 external URIs) as children of ``/bench`` through
``Repository`` (or reuses ``--data-dir`` if it holds them), catches the union
index up, then times (first run and median of ``--repeat``):

* count:  ``SELECT (COUNT(?s) AS ?c) WHERE { ?s a ldp:Container }``
          (target <= 100 ms through Python, <= 200 ms through HTTP at 100K)
* join:   ``SELECT ?s ?o WHERE { ?s a ldp:Container . ?s ex:exturi_p#u0 ?o }``,
          one row per workload resource (target <= 300 ms for 10K rows)
* match:  ``triple_match(o=<http://example.edu/res/0>)``, 10 triples per
          resource: 100K triples at 10K resources (target <= 300 ms)
* search: ``term_search([(exturi_p#u0, "_id", <http://example.edu/res/0>)])``

through ``Repository`` and, for count and join, ``GET /query/sparql`` on the
Flask app (in-process WSGI: the HTTP layer without the network)::

    python benchmarks/query_api_bench.py --count 10000 --json query_api.json
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.workload import EXTERNAL, workload_turtle
from lakesuperior.config import Config
from lakesuperior.endpoints.app import create_app
from lakesuperior.repository import Repository

PARENT = "/bench"
COUNT_Q = "SELECT (COUNT(?s) AS ?c) WHERE { ?s a ldp:Container }"
JOIN_Q = ("SELECT ?s ?o WHERE { ?s a ldp:Container . "
          "?s <http://ex.org/exturi_p#u0> ?o }")
MATCH_O = f"<{EXTERNAL[0]}>"
BATCH = 500


def load(repo: Any, count: int, seed: int) -> float:
    """``count`` workload children of ``PARENT`` (batches of one transaction)."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    repo.create_or_replace(PARENT)
    refs = []
    for i in range(5):
        uid = f"{PARENT}-refs/r{i}"
        repo.create_or_replace(uid, data=b'<> <http://purl.org/dc/terms/title> "ref" .',
                               media_type="text/turtle")
        refs.append(repo.base_uri + uid)
    for start in range(0, count, BATCH):
        with repo.transaction():
            for _ in range(start, min(count, start + BATCH)):
                uid = f"{PARENT}/{uuid.UUID(int=rng.getrandbits(128))}"
                repo.create_or_replace(uid, data=workload_turtle(rng, refs),
                                       media_type="text/turtle")
        print(f"\r{min(count, start + BATCH)}/{count} loaded", end="", file=sys.stderr,
              flush=True)
    print(file=sys.stderr)
    return time.perf_counter() - t0


def timed(fn: Callable[[], Any], repeat: int) -> tuple[dict[str, float], Any]:
    times = []
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return {"first_ms": round(times[0], 2), "median_ms": round(statistics.median(times), 2)}, \
        result


def run(data_dir: str, count: int, seed: int, repeat: int) -> dict[str, Any]:
    config = Config(data_dir=data_dir, sync=False)
    repo = Repository(config=config)
    out: dict[str, Any] = {"count": count}
    try:
        if not repo.exists(PARENT):
            out["load_s"] = round(load(repo, count, seed), 2)
        t0 = time.perf_counter()
        repo.store.index()
        out["index_catch_up_s"] = round(time.perf_counter() - t0, 2)

        res, n = timed(lambda: int(repo.sparql_query(COUNT_Q).bindings[0]["c"]), repeat)
        out["python_count"] = {**res, "result": n}
        res, n = timed(lambda: len(repo.sparql_query(JOIN_Q)), repeat)
        out["python_join"] = {**res, "rows": n}
        res, n = timed(lambda: len(repo.sparql_query(JOIN_Q, fmt="json")), repeat)
        out["python_join_json"] = {**res, "bytes": n}
        res, n = timed(lambda: len(repo.triple_match(o=MATCH_O)), repeat)
        out["python_triple_match"] = {**res, "triples": n}
        term = ("<http://ex.org/exturi_p#u0>", "_id", EXTERNAL[0])
        res, n = timed(lambda: len(repo.term_search([term])), repeat)
        out["python_term_search"] = {**res, "uids": n}

        app = create_app(config, repository=repo)
        client = app.test_client()

        def http(query: str) -> bytes:
            resp = client.get("/query/sparql", query_string={"query": query},
                              headers={"Accept": "application/sparql-results+json"})
            assert resp.status_code == 200, resp.data[:300]
            return resp.data

        res, body = timed(lambda: http(COUNT_Q), repeat)
        out["http_count"] = {**res, "body": body.decode()[-80:]}
        res, body = timed(lambda: http(JOIN_Q), repeat)
        out["http_join"] = {**res, "bytes": len(body)}
    finally:
        repo.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data-dir", help="repository directory (default: a temp dir, removed); "
                                       "reused if it holds the data already")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    tmp = None
    data_dir = args.data_dir
    if data_dir is None:
        tmp = data_dir = tempfile.mkdtemp(prefix="lsup-query-bench-")
    try:
        out = run(data_dir, args.count, args.seed, args.repeat)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    out["machine"] = machine()
    print(json.dumps(out, indent=2))
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
