"""What admin tools ask of the store beneath a repository, through ``Repository``."""
from __future__ import annotations

from lakesuperior.store.quadstore import QuadStore

TTL = "text/turtle"


def test_index_pending_state_durable_and_copy(repo_factory, tmp_path):
    repo = repo_factory("quiet", background_index=False)   # no indexer races the counts
    repo.create_or_replace("/a", data=b'<> <http://purl.org/dc/terms/title> "A" .',
                           media_type=TTL)
    applied_before, last = repo.index_state()
    assert last >= 1 and repo.index_pending() == last - applied_before
    assert repo.index() == last - applied_before > 0
    assert repo.index_pending() == 0
    applied, last_after = repo.index_state()
    assert applied == last_after == last
    assert repo.make_durable() is None
    dest = tmp_path / "copy"
    repo.copy_store(str(dest))
    copy = QuadStore(str(dest), sync=False)       # rebuilds its index on first use
    try:
        with copy.read() as txn:
            assert txn.has_graph("<info:fcres/a>")
    finally:
        copy.close()
