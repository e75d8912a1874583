"""Shared fixtures: a fresh repository per test, in pytest's ``tmp_path``, and the
one app fixture of the HTTP tests.

``app`` is the Flask app on a fresh repository, made by ``make_app`` from
``app_config``: a folder whose tests need another configuration overrides
``app_config`` (or wraps ``make_app``), never ``app``. ``client`` is its test client.

Binary backends: a test (or module, ``pytestmark``) marked ``both_backends``
runs twice, its repositories and apps storing binaries in files and then in a
real S3 object store (``seaweedfs``: SeaweedFS on loopback, started once per
session, by each pytest worker that needs it; every repository gets a key
prefix of its own in the one bucket).
"""
from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

from lakesuperior.bench.seaweedfs import SeaweedFS
from lakesuperior.config import Config
from lakesuperior.store.s3 import S3BinaryStore
from tests.apps import build_app, close_app
from tests.clock import FakeClock

BASE = "http://test.example/rest"


def pytest_collection_modifyitems(config, items):
    """The files with a test marked ``slow`` first (each file in its order): pytest-xdist
    hands out whole files in the order collected (``make test``: ``--dist loadfile``,
    and ``--no-loadscope-reorder`` in pyproject.toml), so the long ones start early
    instead of ending the run on one worker while the others wait."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


def pytest_generate_tests(metafunc):
    if ("binaries_backend" in metafunc.fixturenames
            and metafunc.definition.get_closest_marker("both_backends")):
        metafunc.parametrize("binaries_backend", ["file", "s3"])


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory):
    """SeaweedFS's S3 gateway on loopback ports, for the session (started when a
    test first asks for it)."""
    server = SeaweedFS(tmp_path_factory.mktemp("seaweedfs")).start()
    yield server
    server.stop()


@pytest.fixture
def binaries_backend() -> str:
    """``file``; ``file`` and ``s3`` for tests marked ``both_backends``."""
    return "file"


@pytest.fixture(scope="session")
def s3_client(seaweedfs):
    """One S3 client for the session's repositories (a client takes 0.3 s to make)."""
    return S3BinaryStore.make_client(Config(**seaweedfs.config()))


@pytest.fixture
def binaries_config(request, binaries_backend) -> dict[str, Any]:
    """``Config`` keywords of the binary backend: none for files; for S3 the
    session's SeaweedFS with a key prefix of this test's own."""
    if binaries_backend == "file":
        return {}
    server = request.getfixturevalue("seaweedfs")
    return server.config(prefix=f"t{uuid.uuid4().hex[:16]}/")


@pytest.fixture
def binary_store(request, binaries_config):
    """``binary_store(config_keywords, name)``: the S3 store of a repository named
    ``name`` (its own prefix under the test's), through the session's client, and
    the keywords with that prefix; (None, keywords) for the file store."""
    def make(config: dict[str, Any], name: str) -> tuple[Any, dict[str, Any]]:
        if not binaries_config:
            return None, config
        config = dict(config, binaries_s3_prefix=f"{binaries_config['binaries_s3_prefix']}"
                      f"{name}/")
        for key, value in binaries_config.items():
            config.setdefault(key, value)
        client = request.getfixturevalue("s3_client")
        return S3BinaryStore.from_config(Config(**config), client=client), config
    return make


@pytest.fixture
def repo_factory(tmp_path, binary_store):
    """Open repositories under this test's temp dir; all closed at teardown (keywords:
    configuration overrides, or ``Repository``'s own: ``binaries``, ``clock``)."""
    opened = []

    def make(name: str = "repo", **overrides):
        from lakesuperior import Repository
        overrides.setdefault("base_uri", BASE)
        overrides.setdefault("sync", False)
        # The indexer as a thread: a process per test repository would cost the
        # suite a Python start each (tests/store/test_indexer_process.py and the
        # servers, which run the default, test the process).
        overrides.setdefault("indexer_process", False)
        binaries = overrides.pop("binaries", None)
        own = {"clock": overrides.pop("clock")} if "clock" in overrides else {}
        if binaries is None:
            binaries, overrides = binary_store(overrides, name)
        repo = Repository(tmp_path / name, binaries=binaries, **own, **overrides)
        opened.append(repo)
        return repo

    yield make
    for repo in opened:
        try:
            repo.close()
        except Exception:
            pass


@pytest.fixture
def clock() -> FakeClock:
    """A clock this test moves on by hand (``tests/clock.py``), for
    ``repo_factory(clock=clock)`` and ``make_app(clock=clock)``."""
    return FakeClock()


@pytest.fixture
def make_app(tmp_path, binary_store):
    """``make_app(**config)``: the app on a repository in this test's temp folder
    (``data``, then ``data1``, ...; ``sync`` off; the indexer a thread, see
    ``tests/apps.py``); every app closed at teardown. ``clock=``: the repository's
    clock (``tests/clock.py``)."""
    apps: list[Any] = []
    owned: list[Any] = []    # repositories made here for the app (S3, a clock): not the app's

    def make(clock: Any = None, **config: Any) -> Any:
        config.setdefault("data_dir", str(tmp_path / (f"data{len(apps)}" if apps else "data")))
        config.setdefault("sync", False)
        binaries, config = binary_store(config, os.path.basename(config["data_dir"]))
        if binaries is None and clock is None:
            apps.append(build_app(Config(**config)))
        else:
            from lakesuperior import Repository
            cfg = Config(**dict(config, indexer_process=False))
            owned.append(Repository(config=cfg, binaries=binaries,
                                    **({} if clock is None else {"clock": clock})))
            apps.append(build_app(cfg, repository=owned[-1]))
        return apps[-1]

    yield make
    for app in apps:
        close_app(app)
    for repo in owned:
        repo.close()


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
