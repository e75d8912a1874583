"""How a round and a reindex reach the store: the graphs of a batch side by side
over several connections (``replicas.connections``), each resource once per round
however often it changed, a reindex's next batch read while the last ones are on
their way, and the checkpoint rules when a request in the middle of a batch fails:
nothing moves, nothing of the failed batch is still on its way, the next run
repairs it."""
from __future__ import annotations

import http.server
import threading
import time
from collections import Counter
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError, ReplicaError
from lakesuperior.replicas import state
from lakesuperior.replicas.graphs import GraphWrite
from lakesuperior.replicas.replica import REINDEX_BATCH, Replica
from lakesuperior.replicas.runner import Runner
from lakesuperior.replicas.targets import make_target
from tests.replicas.conftest import (
    Oxigraph,
    assert_same,
    put,
    repository_graphs,
    threaded_server,
)

pytestmark = pytest.mark.slow


def replica(repo, url: str, protocol: str = "graph-store", batch: int = 500,
            **cfg) -> Replica:
    config = repo.config.with_(**cfg) if cfg else repo.config
    return Replica(repo, make_target(url, protocol, config), batch=batch)


def once(*replicas: Replica, reindex: bool = False):
    return Runner(replicas, reindex=reindex, min_backoff=0.01, max_backoff=0.05).once()


def record(r: Replica) -> list[tuple[str, str]]:
    """Every request ``r``'s target sends from now on: (method, graph IRI or '')."""
    seen: list[tuple[str, str]] = []
    real = r.target.request

    def request(method, url, *a, **kw):
        seen.append((method, parse_qs(urlsplit(url).query).get("graph", [""])[0]))
        return real(method, url, *a, **kw)
    r.target.request = request           # type: ignore[method-assign]
    return seen


# -- a store that answers some graphs slowly and refuses others --------------------


class GraphHandler(http.server.BaseHTTPRequestHandler):
    """Answers ``?graph=`` requests: 400 at once for a graph whose IRI has ``bad``,
    else 204 after ``server.delay`` seconds; records which requests started and
    which were answered."""

    protocol_version = "HTTP/1.1"

    def _any(self) -> None:
        srv = self.server
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        graph = parse_qs(urlsplit(self.path).query).get("graph", [""])[0]
        with srv.lock:                                          # type: ignore[attr-defined]
            srv.started.append(graph)                           # type: ignore[attr-defined]
            srv.peak = max(srv.peak, len(srv.started) - len(srv.answered))  # type: ignore[attr-defined]
        if "bad" in graph:
            status, body = 400, b"bad graph"
        else:
            time.sleep(srv.delay)                               # type: ignore[attr-defined]
            status, body = 204, b""
        with srv.lock:       # before the answer: its client may send the next at once
            srv.answered.append(graph)                          # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_PUT = do_DELETE = do_POST = _any

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def graph_server() -> Iterator[http.server.ThreadingHTTPServer]:
    with threaded_server(GraphHandler, lock=threading.Lock(), started=[], answered=[],
                         peak=0, delay=0.2) as srv:
        yield srv


def gsp_target(srv, connections: int = 4):
    config = Config(data_dir="/nonexistent", replicas_timeout=10.0,
                    replicas_connections=connections)
    return make_target(f"http://127.0.0.1:{srv.server_address[1]}/store", "graph-store",
                       config)


def writes(*names: str) -> list[GraphWrite]:
    return [GraphWrite(f"http://h/{n}", b"<http://h/s> <http://h/p> <http://h/o> .\n")
            for n in names]


# -- tests ---------------------------------------------------------------------------


def apply_over(srv, connections: int, names: list[str]) -> None:
    """One round writing the graphs ``names`` to ``srv`` over ``connections``."""
    target = gsp_target(srv, connections=connections)
    try:
        target.apply(writes(*names))
    finally:
        target.close()


def test_the_graphs_of_a_batch_go_side_by_side(graph_server):
    graph_server.delay = 0.5
    apply_over(graph_server, 4, [f"g{i}" for i in range(8)])
    assert sorted(graph_server.answered) == sorted(f"http://h/g{i}" for i in range(8))
    assert graph_server.peak == 4            # four connections, each busy at once


def test_one_connection_sends_one_graph_at_a_time(graph_server):
    graph_server.delay = 0.01
    apply_over(graph_server, 1, [f"g{i}" for i in range(5)])
    assert graph_server.peak == 1 and len(graph_server.answered) == 5


def test_a_failed_request_is_raised_once_the_others_have_ended(graph_server):
    """Nothing of a failed batch is still on its way when the error is raised: a
    late write of the older state could land after the retry's newer one."""
    target = gsp_target(graph_server, connections=3)
    try:
        with pytest.raises(ReplicaError, match="400 .*bad graph"):
            target.apply(writes("slow1", "slow2", "bad", *(f"later{i}" for i in range(60))))
        with graph_server.lock:
            started, answered = list(graph_server.started), list(graph_server.answered)
    finally:
        target.close()
    assert sorted(started) == sorted(answered)       # every request begun was answered
    assert "http://h/slow1" in answered and "http://h/bad" in answered
    assert len(started) < 63                         # those not yet begun were dropped
    time.sleep(0.5)
    assert graph_server.started == started           # and none is sent afterwards


def test_a_resource_changed_often_in_a_round_is_written_once(repo, oxigraph):
    put(repo, "/a")
    assert once(replica(repo, oxigraph.store))[oxigraph.store].done
    for i in range(6):
        put(repo, "/a", f"version {i}")
    put(repo, "/b")
    repo.update("/b", 'INSERT DATA { <> <http://purl.org/dc/terms/subject> "s" }')
    repo.delete("/b")
    r = replica(repo, oxigraph.store)
    seen = record(r)
    out = once(r)[r.url]
    assert out.done and out.events >= 9
    base = repo.base_uri
    assert Counter(seen) == {("PUT", base + "/a"): 1, ("PUT", base + "/"): 1,
                             ("DELETE", base + "/b"): 1}
    assert_same(oxigraph.graphs(), repository_graphs(repo))
    graph = oxigraph.graphs()[base + "/a"]
    assert "version 5" in graph.serialize(format="nt")


def test_a_round_over_several_connections_equals_the_repository(repo, oxigraph):
    for i in range(30):
        put(repo, f"/c{i}")
    assert once(replica(repo, oxigraph.store))[oxigraph.store].done
    for i in range(30):
        put(repo, f"/c{i}", f"again {i}")
        put(repo, f"/c{i}/child")
    for i in range(0, 30, 3):
        repo.delete(f"/c{i}")
    r = replica(repo, oxigraph.store, batch=25, replicas_connections=8)
    assert once(r)[r.url].done
    assert_same(oxigraph.graphs(), repository_graphs(repo))
    assert state.load(repo.config.data_dir, r.url).seq == repo.feed_state()["seq"]


def test_the_store_dying_in_the_middle_of_a_batch_keeps_the_checkpoint(repo, oxigraph,
                                                                      tmp_path):
    for i in range(20):
        put(repo, f"/d{i}")
    assert once(replica(repo, oxigraph.store))[oxigraph.store].done
    seq = state.load(repo.config.data_dir, oxigraph.store).seq
    for i in range(20):
        put(repo, f"/d{i}", f"changed {i}")
    r = replica(repo, oxigraph.store)
    sent = []
    real = r.target.request

    def dying(method, url, *a, **kw):
        sent.append(method)
        if len(sent) == 6:
            oxigraph.kill()                  # mid-batch, with other requests in flight
        return real(method, url, *a, **kw)
    r.target.request = dying                 # type: ignore[method-assign]
    out = once(r)[r.url]
    assert not out.done and "cannot be reached" in out.error
    st = state.load(repo.config.data_dir, r.url)
    assert st.seq == seq and st.filled and "cannot be reached" in st.last_error
    # The store comes back on the same data: the round is repeated whole.
    back = Oxigraph(oxigraph.location)
    back.port = oxigraph.port
    back.start()
    try:
        assert once(replica(repo, back.store))[back.store].done
        assert_same(back.graphs(), repository_graphs(repo))
        assert state.load(repo.config.data_dir, back.store).seq == repo.feed_state()["seq"]
    finally:
        back.kill()


def test_a_reindex_reads_the_next_batch_while_sending(repo, oxigraph):
    for i in range(2 * REINDEX_BATCH + 50):
        put(repo, f"/r{i}")
    r = replica(repo, oxigraph.store)
    order = []
    real_send, real_writes = r.target.send, r.source.writes

    def send(ws):
        order.append(("send", len(ws)))
        return real_send(ws)

    def read(uids):
        order.append(("read", len(uids)))
        return real_writes(uids)
    r.target.send = send                     # type: ignore[method-assign]
    r.source.writes = read                   # type: ignore[method-assign]
    assert once(r, reindex=True)[r.url].done
    n = len(list(repository_graphs(repo)))
    sizes = [REINDEX_BATCH, REINDEX_BATCH, n - 2 * REINDEX_BATCH]
    assert order[:6] == [("read", sizes[0]), ("send", sizes[0]), ("read", sizes[1]),
                         ("send", sizes[1]), ("read", sizes[2]), ("send", sizes[2])]
    assert_same(oxigraph.graphs(), repository_graphs(repo))


def test_a_reindex_failing_in_a_later_batch_leaves_the_target_unfilled(repo, oxigraph):
    for i in range(REINDEX_BATCH + 30):
        put(repo, f"/f{i}")
    r = replica(repo, oxigraph.store)
    real = r.target.request
    sent = []

    def refusing(method, url, *a, **kw):
        sent.append(method)
        if len(sent) == REINDEX_BATCH + 10:      # in the second batch
            raise ReplicaError(f"{r.url} refused PUT: 500 store says no")
        return real(method, url, *a, **kw)
    r.target.request = refusing              # type: ignore[method-assign]
    with pytest.raises(ReplicaError, match="store says no"):
        r.reindex()
    r.target.close()
    st = state.load(repo.config.data_dir, r.url)
    assert st is not None and not st.filled
    out = once(replica(repo, oxigraph.store))[oxigraph.store]     # the next run fills it
    assert out.done and out.reindex is not None and out.reindex.complete
    assert_same(oxigraph.graphs(), repository_graphs(repo))


def test_sparql_update_sends_one_request_per_batch(repo, oxigraph):
    for i in range(REINDEX_BATCH + 20):
        put(repo, f"/u{i}")
    r = replica(repo, oxigraph.base + "/update", "update", batch=40)
    seen = record(r)
    assert once(r, reindex=True)[r.url].done
    n = len(repository_graphs(repo))
    assert seen == [("POST", "")] * -(-n // REINDEX_BATCH)      # one per reindex batch
    for i in range(30):
        put(repo, f"/u{i}/x")
    r2 = replica(repo, oxigraph.base + "/update", "update", batch=40)
    seen = record(r2)
    assert once(r2)[r2.url].done
    # 30 children and their parents' 30 updates: 60 events, 40 a round, 2 rounds
    assert seen == [("POST", "")] * 2
    assert_same(oxigraph.graphs(), repository_graphs(repo))


@pytest.mark.parametrize("value", [0, -1, 65])
def test_connections_out_of_range_is_a_configuration_error(value, tmp_path):
    with pytest.raises(ConfigError, match="replicas.connections"):
        Config(data_dir=str(tmp_path), replicas_connections=value).check()


def test_connections_from_the_environment(tmp_path):
    cfg = Config.load(environ={"LSUP_REPLICAS_CONNECTIONS": "2"}, data_dir=str(tmp_path))
    assert cfg.replicas_connections == 2
    assert Config(data_dir=str(tmp_path)).replicas_connections == 4     # the default
