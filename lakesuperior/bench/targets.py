"""The two doors the benchmark goes through: the Python API and plain LDP over HTTP.

Both offer ``prepare`` (the parent container and the 5 resources every graph
links to), ``put`` / ``post`` (the timed requests), ``post_run`` (the container
measurements), ``sizes``, ``index_pending``, ``index_state`` (for the lag
sampler), ``release_store`` and ``close``.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pyoxigraph

from lakesuperior.admin.files import dir_bytes
from lakesuperior.bench.figures import timed
from lakesuperior.bench.memory import wait_for_indexer
from lakesuperior.bench.workload import GRAPH_SIZE
from lakesuperior.config import Config
from lakesuperior.exceptions import BenchmarkError, TombstoneError
from lakesuperior.http.client import HttpClient, HttpResponse
from lakesuperior.http.headers import format_link
from lakesuperior.messaging.publisher import PublisherThread
from lakesuperior.model.namespaces import DCTERMS_NS, LDP_BASIC_CONTAINER, LDP_CONTAINS, LDP_NS
from lakesuperior.repository import Repository
from lakesuperior.store.quadstore import QuadStore

__all__ = ["Options", "PythonTarget", "HttpTarget", "child_path", "SPARQL_COUNT", "TURTLE",
           "OCTETS"]

BASIC_CONTAINER_LINK = format_link(LDP_BASIC_CONTAINER[1:-1], "type")
SPARQL_COUNT = f"PREFIX ldp: <{LDP_NS}> SELECT (COUNT(?s) AS ?c) WHERE {{ ?s a ldp:Container }}"
TURTLE = "text/turtle"
OCTETS = "application/octet-stream"
_TITLE = f"<{DCTERMS_NS}title>"


@dataclass
class Options:
    """The command's options (see ``--help``), as ``run`` takes them."""

    mode: str = "python"
    endpoint: str | None = None
    auth: tuple[str, str] | None = None
    data_dir: str | None = None
    config: str | None = None
    count: int = 10_000
    parent: str = "/bench"
    method: str = "put"
    graph_size: int = GRAPH_SIZE
    resource_type: str = "rdf"
    binary_size: int = 4096
    delete_container: bool = False
    seed: int = 1
    sparql: str | None = None
    post_run: bool = True
    sparql_count: bool = True
    timeout: float = 600.0
    gets: int = 0
    get_depth: int = 4
    get_clients: int = 1
    clients: int = 1        #: concurrent clients of the ingest (``bench.clients``)
    acl_each_level: bool = False
    get_anonymous: bool = False
    transaction: int = 0    #: http: every N requests in one fcr:tx transaction (0: none)


def _refs_path(parent: str) -> str:
    return "/bench-refs" if parent == "/" else parent + "-refs"


def child_path(parent: str, segment: str) -> str:
    """The path of ``segment`` under the container path ``parent``."""
    return ("" if parent == "/" else parent) + "/" + segment


# --- the Python door ----------------------------------------------------------------------

class PythonTarget:
    """The ``Repository`` API in this process."""

    def __init__(self, opts: Options):
        self.tmp = None
        data_dir = opts.data_dir
        if data_dir is None:
            self.tmp = data_dir = tempfile.mkdtemp(prefix="lsup-bench-")
        self.data_dir = data_dir
        cfg = Config.load(opts.config, data_dir=data_dir)
        self.repo = Repository(config=cfg)
        self.indexer_process = cfg.background_index and cfg.indexer_process
        self.sync = cfg.sync
        self.versioning_auto: bool | None = cfg.versioning_auto
        # Messaging on (LSUP_MESSAGING_BROKER_URL): publish as the server does.
        self.publisher = (PublisherThread(self.repo, cfg).start()
                          if cfg.messaging_broker_url else None)

    def prepare(self, parent: str, delete: bool) -> list[str]:
        repo = self.repo
        try:
            exists = repo.exists(parent)
        except TombstoneError:
            if not delete:
                raise BenchmarkError(f"{parent} was deleted (it has a tombstone): use "
                                     "--delete-container or another --parent") from None
            repo.forget(parent)
            exists = False
        if exists and delete:
            repo.delete(parent, soft=False)
            exists = False
        if not exists:
            repo.create_or_replace(parent)
        refs = _refs_path(parent)
        internal = []
        for i in range(5):
            uid = child_path(refs, f"r{i}")
            if not repo.exists(uid):
                body = f'<> {_TITLE} "benchmark reference {i}" .'
                repo.create_or_replace(uid, data=body.encode(), media_type=TURTLE)
            internal.append(repo.base_uri + uid)
        if self.indexer_process and wait_for_indexer(self.data_dir) is None:
            raise BenchmarkError("The repository's indexer process did not start in 10 s")
        return internal

    def put(self, path: str, body: bytes, ctype: str) -> None:
        self.repo.create_or_replace(path, data=body, media_type=ctype)

    def post(self, parent: str, body: bytes, ctype: str) -> None:
        self.repo.create(parent, data=body, media_type=ctype)

    def post_run(self, parent: str, out: dict[str, Any], sparql: bool = True) -> None:
        repo = self.repo
        count = lambda: int(next(iter(repo.sparql_query(SPARQL_COUNT)))[0])  # noqa: E731
        if sparql:    # right after the ingest: the union index may still be behind
            out["first_query_pending"] = repo.index_pending()
            out["first_query_s"], out["first_query_count"] = timed(count)
        out["container_get_s"], body = timed(lambda: repo.get(parent).serialize(TURTLE))
        out["container_get_bytes"] = len(body)
        out["python_retrieval_s"], n = timed(lambda: len(repo.get(parent).children))
        out["container_children"] = n
        if not sparql:
            return
        # The rest of the backlog (the background indexer's, or all of it when
        # store.background_index is off), so that sizes and the count compare.
        t0 = time.perf_counter()
        repo.index()
        out["index_catch_up_s"] = round(time.perf_counter() - t0, 4)
        out["sparql_count_s"], out["sparql_count"] = timed(
            lambda: int(next(iter(repo.sparql_query(SPARQL_COUNT)))[0]))
        out["sparql_via"] = "Repository.sparql_query"

    def sizes(self) -> tuple[int | None, int | None]:
        root = self.data_dir
        return (dir_bytes(os.path.join(root, "ldprs")), dir_bytes(os.path.join(root, "ldpnr")))

    def index_pending(self) -> int | None:
        return self.repo.index_pending()

    def index_state(self) -> tuple[int, int] | None:
        """(applied, last) log seqs of the union index, for the lag sampler."""
        return self.repo.index_state()

    def release_store(self) -> None:
        """Nothing to release (the repository is the target's own)."""

    def close(self) -> None:
        if self.publisher is not None:
            self.publisher.stop()
        self.repo.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


# --- the HTTP door ---------------------------------------------------------------------------

class HttpTarget:
    """Plain LDP over HTTP (keep-alive), against any LDP server."""

    def __init__(self, opts: Options):
        if not opts.endpoint:
            raise BenchmarkError("--mode http needs --endpoint URL")
        parts = urlsplit(opts.endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise BenchmarkError(f"--endpoint must be an http(s) URL, not {opts.endpoint!r}")
        self.base = opts.endpoint.rstrip("/")
        self.client = HttpClient(auth=opts.auth, timeout=opts.timeout,
                                 user_agent="lsup-benchmark")
        self.sparql = opts.sparql or f"{parts.scheme}://{parts.netloc}/query/sparql"
        self.sparql_given = opts.sparql is not None
        self.data_dir = opts.data_dir
        self.config = opts.config
        self.sync = None
        self.versioning_auto: bool | None = None   # the server's own setting
        self.atomic_id: str | None = None   # the open transaction (--transaction)
        self._store: QuadStore | None = None

    def _check(self, resp: HttpResponse, what: str, ok: Sequence[int] = ()) -> HttpResponse:
        if not (resp.ok or resp.status in ok):
            raise BenchmarkError(f"{what} answered {resp.status} {resp.reason}: "
                                 f"{resp.excerpt()}")
        return resp

    def _exists(self, path: str) -> bool:
        resp = self.client.request("HEAD", self.base + path)
        if resp.status == 410:
            raise BenchmarkError(f"{self.base + path} was deleted (410 Gone): use "
                                 "--delete-container or another --parent")
        if resp.status == 404:
            return False
        self._check(resp, f"HEAD {self.base + path}")
        return True

    def _create_container(self, path: str) -> None:
        segments = [s for s in path.split("/") if s]
        for i in range(1, len(segments) + 1):
            sub = "/" + "/".join(segments[:i])
            if not self._exists(sub):
                self._check(self.client.request(
                    "PUT", self.base + sub, b"",
                    {"Content-Type": TURTLE, "Link": BASIC_CONTAINER_LINK}), f"PUT {sub}")

    def _delete(self, path: str) -> None:
        url = self.base + path
        self._check(self.client.request("DELETE", url), f"DELETE {url}", ok=(404, 410))
        # Fedora keeps a tombstone that blocks the path: remove it as well.
        self.client.request("DELETE", url + "/fcr:tombstone")

    def prepare(self, parent: str, delete: bool) -> list[str]:
        if delete:
            self._delete(parent)
        if parent != "/":
            self._create_container(parent)
        refs = _refs_path(parent)
        self._create_container(refs)
        internal = []
        for i in range(5):
            path = child_path(refs, f"r{i}")
            if not self._exists(path):
                body = f'<> {_TITLE} "benchmark reference {i}" .'
                self._check(self.client.request("PUT", self.base + path, body.encode(),
                                                {"Content-Type": TURTLE}), f"PUT {path}")
            internal.append(self.base + path)
        return internal

    def _headers(self, ctype: str) -> dict[str, str]:
        headers = {"Content-Type": ctype}
        if self.atomic_id is not None:
            headers["Atomic-ID"] = self.atomic_id
        return headers

    def put(self, path: str, body: bytes, ctype: str) -> None:
        resp = self.client.request("PUT", self.base + path, body, self._headers(ctype))
        if not resp.ok:
            self._check(resp, f"PUT {self.base + path}")

    def post(self, parent: str, body: bytes, ctype: str) -> None:
        url = self.base + parent
        resp = self.client.request("POST", url, body, self._headers(ctype))
        if not resp.ok:
            self._check(resp, f"POST {url}")

    def begin(self) -> None:
        """Open an HTTP transaction (Fedora 6 ``fcr:tx``): the next requests join it."""
        resp = self._check(self.client.request("POST", self.base + "/fcr:tx"),
                           "POST /fcr:tx (open a transaction)")
        location = resp.headers.get("Location")
        if not location:
            raise BenchmarkError("POST /fcr:tx answered without a Location header")
        self.atomic_id = location

    def commit(self) -> None:
        """Commit the open transaction."""
        if self.atomic_id is None:
            return
        url, self.atomic_id = self.atomic_id, None
        self._check(self.client.request("PUT", url), f"PUT {url} (commit)")

    def post_run(self, parent: str, out: dict[str, Any], sparql: bool = True) -> None:
        url = self.base + parent
        first: int | None = None
        if sparql:    # right after the ingest: the union index may still be behind
            try:
                out["first_query_s"], first = timed(self._sparql)
                out["first_query_count"] = first
            except Exception as e:  # noqa: BLE001 - any failure means "no SPARQL here"
                out["sparql_note"] = f"no SPARQL count: {e}"
                if self.sparql_given:
                    raise BenchmarkError(f"SPARQL endpoint {self.sparql}: {e}") from e
                sparql = False

        def get() -> bytes:
            return self._check(self.client.request("GET", url, headers={"Accept": TURTLE}),
                               f"GET {url}").body

        out["container_get_s"], body = timed(get)
        out["container_get_bytes"] = len(body)
        contains = pyoxigraph.NamedNode(LDP_CONTAINS[1:-1])
        out["container_children"] = sum(
            1 for t in pyoxigraph.parse(body, format=pyoxigraph.RdfFormat.TURTLE, base_iri=url)
            if t.predicate == contains)
        out["python_retrieval_s"] = None
        if self.data_dir:
            cfg = Config.load(self.config, data_dir=self.data_dir, background_index=False)
            with Repository(config=cfg) as repo:
                out["python_retrieval_s"], _ = timed(lambda: len(repo.get(parent).children))
                if sparql:
                    # The rest of the server's index backlog, as the Python mode
                    # does, so that the store sizes of both modes compare.
                    t0 = time.perf_counter()
                    repo.index()
                    out["index_catch_up_s"] = round(time.perf_counter() - t0, 4)
        out["sparql_count_s"] = out["sparql_count"] = None
        if not sparql:
            return
        out["sparql_count_s"], out["sparql_count"] = timed(self._sparql)
        out["sparql_count"] = first if out["sparql_count"] is None else out["sparql_count"]
        out["sparql_via"] = self.sparql

    def _sparql(self) -> int:
        resp = self.client.request("POST", self.sparql, SPARQL_COUNT.encode(), {
            "Content-Type": "application/sparql-query",
            "Accept": "application/sparql-results+json"})
        if not resp.ok:
            raise BenchmarkError(f"{resp.status} {resp.reason}")
        data = json.loads(resp.body)
        return int(data["results"]["bindings"][0]["c"]["value"])

    def sizes(self) -> tuple[int | None, int | None]:
        if not self.data_dir:
            return None, None
        return (dir_bytes(os.path.join(self.data_dir, "ldprs")),
                dir_bytes(os.path.join(self.data_dir, "ldpnr")))

    def index_pending(self) -> int | None:
        return None

    def index_state(self) -> tuple[int, int] | None:
        """(applied, last) log seqs of the server's union index, read from its
        store (``--data-dir``) opened read-only; None without a data directory."""
        if not self.data_dir:
            return None
        if self._store is None:
            self._store = QuadStore(os.path.join(self.data_dir, "ldprs"), readonly=True)
        return self._store.index_state()

    def release_store(self) -> None:
        """Close the read-only store of ``index_state`` (LMDB opens an environment
        once per process, and ``post_run`` opens a Repository on it)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def close(self) -> None:
        self.client.close()
