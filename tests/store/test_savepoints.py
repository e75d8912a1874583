"""Savepoints of the write transaction (``journal.pyx``): nested LMDB transactions
kept by ``release`` or undone by ``rollback``, with the Python side of the
transaction restored; map growth inside a savepoint; errors that leave the
enclosing transaction usable."""
import gc

import pytest

from lakesuperior.exceptions import StoreError, StoreFullError
from lakesuperior.store.quadstore import QuadStore

P = "<http://ex.org/p>"
SMALL_MAP = 256 * 1024


def g(name):
    return f"<http://ex.org/{name}>"


def _triples(n, size=200, tag="x"):
    return [(f"<http://ex.org/s{i}>", P, '"' + tag * size + str(i) + '"') for i in range(n)]


@pytest.fixture
def st(tmp_path):
    store = QuadStore(str(tmp_path / "s"))
    yield store
    store.close()


def _graphs(st):
    with st.read() as txn:
        return sorted(txn.graphs())


def test_release_keeps_and_rollback_undoes(st):
    with st.write() as txn:
        txn.add_graph(g("a"), [(g("a"), P, '"a"')])
        depth = txn.savepoint()
        assert depth == 1 and txn.depth == 1
        txn.add_graph(g("b"), [(g("b"), P, '"b"')])
        assert txn.has_graph(g("b"))              # the savepoint reads its own writes
        txn.rollback(depth)
        assert txn.depth == 0
        assert not txn.has_graph(g("b")) and txn.has_graph(g("a"))
        depth = txn.savepoint()
        txn.add_graph(g("c"), [(g("c"), P, '"c"')])
        txn.release(depth)
        assert txn.has_graph(g("c"))
    assert _graphs(st) == [g("a"), g("c")]


def test_savepoints_nest_and_an_outer_one_ends_the_inner_ones(st):
    with st.write() as txn:
        outer = txn.savepoint()
        txn.add_graph(g("a"), [(g("a"), P, '"a"')])
        inner = txn.savepoint()
        assert inner == 2
        txn.add_graph(g("b"), [(g("b"), P, '"b"')])
        txn.release(inner)                         # b into the outer savepoint
        txn.savepoint()
        txn.add_graph(g("c"), [(g("c"), P, '"c"')])
        txn.rollback(outer)                        # a, b and the open inner one: undone
        assert txn.depth == 0
        txn.add_graph(g("d"), [(g("d"), P, '"d"')])
        outer = txn.savepoint()
        txn.savepoint()
        txn.add_graph(g("e"), [(g("e"), P, '"e"')])
        txn.release(outer)                         # the inner one with it
        assert txn.depth == 0
    assert _graphs(st) == [g("d"), g("e")]


def test_an_iri_made_in_a_rolled_back_savepoint_is_written_again(tmp_path):
    """The IRI dictionary entry of a new IRI goes with the savepoint: the
    transaction must forget that it made it, or a later write would use its id
    without writing its term (a corrupt store, seen once the IRI cache is cold)."""
    new = "<http://ex.org/brand-new>"
    st = QuadStore(str(tmp_path / "s"))
    with st.write() as txn:
        depth = txn.savepoint()
        txn.add_graph(g("a"), [(new, P, '"x"')])
        txn.rollback(depth)
        txn.add_graph(g("b"), [(g("b"), P, new)])
    st.close()
    st = QuadStore(str(tmp_path / "s"))
    with st.read() as txn:
        assert txn.triples(g("b")) == [(g("b"), P, new)]
        assert not txn.has_graph(g("a"))
    st.close()


def test_growth_after_a_rollback_does_not_replay_the_undone_writes(tmp_path):
    st = QuadStore(str(tmp_path / "s"), map_size=SMALL_MAP)
    with st.write() as txn:
        txn.add_graph(g("before"), [(g("before"), P, '"b"')])
    with st.write() as txn:
        depth = txn.savepoint()
        txn.add_graph(g("undone"), [(g("undone"), P, '"u"')])
        txn.set_value(g("before"), P, '"undone"', g("before"))
        txn.rollback(depth)
        for r in range(30):                        # the map fills: grown, journal replayed
            txn.add_graph(g(f"g{r}"), _triples(40, 200, chr(97 + r % 26)))
    assert st.stats()["map_size"] > SMALL_MAP
    graphs = _graphs(st)
    assert g("undone") not in graphs and len(graphs) == 31
    with st.read() as txn:
        assert txn.triples(g("before")) == [(g("before"), P, '"b"')]
    st.close()


@pytest.mark.parametrize("keep", [True, False])
def test_the_map_grows_inside_a_savepoint(tmp_path, keep):
    """A put inside a savepoint finds the map full: the transaction begins again
    on a grown map, the journal is replayed with the savepoint opened again at
    its place, and the savepoint can still be released or rolled back."""
    st = QuadStore(str(tmp_path / "s"), map_size=SMALL_MAP)
    with st.write() as txn:
        txn.add_graph(g("before"), [(g("before"), P, '"b"')])
        outer = txn.savepoint()
        txn.add_graph(g("kept"), [(g("kept"), P, '"k"')])
        depth = txn.savepoint()
        for r in range(30):
            txn.add_graph(g(f"g{r}"), _triples(40, 200, chr(97 + r % 26)))
        assert txn.depth == 2
        assert txn.has_graph(g("before")) and txn.has_graph(g("g29"))
        if keep:
            txn.release(depth)
        else:
            txn.rollback(depth)
        txn.release(outer)
        txn.add_graph(g("after"), [(g("after"), P, '"a"')])
    assert st.stats()["map_size"] > SMALL_MAP
    graphs = _graphs(st)
    assert {g("before"), g("kept"), g("after")} <= set(graphs)
    assert (g("g29") in graphs) is keep and len(graphs) == (33 if keep else 3)
    with st.read() as txn:
        assert len(txn.triples(g("g0"))) == (40 if keep else 0)
    st.close()


def test_a_full_map_that_cannot_grow_ends_only_the_savepoint(tmp_path):
    """With a snapshot open the map cannot grow: the write inside the savepoint
    fails, and once the savepoint is rolled back the transaction goes on."""
    st = QuadStore(str(tmp_path / "s"), map_size=SMALL_MAP)
    snapshot = st.read()
    with st.write() as txn:
        txn.add_graph(g("kept"), [(g("kept"), P, '"k"')])
        depth = txn.savepoint()
        with pytest.raises(StoreFullError, match="other transactions"):
            for r in range(40):
                txn.add_graph(g(f"g{r}"), _triples(40, 200, chr(97 + r % 26)))
        assert txn.depth == 1
        txn.rollback(depth)
        txn.add_graph(g("after"), [(g("after"), P, '"a"')])
    snapshot.abort()
    assert _graphs(st) == [g("after"), g("kept")]
    st.close()


def test_a_savepoint_of_no_such_depth_is_refused_and_changes_nothing(st):
    with st.write() as txn:
        txn.add_graph(g("a"), [(g("a"), P, '"a"')])
        depth = txn.savepoint()
        txn.add_graph(g("b"), [(g("b"), P, '"b"')])
        for bad in (0, 2, -1):
            with pytest.raises(StoreError, match="No open savepoint at depth"):
                txn.release(bad)
            with pytest.raises(StoreError, match="No open savepoint at depth"):
                txn.rollback(bad)
        assert txn.depth == 1 and txn.has_graph(g("b"))
        txn.release(depth)
    assert _graphs(st) == [g("a"), g("b")]
    with pytest.raises(StoreError, match="has ended"):
        txn.savepoint()


def test_commit_releases_open_savepoints_and_abort_ends_them(st):
    with st.write() as txn:
        txn.savepoint()
        txn.add_graph(g("a"), [(g("a"), P, '"a"')])
        txn.savepoint()
        txn.add_graph(g("b"), [(g("b"), P, '"b"')])
    assert _graphs(st) == [g("a"), g("b")]
    txn = st.write()
    txn.savepoint()
    txn.add_graph(g("c"), [(g("c"), P, '"c"')])
    txn.abort()
    assert txn.depth == 0
    with st.write() as txn:                        # LMDB's write lock was given back
        txn.add_graph(g("d"), [(g("d"), P, '"d"')])
    assert _graphs(st) == [g("a"), g("b"), g("d")]


def test_a_write_txn_dropped_inside_a_savepoint_ends_them_all(tmp_path):
    st = QuadStore(str(tmp_path / "s"), map_size=SMALL_MAP)
    txn = st.write()
    txn.savepoint()
    txn.add_graph(g("lost"), [(g("lost"), P, '"l"')])
    del txn
    gc.collect()
    for r in range(40):                            # a new write transaction, and growth
        with st.write() as txn:
            txn.add_graph(g(f"g{r}"), _triples(40, 200, chr(97 + r % 26)))
    assert st.stats()["map_size"] > SMALL_MAP
    assert g("lost") not in _graphs(st)
    st.close()


def test_outbox_seqs_of_a_rolled_back_savepoint_are_handed_out_again(st):
    with st.write() as txn:
        assert txn.outbox_append([b"one"]) == 1
        depth = txn.savepoint()
        assert txn.outbox_append([b"undone"]) == 2
        txn.rollback(depth)
        assert txn.outbox_append([b"two"]) == 2
    with st.read() as txn:
        assert txn.outbox() == [(1, b"one"), (2, b"two")]
