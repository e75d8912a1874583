"""Syncing into a real Oxigraph server: every kind of change, each protocol,
reindex, several targets, the retention gap, the filter, and what a bad target
leaves behind (nothing: the checkpoint waits for the acknowledgement)."""
from __future__ import annotations

import threading
import time

import pytest

from lakesuperior.replicas import state
from lakesuperior.replicas.graphs import GraphWrite, agent_for
from lakesuperior.replicas.replica import Replica
from lakesuperior.replicas.runner import Runner
from lakesuperior.replicas.status import replica_status
from lakesuperior.replicas.targets import make_target, update_text
from lakesuperior.repository import Repository
from tests.replicas.conftest import TTL, assert_same, churn, put, repository_graphs

pytestmark = pytest.mark.slow


def replica(repo, url, protocol="graph-store", **kw) -> Replica:
    return Replica(repo, make_target(url, protocol, repo.config), batch=7, **kw)


def once(*replicas: Replica, reindex: bool = False):
    return Runner(replicas, reindex=reindex, min_backoff=0.01, max_backoff=0.05).once()


@pytest.mark.parametrize("protocol", ["graph-store", "quads"])
def test_every_kind_of_change_reaches_the_replica(repo, oxigraph, protocol):
    churn(repo, "1")
    out = once(replica(repo, oxigraph.store, protocol))[oxigraph.store]
    assert out.done and out.error == "" and out.reindex is not None   # a new target: filled
    assert_same(oxigraph.graphs(), repository_graphs(repo))
    churn(repo, "2")                       # then the feed, 7 events a round
    repo.delete("/a1/b")
    repo.forget("/a1/b")
    repo.delete("/bin1")
    put(repo, "/a1", "again")
    out = once(replica(repo, oxigraph.store, protocol))[oxigraph.store]
    assert out.done and out.reindex is None and out.events > 20
    assert_same(oxigraph.graphs(), repository_graphs(repo))
    st = state.load(repo.config.data_dir, oxigraph.store)
    assert st is not None and st.seq == repo.feed_state()["seq"] and st.filled
    assert st.protocol == protocol
    [row] = replica_status(repo)
    assert (row["lag_events"], row["lag_seconds"], row["gap"]) == (0, 0.0, False)


def test_sparql_update_target(repo, oxigraph):
    churn(repo)
    r = replica(repo, oxigraph.base + "/update", "update")
    assert once(r)[r.url].done
    churn(repo, "x")
    assert once(replica(repo, oxigraph.base + "/update", "update"))[r.url].done
    assert_same(oxigraph.graphs(), repository_graphs(repo))


def test_blank_node_labels_are_kept_apart_per_graph():
    text = update_text([GraphWrite("http://h/a", b"_:b <http://p> _:b .\n"),
                        GraphWrite("http://h/b", b"<http://h/b> <http://p> _:b .\n")])
    assert "_:g0_b <http://p> _:g0_b ." in text and "<http://h/b> <http://p> _:g1_b ." in text


def test_reindex_repairs_a_replica_edited_by_someone_else(repo, oxigraph):
    churn(repo)
    assert once(replica(repo, oxigraph.store))[oxigraph.store].done
    base = repo.base_uri
    oxigraph.put(base + "/a", b"<http://x/s> <http://x/p> \"vandalized\" .\n")
    oxigraph.put(base + "/never-there", b"<http://x/s> <http://x/p> \"stale\" .\n")
    oxigraph.put("http://elsewhere.org/g", b"<http://x/s> <http://x/p> \"not ours\" .\n")
    edited = oxigraph.graphs()
    assert base + "/never-there" in edited
    r = replica(repo, oxigraph.store, query_url=oxigraph.base + "/query")
    out = once(r, reindex=True)[oxigraph.store]
    assert out.reindex is not None and out.reindex.stale_deleted == 1
    after = oxigraph.graphs()
    assert "http://elsewhere.org/g" in after            # not under the repository's base
    del after["http://elsewhere.org/g"]
    assert_same(after, repository_graphs(repo))


def test_changes_during_a_reindex_come_from_the_feed(repo, oxigraph, monkeypatch):
    churn(repo)
    r = replica(repo, oxigraph.store)
    real = r.source.writes
    done = []

    def writes(uids):
        if not done:                       # a write lands while the reindex runs
            done.append(1)
            put(repo, "/during", "written during the reindex")
            put(repo, "/a", "changed during the reindex")
        return real(uids)
    monkeypatch.setattr(r.source, "writes", writes)
    assert once(r, reindex=True)[r.url].done
    assert_same(oxigraph.graphs(), repository_graphs(repo))


def test_a_feed_position_older_than_the_retention_is_reported(config, oxigraph):
    with Repository(config=config) as repo:
        churn(repo)
        assert once(replica(repo, oxigraph.store))[oxigraph.store].done
        seq = repo.feed_state()["seq"]
    with Repository(config=config.with_(messaging_retention_days=0)) as repo:
        time.sleep(0.01)
        for i in range(3):            # each write drops the events older than the retention
            put(repo, f"/late{i}")
        assert repo.feed_state()["first"] != seq + 1
        out = once(replica(repo, oxigraph.store))[oxigraph.store]
        assert not out.done and "--reindex" in out.error and "retention" in out.error
        st = state.load(config.data_dir, oxigraph.store)
        assert st is not None and st.seq == seq and "--reindex" in st.last_error
        assert replica_status(repo)[0]["gap"] is True
        out = once(replica(repo, oxigraph.store), reindex=True)[oxigraph.store]
        assert out.done
        assert_same(oxigraph.graphs(), repository_graphs(repo))


@pytest.mark.parametrize("mode", ["500", "400", "garbage", "slow"])
def test_a_bad_target_moves_no_checkpoint(repo, oxigraph, error_server, mode):
    churn(repo)
    good = replica(repo, oxigraph.store)
    assert once(good)[good.url].done
    before = state.load(repo.config.data_dir, oxigraph.store)
    url = f"http://127.0.0.1:{error_server.server_address[1]}/store"
    bad_cfg = repo.config.with_(replicas_timeout=0.5)
    bad = Replica(repo, make_target(url, "graph-store", bad_cfg), batch=7)
    error_server.mode = mode
    put(repo, "/more")
    outs = once(bad, replica(repo, oxigraph.store))
    assert outs[oxigraph.store].done                            # the other target went on
    assert not outs[url].done and url in outs[url].error
    if mode in ("500", "400"):
        assert "store says no" in outs[url].error and mode in outs[url].error
    st = state.load(repo.config.data_dir, url)
    assert st is not None and not st.filled and st.last_error     # not filled, error kept
    assert state.load(repo.config.data_dir, oxigraph.store).seq > before.seq
    # The target recovers: the next run fills it.
    error_server.mode = "ok"
    assert once(Replica(repo, make_target(url, "graph-store", bad_cfg), batch=7))[url].done
    st = state.load(repo.config.data_dir, url)
    assert st.filled and st.seq == repo.feed_state()["seq"] and st.last_error == ""


def test_an_error_in_the_middle_of_a_round_keeps_the_checkpoint(repo, oxigraph):
    churn(repo)
    r = replica(repo, oxigraph.store)
    assert once(r)[r.url].done
    seq = state.load(repo.config.data_dir, r.url).seq
    for i in range(5):
        put(repo, f"/n{i}")
    r = replica(repo, oxigraph.store)
    calls = []
    real = r.target.request

    def failing(method, url, *a, **kw):
        calls.append(method)
        if len(calls) == 3:
            oxigraph.kill()           # the store dies after two graphs of the round
        return real(method, url, *a, **kw)
    r.target.request = failing
    out = once(r)[r.url]
    assert not out.done and "cannot be reached" in out.error
    assert state.load(repo.config.data_dir, r.url).seq == seq


def test_a_target_down_is_retried_while_others_go_on(repo, oxigraph, tmp_path):
    from tests.replicas.conftest import Oxigraph
    other = Oxigraph(tmp_path / "other")
    put(repo, "/x")
    stop = threading.Event()
    runner = Runner([replica(repo, oxigraph.store), replica(repo, other.store)],
                    min_backoff=0.05, max_backoff=0.2)
    t = threading.Thread(target=runner.follow, args=(stop,))
    t.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            rows = {r["target"]: r for r in replica_status(repo)}
            if (len(rows) == 2 and rows[oxigraph.store]["lag_events"] == 0
                    and rows[oxigraph.store]["seq"] > 0 and rows[other.store]["last_error"]):
                break
            time.sleep(0.05)
        put(repo, "/y")                        # the live target follows
        while time.monotonic() < deadline:
            if state.load(repo.config.data_dir, oxigraph.store).seq == repo.feed_state()["seq"]:
                break
            time.sleep(0.05)
        assert "cannot be reached" in rows[other.store]["last_error"]
        assert rows[other.store]["running"] is True
        other.start()                          # the other comes up: it catches up by itself
        while time.monotonic() < deadline:
            st = state.load(repo.config.data_dir, other.store)
            if st.filled and st.seq == repo.feed_state()["seq"]:
                break
            time.sleep(0.05)
        assert_same(other.graphs(), repository_graphs(repo))
        assert_same(oxigraph.graphs(), repository_graphs(repo))
    finally:
        stop.set()
        t.join(10)
        other.kill()


def test_readable_by_copies_only_what_the_agent_may_read(repo, oxigraph):
    put(repo, "/public")
    put(repo, "/private")
    repo.set_acl("/private", data=b"""@prefix acl: <http://www.w3.org/ns/auth/acl#> .
<#owner> a acl:Authorization ; acl:agent <info:fedora/local-user#alice> ;
  acl:accessTo <http://127.0.0.1:8000/rest/private> ; acl:mode acl:Read, acl:Write .
""", media_type=TTL)
    agent = agent_for("anonymous", repo.config)
    r = replica(repo, oxigraph.store, readable_by="anonymous", agent=agent)
    assert once(r)[r.url].done
    graphs = oxigraph.graphs()
    assert repo.base_uri + "/public" in graphs and repo.base_uri + "/private" not in graphs
    assert_same(graphs, repository_graphs(repo, repo.as_agent(None)))
    assert agent_for("alice", repo.config).webid == "info:fedora/local-user#alice"
    # the same target without the filter must be refilled first, never mixed
    out = once(replica(repo, oxigraph.store))[oxigraph.store]
    assert not out.done and "--readable-by anonymous" in out.error
    assert once(replica(repo, oxigraph.store), reindex=True)[oxigraph.store].done
    assert repo.base_uri + "/private" in oxigraph.graphs()


def test_a_stopped_reindex_leaves_the_target_unfilled(repo, oxigraph):
    for i in range(450):
        put(repo, f"/r{i}")
    r = replica(repo, oxigraph.store)
    stop = threading.Event()
    sent = []
    real = r.target.send

    def send(writes):
        sent.append(len(writes))
        stop.set()                           # SIGTERM during the first batch
        return real(writes)
    r.target.send = send
    try:
        report = r.reindex(stop=stop)
    finally:
        r.target.close()
    assert not report.complete and sent == [200]
    assert state.load(repo.config.data_dir, r.url).filled is False
    out = once(replica(repo, oxigraph.store))[oxigraph.store]   # the next run fills it
    assert out.done and out.reindex is not None and out.reindex.complete
    assert_same(oxigraph.graphs(), repository_graphs(repo))
