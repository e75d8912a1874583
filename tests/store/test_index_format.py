"""The union index's own format (``state.format``) and its compact layout.

An index of another format is derived data: a store opened for writing drops it
and rebuilds it from the graphs; a read-only open answers from the graphs. The
rows of graphs new to the index are appended (full pages), literal and blank
node objects live in ``lit`` by epochs of graph numbers.
"""
import os
import random

import lmdb
import pytest

from lakesuperior.store.quadstore import INDEX_FORMAT_VERSION, QuadStore
from lakesuperior.store.terms import literal

from .test_index_tail import CONTAINER, RES, TYPE, P, answers, graph, write_history


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "s")


def index_env(path, readonly=False):
    return lmdb.open(os.path.join(path, "index"), max_dbs=16, readonly=readonly)


def set_index_format(path, value):
    env = index_env(path)
    with env.begin(write=True) as txn:
        txn.put(b"format", value, db=env.open_db(b"state", txn=txn))
    env.close()


def index_tables(path):
    """name -> (entries, leaf pages, page size) of every table of the index."""
    env = index_env(path, readonly=True)
    out = {}
    with env.begin() as txn:
        for name, _ in list(txn.cursor()):
            st = txn.stat(env.open_db(name, txn=txn, create=False))
            out[name.decode()] = (st["entries"], st["leaf_pages"], st["psize"])
    env.close()
    return out


def test_an_index_of_another_format_is_rebuilt_when_the_store_opens_for_writing(path):
    with QuadStore(path, index_batch=4) as st:
        write_history(st, random.Random(21))
        st.index()
        expected = answers(st)
    set_index_format(path, b"1")
    with QuadStore(path, index_batch=4) as st:
        applied, last = st.index_state()
        assert applied == 0 and last > 0          # a rebuild under way
        assert answers(st) == expected            # meanwhile from the graphs
        st.index()
        assert st.pending() == 0
        assert answers(st) == expected
    env = index_env(path, readonly=True)
    with env.begin() as txn:
        assert txn.get(b"format", db=env.open_db(b"state", txn=txn, create=False)) == (
            str(INDEX_FORMAT_VERSION).encode())
    env.close()


def test_a_read_only_store_with_an_index_of_another_format_answers_from_the_graphs(path):
    with QuadStore(path) as st:
        write_history(st, random.Random(22))
        st.index()
        expected = answers(st)
    set_index_format(path, b"1")
    with QuadStore(path, readonly=True) as st:
        assert answers(st) == expected
    assert index_tables(path)["state"][0] >= 2    # nothing written: still format 1
    env = index_env(path, readonly=True)
    with env.begin() as txn:
        assert txn.get(b"format", db=env.open_db(b"state", txn=txn, create=False)) == b"1"
    env.close()


def test_new_graphs_rows_are_appended_in_full_pages(path):
    n_graphs, per_graph = 1000, 40
    with QuadStore(path, sync=False, index_batch=50) as st:
        for i in range(n_graphs):
            g = graph(i)
            with st.write() as txn:
                txn.add_graph(g, [(g, TYPE, CONTAINER)]
                              + [(g, f"<http://ex.org/p{j % 5}>", f"<http://ex.org/o{j % 8}>")
                                 for j in range(per_graph)])
        st.index()
    tables = index_tables(path)
    rows = n_graphs * (per_graph + 1)
    for name in ("pos", "osp"):
        entries, leaves, psize = tables[name]
        assert entries == rows
        # 20-byte values, packed: at least 90 % of each leaf page is rows
        assert entries * 20 >= 0.9 * leaves * (psize - 16), (name, leaves)


def test_literal_objects_are_found_in_every_epoch(path):
    # 4096 graph numbers per epoch: 4,200 graphs make two epochs.
    with QuadStore(path, sync=False, index_batch=1000) as st:
        for start in range(0, 4200, 300):
            with st.write() as txn:
                for i in range(start, start + 300):
                    g = graph(i)
                    txn.add_graph(g, [(g, P, literal("same")), (g, P, literal(f"v{i}")),
                                      (g, TYPE, CONTAINER), (g, P, "_:b")])
        st.index()
        assert st.pending() == 0
        with st.read() as txn:
            assert txn.count(None, None, literal("same"), None) == 4200
            assert {q[3] for q in txn.match(None, P, literal("same"))} == {
                graph(i) for i in range(4200)}
            for i in (0, 4095, 4096, 4199):
                assert list(txn.match(None, None, literal(f"v{i}"))) == [
                    (graph(i), P, literal(f"v{i}"), graph(i))]
            assert list(txn.match(None, "<http://ex.org/other>", literal("v1"))) == []
            assert len(list(txn.match(None, None, "_:b"))) == 4200
        with st.write() as txn:
            txn.remove(None, P, literal("v4100"), graph(4100))
            txn.remove_graph(graph(5))
        st.index()
        with st.read() as txn:
            assert list(txn.match(None, None, literal("v4100"))) == []
            assert list(txn.match(None, None, literal("v5"))) == []
            assert txn.count(None, None, literal("same"), None) == 4199
    tables = index_tables(path)
    assert tables["lit"][0] == 3 * 4199 - 1       # the literal and blank node rows
    assert tables["osp"][0] == 4199               # IRI objects only


def test_graph_prefix_answers_follow_a_rebuilt_index(path):
    with QuadStore(path) as st:
        with st.write() as txn:
            txn.add_graph(graph(1), [(graph(1), TYPE, CONTAINER)])
            txn.add_graph("<info:fcsnap/r1>", [(graph(1), TYPE, CONTAINER)])
        st.index()
        with st.read() as txn:
            assert txn.count(None, TYPE, CONTAINER, None, distinct=True,
                             graph_prefix=RES + "/") == 1
            assert txn.count(None, TYPE, CONTAINER, None, graph_prefix="<info:fcsnap") == 1
        for name in os.listdir(os.path.join(path, "index")):
            os.remove(os.path.join(path, "index", name))
    with QuadStore(path) as st:            # a new index numbers the graphs anew
        with st.write() as txn:
            txn.add_graph("<info:fcsnap/r2>", [(graph(2), TYPE, CONTAINER)])
        st.index()
        with st.read() as txn:
            assert txn.count(None, TYPE, CONTAINER, None, distinct=True,
                             graph_prefix=RES + "/") == 1
            assert txn.count(None, TYPE, CONTAINER, None, graph_prefix="<info:fcsnap") == 2
