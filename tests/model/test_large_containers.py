"""Large containers (issue 15, deliverable 5): reading, replacing and patching a
container's own triples costs what its own triples cost, however many children it
has. Measured by what passes through the store API (triples and quads read and
written), never by a clock: the counts must not grow with the children."""
from __future__ import annotations

from typing import Any

import pytest

from lakesuperior.model import lifecycle, resource, sparql_update
from lakesuperior.model.context import Context, Settings
from lakesuperior.model.inputs import RdfInput
from lakesuperior.model.interaction import BASIC_CONTAINER
from lakesuperior.model.namespaces import LDP_CONTAINS
from lakesuperior.model.uids import res_uri

BASE = "http://test.example/rest"
P = "<http://ex.org/p>"
C = f"<{BASE}/c>"


class VolumeCountingTxn:
    """A store transaction that counts the triples and quads its API hands over."""

    def __init__(self, txn: Any):
        self._txn = txn
        self.read = 0
        self.written = 0

    def triples(self, g: str, **kw: Any) -> list:
        out = self._txn.triples(g, **kw)
        self.read += len(out)
        return out

    def match(self, *args: Any, **kw: Any) -> Any:
        out = list(self._txn.match(*args, **kw))
        self.read += len(out)
        return iter(out)

    def objects(self, *args: Any) -> list:
        out = self._txn.objects(*args)
        self.read += len(out)
        return out

    def add_graph(self, g: str, triples: Any, **kw: Any) -> None:
        triples = list(triples)
        self.written += len(triples)
        self._txn.add_graph(g, triples, **kw)

    def add(self, quads: Any, **kw: Any) -> int:
        quads = list(quads)
        self.written += len(quads)
        return self._txn.add(quads, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._txn, name)


def _container(repo_factory: Any, name: str, children: int) -> Any:
    # Auto-versioning off: whether a write settles the container's version in place
    # depends on the clock (same second or not), which would make the counts flaky.
    repo = repo_factory(name, versioning_auto=False)
    repo.create_or_replace("/c", data=f'<> {P} "one" .'.encode(), media_type="text/turtle")
    with repo.transaction():
        for i in range(children):
            repo.create_or_replace(f"/c/k{i}")
    return repo


def _counted(repo: Any, op: Any) -> tuple[int, int]:
    """(triples read, triples written) by ``op(ctx)`` in one write transaction."""
    with repo.store.write() as txn:
        counting = VolumeCountingTxn(txn)
        op(Context(counting, Settings(base_uri=BASE)))
    return counting.read, counting.written


OPERATIONS = {
    "replace": lambda ctx: lifecycle.replace(
        ctx, "/c", BASIC_CONTAINER, RdfInput([(C, P, '"two"')], canonical=True)),
    "update_delta": lambda ctx: lifecycle.update_delta(
        ctx, "/c", [(None, P, None)], [(C, P, '"two"')]),
    "sparql_update": lambda ctx: sparql_update.update(
        ctx, "/c", f'DELETE WHERE {{ <> {P} ?o }} ; INSERT DATA {{ <> {P} "two" }}'),
}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_writing_own_triples_does_not_grow_with_children(repo_factory, name):
    counts = []
    for children in (2, 120):
        repo = _container(repo_factory, f"r{children}", children)
        counts.append(_counted(repo, OPERATIONS[name]))
        got = repo.get("/c")
        assert sorted(got.children) == sorted(f"/c/k{i}" for i in range(children))
        assert (C, P, '"two"') in got.triples
        assert (C, P, '"one"') not in got.triples
    assert counts[0] == counts[1]


def test_view_after_write_holds_own_triples_only(repo_factory):
    repo = _container(repo_factory, "r", 3)
    _, res = repo.create_or_replace("/c", data=f'<> {P} "two" .'.encode(),
                                    media_type="text/turtle")
    assert res.children == [] and all(t[1] != LDP_CONTAINS for t in res.triples)
    assert len(repo.get("/c").children) == 3


def test_reading_own_triples_skips_children(repo_factory):
    small, large = (_container(repo_factory, f"r{n}", n) for n in (2, 120))
    reads = []
    for repo in (small, large):
        with repo.store.read() as txn:
            counting = VolumeCountingTxn(txn)
            own = counting.triples(res_uri("/c"), omit=LDP_CONTAINS)
            reads.append(counting.read)
            assert (res_uri("/c"), P, '"one"') in own
            assert all(t[1] != LDP_CONTAINS for t in own)
    assert reads[0] == reads[1]


def test_get_serializes_children_as_one_object_list(repo_factory):
    repo = _container(repo_factory, "r", 50)
    got = repo.get("/c")
    triples, lists = got.parts
    assert all(t[1] != LDP_CONTAINS for t in triples)
    assert len(lists) == 1 and lists[0].subject == C and lists[0].predicate == LDP_CONTAINS
    assert sorted(lists[0].objects) == sorted(f"<{BASE}/c/k{i}>" for i in range(50))
    assert set(got.triples) == set(triples) | {(C, LDP_CONTAINS, o) for o in lists[0].objects}
    minimal = repo.get("/c", incl_children=False)
    assert minimal.parts[1] == [] and len(minimal.children) == 50


def test_view_splits_containment_given_among_own_triples(repo):
    res = res_uri("/c")
    own = [(res, P, '"x"'), (res, LDP_CONTAINS, res_uri("/c/a"))]
    with repo.snapshot() as ctx:
        v = resource.view(ctx, "/c", own, model=BASIC_CONTAINER)
    assert v.children == ["/c/a"]
    assert set(v.triples) == {(f"<{repo.base_uri}/c>", P, '"x"'),
                              (f"<{repo.base_uri}/c>", LDP_CONTAINS, f"<{repo.base_uri}/c/a>")}
