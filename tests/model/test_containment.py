"""Containment: children as ldp:contains triples, and walking a subtree."""
from __future__ import annotations

from lakesuperior.model.containment import children_in, children_of, subtree
from lakesuperior.model.namespaces import LDP


def test_children_in_triples():
    res = "<info:fcres/c>"
    triples = [(res, LDP.contains, "<info:fcres/c/x>"), (res, LDP.member, "<info:fcres/y>"),
               (res, LDP.contains, "<info:fcres/c/z>")]
    assert children_in(triples) == ["/c/x", "/c/z"]


def test_children_and_subtree(repo):
    for uid in ("/c/x/deep", "/c/z"):
        repo.create_or_replace(uid)
    with repo.store.read() as txn:
        assert sorted(children_of(txn, "/c")) == ["/c/x", "/c/z"]
        tree = subtree(txn, "/c")
    assert tree[0] == "/c" and sorted(tree) == ["/c", "/c/x", "/c/x/deep", "/c/z"]
    assert tree.index("/c/x") < tree.index("/c/x/deep")
    repo.delete("/c")
    with repo.store.read() as txn:
        assert children_of(txn, "/c") == []
        assert sorted(subtree(txn, "/c", "bury")) == ["/c", "/c/x", "/c/x/deep", "/c/z"]
