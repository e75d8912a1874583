"""``lsup-benchmark``: the ingest benchmark of WORKLOAD.md, through Python or HTTP.

Creates ``--count`` children of one container (``--parent``), by PUT
(client-minted ``<parent>/<uuid4>``) or POST (server-minted), each a fresh
synthetic graph of ``--graph-size`` triples about itself (see
``lakesuperior.bench.workload``) or, with ``--resource-type binary|both``, a
binary of ``--binary-size`` random bytes (``both`` alternates). Only the
request (or API call) is timed, not making its body. Then measures the
container: a Turtle GET with all its ``ldp:contains``, a retrieval through the
Python API, and ``SELECT (COUNT(?s) AS ?c) WHERE { ?s a ldp:Container }``.

Two doors, one script:

* ``--mode python``: the ``Repository`` in this process, on ``--data-dir`` (a
  temporary directory, removed afterwards, if not given);
* ``--mode http --endpoint URL``: plain LDP over HTTP (PUT/POST Turtle,
  container creation by PUT with ``Link: <ldp:BasicContainer>; rel="type"``),
  so it runs unchanged against Lakesuperior or Fedora
  (``--endpoint http://127.0.0.1:8080/rest/ --auth fedoraAdmin:fedoraAdmin``).
  ``--data-dir`` (the server's, when it is ours and local) adds the store size
  and the Python retrieval time; ``--sparql URL`` names the SPARQL endpoint
  (default: ``/query/sparql`` on the endpoint's host, if it answers).

Prints one line of text; ``--output FILE.json`` writes the figures (keys as in
WORKLOAD.md, plus a few more), ``--plot FILE.png`` the latency curve (needs
matplotlib: ``pip install 'lakesuperior[bench]'``). Ctrl-C stops the run and
reports what ran.
"""
from __future__ import annotations

import gc
import importlib.util
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import click

from lakesuperior.bench.workload import GRAPH_SIZE, random_bytes, workload_turtle

__all__ = ["main", "run", "Options", "summarize", "machine", "disk_usage", "plot",
           "BenchmarkError", "SPARQL_COUNT"]

LDP_NS = "http://www.w3.org/ns/ldp#"
LDP_CONTAINS = f"<{LDP_NS}contains>"
BASIC_CONTAINER_LINK = f'<{LDP_NS}BasicContainer>; rel="type"'
SPARQL_COUNT = f"PREFIX ldp: <{LDP_NS}> SELECT (COUNT(?s) AS ?c) WHERE {{ ?s a ldp:Container }}"
TURTLE = "text/turtle"
OCTETS = "application/octet-stream"
REPEAT = 3   # post-run measurements: median of this many


class BenchmarkError(Exception):
    """The benchmark cannot go on (a request failed, a bad option)."""


# --- figures ----------------------------------------------------------------------------

def _pct(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.5) - 1))]


def summarize(ms: Sequence[float]) -> dict[str, float | None]:
    """Latency figures (milliseconds) of requests in the order they were made."""
    keys = ("median", "p95", "p99", "mean", "first_1k_median", "last_1k_median")
    if not ms:
        return dict.fromkeys(keys)
    ordered = sorted(ms)
    out = {"median": statistics.median(ms), "p95": _pct(ordered, 0.95),
           "p99": _pct(ordered, 0.99), "mean": statistics.fmean(ms),
           "first_1k_median": statistics.median(ms[:1000]),
           "last_1k_median": statistics.median(ms[-1000:])}
    return {k: round(v, 4) for k, v in out.items()}


def machine() -> dict[str, Any]:
    """CPU model, cores, OS, Python and LMDB versions of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import lmdb
        lmdb_version: str | None = ".".join(map(str, lmdb.version()))
        py_lmdb = getattr(lmdb, "__version__", None)
    except ImportError:  # pragma: no cover - lmdb is a dependency
        lmdb_version = py_lmdb = None
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "lmdb": lmdb_version, "py_lmdb": py_lmdb, "os": platform.platform()}


def disk_usage(path: str) -> int:
    """Bytes allocated on disk under ``path`` (sparse LMDB files count what they use)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                continue
    return total


def _timed(fn: Any, repeat: int = REPEAT) -> tuple[float, Any]:
    """Median seconds of ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 4), result


# --- options ----------------------------------------------------------------------------

@dataclass
class Options:
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


def _parent_path(path: str) -> str:
    path = "/" + path.strip().strip("/")
    return path


def _refs_path(parent: str) -> str:
    return "/bench-refs" if parent == "/" else parent + "-refs"


def _child(parent: str, segment: str) -> str:
    return ("" if parent == "/" else parent) + "/" + segment


# --- the Python door ----------------------------------------------------------------------

class PythonTarget:
    """The ``Repository`` API in this process."""

    def __init__(self, opts: Options):
        from lakesuperior.config import Config
        from lakesuperior.repository import Repository
        self.tmp = None
        data_dir = opts.data_dir
        if data_dir is None:
            self.tmp = data_dir = tempfile.mkdtemp(prefix="lsup-bench-")
        self.data_dir = data_dir
        cfg = Config.load(opts.config, data_dir=data_dir)
        self.repo = Repository(config=cfg)
        self.sync = cfg.sync

    def prepare(self, parent: str, delete: bool) -> list[str]:
        from lakesuperior.exceptions import TombstoneError
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
            uid = _child(refs, f"r{i}")
            if not repo.exists(uid):
                repo.create_or_replace(uid, data=f'<> <http://purl.org/dc/terms/title> '
                                                 f'"benchmark reference {i}" .'.encode(),
                                       media_type=TURTLE)
            internal.append(repo.base_uri + uid)
        return internal

    def put(self, path: str, body: bytes, ctype: str) -> None:
        self.repo.create_or_replace(path, data=body, media_type=ctype)

    def post(self, parent: str, body: bytes, ctype: str) -> None:
        self.repo.create(parent, data=body, media_type=ctype)

    def post_run(self, parent: str, out: dict[str, Any], sparql: bool = True) -> None:
        repo = self.repo
        # Container reads first: they need no union index (Ctrl-C during the
        # index catch-up keeps them).
        out["container_get_s"], body = _timed(lambda: repo.get(parent).serialize(TURTLE))
        out["container_get_bytes"] = len(body)
        out["python_retrieval_s"], n = _timed(lambda: len(repo.get(parent).children))
        out["container_children"] = n
        if not sparql:
            return
        t0 = time.perf_counter()
        repo.store.index()
        out["index_catch_up_s"] = round(time.perf_counter() - t0, 4)
        out["sparql_count_s"], out["sparql_count"] = _timed(lambda: _python_sparql_count(repo))
        out["sparql_via"] = ("Repository.sparql_query" if hasattr(repo, "sparql_query") else
                             "rdflib Dataset over lakesuperior.store.rdflib_store.LmdbStore")

    def sizes(self) -> tuple[int | None, int | None]:
        root = self.data_dir
        return (disk_usage(os.path.join(root, "ldprs")), disk_usage(os.path.join(root, "ldpnr")))

    def index_pending(self) -> int | None:
        return self.repo.store.pending()

    def close(self) -> None:
        self.repo.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _python_sparql_count(repo: Any) -> int:
    """The SPARQL count through ``Repository.sparql_query`` (or, where the
    Repository has none, through rdflib over the store plugin's fast path)."""
    if hasattr(repo, "sparql_query"):
        return int(next(iter(repo.sparql_query(SPARQL_COUNT)))[0])
    import rdflib

    from lakesuperior.query import enable_sparql_fast_path
    from lakesuperior.store.rdflib_store import LmdbStore
    enable_sparql_fast_path()
    ds = rdflib.Dataset(store=LmdbStore(quadstore=repo.store), default_union=True)
    try:
        rows = list(ds.query(SPARQL_COUNT))
        return int(rows[0][0])
    finally:
        ds.close()


# --- the HTTP door ---------------------------------------------------------------------------

class HttpTarget:
    """Plain LDP over HTTP (keep-alive), against any LDP server."""

    def __init__(self, opts: Options):
        from lakesuperior.admin.http import HttpClient
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

    def _check(self, resp: Any, what: str, ok: Sequence[int] = ()) -> Any:
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
            path = _child(refs, f"r{i}")
            if not self._exists(path):
                body = f'<> <http://purl.org/dc/terms/title> "benchmark reference {i}" .'
                self._check(self.client.request("PUT", self.base + path, body.encode(),
                                                {"Content-Type": TURTLE}), f"PUT {path}")
            internal.append(self.base + path)
        return internal

    def put(self, path: str, body: bytes, ctype: str) -> None:
        resp = self.client.request("PUT", self.base + path, body, {"Content-Type": ctype})
        if not resp.ok:
            self._check(resp, f"PUT {self.base + path}")

    def post(self, parent: str, body: bytes, ctype: str) -> None:
        url = self.base + parent
        resp = self.client.request("POST", url, body, {"Content-Type": ctype})
        if not resp.ok:
            self._check(resp, f"POST {url}")

    def post_run(self, parent: str, out: dict[str, Any], sparql: bool = True) -> None:
        import pyoxigraph
        url = self.base + parent

        def get() -> bytes:
            return self._check(self.client.request("GET", url, headers={"Accept": TURTLE}),
                               f"GET {url}").body

        out["container_get_s"], body = _timed(get)
        out["container_get_bytes"] = len(body)
        contains = pyoxigraph.NamedNode(LDP_NS + "contains")
        out["container_children"] = sum(
            1 for t in pyoxigraph.parse(body, format=pyoxigraph.RdfFormat.TURTLE, base_iri=url)
            if t.predicate == contains)
        out["python_retrieval_s"] = None
        if self.data_dir:
            from lakesuperior.config import Config
            from lakesuperior.repository import Repository
            with Repository(config=Config.load(self.config, data_dir=self.data_dir)) as repo:
                out["python_retrieval_s"], _ = _timed(lambda: len(repo.get(parent).children))
                if sparql:
                    # Catch the server's union index up here, as the Python mode
                    # does, so that the store sizes of both modes compare.
                    t0 = time.perf_counter()
                    repo.store.index()
                    out["index_catch_up_s"] = round(time.perf_counter() - t0, 4)
        out["sparql_count_s"] = out["sparql_count"] = None
        if not sparql:
            return
        try:
            first = self._sparql()
        except Exception as e:  # noqa: BLE001 - any failure means "no SPARQL here"
            out["sparql_note"] = f"no SPARQL count: {e}"
            if self.sparql_given:
                raise BenchmarkError(f"SPARQL endpoint {self.sparql}: {e}") from e
            return
        out["sparql_count_s"], out["sparql_count"] = _timed(self._sparql)
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
        return (disk_usage(os.path.join(self.data_dir, "ldprs")),
                disk_usage(os.path.join(self.data_dir, "ldpnr")))

    def index_pending(self) -> int | None:
        return None

    def close(self) -> None:
        self.client.close()


# --- the run -----------------------------------------------------------------------------------

def run(opts: Options, progress: Any = None, echo: Any = None) -> dict[str, Any]:
    """Run the benchmark; returns the result (the JSON document).

    ``progress``: an object with ``update(n)`` and optionally ``finish()``, or None.
    Ctrl-C stops the ingest (or the post-run measurements) and returns what ran,
    with ``"interrupted": true``.
    """
    if opts.count < 1:
        raise BenchmarkError("--count must be at least 1")
    if opts.graph_size < 4:
        raise BenchmarkError("--graph-size must be at least 4")
    parent = _parent_path(opts.parent)
    rng = random.Random(opts.seed)
    target: Any = PythonTarget(opts) if opts.mode == "python" else HttpTarget(opts)
    latencies: list[float] = []
    kinds = {"rdf": ("rdf",), "binary": ("binary",), "both": ("rdf", "binary")}[
        opts.resource_type]
    n_rdf = 0
    interrupted = False
    error = None
    post: dict[str, Any] = {"container_get_s": None, "python_retrieval_s": None,
                            "sparql_count_s": None}
    wall = 0.0
    try:
        internal = target.prepare(parent, opts.delete_container)
        gc.collect()
        wall0 = time.perf_counter()
        try:
            for i in range(opts.count):
                kind = kinds[i % len(kinds)]
                if kind == "rdf":
                    body, ctype = workload_turtle(rng, internal, opts.graph_size), TURTLE
                else:
                    body, ctype = random_bytes(rng, opts.binary_size), OCTETS
                if opts.method == "put":
                    path = _child(parent, str(uuid.uuid4()))
                    t0 = time.perf_counter()
                    target.put(path, body, ctype)
                else:
                    t0 = time.perf_counter()
                    target.post(parent, body, ctype)
                latencies.append((time.perf_counter() - t0) * 1000)
                n_rdf += kind == "rdf"
                if progress is not None:
                    progress.update(1)
        except KeyboardInterrupt:
            interrupted = True
        except BenchmarkError as e:
            error = str(e)
        wall = time.perf_counter() - wall0
        if progress is not None and hasattr(progress, "finish"):
            progress.finish()
        if opts.post_run and not interrupted and not error:
            if echo:
                echo("Measuring the container (GET, Python retrieval, SPARQL count)...")
            try:
                target.post_run(parent, post, opts.sparql_count)
            except KeyboardInterrupt:
                interrupted = True
        lmdb_bytes, binary_bytes = target.sizes()
        pending = target.index_pending()
    finally:
        target.close()
    done = len(latencies)
    triples = n_rdf * opts.graph_size
    store_bytes = None if lmdb_bytes is None else lmdb_bytes + (binary_bytes or 0)
    lat = summarize(latencies)
    request_s = sum(latencies) / 1000
    result: dict[str, Any] = {
        "mode": opts.mode, "method": opts.method, "count": done, "graph_size": opts.graph_size,
        "latency_ms": lat,
        "wall_s": round(wall, 3),
        "requests_per_s": round(done / request_s, 1) if request_s else None,
        "store_bytes": store_bytes,
        "bytes_per_triple": round(lmdb_bytes / triples, 1) if lmdb_bytes and triples else None,
        "post_run": post,
        "machine": machine(),
        # more than WORKLOAD.md asks:
        "requested_count": opts.count, "resource_type": opts.resource_type,
        "binary_size": opts.binary_size if opts.resource_type != "rdf" else None,
        "parent": parent, "endpoint": opts.endpoint, "seed": opts.seed,
        "triples": triples, "lmdb_bytes": lmdb_bytes, "binary_bytes": binary_bytes,
        "request_time_s": round(request_s, 3),
        "last_first_ratio": (round(lat["last_1k_median"] / lat["first_1k_median"], 3)
                             if lat["first_1k_median"] else None),
        "index_pending": pending, "sync": target.sync,
        "interrupted": interrupted, "error": error,
        "latencies_ms": [round(x, 4) for x in latencies],
    }
    return result


def summary_line(res: dict[str, Any]) -> str:
    """The one line of text printed at the end."""
    lat, post = res["latency_ms"], res["post_run"]

    def f(v: Any, unit: str = "", fmt: str = "{:.3f}") -> str:
        return "n/a" if v is None else fmt.format(v) + unit

    ratio = res["last_first_ratio"]
    parts = [f"lsup-benchmark {res['mode']} {res['method']} {res['resource_type']} "
             f"n={res['count']}" + (" (interrupted)" if res["interrupted"] else ""),
             f"median {f(lat['median'], ' ms')} p95 {f(lat['p95'])} p99 {f(lat['p99'])} "
             f"mean {f(lat['mean'])}",
             f"first1k {f(lat['first_1k_median'])} last1k {f(lat['last_1k_median'])} "
             f"(x{f(ratio, fmt='{:.2f}')})",
             f"{f(res['requests_per_s'], ' req/s', '{:.0f}')} "
             f"wall {f(res['wall_s'], ' s', '{:.1f}')}",
             f"store {f(res['store_bytes'] and res['store_bytes'] / 1e6, ' MB', '{:.1f}')} "
             f"({f(res['bytes_per_triple'], ' B/triple', '{:.0f}')})",
             f"container GET {f(post.get('container_get_s'), ' s')}"
             + (f" ({post['container_children']} children)"
                if post.get("container_children") is not None else "")
             + f", Python {f(post.get('python_retrieval_s'), ' s')}"
             + f", SPARQL count {f(post.get('sparql_count_s'), ' s')}"]
    return " | ".join(parts)


def plot(res: dict[str, Any], path: str) -> None:
    """Save ms per request against request number (rolling median), with the
    first-1K and last-1K medians marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    ms = np.asarray(res["latencies_ms"], dtype=float)
    n = len(ms)
    fig, ax = plt.subplots(figsize=(10, 5))
    x = np.arange(1, n + 1)
    if n > 20_000:   # a line through 100K points is a grey wall: dots instead
        ax.scatter(x, ms, s=0.3, alpha=0.15, color="grey", linewidths=0,
                   label="each request", rasterized=True)
    else:
        ax.plot(x, ms, lw=0.4, alpha=0.3, color="grey", label="each request")
    if n:
        window = max(1, min(201, (n // 50) | 1))
        if n >= window:
            rolling = np.median(np.lib.stride_tricks.sliding_window_view(ms, window), axis=1)
            ax.plot(x[window - 1:], rolling, lw=1.2, color="tab:blue",
                    label=f"rolling median ({window} requests)")
        lat = res["latency_ms"]
        ax.hlines(lat["first_1k_median"], 1, min(1000, n), colors="tab:green", lw=2,
                  label=f"first 1K median {lat['first_1k_median']:.2f} ms")
        ax.hlines(lat["last_1k_median"], max(1, n - 999), n, colors="tab:red", lw=2,
                  label=f"last 1K median {lat['last_1k_median']:.2f} ms")
        ax.set_ylim(0, float(np.percentile(ms, 99.5)) * 1.3 or 1)
    ax.set_xlabel("request number")
    ax.set_ylabel("ms per request")
    ax.set_title(f"lsup-benchmark {res['mode']} {res['method']} {res['resource_type']}, "
                 f"{n} requests, graph size {res['graph_size']}")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- the command -----------------------------------------------------------------------------

class _Bar:
    """A click progress bar on stderr, opened on the first update."""

    def __init__(self, length: int, label: str):
        self.bar = click.progressbar(length=length, label=label, file=sys.stderr,
                                     show_pos=True, update_min_steps=max(1, length // 500))
        self.open = False

    def update(self, n: int) -> None:
        if not self.open:
            self.bar.__enter__()
            self.open = True
        self.bar.update(n)

    def finish(self) -> None:
        if self.open:
            self.bar.__exit__(None, None, None)
            self.open = False


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--mode", type=click.Choice(["python", "http"]), default="python",
              show_default=True, help="Through the Python API in-process, or over HTTP.")
@click.option("--endpoint", metavar="URL", help="LDP root for --mode http, e.g. "
              "http://127.0.0.1:8000/rest/ or Fedora's http://127.0.0.1:8080/rest/.")
@click.option("--auth", metavar="USER:PASS", help="HTTP Basic credentials (--mode http).")
@click.option("--count", "-n", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Resources to create.")
@click.option("--parent", default="/bench", show_default=True,
              help="Path of the container the resources go into (created if missing).")
@click.option("--method", type=click.Choice(["put", "post"]), default="put",
              show_default=True, help="PUT to <parent>/<uuid4>, or POST to the parent.")
@click.option("--graph-size", type=click.IntRange(min=4), default=GRAPH_SIZE,
              show_default=True, help="Triples per RDF resource.")
@click.option("--resource-type", type=click.Choice(["rdf", "binary", "both"]), default="rdf",
              show_default=True, help="RDF sources, binaries, or both alternately.")
@click.option("--binary-size", type=click.IntRange(min=0), default=4096, show_default=True,
              help="Bytes of each binary.")
@click.option("--delete-container", is_flag=True,
              help="Delete the parent container (and its tombstone) before the run.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed of the random graphs.")
@click.option("--data-dir", metavar="DIR", help="python: repository directory (default: a "
              "temporary one, removed after). http: the server's data directory, to measure "
              "store size and Python retrieval (our server only).")
@click.option("--config", metavar="FILE", envvar="LSUP_CONFIG", show_envvar=True,
              help="Lakesuperior configuration (python mode, and http with --data-dir).")
@click.option("--sparql", metavar="URL", help="SPARQL endpoint for the post-run count "
              "(http; default: /query/sparql on the endpoint's host, if it answers).")
@click.option("--no-post-run", is_flag=True, help="Skip the post-run measurements.")
@click.option("--no-sparql", is_flag=True, help="Post-run: skip the union-index catch-up "
              "and the SPARQL count (the catch-up can be long after a large ingest, and "
              "Ctrl-C cannot stop it).")
@click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
              help="Seconds to wait for each HTTP response.")
@click.option("--output", "-o", metavar="FILE.json", help="Write the results as JSON.")
@click.option("--plot", "plot_file", metavar="FILE.png",
              help="Plot ms per request (needs matplotlib).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def command(mode: str, endpoint: str | None, auth: str | None, count: int, parent: str,
            method: str, graph_size: int, resource_type: str, binary_size: int,
            delete_container: bool, seed: int, data_dir: str | None, config: str | None,
            sparql: str | None, no_post_run: bool, no_sparql: bool, timeout: float,
            output: str | None,
            plot_file: str | None, quiet: bool) -> None:
    """Time the creation of COUNT resources in one container (WORKLOAD.md), then
    the container's retrieval and a SPARQL count; print one line, optionally
    write JSON and a plot."""
    from lakesuperior.admin.http import parse_auth
    if mode == "http" and not endpoint:
        raise click.UsageError("--mode http needs --endpoint URL")
    if plot_file and importlib.util.find_spec("matplotlib") is None:
        raise click.UsageError("--plot needs matplotlib: pip install 'lakesuperior[bench]' "
                               "(or pip install matplotlib)")
    try:
        credentials = parse_auth(auth)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--auth") from e
    opts = Options(mode=mode, endpoint=endpoint, auth=credentials, data_dir=data_dir,
                   config=config, count=count, parent=parent, method=method,
                   graph_size=graph_size, resource_type=resource_type,
                   binary_size=binary_size, delete_container=delete_container, seed=seed,
                   sparql=sparql, post_run=not no_post_run, sparql_count=not no_sparql,
                   timeout=timeout)

    def echo(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    bar = None if quiet else _Bar(count, f"{mode} {method}")
    try:
        res = run(opts, progress=bar, echo=echo)
    except BenchmarkError as e:
        raise click.ClickException(str(e)) from e
    except Exception as e:
        from lakesuperior.admin.http import HttpError
        from lakesuperior.exceptions import LakesuperiorError
        if isinstance(e, (LakesuperiorError, HttpError)):
            raise click.ClickException(str(e)) from e
        raise
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)
    if plot_file and res["count"]:
        plot(res, plot_file)
    click.echo(summary_line(res))
    if res["error"]:
        click.echo(f"Stopped: {res['error']}", err=True)
        sys.exit(1)
    if res["interrupted"]:
        sys.exit(130)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lsup-benchmark`` console script."""
    return command.main(args=argv, prog_name="lsup-benchmark")


if __name__ == "__main__":
    sys.exit(main())
