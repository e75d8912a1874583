"""An embedded ``Repository`` and its background indexer (``store.background_index``)."""
from __future__ import annotations

import os
import time

import pytest

from lakesuperior.config import Config
from lakesuperior.store.background import IndexerLock
from lakesuperior.store.indexer_process import IndexerProcess

TITLE = "http://purl.org/dc/terms/title"
COUNT = ("PREFIX ldp: <http://www.w3.org/ns/ldp#> "
         "SELECT (COUNT(?s) AS ?c) WHERE { ?s a ldp:Container }")


def _count(repo) -> int:
    return int(next(iter(repo.sparql_query(COUNT)))[0])


def test_without_the_indexer_queries_see_every_write_and_apply_nothing(repo_factory):
    repo = repo_factory(background_index=False)
    assert repo.indexer is None
    for i in range(20):
        repo.create_or_replace(f"/c{i}", data=f'<> <{TITLE}> "t{i % 2}" .'.encode(),
                               media_type="text/turtle")
    applied, last = repo.store.index_state()
    assert _count(repo) == 21
    c7 = f"<{repo.base_uri}/c7>"
    assert repo.triple_match(None, None, c7) == [
        (f"<{repo.base_uri}/>", "<http://www.w3.org/ns/ldp#contains>", c7)]
    assert len(repo.term_search([("dcterms:title", "=", "t1")])) == 10
    assert repo.store.index_state() == (applied, last)      # the query indexed nothing
    assert last > applied
    repo.store.index()
    assert _count(repo) == 21


def test_the_embedded_indexer_runs_by_default_and_stops_with_close(repo_factory, tmp_path):
    repo = repo_factory()
    assert repo.indexer is not None
    for i in range(20):
        repo.create_or_replace(f"/c{i}")
    assert _count(repo) == 21
    deadline = time.monotonic() + 30
    while repo.store.pending() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert repo.store.pending() == 0 and repo.indexer.leader
    repo.close()
    assert not repo.indexer.thread.is_alive()
    lock = IndexerLock(str(tmp_path / "repo" / "ldprs"))
    assert lock.acquire()                                    # released
    lock.release()


def test_by_default_the_indexer_is_a_process_of_its_own(repo_factory, tmp_path):
    repo = repo_factory(indexer_process=True)
    assert isinstance(repo.indexer, IndexerProcess)
    for i in range(20):
        repo.create_or_replace(f"/c{i}")
    deadline = time.monotonic() + 30
    while (repo.store.pending() or repo.indexer.pid is None) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert repo.store.pending() == 0 and _count(repo) == 21
    pid = repo.indexer.pid
    assert pid is not None and pid != os.getpid()
    repo.close()
    assert repo.indexer.pid is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)                          # ended and reaped
    lock = IndexerLock(str(tmp_path / "repo" / "ldprs"))
    assert lock.acquire()
    lock.release()


def test_the_configured_default_is_the_process():
    assert Config.load(environ={}).indexer_process is True
    assert Config.load(environ={"LSUP_STORE_INDEXER_PROCESS": "false"}).indexer_process is False
