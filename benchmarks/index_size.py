"""Union-index micro-benchmark: catch-up, size per table, and the container count.

Writes ``--count`` workload resources (200 triples, a type, one containment quad;
every other one also a snapshot-like graph outside ``<info:fcres``) straight to
a ``QuadStore`` with the indexer off, then times one ``QuadStore.index()`` over
the whole backlog (wall clock and CPU), reports the index's pages per table
(free pages included) and times the union count ``(?, rdf:type, ldp:Container)``
as the SPARQL view asks it (distinct, graphs under ``<info:fcres/``): first,
then median. ``--touch-parent``: each write also sets the parent's date anew, as
the repository does when it creates a child (a removal in every log entry).

    python benchmarks/index_size.py --count 10000 [--touch-parent] [--json out.json]
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

import lmdb

from lakesuperior.bench.figures import write_json
from lakesuperior.bench.workload import workload_triples
from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.terms import literal

TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
CONTAINER = "<http://www.w3.org/ns/ldp#Container>"
CONTAINS = "<http://www.w3.org/ns/ldp#contains>"
PARENT = "<info:fcres/p>"
MODIFIED = "<http://fedora.info/definitions/v4/repository#lastModified>"
DATE = "http://www.w3.org/2001/XMLSchema#dateTime"


def index_pages(path: str) -> dict:
    """Pages of each index table, the file's pages, and the free ones."""
    env = lmdb.open(os.path.join(path, "index"), readonly=True, max_dbs=16, lock=False)
    try:
        tables = {}
        with env.begin() as txn:
            for name, _ in list(txn.cursor()):
                st = txn.stat(env.open_db(name, txn=txn, create=False))
                tables[name.decode()] = (st["branch_pages"] + st["leaf_pages"]
                                         + st["overflow_pages"])
        total = env.info()["last_pgno"] + 1
        psize = env.stat()["psize"]
    finally:
        env.close()
    return {"tables": tables, "file_pages": total, "page_size": psize,
            "free_pages": total - sum(tables.values())}


def run(count: int, path: str, seed: int, touch_parent: bool = False) -> dict:
    rng = random.Random(seed)
    st = QuadStore(path, sync=False)
    internal = [f"<info:fcres/ref{i}>" for i in range(5)]
    with st.write() as txn:
        for ref in internal:
            txn.add_graph(ref, [(ref, TYPE, CONTAINER)])
    for i in range(count):
        child = f"<info:fcres/p/{uuid.UUID(int=rng.getrandbits(128))}>"
        with st.write() as txn:
            txn.add_graph(child, workload_triples(child, internal, rng)
                          + [(child, TYPE, CONTAINER)])
            txn.add([(PARENT, CONTAINS, child, PARENT)])
            if i % 2 == 0:
                txn.add([(child, TYPE, CONTAINER, "<info:fcsnap" + child[11:])])
            if touch_parent:
                date = f"2026-01-01T00:00:00.{i:06d}Z"
                txn.set_value(PARENT, MODIFIED, literal(date, datatype=DATE), PARENT)
    pending = st.pending()
    t0, c0 = time.perf_counter(), time.process_time()
    st.index()
    catch_up, catch_up_cpu = time.perf_counter() - t0, time.process_time() - c0
    st.close()
    pages = index_pages(path)
    st = QuadStore(path, sync=False)

    def count_once() -> tuple[float, int]:
        with st.read() as txn:
            t0 = time.perf_counter()
            n = txn.count(None, TYPE, CONTAINER, None, distinct=True,
                          graph_prefix="<info:fcres/")
            return (time.perf_counter() - t0) * 1000, n
    first_ms, counted = count_once()
    median_ms = statistics.median(count_once()[0] for _ in range(7))
    st.close()
    assert counted == count + len(internal), counted
    triples = count * 202 + len(internal) + (1 if touch_parent and count else 0)
    size = pages["file_pages"] * pages["page_size"]
    return {"count": count, "touch_parent": touch_parent, "log_entries": pending,
            "index_catch_up_s": catch_up, "index_catch_up_cpu_s": catch_up_cpu,
            "index_bytes": size, "index_bytes_per_triple": size / triples,
            "index_pages": pages, "count_first_ms": first_ms, "count_median_ms": median_ms}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--touch-parent", action="store_true",
                    help="each write also sets the parent's date anew")
    args = ap.parse_args(argv)
    path = tempfile.mkdtemp(prefix="lsup-index-size-")
    try:
        out = run(args.count, path, args.seed, args.touch_parent)
    finally:
        shutil.rmtree(path, ignore_errors=True)
    print(json.dumps(out, indent=1))
    write_json(args.json, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
