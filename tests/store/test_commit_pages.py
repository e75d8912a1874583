"""What one commit writes (docs/storage.md, "Pages per commit"): the fsync that
makes a write durable costs about 15 us per scattered page on the reference
disk, so the pages a commit dirties are kept few: a new resource's record and
name share a leaf (format 4), and an outbox append leaves ``meta`` alone."""
from __future__ import annotations

import random
import statistics

import lmdb

from lakesuperior.bench.workload import workload_triples
from lakesuperior.store.quadstore import QuadStore

CONTAINS = "<http://www.w3.org/ns/ldp#contains>"
PARENT = "<info:fcres/parent>"


def _written() -> int:
    with open("/proc/thread-self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("wchar"))


def test_a_resource_commit_writes_few_pages(tmp_path):
    """A 200-triple resource and its containment quad, in a store of 500: the
    record's 4 overflow pages, a leaf of rec (record and name), the log's leaf
    and branch, the parent's gx leaf and its children's sub-tree (2), LMDB's
    free list and catalog, and the meta page (120 B)."""
    rng = random.Random(1)
    internal = [f"<info:fcres/ref{i}>" for i in range(5)]
    store = QuadStore(str(tmp_path / "s"))
    try:
        written = []
        for i in range(500):
            child = f"<info:fcres/parent/{i:08x}{rng.getrandbits(64):016x}>"
            triples = workload_triples(child, internal, rng)
            w0 = _written()
            with store.write() as txn:
                txn.add_graph(child, triples, canonical=True)
                txn.add([(PARENT, CONTAINS, child, PARENT)], canonical=True)
            written.append(_written() - w0)
        pages = statistics.median(written[-100:]) / 4096
        assert pages <= 12.1, pages       # main before format 4: 14.0
    finally:
        store.close()


def test_outbox_append_leaves_meta_alone_and_seqs_are_never_reused(tmp_path):
    store = QuadStore(str(tmp_path / "s"))
    try:
        with store.write() as txn:
            assert txn.outbox_append([b"a", b"b", b"c"]) == 3
        with store.read() as txn:
            assert txn.outbox_state()["seq"] == 3
        with store.write() as txn:
            assert txn.outbox_drop(3) == 3              # the outbox is empty now
        with store.read() as txn:
            state = txn.outbox_state()
            assert (state["entries"], state["seq"]) == (0, 3)
        with store.write() as txn:
            assert txn.outbox_append([b"d"]) == 4       # not 1: seqs go on
            assert txn.outbox_drop(0) == 0 and txn.outbox_drop(4, 0) == 0
        with store.read() as txn:
            assert list(txn.outbox()) == [(4, b"d")]
    finally:
        store.close()
    env = lmdb.open(str(tmp_path / "s"), max_dbs=16, readonly=True, lock=False)
    try:
        with env.begin() as txn:       # written by the drop, not by the appends
            meta = env.open_db(b"meta", txn=txn)
            assert txn.get(b"outbox_seq", db=meta) == (3).to_bytes(8, "big")
    finally:
        env.close()
