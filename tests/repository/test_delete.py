"""Soft delete (tombstones), resurrection, hard delete and forget."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import (
    InvalidResourceError,
    ResourceExistsError,
    ResourceNotExistsError,
    TombstoneError,
)

pytestmark = pytest.mark.both_backends

BASE = "http://test.example/rest"
TTL = "text/turtle"


def pub(uid):
    return f"<{BASE}{uid}>"


def make_tree(repo):
    repo.create_or_replace("/t", data=b'<> <http://ex.org/p> "top" .', media_type=TTL)
    repo.create_or_replace("/t/a", data=b'<> <http://ex.org/p> "a" .', media_type=TTL)
    repo.create_or_replace("/t/a/x", data=b'<> <http://ex.org/p> "x" .', media_type=TTL)
    repo.create_or_replace("/t/b", data=b"binary", media_type="text/plain")


def test_soft_delete_and_resurrect(repo, state):
    make_tree(repo)
    before = state(repo)
    repo.delete("/t/a")
    for uid in ("/t/a", "/t/a/x"):
        with pytest.raises(TombstoneError) as e:
            repo.exists(uid)
        assert e.value.uid == uid
        with pytest.raises(TombstoneError):
            repo.get(uid)
    with pytest.raises(TombstoneError) as e:
        repo.get("/t/a/x")
    assert "/t/a" in str(e.value)              # names the tombstone's top
    assert repo.get("/t").children == ["/t/b"]
    # buried resources are out of the resource graphs, kept aside for resurrection
    with repo.store.read() as txn:
        graphs = [q[3] for q in txn.match(None, "<http://ex.org/p>", '"x"', None)]
    assert graphs == ["<info:fcbury/t/a/x>"]
    # no create over a tombstone
    with pytest.raises(TombstoneError):
        repo.create_or_replace("/t/a")
    with pytest.raises(TombstoneError):
        repo.create_or_replace("/t/a/x/new")
    with pytest.raises(TombstoneError):
        repo.delete("/t/a")
    res = repo.resurrect("/t/a")
    assert res.uid == "/t/a" and res.children == ["/t/a/x"]
    assert sorted(repo.get("/t").children) == ["/t/a", "/t/b"]
    assert repo.get("/t/a/x").user_data == [(pub("/t/a/x"), "<http://ex.org/p>", '"x"')]
    after = state(repo)
    # everything is back; only /t's lastModified moved
    def strip(st):
        return {g: [t for t in ts if "lastModified>" not in t[1]] for g, ts in st["graphs"].items()}
    assert strip(after) == strip(before)


def test_resurrect_errors(repo):
    make_tree(repo)
    with pytest.raises(ResourceExistsError):
        repo.resurrect("/t/a")
    with pytest.raises(ResourceNotExistsError):
        repo.resurrect("/nothing")
    repo.delete("/t/a")
    with pytest.raises(InvalidResourceError) as e:
        repo.resurrect("/t/a/x")                # buried with /t/a: resurrect that one
    assert "/t/a" in str(e.value)
    repo.delete("/t")
    with pytest.raises(TombstoneError):
        repo.resurrect("/t/a")                  # its parent is gone now


def test_slug_of_a_tombstone_is_not_reused(repo):
    repo.create_or_replace("/p")
    repo.create_or_replace("/p/s")
    repo.delete("/p/s")
    res = repo.create("/p", slug="s")
    assert res.uid != "/p/s"


def test_hard_delete(repo, state):
    empty = state(repo)
    make_tree(repo)
    repo.create_version("/t/a")
    repo.delete("/t/a/x")                       # a tombstone under /t/a
    repo.delete("/t", soft=False)
    for uid in ("/t", "/t/a", "/t/a/x", "/t/b"):
        assert repo.exists(uid) is False
    after = state(repo)
    # nothing left but the root (whose lastModified moved) and the binary's file
    assert list(after["graphs"]) == list(empty["graphs"])
    repo.create_or_replace("/t")                # the uid is free again
    assert repo.get("/t").children == []


def test_forget(repo):
    make_tree(repo)
    repo.create_version("/t/a/x")
    repo.delete("/t/a")
    with pytest.raises(InvalidResourceError):
        repo.forget("/t/a/x")                   # not the top of the tombstone
    repo.forget("/t/a")
    assert repo.exists("/t/a") is False and repo.exists("/t/a/x") is False
    with repo.store.read() as txn:
        assert not any("/t/a" in g for g in txn.graphs())
    with pytest.raises(ResourceNotExistsError):
        repo.forget("/t/a")
    with pytest.raises(ResourceExistsError):
        repo.forget("/t")                       # live: delete it first


def test_delete_errors(repo, state):
    before = state(repo)
    with pytest.raises(ResourceNotExistsError):
        repo.delete("/missing")
    with pytest.raises(ResourceNotExistsError):
        repo.delete("/missing", soft=False)
    with pytest.raises(InvalidResourceError):
        repo.delete("/")
    with pytest.raises(InvalidResourceError):
        repo.delete("/", soft=False)
    assert state(repo) == before
