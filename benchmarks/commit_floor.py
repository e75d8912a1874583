"""The durable-commit floor of this machine's disk, beside the store's own write.

What no store built on LMDB can go below here, timed in the same session as the
store write of ``benchmarks/store_ingest.py``, the kinds alternated round by round:

* ``fdatasync``: one 4 KiB page written into a file, then flushed (the disk's flush);
* ``commit``: an LMDB write transaction of one small put, made durable as the store
  does with ``sync`` on (``metasync`` off, the commit's data flush, then
  ``env.sync``: two flushes, the meta page after the data);
* ``record``: the same with one value of ``--record-bytes`` (a 200-triple record is
  about 16 KB) under a new random key;
* ``shape``: the tables a store write touches, with raw puts of its sizes: in ``rec``
  the record and its name, in ``gx`` one containment value, in ``log`` two entries;
* ``store``: the store write itself (``QuadStore``, ``sync`` on): one workload
  resource of 200 triples and its containment quad, as ``store_ingest.py`` times it.

Each LMDB environment first gets ``--entries`` of its writes, untimed, so that
its trees have the depth of a store of that many resources, and its data file
zeros written ahead, as the store keeps them. ``store`` minus ``shape`` is what the
store adds to the floor: its CPU and any pages of its own.

    python benchmarks/commit_floor.py [--entries 10000] [--rounds 5] [--commits 400] [--json F]
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

import lmdb
from store_ingest import seed_store, write_resource  # beside this script

from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.workload import workload_triples
from lakesuperior.model.namespaces import LDP_CONTAINS
from lakesuperior.store.quadstore import QuadStore

KINDS = ("fdatasync", "commit", "record", "shape", "store")
PAGE = 4096
NAME_BYTES = 18      # a resource's name entry in rec (key and value: about 26 bytes)
GX_BYTES = 32        # one containment value in gx (dupfixed)
LOG_BYTES = (17, 41)  # a store write's two log entries (with their 8-byte keys: 25, 49)


def _zeros_ahead(path: str, nbytes: int) -> None:
    """Write ``nbytes`` of zeros past the end of ``path`` and flush them."""
    fd = os.open(path, os.O_WRONLY)
    try:
        at = os.fstat(fd).st_size
        chunk = bytes(1 << 20)
        end = at + nbytes
        while at < end:
            at += os.pwrite(fd, chunk[:end - at], at)
        os.fdatasync(fd)
    finally:
        os.close(fd)


class RawTables:
    """A bare LMDB environment with the store's main tables, committed as the store
    commits with ``sync`` on."""

    def __init__(self, path: str, record_bytes: int, rng: random.Random):
        self.env = lmdb.open(path, map_size=1 << 40, max_dbs=8, sync=True, metasync=False)
        self.rec = self.env.open_db(b"rec")
        self.gx = self.env.open_db(b"gx", dupsort=True, dupfixed=True)
        self.log = self.env.open_db(b"log")
        self.rng = rng
        self.record = rng.randbytes(record_bytes)
        self.seq = 0

    def fill(self, entries: int) -> None:
        """``entries`` store-shaped writes, 500 to a transaction."""
        done = 0
        while done < entries:
            with self.env.begin(write=True) as txn:
                for _ in range(min(500, entries - done)):
                    self._shape(txn)
                    done += 1

    def _shape(self, txn: lmdb.Transaction) -> None:
        key = self.rng.randbytes(8)
        txn.put(key, self.record, db=self.rec)
        txn.put(self.rng.randbytes(8), self.rng.randbytes(NAME_BYTES), db=self.rec)
        txn.put(b"parent", self.rng.randbytes(GX_BYTES), db=self.gx)
        for size in LOG_BYTES:
            self.seq += 1
            txn.put(self.seq.to_bytes(8, "big"), self.rng.randbytes(size), db=self.log,
                    append=True)

    def durable(self, work: Callable[[lmdb.Transaction], None]) -> None:
        """One write transaction of ``work``: its commit flushes the data pages, then
        the sync flushes the meta page (the store's protocol with ``sync`` on)."""
        with self.env.begin(write=True) as txn:
            work(txn)
        self.env.sync(True)

    def commit(self) -> None:
        self.durable(lambda txn: txn.put(self.rng.randbytes(8), b"x" * 18, db=self.rec))

    def record_put(self) -> None:
        self.durable(lambda txn: txn.put(self.rng.randbytes(8), self.record, db=self.rec))

    def shape(self) -> None:
        self.durable(self._shape)

    def close(self) -> None:
        self.env.close()


class StoreWrites:
    """The store write of ``store_ingest.py``: a workload resource and its containment."""

    def __init__(self, path: str, rng: random.Random, entries: int):
        self.rng = rng
        setup = QuadStore(path, sync=False)     # the set-up and the fill, without fsync
        self.parent, self.internal = seed_store(setup)
        for _ in range(entries):
            write_resource(setup, self.parent, *self.next_graph())
        setup.close()
        self.store = QuadStore(path, sync=True)

    def next_graph(self) -> tuple[str, list[tuple[str, str, str]]]:
        child = f"<{self.parent[1:-1]}/{uuid.uuid4()}>"
        return child, workload_triples(child, self.internal, self.rng)

    def write(self, child: str, triples: list[tuple[str, str, str]]) -> None:
        write_resource(self.store, self.parent, child, triples)

    def close(self) -> int:
        with self.store.read() as txn:
            count = txn.count(self.parent, LDP_CONTAINS, None, self.parent)
        self.store.close()
        return count


def run(path: str, entries: int, rounds: int, commits: int, record_bytes: int,
        seed: int) -> dict:
    rng = random.Random(seed)
    os.makedirs(os.path.join(path, "raw"))
    raw = RawTables(os.path.join(path, "raw"), record_bytes, rng)
    raw.fill(entries)
    store = StoreWrites(os.path.join(path, "store"), rng, entries)
    flush_path = os.path.join(path, "flush")
    with open(flush_path, "wb") as fh:
        fh.write(bytes(PAGE * 1024))
        os.fsync(fh.fileno())
    growth = rounds * commits * (2 * record_bytes + 16 * PAGE)
    _zeros_ahead(os.path.join(path, "raw", "data.mdb"), growth)
    page = rng.randbytes(PAGE)
    fd = os.open(flush_path, os.O_WRONLY)

    def flush() -> None:
        os.pwrite(fd, page, rng.randrange(1024) * PAGE)
        os.fdatasync(fd)

    times: dict[str, list[float]] = {k: [] for k in KINDS}
    per_round: dict[str, list[float]] = {k: [] for k in KINDS}
    steps = {"fdatasync": flush, "commit": raw.commit, "record": raw.record_put,
             "shape": raw.shape}
    try:
        for r in range(rounds):
            for kind in KINDS:
                ms = []
                for _ in range(commits):
                    if kind == "store":
                        child, triples = store.next_graph()   # not timed
                        t0 = time.perf_counter()
                        store.write(child, triples)
                    else:
                        t0 = time.perf_counter()
                        steps[kind]()
                    ms.append((time.perf_counter() - t0) * 1000)
                times[kind] += ms
                per_round[kind].append(round(statistics.median(ms), 4))
            print(f"\rround {r + 1}/{rounds}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    finally:
        os.close(fd)
        raw.close()
        stored = store.close()
    med = {k: round(statistics.median(v), 4) for k, v in times.items()}
    return {
        "entries": entries, "rounds": rounds, "commits": commits,
        "record_bytes": record_bytes, "median_ms": med, "round_medians_ms": per_round,
        "store_over_shape_ms": round(med["store"] - med["shape"], 4),
        "store_resources": stored, "machine": machine(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10_000,
                    help="untimed writes made first, in each environment")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--commits", type=int, default=400, help="timed commits per kind and round")
    ap.add_argument("--record-bytes", type=int, default=16_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--path", help="directory to work in (default: a temp dir, removed after)")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args(argv)
    if min(args.rounds, args.commits) < 1 or args.entries < 0 or args.record_bytes < 1:
        ap.error("--rounds, --commits and --record-bytes must be positive, --entries not negative")
    path = args.path or tempfile.mkdtemp(prefix="lsup-floor-", dir=os.getcwd())
    try:
        res = run(path, args.entries, args.rounds, args.commits, args.record_bytes, args.seed)
    finally:
        if not args.path:
            shutil.rmtree(path, ignore_errors=True)
    med = res["median_ms"]
    print(" | ".join(f"{k} {med[k]:.3f} ms" for k in KINDS)
          + f" | store over its floor {res['store_over_shape_ms']:.3f} ms")
    write_json(args.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
