"""The external SPARQL stores a replica is written to, over HTTP.

``GraphStore``: the SPARQL 1.1 Graph Store HTTP Protocol (Oxigraph's ``/store``,
Fuseki's ``/DATASET/data``): ``PUT ?graph=IRI`` with the graph's N-Triples
replaces it, ``DELETE ?graph=IRI`` removes it (404: it was not there, which is
what was wanted). ``SparqlUpdate``: for a store with no Graph Store endpoint,
one SPARQL Update request per batch (``DROP SILENT GRAPH`` then ``INSERT DATA``
for each graph), which a store applies atomically. ``named_graphs`` asks a
store's query endpoint which graphs it holds under a prefix (for a reindex to
find graphs the repository no longer has).

Every request has the configured timeout and credentials (``replicas.user`` /
``password`` as Basic, or ``replicas.token`` as a bearer token), which never
appear in a message. Anything but a 2xx answer, a connection that fails or
times out, or an answer that is not HTTP raises ``ReplicaError``.
"""
from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from lakesuperior import rdfio
from lakesuperior.exceptions import HttpClientError, ReplicaError
from lakesuperior.http.client import HttpClient, HttpResponse
from lakesuperior.replicas.graphs import GraphWrite
from lakesuperior.version import __version__

__all__ = ["Target", "GraphStore", "SparqlUpdate", "make_target", "named_graphs"]

USER_AGENT = f"Lakesuperior-sync/{__version__}"


def _auth_header(config: Any) -> dict[str, str]:
    if config.replicas_token:
        return {"Authorization": f"Bearer {config.replicas_token}"}
    if config.replicas_user:
        pair = f"{config.replicas_user}:{config.replicas_password}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
    return {}


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
        self.client = HttpClient(timeout=config.replicas_timeout, user_agent=USER_AGENT)
        self.headers = _auth_header(config)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    def close(self) -> None:
        self.client.close()

    def apply(self, writes: Sequence[GraphWrite]) -> None:
        """Replace or delete each graph of ``writes``; returns once the store has
        acknowledged all of them."""
        raise NotImplementedError

    def request(self, method: str, url: str, body: bytes | None = None,
                content_type: str | None = None, ok: tuple[int, ...] = (),
                accept: str | None = None) -> HttpResponse:
        """One request; ``ReplicaError`` unless it answers 2xx (or a status in ``ok``)."""
        headers = dict(self.headers)
        if accept:
            headers["Accept"] = accept
        if content_type:
            headers["Content-Type"] = content_type
        try:
            resp = self.client.request(method, url, body, headers)
        except HttpClientError as e:
            raise ReplicaError(f"{self.url} cannot be reached: {e}") from e
        if not resp.ok and resp.status not in ok:
            raise ReplicaError(f"{self.url} refused {method} {url.split('?', 1)[0]}: "
                               f"{resp.status} {resp.reason}: {resp.excerpt(200)}")
        return resp


class GraphStore(Target):
    """A Graph Store HTTP Protocol endpoint: one ``PUT`` or ``DELETE`` per graph."""

    protocol = "graph-store"

    def apply(self, writes: Sequence[GraphWrite]) -> None:
        sep = "&" if "?" in self.url else "?"
        for w in writes:
            url = f"{self.url}{sep}{urlencode({'graph': w.iri}, quote_via=quote)}"
            if w.data is None:
                self.request("DELETE", url, ok=(404,))
            else:
                self.request("PUT", url, w.data, rdfio.N_TRIPLES)


class SparqlUpdate(Target):
    """A SPARQL 1.1 Update endpoint: one request per batch."""

    protocol = "update"

    def apply(self, writes: Sequence[GraphWrite]) -> None:
        if writes:
            self.request("POST", self.url, update_text(writes).encode("utf-8"),
                         "application/sparql-update")


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


def make_target(url: str, protocol: str, config: Any) -> Target:
    """The target of ``url`` written with ``protocol`` (``graph-store``, ``update``)."""
    cls = GraphStore if protocol == GraphStore.protocol else SparqlUpdate
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
