"""The read benchmark (``--gets N``): GETs of one resource ``--get-depth`` levels
below the root, by ``--get-clients`` concurrent clients, after the ingest.

The path is ``/bench-get/l2/.../l<depth>`` (``/bench-get`` is level 1), made
by the ingest's door (its credentials). ``--acl-each-level`` gives every level
an ACL that lets every agent read it and what is under it, so that each GET
finds an ACL at each level of its path; ``--get-anonymous`` makes the GETs
without credentials (as the anonymous agent, which WebAC checks; an
administrator bypasses it). Each client makes ``N / clients`` GETs on its own
connection (HTTP) or thread (Python); the figures are the latencies of all of
them and the requests per second of the whole phase.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from lakesuperior.bench.figures import summarize
from lakesuperior.exceptions import BenchmarkError
from lakesuperior.http.client import HttpClient

__all__ = ["read_phase", "reads_line", "get_path", "ACL_TEMPLATE"]

TURTLE = "text/turtle"
#: The ACL of each level (``{uri}``: the level's public URI).
ACL_TEMPLATE = """@prefix acl: <http://www.w3.org/ns/auth/acl#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
<#read> a acl:Authorization ; acl:agentClass foaf:Agent ; acl:mode acl:Read ;
    acl:accessTo <{uri}> ; acl:default <{uri}> .
"""


def get_path(depth: int) -> list[str]:
    """The paths of the levels, top first; the last is the one read."""
    paths = ["/bench-get"]
    for level in range(2, depth + 1):
        paths.append(f"{paths[-1]}/l{level}")
    return paths


def _python_setup(target: Any, paths: list[str], acls: bool) -> None:
    repo = target.repo
    for path in paths:
        if not repo.exists(path):
            repo.create_or_replace(path)
        if acls:
            repo.set_acl(path, data=ACL_TEMPLATE.format(uri=repo.base_uri + path).encode(),
                         media_type=TURTLE)


def _http_setup(target: Any, paths: list[str], acls: bool) -> None:
    client = target.client
    for path in paths:
        url = target.base + path
        resp = client.request("HEAD", url)
        if resp.status == 404:
            resp = client.request("PUT", url, b"", {"Content-Type": TURTLE})
        if not resp.ok:
            raise BenchmarkError(f"{url} answered {resp.status} {resp.reason}")
        if acls:
            resp = client.request("PUT", url + "/fcr:acl", ACL_TEMPLATE.format(uri=url).encode(),
                                  {"Content-Type": TURTLE})
            if not resp.ok:
                raise BenchmarkError(f"PUT {url}/fcr:acl answered {resp.status} "
                                     f"{resp.reason}: {resp.excerpt()}")


def _python_getter(target: Any, path: str, anonymous: bool) -> Callable[[], Callable[[], Any]]:
    repo = target.repo.as_agent(None) if anonymous else target.repo

    def make() -> Callable[[], Any]:
        return lambda: repo.get(path).serialize(TURTLE)
    return make


def _http_getter(target: Any, opts: Any, path: str, anonymous: bool,
                 clients: list[HttpClient]) -> Callable[[], Callable[[], Any]]:
    url = target.base + path

    def make() -> Callable[[], Any]:
        client = HttpClient(auth=None if anonymous else opts.auth, timeout=opts.timeout,
                            user_agent="lsup-benchmark")
        clients.append(client)

        def get() -> None:
            resp = client.request("GET", url, headers={"Accept": TURTLE})
            if not resp.ok:
                raise BenchmarkError(f"GET {url} answered {resp.status} {resp.reason}")
        return get
    return make


def read_phase(opts: Any, target: Any) -> dict[str, Any]:
    """Set up the path, run the GETs; the ``reads`` figures of the result."""
    paths = get_path(opts.get_depth)
    http = opts.mode == "http"
    (_http_setup if http else _python_setup)(target, paths, opts.acl_each_level)
    clients: list[HttpClient] = []
    make = (_http_getter(target, opts, paths[-1], opts.get_anonymous, clients) if http
            else _python_getter(target, paths[-1], opts.get_anonymous))
    n_clients = max(1, min(opts.get_clients, opts.gets))
    share = [opts.gets // n_clients + (i < opts.gets % n_clients) for i in range(n_clients)]
    getters = [make() for _ in range(n_clients)]
    for get in getters:
        get()                                   # connect, warm up: not timed
    latencies: list[list[float]] = [[] for _ in range(n_clients)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        get, out = getters[i], latencies[i]
        try:
            for _ in range(share[i]):
                t0 = time.perf_counter()
                get()
                out.append((time.perf_counter() - t0) * 1000)
        except BaseException as e:  # noqa: BLE001 - reported after the join
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(n_clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for client in clients:
        client.close()
    if errors:
        raise BenchmarkError(f"GET phase: {errors[0]}")
    every = [x for lat in latencies for x in lat]
    return {"path": paths[-1], "depth": opts.get_depth, "clients": n_clients,
            "count": len(every), "acl_each_level": opts.acl_each_level,
            "anonymous": opts.get_anonymous, "latency_ms": summarize(every),
            "wall_s": round(wall, 3),
            "requests_per_s": round(len(every) / wall, 1) if wall else None}


def reads_line(reads: dict[str, Any]) -> str:
    """One line about the read phase."""
    lat = reads["latency_ms"]
    acl = ", an ACL at each level" if reads["acl_each_level"] else ""
    who = "anonymous" if reads["anonymous"] else "with the ingest's credentials"
    return (f"GET {reads['path']} (depth {reads['depth']}{acl}, {who}): {reads['count']} "
            f"by {reads['clients']} client(s), median {lat['median']} ms, p95 {lat['p95']} ms, "
            f"{reads['requests_per_s']} req/s")
