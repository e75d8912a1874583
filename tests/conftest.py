"""Shared fixtures: a fresh repository per test, in pytest's ``tmp_path``."""
from __future__ import annotations

import pytest

BASE = "http://test.example/rest"


@pytest.fixture
def repo_factory(tmp_path):
    """Open repositories under this test's temp dir; all closed at teardown."""
    opened = []

    def make(name: str = "repo", **overrides):
        from lakesuperior import Repository
        overrides.setdefault("base_uri", BASE)
        overrides.setdefault("sync", False)
        # The indexer as a thread: a process per test repository would cost the
        # suite a Python start each (tests/store/test_indexer_process.py and the
        # servers, which run the default, test the process).
        overrides.setdefault("indexer_process", False)
        repo = Repository(tmp_path / name, **overrides)
        opened.append(repo)
        return repo

    yield make
    for repo in opened:
        try:
            repo.close()
        except Exception:
            pass


@pytest.fixture
def repo(repo_factory):
    """A new, empty repository (root container only), base URI ``BASE``."""
    return repo_factory()


def store_state(repo) -> dict:
    """Everything the repository holds: every graph with its triples, and the
    stored binary digests. Two equal states mean nothing was written."""
    with repo.store.read() as txn:
        graphs = {g: sorted(txn.triples(g)) for g in txn.graphs()}
    return {"graphs": graphs, "binaries": sorted(repo.binaries)}


@pytest.fixture
def state():
    return store_state
