"""Reading and replacing a graph but one predicate's triples: ``triples(g, omit=p)``
and ``add_graph(g, triples, keep=p)`` (a container's own triples, its
``ldp:contains`` left unread and unwritten)."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import TermError

G = "<info:g>"
KEEP = "<http://ex.org/contains>"


def _fill(store, children: int = 5) -> None:
    with store.write() as txn:
        txn.add_graph(G, [(G, "<http://ex.org/a>", '"x"'), (G, "<http://ex.org/b>", "<o:1>"),
                          (G, KEEP, "<o:in-record>")])
        txn.add([(G, KEEP, f"<c:{i}>", G) for i in range(children)])
        txn.add([(G, "<http://ex.org/d>", f"<d:{i}>", G) for i in range(3)])


def _union(store, p: str) -> set:
    with store.read() as txn:
        return {q[:3] for q in txn.match(None, p, None, None)}


def test_triples_omit_leaves_out_one_predicate(store):
    _fill(store)
    with store.read() as txn:
        everything = set(txn.triples(G))
        own = txn.triples(G, omit=KEEP)
        assert set(own) == {t for t in everything if t[1] != KEEP}
        assert len(everything) - len(own) == 6
        assert txn.triples(G, omit="<http://ex.org/never-used>") == txn.triples(G)
        assert txn.triples("<info:none>", omit=KEEP) == []
        with pytest.raises(TermError):
            txn.triples(G, omit='"literal"')


@pytest.mark.parametrize("index_first", [False, True])
def test_add_graph_keep_replaces_the_rest(store, index_first):
    _fill(store)
    if index_first:
        store.index()
    new = [(G, "<http://ex.org/a>", '"y"'), (G, "<http://ex.org/e>", "<o:2>"),
           (G, KEEP, "<c:1>"), (G, KEEP, "<c:new>")]
    with store.write() as txn:
        txn.add_graph(G, new, keep=KEEP)
    kept = {(G, KEEP, f"<c:{i}>") for i in range(5)} | {(G, KEEP, "<o:in-record>")}
    expected = set(new) | kept
    with store.read() as txn:
        assert sorted(txn.triples(G)) == sorted(expected)
    for p in ("<http://ex.org/a>", "<http://ex.org/b>", "<http://ex.org/d>",
              "<http://ex.org/e>", KEEP):
        assert _union(store, p) == {t for t in expected if t[1] == p}
    store.index()
    for p in ("<http://ex.org/a>", "<http://ex.org/b>", "<http://ex.org/d>",
              "<http://ex.org/e>", KEEP):
        assert _union(store, p) == {t for t in expected if t[1] == p}
    with store.read() as txn:
        assert txn.count(G, KEEP, None, G) == 7


def test_add_graph_keep_of_the_same_triples_writes_nothing(store):
    with store.write() as txn:
        txn.add_graph(G, [(G, "<http://ex.org/a>", '"x"'), (G, "<http://ex.org/b>", "<o:1>")])
        txn.add([(G, KEEP, f"<c:{i}>", G) for i in range(4)])
    with store.read() as txn:
        own = txn.triples(G, omit=KEEP)
    before = store.stats()["log_entries"]
    with store.write() as txn:
        txn.add_graph(G, list(reversed(own)), keep=KEEP)
    assert store.stats()["log_entries"] == before
    with store.read() as txn:
        assert len(txn.triples(G)) == 6


def test_add_graph_keep_rolls_back(store):
    _fill(store)
    with store.read() as txn:
        before = sorted(txn.triples(G))
    with pytest.raises(RuntimeError), store.write() as txn:
        txn.add_graph(G, [(G, "<http://ex.org/a>", '"z"')], keep=KEEP)
        raise RuntimeError("abort")
    with store.read() as txn:
        assert sorted(txn.triples(G)) == before
    with pytest.raises(TermError), store.write() as txn:
        txn.add_graph(G, [], keep="_:b")
