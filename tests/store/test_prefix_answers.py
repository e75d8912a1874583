"""Counting by graph prefix learns each graph's answer once, reading the names
it does not know yet in id order (``unionrows.learn_prefixes``): the counts
are exact, the first time and once learnt."""
from lakesuperior.store.quadstore import QuadStore

TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
CONTAINER = "<http://www.w3.org/ns/ldp#Container>"
RES = "<info:fcres/"


def graph(i: int, kind: str = "fcres") -> str:
    return f"<info:{kind}/r{i}>"


def test_counts_by_prefix_over_many_graphs_are_exact(tmp_path):
    with QuadStore(str(tmp_path / "s"), sync=False) as st:
        with st.write() as txn:
            for i in range(600):
                g = graph(i, "fcres" if i % 3 else "fcsnap")
                txn.add_graph(g, [(g, TYPE, CONTAINER)])
        st.index()
        with st.read() as txn:
            for _ in range(2):           # learnt, then known
                assert txn.count(None, TYPE, CONTAINER, None, graph_prefix=RES) == 400
                assert txn.count(None, TYPE, CONTAINER, None, graph_prefix="<info:fcsnap") == 200
                assert txn.count(None, TYPE, CONTAINER, None, graph_prefix="<info:fcres/r1") == 75

