"""The external SPARQL stores a replica is written to, over HTTP.

``GraphStore``: the SPARQL 1.1 Graph Store HTTP Protocol (Oxigraph's ``/store``,
Fuseki's ``/DATASET/data``): ``PUT ?graph=IRI`` with the graph's N-Triples
replaces it, ``DELETE ?graph=IRI`` removes it (404: it was not there, which is
what was wanted); the graphs of one batch go over ``replicas.connections``
keep-alive connections at once, the largest first. ``Quads``: a Graph Store
endpoint that also loads N-Quads into its dataset (Oxigraph's ``/store``,
Fuseki's ``/DATASET``): the graphs of a batch deleted (``DELETE ?graph=``, side by
side as above), then loaded by ``POST``s of N-Quads, one per connection; a store
that names itself Oxigraph (its ``Server`` header) loads a batch of ``BULK_MIN``
graphs or more in one request to its bulk loader (``?no_transaction``), several
times cheaper. ``SparqlUpdate``:
for a store with no Graph Store endpoint, one SPARQL Update request per batch
(``DROP SILENT GRAPH`` then ``INSERT DATA`` for each graph), which a store applies
atomically.
``named_graphs`` asks a store's query endpoint which graphs it holds under a
prefix (for a reindex to find graphs the repository no longer has).

``send`` starts a batch and returns a ``Sending``, whose ``wait`` returns once
the store acknowledged every request of it, or raises the first error only after
every request already started has ended: nothing of a failed batch is still on
its way when the caller goes on (a late write of an older state could otherwise
land after a newer one). ``apply`` is both.

Every request has the configured timeout and credentials (``replicas.user`` /
``password`` as Basic, or ``replicas.token`` as a bearer token), which never
appear in a message. Anything but a 2xx answer, a connection that fails or
times out, or an answer that is not HTTP raises ``ReplicaError``.
"""
from __future__ import annotations

import base64
import json
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from lakesuperior import rdfio
from lakesuperior.exceptions import HttpClientError, ReplicaError
from lakesuperior.http.client import HttpClient, HttpResponse
from lakesuperior.replicas.graphs import GraphWrite
from lakesuperior.store.terms import iri as iri_term
from lakesuperior.version import __version__

__all__ = ["Target", "GraphStore", "Quads", "SparqlUpdate", "Sending", "make_target",
           "named_graphs", "nquads"]

USER_AGENT = f"Lakesuperior-sync/{__version__}"
N_QUADS = "application/n-quads"
#: Graphs a batch has at least for Oxigraph's bulk loader. Its CPU per new graph
#: against a transaction's: 22 and 4-5 ms loading one, 4.3 and 3.8-4.0 at 20, 2.8-3.0
#: and 3.3-4.1 at 50, 1.7 and 4.5 at 200 (docs/performance.md, "Read replicas").
BULK_MIN = 50


def _auth_header(config: Any) -> dict[str, str]:
    if config.replicas_token:
        return {"Authorization": f"Bearer {config.replicas_token}"}
    if config.replicas_user:
        pair = f"{config.replicas_user}:{config.replicas_password}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
    return {}


class Sending:
    """The requests of one batch, on their way (see the module doc)."""

    def __init__(self, futures: Sequence[Future[Any]] = ()):
        self.futures = list(futures)

    def wait(self) -> None:
        """Return once every request was acknowledged; else, once every request
        that started has ended (those not started are dropped), raise the first
        error."""
        if not self.futures:
            return
        done, pending = wait(self.futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in self.futures if f in done and f.exception() is not None]
        if failed:
            for f in pending:
                f.cancel()
            wait(pending)
            exc = failed[0].exception()
            assert exc is not None
            raise exc


class Target:
    """One external store (``url``: its endpoint, also the key of its checkpoint)."""

    protocol = ""

    def __init__(self, url: str, config: Any):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ReplicaError(f"A target is an http(s) URL, not {url!r:.200}")
        if parts.username is not None or parts.password is not None:
            raise ReplicaError("A target URL holds no credentials: set replicas.user and "
                               "replicas.password (or replicas.token) in the configuration")
        self.url = url
        self.timeout = config.replicas_timeout
        self.connections = config.replicas_connections
        self.client = self._new_client()        # the calling thread's
        self.headers = _auth_header(config)
        self._idle: queue.SimpleQueue[HttpClient] = queue.SimpleQueue()
        self._workers: list[HttpClient] = []
        self._pool: ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    def _new_client(self) -> HttpClient:
        return HttpClient(timeout=self.timeout, user_agent=USER_AGENT)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        for c in self._workers:
            c.close()
        self._workers.clear()
        self.client.close()

    def apply(self, writes: Sequence[GraphWrite]) -> None:
        """Replace or delete each graph of ``writes``; returns once the store has
        acknowledged all of them."""
        self.send(writes).wait()

    def send(self, writes: Sequence[GraphWrite]) -> Sending:
        """Start replacing or deleting each graph of ``writes`` (see the module doc)."""
        raise NotImplementedError

    def _start(self, calls: Sequence[Callable[[HttpClient], object]]) -> Sending:
        """Run ``calls`` (each given a connection of its own) on the connections of
        ``replicas.connections``; with one, in the calling thread."""
        if self.connections == 1:
            for call in calls:
                call(self.client)
            return Sending()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.connections, thread_name_prefix="lsup-send")
            self._workers = [self._new_client() for _ in range(self.connections)]
            for c in self._workers:
                self._idle.put(c)
        return Sending([self._pool.submit(self._on_connection, call) for call in calls])

    def _on_connection(self, call: Callable[[HttpClient], object]) -> None:
        client = self._idle.get()
        try:
            call(client)
        finally:
            self._idle.put(client)

    def request(self, method: str, url: str, body: bytes | None = None,
                content_type: str | None = None, ok: tuple[int, ...] = (),
                accept: str | None = None, client: HttpClient | None = None) -> HttpResponse:
        """One request (on ``client``, default the calling thread's); ``ReplicaError``
        unless it answers 2xx (or a status in ``ok``)."""
        headers = dict(self.headers)
        if accept:
            headers["Accept"] = accept
        if content_type:
            headers["Content-Type"] = content_type
        try:
            resp = (client or self.client).request(method, url, body, headers)
        except HttpClientError as e:
            raise ReplicaError(f"{self.url} cannot be reached: {e}") from e
        if not resp.ok and resp.status not in ok:
            raise ReplicaError(f"{self.url} refused {method} {url.split('?', 1)[0]}: "
                               f"{resp.status} {resp.reason}: {resp.excerpt(200)}")
        return resp

    def _with_query(self, query: str) -> str:
        """The target's URL with ``query`` added to its own."""
        return f"{self.url}{'&' if '?' in self.url else '?'}{query}"

    def _graph_url(self, iri: str) -> str:
        return self._with_query(urlencode({"graph": iri}, quote_via=quote))

    def _delete(self, iri: str) -> Callable[[HttpClient], object]:
        """The Graph Store ``DELETE`` of ``iri`` (404: it was not there, as wanted)."""
        url = self._graph_url(iri)
        return lambda client: self.request("DELETE", url, ok=(404,), client=client)


class GraphStore(Target):
    """A Graph Store HTTP Protocol endpoint: one ``PUT`` or ``DELETE`` per graph."""

    protocol = "graph-store"

    def send(self, writes: Sequence[GraphWrite]) -> Sending:
        # The largest first: the connections then end at about the same time.
        ordered = sorted(writes, key=lambda w: -len(w.data or b""))
        return self._start([self._call(w) for w in ordered])

    def _call(self, w: GraphWrite) -> Callable[[HttpClient], object]:
        if w.data is None:
            return self._delete(w.iri)
        url, data = self._graph_url(w.iri), w.data
        return lambda client: self.request("PUT", url, data, rdfio.N_TRIPLES, client=client)


class Quads(Target):
    """A Graph Store endpoint that loads N-Quads into its dataset by ``POST``: each
    graph of a batch deleted, then all of them loaded, a share per connection or
    in one request to Oxigraph's bulk loader (see the module doc).

    ``send`` returns once the deletes are acknowledged, the load on its way: a
    reader of the store sees each graph of the batch missing from its delete to
    the end of the load (docs/replicas.md, "Atomicity in the store")."""

    protocol = "quads"

    def __init__(self, url: str, config: Any):
        super().__init__(url, config)
        self.oxigraph = False    #: the store said it is Oxigraph: its bulk loader is there

    def request(self, *args: Any, **kwargs: Any) -> HttpResponse:
        resp = super().request(*args, **kwargs)
        self.oxigraph = (resp.headers.get("Server") or "").startswith("Oxigraph/")
        return resp

    def send(self, writes: Sequence[GraphWrite]) -> Sending:
        self._start([self._delete(w.iri) for w in writes]).wait()
        live = [w for w in writes if w.data]
        if self.oxigraph and len(live) >= BULK_MIN:
            # One load: the bulk loader's cost is mostly per request, and it
            # parses and writes on two threads of its own.
            return self._start([self._post(self._with_query("no_transaction"), live)])
        # A transaction runs on one thread of the store: one load per connection.
        return self._start([self._post(self.url, share)
                            for share in _dealt(live, self.connections)])

    def _post(self, url: str, writes: Sequence[GraphWrite]) -> Callable[[HttpClient], object]:
        body = nquads(writes)
        return lambda client: self.request("POST", url, body, N_QUADS, client=client)


class SparqlUpdate(Target):
    """A SPARQL 1.1 Update endpoint: one request per batch."""

    protocol = "update"

    def send(self, writes: Sequence[GraphWrite]) -> Sending:
        if not writes:
            return Sending()
        body = update_text(writes).encode("utf-8")
        return self._start([lambda client: self.request(
            "POST", self.url, body, "application/sparql-update", client=client)])


def _dealt(writes: Sequence[GraphWrite], n: int) -> list[list[GraphWrite]]:
    """``writes`` dealt into at most ``n`` non-empty shares of about the same size,
    the largest first."""
    shares: list[list[GraphWrite]] = [[] for _ in range(min(n, len(writes)))]
    sizes = [0] * len(shares)
    for w in sorted(writes, key=lambda w: -len(w.data or b"")):
        i = sizes.index(min(sizes))
        shares[i].append(w)
        sizes[i] += len(w.data or b"")
    return shares


def nquads(writes: Sequence[GraphWrite]) -> bytes:
    """The graphs of ``writes`` as one N-Quads document, each triple in its graph.
    Blank node labels are made distinct per graph (a document shares its labels)."""
    parts = []
    for n, w in enumerate(writes):
        if not w.data:
            continue
        data = w.data
        if b"_:" in data:          # a blank node (or a literal holding "_:": harmless)
            data = _relabel(data.decode("utf-8"), f"g{n}_").encode("utf-8")
        # Canonical N-Triples: each line ends with " .\n", which no term holds.
        parts.append(data.replace(b" .\n", f" {iri_term(w.iri)} .\n".encode()))
    return b"".join(parts)


def update_text(writes: Sequence[GraphWrite]) -> str:
    """The SPARQL Update that replaces (or drops) the graphs of ``writes``. Blank
    node labels are made distinct per graph (a request shares its labels)."""
    ops = []
    for n, w in enumerate(writes):
        ops.append(f"DROP SILENT GRAPH <{w.iri}>")
        if w.data:
            text = _relabel(w.data.decode("utf-8"), f"g{n}_")
            ops.append(f"INSERT DATA {{ GRAPH <{w.iri}> {{\n{text}}} }}")
    return " ;\n".join(ops)


def _relabel(ntriples: str, tag: str) -> str:
    """N-Triples lines (``S P O .``, canonical terms) with each blank node label
    prefixed by ``tag``."""
    out = []
    for line in ntriples.splitlines():
        s, p, o = line.split(" ", 2)
        if s.startswith("_:"):
            s = "_:" + tag + s[2:]
        if o.startswith("_:"):
            o = "_:" + tag + o[2:]
        out.append(f"{s} {p} {o}\n")
    return "".join(out)


PROTOCOLS: dict[str, type[Target]] = {
    cls.protocol: cls for cls in (GraphStore, Quads, SparqlUpdate)}


def make_target(url: str, protocol: str, config: Any) -> Target:
    """The target of ``url`` written with ``protocol`` (``graph-store``, ``quads``,
    ``update``)."""
    try:
        cls = PROTOCOLS[protocol]
    except KeyError:
        raise ReplicaError(f"No such replica protocol: {protocol!r:.50}") from None
    return cls(url, config)


def named_graphs(target: Target, query_url: str, prefix: str) -> list[str]:
    """The named graphs of the store behind ``query_url`` whose IRI starts with
    ``prefix`` (``ReplicaError`` if the answer is not SPARQL JSON results)."""
    literal = json.dumps(prefix)     # a JSON string is a valid SPARQL string literal
    query = ("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
             f"FILTER(STRSTARTS(STR(?g), {literal})) }}")
    resp = target.request("POST", query_url, urlencode({"query": query}).encode(),
                          "application/x-www-form-urlencoded",
                          accept="application/sparql-results+json")
    try:
        rows = json.loads(resp.body)["results"]["bindings"]
        return [row["g"]["value"] for row in rows if row.get("g", {}).get("type") == "uri"]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ReplicaError(f"{query_url} did not answer the graph list as SPARQL JSON "
                           f"results: {resp.excerpt(200)}") from None
