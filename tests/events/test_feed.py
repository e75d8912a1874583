"""The change feed (Fedora API 1.0 §6 notifications), without a broker: one event per
changed resource per committed write, written in the write's own transaction."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import lmdb
import pytest

from lakesuperior import Repository
from lakesuperior.config import Config
from lakesuperior.exceptions import (
    ConfigError,
    InvalidResourceError,
    ResourceNotExistsError,
    StoreFormatError,
)
from lakesuperior.messaging import fedora
from lakesuperior.model import events
from lakesuperior.store.quadstore import FORMAT_VERSION, QuadStore

TTL = b"<> <http://purl.org/dc/terms/title> \"t\" ."


def feed(repo, since=0):
    return [(c.kind, c.uid) for c in repo.changes(since)]


def test_fedora_6_create_is_one_create_and_an_update_of_the_parent(repo):
    repo.create_or_replace("/a", data=TTL, media_type="text/turtle")
    assert feed(repo) == [("create", "/a"), ("update", "/")]


def test_fedora_6_put_with_missing_parents_creates_each(repo):
    repo.create_or_replace("/a/b/c")
    assert sorted(feed(repo)) == sorted([("create", "/a"), ("create", "/a/b"),
                                         ("create", "/a/b/c"), ("update", "/")])


def test_fedora_6_replace_patch_and_binary_description_are_updates(repo):
    repo.create_or_replace("/a")
    repo.create_or_replace("/bin", data=b"abc", media_type="text/plain")
    seq = repo.feed_state()["seq"]
    repo.create_or_replace("/a", data=TTL, media_type="text/turtle")
    repo.update("/a", "INSERT DATA { <> <http://ex.org/p> 1 }")
    repo.update("/bin", "INSERT DATA { <> <http://ex.org/p> 1 }")
    repo.create_or_replace("/bin", data=b"new content", media_type="text/plain")
    assert feed(repo, seq) == [("update", "/a"), ("update", "/a"), ("update", "/bin"),
                               ("update", "/bin")]


def test_fedora_6_delete_tombstones_each_resource_and_updates_the_parent(repo):
    repo.create_or_replace("/a/b")
    seq = repo.feed_state()["seq"]
    repo.delete("/a")
    assert sorted(feed(repo, seq)) == [("delete", "/a"), ("delete", "/a/b"), ("update", "/")]
    seq = repo.feed_state()["seq"]
    repo.resurrect("/a")
    assert sorted(feed(repo, seq)) == [("resurrect", "/a"), ("resurrect", "/a/b"),
                                       ("update", "/")]
    seq = repo.feed_state()["seq"]
    repo.delete("/a")
    repo.forget("/a")
    assert feed(repo, seq)[-2:] == [("purge", "/a"), ("purge", "/a/b")]


def test_fedora_6_hard_delete_is_a_purge(repo):
    repo.create_or_replace("/a")
    seq = repo.feed_state()["seq"]
    repo.delete("/a", soft=False)
    assert sorted(feed(repo, seq)) == [("purge", "/a"), ("update", "/")]


def test_fedora_6_version_created(repo):
    repo.create_or_replace("/a")
    seq = repo.feed_state()["seq"]
    repo.create_version("/a")
    assert feed(repo, seq) == [("version", "/a")]
    change = list(repo.changes(seq))[0]
    assert fedora.activity(change)["type"] == ["Update"]


def test_membership_induced_last_modified_change_is_an_update(repo):
    repo.create_or_replace("/m")
    repo.create_or_replace("/dc", data=(
        b"@prefix ldp: <http://www.w3.org/ns/ldp#> . <> "
        b"ldp:membershipResource </rest/m> ; ldp:hasMemberRelation <http://ex.org/has> ."),
        media_type="text/turtle", interaction_model="<http://www.w3.org/ns/ldp#DirectContainer>")
    seq = repo.feed_state()["seq"]
    repo.create_or_replace("/dc/x")
    assert sorted(feed(repo, seq)) == [("create", "/dc/x"), ("update", "/dc"), ("update", "/m")]


def test_transaction_emits_one_event_per_resource_at_commit(repo):
    seq = repo.feed_state()["seq"]
    with repo.transaction():
        repo.create_or_replace("/a")
        repo.update("/a", "INSERT DATA { <> <http://ex.org/p> 1 }")
        repo.create_or_replace("/b")
        assert feed(repo, seq) == []          # nothing before commit
    assert feed(repo, seq) == [("create", "/a"), ("update", "/"), ("create", "/b")]


def test_rollback_and_failed_writes_emit_nothing(repo, state):
    repo.create_or_replace("/a")
    before = repo.feed_state()
    with pytest.raises(RuntimeError):
        with repo.transaction():
            repo.create_or_replace("/b")
            raise RuntimeError("roll back")
    with pytest.raises(ResourceNotExistsError):
        repo.update("/missing", "INSERT DATA { <> <http://ex.org/p> 1 }")
    with pytest.raises(InvalidResourceError):
        repo.delete("/")
    assert repo.feed_state() == before


def test_event_ids_are_stable_and_unique(repo):
    for i in range(5):
        repo.create_or_replace(f"/r{i}")
    first = [c.id for c in repo.changes()]
    assert first == [c.id for c in repo.changes()]          # read twice: same ids
    assert len(set(first)) == len(first) and all(i.startswith("urn:uuid:") for i in first)


def test_the_acting_user_and_public_base_are_recorded(repo_factory):
    repo = repo_factory(agent="alice", base_uri="https://repo.example.org/fcrepo/rest")
    repo.create_or_replace("/a")
    change = next(c for c in repo.changes() if c.uid == "/a")
    assert change.user == "alice" and change.uri == "https://repo.example.org/fcrepo/rest/a"
    body = fedora.activity(change)
    assert body["actor"][0] == {"type": ["Person"], "id": "info:fedora/local-user#alice"}
    assert body["object"]["isPartOf"] == "https://repo.example.org/fcrepo/rest"


def test_changes_since_a_seq_or_a_time(repo):
    repo.create_or_replace("/a")
    mid = datetime.now(UTC) + timedelta(milliseconds=5)
    while datetime.now(UTC) <= mid:
        pass
    repo.create_or_replace("/b")
    assert [c.uid for c in repo.changes(datetime.now(UTC) + timedelta(days=1))] == []
    assert [c.uid for c in repo.changes(mid)] == ["/b", "/"]
    seqs = [c.seq for c in repo.changes()]
    assert seqs == sorted(seqs) and [c.seq for c in repo.changes(seqs[1])] == seqs[2:]
    for bad in (-1, "3", 1.5, True):
        with pytest.raises(InvalidResourceError, match="since is a seq"):
            list(repo.changes(bad))


def test_without_a_broker_nothing_is_pending(repo):
    repo.create_or_replace("/a")
    st = repo.feed_state()
    assert st["published"] == st["seq"] == st["last"] > 0


def test_with_a_broker_configured_events_wait_for_it(repo_factory):
    repo = repo_factory(messaging_broker_url="stomp://127.0.0.1:1")
    repo.create_or_replace("/a")
    st = repo.feed_state()
    assert st["published"] == 0 and st["seq"] == 2
    repo.mark_published(1)
    repo.mark_published(0)                    # never moves back
    assert repo.feed_state()["published"] == 1


def test_retention_drops_old_events_and_keeps_unpublished_ones(repo_factory):
    repo = repo_factory(messaging_broker_url="stomp://127.0.0.1:1")
    for i in range(3):
        repo.create_or_replace(f"/r{i}")
    later = datetime.now(UTC) + timedelta(days=8)
    with repo.store.write() as txn:
        assert events.prune(txn, retention_s=7 * 86400, publishing=True, now=later) == 0
    assert repo.feed_state()["entries"] == 6          # unpublished: all kept
    repo.mark_published(4)
    with repo.store.write() as txn:
        assert events.prune(txn, retention_s=7 * 86400, publishing=True, now=later) == 4
    st = repo.feed_state()
    assert (st["first"], st["entries"], st["seq"]) == (5, 2, 6)
    repo.create_or_replace("/x")                      # seqs go on, never reused
    assert repo.feed_state()["seq"] == 8


def test_retention_without_broker_keeps_recent_events(repo_factory):
    repo = repo_factory()
    repo.create_or_replace("/a")
    with repo.store.write() as txn:
        later = datetime.now(UTC) + timedelta(days=8)
        assert events.prune(txn, retention_s=7 * 86400, publishing=False, now=later) == 2
    assert repo.feed_state()["entries"] == 0


def test_format_1_store_is_upgraded_and_readonly_open_refused(tmp_path):
    path = str(tmp_path / "store")
    QuadStore(path).close()
    env = lmdb.open(path, max_dbs=16)
    with env.begin(write=True) as txn:
        txn.put(b"format", b"1", db=env.open_db(b"meta", txn=txn))
        txn.drop(env.open_db(b"outbox", txn=txn), delete=True)
    env.close()
    with pytest.raises(StoreFormatError, match="open it once for writing"):
        QuadStore(path, readonly=True)
    with QuadStore(path) as store:
        with store.read() as txn:
            assert txn.outbox_state()["entries"] == 0
    with QuadStore(path, readonly=True) as store:
        assert store.stats()["format"] == FORMAT_VERSION == 4


def test_outbox_entries_are_bytes(repo):
    with pytest.raises(TypeError):
        with repo.store.write() as txn:
            txn.outbox_append(["not bytes"])
    assert repo.feed_state()["entries"] == 0


@pytest.mark.parametrize("url", ["http://x:1", "stomp://x", "stomp://:61613",
                                 "stomp://x:0", "stomp://x:port", "61613"])
def test_config_refuses_a_bad_broker_url(url):
    with pytest.raises(ConfigError, match="messaging_broker_url must be stomp://HOST:PORT"):
        Config().with_(messaging_broker_url=url)


@pytest.mark.parametrize("dest", ["fedora", "/topic/", "/exchange/x"])
def test_config_refuses_a_bad_destination(dest):
    with pytest.raises(ConfigError, match="messaging_destination"):
        Config().with_(messaging_destination=dest)


def test_config_from_environment_and_password_never_shown():
    cfg = Config.load(environ={"LSUP_MESSAGING_BROKER_URL": "stomp://127.0.0.1:61613",
                               "LSUP_MESSAGING_PASSWORD": "s3cret",
                               "LSUP_MESSAGING_DESTINATION": "/queue/q",
                               "LSUP_MESSAGING_RETENTION_DAYS": "2.5"})
    assert cfg.messaging_broker_url == "stomp://127.0.0.1:61613"
    assert cfg.messaging_destination == "/queue/q" and cfg.messaging_retention_days == 2.5
    assert "s3cret" not in repr(cfg)
    assert Config.load(environ={}).messaging_broker_url == ""


def test_repository_accepts_messaging_overrides(tmp_path):
    repo = Repository(tmp_path / "r", messaging_retention_days=1.0, sync=False)
    try:
        assert repo.settings.event_retention_s == 86400.0 and not repo.settings.publishing
    finally:
        repo.close()
