"""One index batch applies many log entries, and writes its additions once.

A removal deletes its rows from the index and cancels the copies that earlier
entries of the same batch buffered, so a row added, removed and added again in
one batch ends as the log's last entry says. The rows one batch leaves are the
rows a rebuild from the graphs makes.
"""
import random

import pytest

from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.terms import literal

from .test_index_format import index_env, set_index_format
from .test_index_tail import CONTAINER, TYPE, P, answers, graph, write_history

MODIFIED = "<http://ex.org/modified>"


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "s")


def index_rows(path):
    """Every row of pos, osp, lit and sg, each naming its graph by graph id (graph
    numbers depend on the order the indexer met graphs in)."""
    env = index_env(path, readonly=True)
    rows = {}
    with env.begin() as txn:
        ng = dict(txn.cursor(db=env.open_db(b"ng", txn=txn, create=False)))
        for name in (b"pos", b"osp", b"lit", b"sg"):
            out = []
            for key, val in txn.cursor(db=env.open_db(name, txn=txn, create=False)):
                if name == b"lit":             # key: epoch; value: object, graph number
                    out.append((val[:8], ng[val[8:]]))
                else:                          # value: graph number first
                    out.append((key, ng[val[:4]], val[4:]))
            rows[name.decode()] = sorted(out)
    env.close()
    return rows


def rebuilt_rows(path):
    """The rows of an index rebuilt from the graphs of the store at ``path``."""
    set_index_format(path, b"1")
    with QuadStore(path) as st:
        st.index()
        assert st.pending() == 0
    return index_rows(path)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_mixed_history_in_one_batch_leaves_the_rows_a_rebuild_makes(path, seed):
    with QuadStore(path, index_batch=1000) as st:
        write_history(st, random.Random(seed), 60)
        tail = answers(st)                     # from the graphs: nothing indexed
        applied, last = st.index_state()
        assert st.index(batches=1) == last - applied   # the whole history, one batch
        assert st.pending() == 0
        assert answers(st) == tail
    assert index_rows(path) == rebuilt_rows(path)


def test_a_value_set_again_and_again_in_one_batch_keeps_only_its_last_rows(path):
    parent = graph(0)
    with QuadStore(path, index_batch=1000) as st:
        with st.write() as txn:
            txn.add_graph(parent, [(parent, TYPE, CONTAINER)])
        st.index()
        for i in range(20):                    # a container touched by each child's creation
            with st.write() as txn:
                child = graph(i + 1)
                txn.add_graph(child, [(child, TYPE, CONTAINER), (child, P, literal(f"c{i}"))])
                txn.set_value(parent, MODIFIED, literal(f"t{i}"), parent)
        assert st.index(batches=1) == 40
        with st.read() as txn:
            assert list(txn.match(parent, MODIFIED, None, None)) == [
                (parent, MODIFIED, literal("t19"), parent)]
            assert txn.count(None, MODIFIED, None, None) == 1
            for i in range(19):
                assert txn.count(None, None, literal(f"t{i}"), None) == 0
            assert txn.count(None, TYPE, CONTAINER, None) == 21
    rows = index_rows(path)
    assert len(rows["pos"]) == 20 * 2 + 2       # 20 children x 2, the parent's 2
    assert rows == rebuilt_rows(path)


def test_a_row_added_removed_and_added_again_in_one_batch_stays(path):
    g = graph(1)
    with QuadStore(path, index_batch=1000) as st:
        with st.write() as txn:
            txn.add_graph(g, [(g, TYPE, CONTAINER), (g, P, literal("x")), (g, P, graph(2))])
        with st.write() as txn:
            txn.remove(g, P, None, g)          # both gone: pos, osp, lit rows cancelled
        with st.write() as txn:
            txn.add([(g, P, literal("x"), g)])  # the literal back, not the IRI
        with st.write() as txn:
            txn.remove_graph(g)                # every row, and sg's, cancelled
        with st.write() as txn:
            txn.add_graph(g, [(g, P, graph(2))])   # the graph back, with the IRI only
        assert st.index(batches=1) == 5
        with st.read() as txn:
            assert list(txn.match(None, None, None, None)) == [(g, P, graph(2), g)]
            assert txn.count(None, None, literal("x"), None) == 0
            assert txn.count(None, TYPE, None, None) == 0
    rows = index_rows(path)
    assert [len(rows[name]) for name in ("pos", "osp", "lit", "sg")] == [1, 1, 0, 1]
    assert rows == rebuilt_rows(path)


def test_a_large_graph_replaced_again_and_again_in_one_batch_keeps_its_last_triples(path):
    g = graph(1)
    with QuadStore(path, index_batch=1000) as st:
        for round_ in range(5):                # each replacement removes 300 buffered triples
            with st.write() as txn:
                txn.add_graph(g, [(g, P, literal(f"v{round_} {i}")) for i in range(300)]
                              + [(g, TYPE, CONTAINER), (f"<http://ex.org/s{round_}>", P, g)])
        with st.write() as txn:
            txn.set_value(g, P, literal("last"), g)
        assert st.index(batches=1) == 6
        with st.read() as txn:
            assert txn.count(None, P, None, None) == 2
            assert sorted(txn.match(None, P, None, None)) == sorted([
                (g, P, literal("last"), g), ("<http://ex.org/s4>", P, g, g)])
    rows = index_rows(path)
    assert [len(rows[name]) for name in ("pos", "osp", "lit", "sg")] == [3, 2, 1, 2]
    assert rows == rebuilt_rows(path)
