"""An indexer batch is bounded by the triples it applies as well as by its log
entries (``MAX_BATCH_TRIPLES``, issue 15 deliverable 6): a batch's memory (the
index pages it touches and LMDB's copies of those it dirties) grows with its
rows, so a few large graphs make a short batch, and whoever runs the indexer
goes on while another batch as large waits. Counted in entries and triples, never timed."""
from __future__ import annotations

from lakesuperior.store.background import IndexerThread
from lakesuperior.store.indexer import MAX_BATCH_TRIPLES
from lakesuperior.store.quadstore import QuadStore

TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
CONTAINER = "<http://www.w3.org/ns/ldp#Container>"
# Each big graph holds more than half the bound: a batch takes two of them.
BIG = MAX_BATCH_TRIPLES // 2 + 100


def graph(i: int) -> str:
    return f"<info:fcres/big{i}>"


def write_big_graphs(st: QuadStore, n: int) -> None:
    for i in range(n):
        g = graph(i)
        with st.write() as txn:
            txn.add_graph(g, [(g, "<http://ex.org/p>", f"<http://ex.org/o{i}_{j}>")
                              for j in range(BIG)] + [(g, TYPE, CONTAINER)])


def test_a_batch_stops_at_the_triple_bound(tmp_path):
    with QuadStore(str(tmp_path), sync=False, index_batch=500) as st:
        write_big_graphs(st, 3)
        assert st.pending() == 3
        assert st.index(1) == 2           # past the bound after two graphs
        assert st.pending() == 1
        with st.read() as txn:            # the index and the tail agree
            assert txn.count(None, TYPE, CONTAINER, None) == 3


def test_a_full_index_run_goes_past_a_cut_batch(tmp_path):
    with QuadStore(str(tmp_path), sync=False, index_batch=500) as st:
        write_big_graphs(st, 5)
        assert st.index() == 5            # three batches, none taken as caught up
        assert st.pending() == 0
        with st.read() as txn:
            assert txn.count(None, TYPE, CONTAINER, None) == 5
            assert txn.count(None, "<http://ex.org/p>", None, None) == 5 * BIG


def test_one_graph_past_the_bound_is_still_applied(tmp_path):
    with QuadStore(str(tmp_path), sync=False, index_batch=500) as st:
        g = graph(0)
        with st.write() as txn:
            txn.add_graph(g, [(g, "<http://ex.org/p>", f"<http://ex.org/o{j}>")
                              for j in range(MAX_BATCH_TRIPLES + 10)])
        assert st.index(1) == 1
        assert st.pending() == 0


def test_the_background_indexer_goes_on_while_a_batch_as_large_waits(tmp_path):
    with QuadStore(str(tmp_path), sync=False, index_batch=3) as st:
        write_big_graphs(st, 5)
        # Batches of two graphs (cut by triples, short of index_batch): after the
        # first, three wait (another batch of two), so the thread goes on; after
        # the second, one: it idles (an hour here).
        thread = IndexerThread(st, idle_poll=3600)
        thread.start()
        try:
            for _ in range(3000):
                if thread.applied >= 4:
                    break
                thread.stop_event.wait(0.01)
        finally:
            thread.stop()
        assert thread.applied == 4
        assert st.pending() == 1
