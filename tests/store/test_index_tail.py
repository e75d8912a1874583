"""Union queries answer from the index plus the tail of the log, and never write.

The union-graph indices are brought up to date off the request path (the
background indexer, ``QuadStore.index()``); a union query reads the log entries
the index has not taken in (their graphs) from its own main snapshot. These
tests compare every union pattern, match and count, against the same store once
fully indexed, with the indexer stopped, half-way, rebuilding, and killed.
"""
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from lakesuperior.store.background import IndexerLock, IndexerThread
from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.terms import literal

from .test_quadstore import random_quads

P = "<http://ex.org/p0>"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
CONTAINER = "<http://www.w3.org/ns/ldp#Container>"
RES = "<info:fcres"


def graph(i):
    return f"<info:fcres/r{i}>"


def write_history(st, rng, rounds=40):
    """Replaced graphs, added and removed quads, removed graphs, set values: every
    log entry kind."""
    for _ in range(rounds):
        g = graph(rng.randrange(12))
        with st.write() as txn:
            op = rng.randrange(6)
            if op == 0:
                txn.add_graph(g, [(s, p, o) for s, p, o, _ in random_quads(rng, 8)]
                              + [(g, TYPE, CONTAINER)])
            elif op == 1:
                txn.add([(s, p, o, g) for s, p, o, _ in random_quads(rng, 4)]
                        + [(g, TYPE, CONTAINER, g), (g, "<http://ex.org/p1>", graph(1), g)])
            elif op == 2:
                txn.remove(None, P, None, g)
            elif op == 3:
                txn.remove_graph(g)
            elif op == 4:
                txn.set_value(g, P, rng.choice([literal(f"v{rng.randrange(3)}", lang="en"),
                                                graph(rng.randrange(3))]), g)
            else:
                txn.add([(graph(99), TYPE, CONTAINER, g)])


PATTERNS = [
    (None, None, None), (None, P, None), (None, TYPE, CONTAINER), (None, None, CONTAINER),
    (graph(99), None, None), (graph(99), TYPE, None), (None, "<http://ex.org/p1>", graph(1)),
    ("<http://ex.org/r3>", None, None), (None, None, literal("v3", lang="en")),
    ("_:b1", None, None),
]


def answers(st):
    """Every union pattern's quads and counts (plain, distinct, per graph prefix)."""
    out = {}
    with st.read() as txn:
        for s, p, o in PATTERNS:
            out[(s, p, o)] = (
                sorted(txn.match(s, p, o, None)),
                txn.count(s, p, o, None),
                txn.count(s, p, o, None, distinct=True),
                txn.count(s, p, o, None, distinct=True, graph_prefix=RES),
                txn.count(s, p, o, None, graph_prefix="<info:fcres/r1"))
    return out


def index_txnid(path):
    """The index environment's last transaction id (read by another process: LMDB
    opens an environment once per process)."""
    code = ("import lmdb, sys; env = lmdb.open(sys.argv[1], readonly=True, max_dbs=8); "
            "print(env.info()['last_txnid'])")
    out = subprocess.run([sys.executable, "-c", code, os.path.join(path, "index")],
                         check=True, capture_output=True)
    return int(out.stdout)


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "s")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_union_queries_see_every_write_with_the_indexer_stopped_or_half_way(path, seed):
    rng = random.Random(seed)
    with QuadStore(path, index_batch=3) as st:
        write_history(st, rng, 20)
        st.index()
        write_history(st, rng, 30)             # a tail of up to 30 entries
        applied, last = st.index_state()
        assert last - applied > 12
        tail = answers(st)
        st.index(batches=4)                    # half-way: 12 of them applied
        assert st.index_state()[0] == applied + 12
        half = answers(st)
        st.index()
        assert st.pending() == 0
        assert tail == half == answers(st)


def test_a_union_query_writes_nothing_and_applies_nothing(path):
    with QuadStore(path) as st:
        write_history(st, random.Random(7))
        before = (index_txnid(path), st.index_state())
        assert before[1][0] < before[1][1]     # a tail is pending
        answers(st)
        assert (index_txnid(path), st.index_state()) == before


def test_a_write_transaction_sees_the_tail_and_its_own_writes(path):
    with QuadStore(path) as st:
        with st.write() as txn:
            txn.add_graph(graph(1), [(graph(1), TYPE, CONTAINER)])
        with st.write() as txn:
            txn.add([(graph(2), TYPE, CONTAINER, graph(2))])
            assert txn.count(None, TYPE, CONTAINER, None) == 2
            assert sorted(q[3] for q in txn.match(None, TYPE, CONTAINER)) == [
                graph(1), graph(2)]
        assert st.pending() == 2


def test_a_duplicate_triple_in_the_tail_and_the_index_counts_once(path):
    with QuadStore(path) as st:
        with st.write() as txn:
            txn.add_graph(graph(1), [(graph(1), TYPE, CONTAINER)])
        st.index()
        with st.write() as txn:
            txn.add([(graph(1), TYPE, CONTAINER, graph(2))])
        with st.read() as txn:
            assert txn.count(None, TYPE, CONTAINER, None) == 2
            assert txn.count(None, TYPE, CONTAINER, None, distinct=True) == 1
            assert txn.count(None, TYPE, CONTAINER, None, graph_prefix="<info:fcres/r2") == 1


def test_union_queries_are_exact_while_the_index_is_rebuilt(path):
    rng = random.Random(11)
    with QuadStore(path, index_batch=2) as st:
        write_history(st, rng)
        st.index()
        expected = answers(st)
    for name in os.listdir(os.path.join(path, "index")):
        os.remove(os.path.join(path, "index", name))
    with QuadStore(path, index_batch=2) as st:
        assert answers(st) == expected          # nothing indexed yet: all from graphs
        st.index(batches=2)                     # a rebuild half-way
        assert st.index_state()[0] == 0
        assert answers(st) == expected
        st.index()
        assert answers(st) == expected


KILLED_INDEXER = textwrap.dedent("""
    import sys
    from lakesuperior.store.quadstore import QuadStore
    st = QuadStore(sys.argv[1], index_batch=int(sys.argv[2]))
    while st.index(batches=1):
        print("batch", flush=True)
""")


def test_the_indexer_killed_mid_batch_loses_nothing_and_resumes(path):
    rng = random.Random(5)
    with QuadStore(path) as st:
        for i in range(300):
            with st.write() as txn:
                g = graph(i)
                txn.add_graph(g, [(g, TYPE, CONTAINER)]
                              + [(g, P, literal(f"v{i} {j}")) for j in range(50)])
        write_history(st, rng)
        expected_pending = st.pending()
        before = answers(st)
    with subprocess.Popen([sys.executable, "-c", KILLED_INDEXER, path, "7"],
                          stdout=subprocess.PIPE) as proc:
        for _ in range(3):                      # three batches committed, the 4th under way
            assert proc.stdout.readline() == b"batch\n"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with QuadStore(path) as st:
        applied, last = st.index_state()
        assert 21 <= applied < last and last - applied <= expected_pending - 21
        assert answers(st) == before            # what was applied, and the tail
        st.index()
        assert st.pending() == 0
        assert answers(st) == before


def test_the_background_indexer_keeps_up_and_only_one_holds_the_lock(path):
    with QuadStore(path) as st:               # flock: one open file each, one holder
        first = IndexerThread(st, lock_poll=0.05).start()
        second = IndexerThread(st, lock_poll=0.05).start()
        try:
            write_history(st, random.Random(3))
            deadline = time.monotonic() + 30
            while st.pending() and time.monotonic() < deadline:
                time.sleep(0.02)
            assert st.pending() == 0
            assert [first.leader, second.leader].count(True) == 1
            assert not IndexerLock(path).acquire()
            leader, follower = (first, second) if first.leader else (second, first)
            leader.stop()                       # a stopped leader hands over
            with st.write() as txn:
                txn.add_graph(graph(50), [(graph(50), TYPE, CONTAINER)])
            deadline = time.monotonic() + 30
            while st.pending() and time.monotonic() < deadline:
                time.sleep(0.02)
            assert st.pending() == 0 and follower.leader
            assert follower.applied >= 1
        finally:
            first.stop()
            second.stop()
    lock = IndexerLock(path)
    assert lock.acquire()
    lock.release()


def test_union_queries_see_every_acknowledged_write_while_the_indexer_runs(path):
    with QuadStore(path, index_batch=2) as st:
        indexer = IndexerThread(st, idle_poll=0.001).start()
        try:
            for i in range(60):
                with st.write() as txn:
                    txn.add_graph(graph(i), [(graph(i), TYPE, CONTAINER)])
                    if i % 3 == 0 and i:
                        txn.remove_graph(graph(i - 1))
                alive = i + 1 - i // 3
                with st.read() as txn:
                    assert txn.count(None, TYPE, CONTAINER, None) == alive
                    assert txn.count(None, TYPE, CONTAINER, None, distinct=True) == alive
                    assert len(list(txn.match(None, None, CONTAINER, None))) == alive
        finally:
            indexer.stop()
        assert indexer.applied > 0
