"""Shared fixtures: a fresh repository per test, in pytest's ``tmp_path``, and the
one app fixture of the HTTP tests.

``app`` is the Flask app on a fresh repository, made by ``make_app`` from
``app_config``: a folder whose tests need another configuration overrides
``app_config`` (or wraps ``make_app``), never ``app``. ``client`` is its test client.
"""
from __future__ import annotations

from typing import Any

import pytest

from lakesuperior.config import Config
from tests.apps import build_app, close_app

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
def make_app(tmp_path):
    """``make_app(**config)``: the app on a repository in this test's temp folder
    (``data``, then ``data1``, ...; ``sync`` off; the indexer a thread, see
    ``tests/apps.py``); every app closed at teardown."""
    apps: list[Any] = []

    def make(**config: Any) -> Any:
        config.setdefault("data_dir", str(tmp_path / (f"data{len(apps)}" if apps else "data")))
        config.setdefault("sync", False)
        apps.append(build_app(Config(**config)))
        return apps[-1]

    yield make
    for app in apps:
        close_app(app)


@pytest.fixture
def app_config() -> dict[str, Any]:
    """The configuration of ``app`` (besides its data folder): authentication off."""
    return {"auth_enabled": False}


@pytest.fixture
def app(make_app, app_config):
    return make_app(**app_config)


@pytest.fixture
def client(app):
    return app.test_client()


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
