"""The ``quads`` target (``--quads-url``) into a real Oxigraph server: each batch's
graphs deleted, then loaded by ``POST``s of N-Quads, one per connection (one to
Oxigraph's bulk loader for a batch of ``BULK_MIN`` graphs or more). Graphs
replaced exactly, blank nodes kept apart per graph, a failed load moves no
checkpoint, a reindex removes the graphs the repository no longer has, and a
store that is not Oxigraph never gets the bulk loader's parameter."""
from __future__ import annotations

import http.client
import http.server
from collections.abc import Iterator

import pytest

from lakesuperior.exceptions import ReplicaError
from lakesuperior.replicas import state
from lakesuperior.replicas.graphs import GraphWrite
from lakesuperior.replicas.replica import Replica
from lakesuperior.replicas.runner import Runner
from lakesuperior.replicas.targets import BULK_MIN, Quads, _dealt, make_target, nquads
from tests.replicas.conftest import (
    assert_same,
    churn,
    put,
    repository_graphs,
    threaded_server,
)


def replica(repo, url: str, batch: int = 7, **kw) -> Replica:
    return Replica(repo, make_target(url, "quads", repo.config), batch=batch, **kw)


def once(*replicas: Replica, reindex: bool = False):
    return Runner(replicas, reindex=reindex, min_backoff=0.01, max_backoff=0.05).once()


# -- a loopback proxy in front of the real store --------------------------------------


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    """Forwards each request to the Oxigraph at ``server.upstream`` (a port) and
    records (method, path); refuses (500) the methods in ``server.refuse``; answers
    with ``server.server_as`` as its ``Server`` header if set (a store that is not
    Oxigraph), else with the store's."""

    protocol_version = "HTTP/1.1"

    def version_string(self) -> str:
        return self._server_header

    def _any(self) -> None:
        srv = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        srv.seen.append((self.command, self.path))                  # type: ignore[attr-defined]
        if self.command in srv.refuse:                              # type: ignore[attr-defined]
            status, ctype, data, server = 500, "text/plain", b"store says no", "Oxigraph/0"
        else:
            conn = http.client.HTTPConnection("127.0.0.1", srv.upstream, timeout=30)  # type: ignore[attr-defined]
            try:
                conn.request(self.command, self.path, body,
                             {k: v for k, v in self.headers.items()
                              if k.lower() in ("content-type", "accept")})
                resp = conn.getresponse()
                status, data = resp.status, resp.read()
                ctype, server = resp.getheader("Content-Type"), resp.getheader("Server", "")
            finally:
                conn.close()
        self._server_header = srv.server_as or server                 # type: ignore[attr-defined]
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_PUT = do_DELETE = do_POST = do_GET = _any

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def proxy(oxigraph) -> Iterator[http.server.ThreadingHTTPServer]:
    with threaded_server(ProxyHandler, upstream=oxigraph.port, seen=[], refuse=set(),
                         server_as="") as srv:
        yield srv


def proxy_store(srv) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}/store"


def posts(srv) -> list[str]:
    """The paths of the POSTs the proxy saw (and forgets them)."""
    out = [path for method, path in srv.seen if method == "POST"]
    srv.seen.clear()
    return out


# -- tests ------------------------------------------------------------------------------


def test_an_updated_graph_keeps_no_stale_triple(repo, oxigraph, proxy):
    """Replaced whole, by both loads: the bulk loader's (a reindex of more than
    BULK_MIN graphs) and a transaction's (a small round)."""
    for i in range(BULK_MIN + 10):
        put(repo, f"/s{i}", f"first {i}")
    url = proxy_store(proxy)
    assert once(replica(repo, url), reindex=True)[url].done
    assert posts(proxy) == ["/store?no_transaction"]
    base = repo.base_uri
    assert "first 3" in oxigraph.graphs()[base + "/s3"].serialize(format="nt")
    put(repo, "/s3", "second")
    repo.delete("/s4")
    assert once(replica(repo, url))[url].done
    assert posts(proxy) == ["/store", "/store"]        # /s3 and the root, side by side
    graphs = oxigraph.graphs()
    text = graphs[base + "/s3"].serialize(format="nt")
    assert "second" in text and "first 3" not in text
    assert base + "/s4" not in graphs
    assert_same(graphs, repository_graphs(repo))
    # A round of BULK_MIN graphs or more is bulk loaded too.
    for i in range(BULK_MIN + 10):
        put(repo, f"/s{i + 5}", f"third {i}")
    assert once(replica(repo, url, batch=500))[url].done
    assert posts(proxy) == ["/store?no_transaction"]
    assert_same(oxigraph.graphs(), repository_graphs(repo))


@pytest.mark.parametrize("count", [2, BULK_MIN + 10])
def test_blank_nodes_stay_distinct_per_graph(oxigraph, config, count):
    """The same label in several graphs of one load is a node of each graph."""
    target = Quads(oxigraph.store, config)
    try:
        target.apply([GraphWrite(f"http://h/g{i}", f"<http://h/s{i}> <http://h/p> _:b .\n"
                                 f"_:b <http://h/q> \"{i}\" .\n".encode())
                      for i in range(count)])
    finally:
        target.close()
    rows = oxigraph.query("SELECT (COUNT(DISTINCT ?b) AS ?n) WHERE { GRAPH ?g { "
                          "?s <http://h/p> ?b . ?b <http://h/q> ?v } }")["results"]["bindings"]
    assert int(rows[0]["n"]["value"]) == count
    assert oxigraph.query('ASK { GRAPH <http://h/g1> { <http://h/s1> <http://h/p> ?b . '
                          '?b <http://h/q> "1" } }')["boolean"] is True


def test_nquads_puts_each_triple_in_its_graph():
    text = nquads([GraphWrite("http://h/a", b'<http://h/a> <http://p> "x ." .\n'),
                   GraphWrite("http://h/gone", None),
                   GraphWrite("http://h/b", b"_:b <http://p> _:b .\n")])
    assert text == (b'<http://h/a> <http://p> "x ." <http://h/a> .\n'
                    b"_:g2_b <http://p> _:g2_b <http://h/b> .\n")


def test_a_failed_load_moves_no_checkpoint(repo, oxigraph, proxy):
    url = proxy_store(proxy)
    for i in range(5):
        put(repo, f"/f{i}")
    assert once(replica(repo, url))[url].done
    seq = state.load(repo.config.data_dir, url).seq
    put(repo, "/f1", "changed")
    put(repo, "/f2", "changed")
    proxy.refuse = {"POST"}                  # the deletes go through, the load fails
    out = once(replica(repo, url))[url]
    assert not out.done and "500" in out.error and "store says no" in out.error
    st = state.load(repo.config.data_dir, url)
    assert st.seq == seq and st.filled and "store says no" in st.last_error
    # Between a round's deletes and its load the graphs are missing (docs/replicas.md).
    graphs = oxigraph.graphs()
    assert repo.base_uri + "/f1" not in graphs and repo.base_uri + "/f0" in graphs
    proxy.refuse = set()                     # the next run repeats the round whole
    assert once(replica(repo, url))[url].done
    assert_same(oxigraph.graphs(), repository_graphs(repo))
    assert state.load(repo.config.data_dir, url).seq == repo.feed_state()["seq"]


def test_a_failed_reindex_load_leaves_the_target_unfilled(repo, oxigraph, proxy):
    url = proxy_store(proxy)
    for i in range(BULK_MIN + 10):
        put(repo, f"/r{i}")
    proxy.refuse = {"POST"}
    r = replica(repo, url)
    with pytest.raises(ReplicaError, match="store says no"):
        r.reindex()
    r.target.close()
    assert state.load(repo.config.data_dir, url).filled is False
    proxy.refuse = set()
    out = once(replica(repo, url))[url]      # the next run fills it
    assert out.done and out.reindex is not None and out.reindex.complete
    assert_same(oxigraph.graphs(), repository_graphs(repo))


def test_reindex_removes_the_graphs_the_repository_no_longer_has(repo, oxigraph):
    churn(repo)
    assert once(replica(repo, oxigraph.store))[oxigraph.store].done
    base = repo.base_uri
    put(repo, "/purged-later")
    assert once(replica(repo, oxigraph.store))[oxigraph.store].done
    repo.delete("/purged-later")
    repo.forget("/purged-later")             # the feed's event is what a reindex skips
    oxigraph.put(base + "/a", b"<http://x/s> <http://x/p> \"vandalized\" .\n")
    oxigraph.put(base + "/never-there", b"<http://x/s> <http://x/p> \"stale\" .\n")
    oxigraph.put("http://elsewhere.org/g", b"<http://x/s> <http://x/p> \"not ours\" .\n")
    r = replica(repo, oxigraph.store, query_url=oxigraph.base + "/query")
    report = r.reindex()
    r.target.close()
    assert report.complete and report.stale_checked and report.stale_deleted == 2
    after = oxigraph.graphs()
    assert "http://elsewhere.org/g" in after            # not under the repository's base
    del after["http://elsewhere.org/g"]
    assert_same(after, repository_graphs(repo))


def test_a_store_that_is_not_oxigraph_gets_no_bulk_load(repo, oxigraph, proxy):
    proxy.server_as = "Apache Jena Fuseki (5.1.0)"
    url = proxy_store(proxy)
    for i in range(BULK_MIN + 10):
        put(repo, f"/x{i}")
    assert once(replica(repo, url), reindex=True)[url].done
    assert posts(proxy) == ["/store"] * repo.config.replicas_connections
    assert_same(oxigraph.graphs(), repository_graphs(repo))


def test_an_unknown_protocol_is_refused(config):
    with pytest.raises(ReplicaError, match="No such replica protocol"):
        make_target("http://127.0.0.1:1/store", "carrier-pigeon", config)


def test_a_transaction_load_is_dealt_over_the_connections():
    line = b"<http://h/s> <http://h/p> <http://h/o> .\n"
    ws = [GraphWrite(f"http://h/{i}", line * size)
          for i, size in enumerate([9, 1, 1, 5, 3, 2, 2, 1])]
    shares = _dealt(ws, 3)
    assert sorted(w.iri for share in shares for w in share) == sorted(w.iri for w in ws)
    # the largest first, each to the lightest share
    assert sorted(sum(len(w.data) for w in share) // len(line) for share in shares) == [7, 8, 9]
    assert [len(s) for s in _dealt(ws[:2], 4)] == [1, 1]    # never an empty share
