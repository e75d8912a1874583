"""Concurrent clients: ``lsup-benchmark --clients N`` and ``benchmarks/http_clients.py``.

N clients make requests at the same time. Over HTTP each is a process of its
own (the clients share no GIL) with its own keep-alive connection
(``wire.Connection``: a lean HTTP/1.1 client, so that the load generator takes
as little CPU as it can from the server it shares the machine with); through the
Python API each is a thread calling the one ``Repository``. Each client makes
its share of ``count`` requests, or repeats them for ``seconds``: ``put``
creates ``<path>/<uuid4>``, ``post`` creates a child of ``path``, ``get``
fetches ``path`` as Turtle, ``query`` posts ``job.query`` to the SPARQL
endpoint at ``path`` (a path on the endpoint's host) for JSON results (these two
over HTTP only). The bodies are made before the clock
starts: each client makes up to ``POOL`` workload bodies (a different seed per
client) and cycles through them. Every client is connected and waiting at a
barrier when the clock starts; the first failed request stops its client.

``run`` returns an ``Outcome``: every latency in the order the requests
started, the wall time from the start to the last client's end, the requests
per second over it, and the CPU time the clients spent making them (each
client's own, from ``getrusage``, from the start to its end: a benchmark on one
machine shares the cores with the server, so this is what the load generator
took from it).
"""
from __future__ import annotations

import base64
import multiprocessing as mp
import os
import random
import resource
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from lakesuperior.bench.wire import Connection
from lakesuperior.bench.workload import GRAPH_SIZE, random_bytes, workload_turtle
from lakesuperior.exceptions import BenchmarkError

__all__ = ["Job", "Outcome", "POOL", "run", "shares", "bodies", "process_cpu_s"]

POOL = 32          #: most distinct bodies a client makes (it cycles through them)
TURTLE = "text/turtle"
OCTETS = "application/octet-stream"
SPARQL_QUERY = "application/sparql-query"
SPARQL_JSON = "application/sparql-results+json"
_START_TIMEOUT = 300.0   #: seconds the clients may take to get ready
_ABORTED = "the start was aborted (another client failed before it)"


@dataclass(frozen=True)
class Job:
    """What every client does (picklable: it goes to the client processes)."""

    op: str                          #: ``put``, ``post``, ``get`` or ``query``
    path: str                        #: put/post: the container; get: the resource;
                                     #: query: the SPARQL endpoint's path
    endpoint: str | None = None      #: the LDP root URL; None: the Python API
    auth: tuple[str, str] | None = None
    internal: tuple[str, ...] = ()   #: the resources the graphs link to
    graph_size: int = GRAPH_SIZE
    resource_type: str = "rdf"       #: ``rdf``, ``binary`` or ``both`` (alternately)
    binary_size: int = 4096
    seed: int = 1
    timeout: float = 600.0           #: seconds to wait for one response
    query: str = ""                  #: the SPARQL query of ``query``


@dataclass
class Outcome:
    """What the clients did."""

    latencies_ms: list[float]        #: every request, in the order they started
    wall_s: float                    #: from the start to the end of the last client
    clients: int
    rdf: int = 0                     #: RDF resources created
    error: str | None = None         #: the first failure, if any
    interrupted: bool = False
    per_client: list[int] = field(default_factory=list)
    client_cpu_s: float = 0.0        #: CPU seconds the clients spent, all together

    @property
    def count(self) -> int:
        return len(self.latencies_ms)

    @property
    def requests_per_s(self) -> float | None:
        return round(self.count / self.wall_s, 1) if self.wall_s > 0 else None

    @property
    def client_cpu_ms(self) -> float | None:
        """The clients' CPU milliseconds per request."""
        return round(self.client_cpu_s * 1000 / self.count, 4) if self.count else None


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used, all its threads, from
    ``/proc`` (Linux); None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_s(who: int) -> float:
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


def shares(count: int, clients: int) -> list[int]:
    """``count`` requests split as evenly as possible among ``clients``."""
    return [count // clients + (i < count % clients) for i in range(clients)]


def bodies(job: Job, index: int, n: int) -> list[tuple[bytes, str]]:
    """The ``(body, media type)`` pool of client ``index``: ``n`` (at most ``POOL``)
    workload graphs or random binaries, alternating for ``both``."""
    rng = random.Random(job.seed * 1_000_003 + index)
    kinds = {"rdf": ("rdf",), "binary": ("binary",), "both": ("rdf", "binary")}[
        job.resource_type]
    out = []
    for i in range(max(1, min(n, POOL))):
        if kinds[i % len(kinds)] == "rdf":
            out.append((workload_turtle(rng, list(job.internal), job.graph_size), TURTLE))
        else:
            out.append((random_bytes(rng, job.binary_size), OCTETS))
    if job.resource_type == "both" and len(out) % 2 and len(out) > 1:
        out.pop()     # an even pool keeps the alternation when it cycles
    return out


def _child(parent: str) -> str:
    return ("" if parent == "/" else parent.rstrip("/")) + "/" + str(uuid.uuid4())


# --- one client --------------------------------------------------------------------------------

#: A client's report: (its index, request start times, latencies in ms, RDF resources
#: created, end time, error or None, interrupted, CPU seconds it spent from the start).
Report = tuple[int, list[float], list[float], int, float, str | None, bool, float]
Result = tuple[list[float], list[float], int, float, str | None, bool, float]


def _loop(send: Callable[[bytes | None, str], tuple[bool, str | None]], job: Job,
          pool: list[tuple[bytes, str]], share: int | None, seconds: float | None,
          start: Callable[[], object], stop: threading.Event | None = None,
          cpu_of: int = resource.RUSAGE_SELF) -> Result:
    """Make the requests of one client with ``send(body, ctype)``: (ok, error);
    ``stop``: set to stop early (Ctrl-C in the thread that runs the clients);
    ``cpu_of``: the ``getrusage`` target that is this client (process or thread)."""
    starts: list[float] = []
    lat: list[float] = []
    rdf = 0
    error = None
    interrupted = False
    start()
    cpu0 = _cpu_s(cpu_of)
    end = None if seconds is None else time.time() + seconds
    i = 0
    try:
        while (share is None or i < share) and (end is None or time.time() < end):
            if stop is not None and stop.is_set():
                interrupted = True
                break
            body, ctype = pool[i % len(pool)] if pool else (None, TURTLE)
            starts.append(time.time())
            t0 = time.perf_counter()
            ok, error = send(body, ctype)
            lat.append((time.perf_counter() - t0) * 1000)
            if not ok:
                starts.pop()
                lat.pop()
                break
            rdf += ctype == TURTLE and job.op in ("put", "post")
            i += 1
    except KeyboardInterrupt:
        interrupted = True
    return starts, lat, rdf, time.time(), error, interrupted, _cpu_s(cpu_of) - cpu0


def _http_sender(job: Job) -> tuple[Connection,
                                    Callable[[bytes | None, str], tuple[bool, str | None]]]:
    assert job.endpoint is not None
    conn = Connection(job.endpoint, job.timeout)
    root = urlsplit(job.endpoint).path.rstrip("/")
    base: dict[str, str] = {"User-Agent": "lsup-benchmark"}
    if job.auth:
        base["Authorization"] = "Basic " + base64.b64encode(
            f"{job.auth[0]}:{job.auth[1]}".encode()).decode()
    get_headers = {**base, "Accept": TURTLE}
    body_headers = {ctype: {**base, "Content-Type": ctype} for ctype in (TURTLE, OCTETS)}
    query_headers = {**base, "Content-Type": SPARQL_QUERY, "Accept": SPARQL_JSON}
    query = job.query.encode("utf-8")
    method = "POST" if job.op == "query" else job.op.upper()

    def send(body: bytes | None, ctype: str) -> tuple[bool, str | None]:
        if job.op == "query":
            path, headers, body = job.path, query_headers, query
        elif job.op == "get":
            path, headers = root + job.path, get_headers
        else:
            path = root + (_child(job.path) if job.op == "put" else job.path)
            headers = body_headers.get(ctype) or {**base, "Content-Type": ctype}
        status, data = conn.request(method, path, headers, body)
        if status >= 300:
            text = data[:300].decode("utf-8", "replace").strip()
            return False, f"{method} {path} answered {status}: {text}"
        return True, None
    return conn, send


def _http_client(job: Job, index: int, share: int | None, seconds: float | None,
                 barrier: Any, out: Any) -> None:
    """One client process (module level: the processes are spawned)."""
    try:
        conn, send = _http_sender(job)
        pool = bodies(job, index, share or POOL) if job.op in ("put", "post") else []
        conn.connect()
        result = _loop(send, job, pool, share, seconds,
                       lambda: barrier.wait(_START_TIMEOUT))
        conn.close()
    except threading.BrokenBarrierError:
        result = ([], [], 0, time.time(), f"client {index}: {_ABORTED}", False, 0.0)
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        barrier.abort()
        result = ([], [], 0, time.time(), f"client {index}: {type(e).__name__}: {e}",
                  isinstance(e, KeyboardInterrupt), 0.0)
    out.put((index, *result))


def _python_client(job: Job, target: Any, index: int, share: int | None,
                   seconds: float | None, barrier: threading.Barrier,
                   stop: threading.Event, reports: list[Report]) -> None:
    """One client thread on the Python API (``target``: a ``PythonTarget``)."""
    def send(body: bytes | None, ctype: str) -> tuple[bool, str | None]:
        try:
            if job.op == "put":
                target.put(_child(job.path), body, ctype)
            else:
                target.post(job.path, body, ctype)
        except Exception as e:  # noqa: BLE001 - the first failure stops the client
            return False, f"{job.op.upper()} {job.path}: {type(e).__name__}: {e}"
        return True, None
    try:
        pool = bodies(job, index, share or POOL)
    except Exception as e:  # noqa: BLE001 - reported; the others must not wait for it
        barrier.abort()
        reports.append((index, [], [], 0, time.time(),
                        f"client {index}: {type(e).__name__}: {e}", False, 0.0))
        return
    try:
        result = _loop(send, job, pool, share, seconds, lambda: barrier.wait(_START_TIMEOUT),
                       stop, resource.RUSAGE_THREAD)
    except threading.BrokenBarrierError:
        result = ([], [], 0, time.time(), f"client {index}: {_ABORTED}", False, 0.0)
    reports.append((index, *result))


# --- the clients ---------------------------------------------------------------------------

def run(job: Job, clients: int, *, count: int | None = None, seconds: float | None = None,
        target: Any = None) -> Outcome:
    """Run ``clients`` clients making ``count`` requests in all, or each repeating
    for ``seconds``; ``target``: the ``PythonTarget`` when ``job.endpoint`` is None."""
    if clients < 1:
        raise BenchmarkError("--clients must be at least 1")
    if (count is None) == (seconds is None):
        raise ValueError("give count or seconds")
    if job.endpoint is None and (target is None or job.op in ("get", "query")):
        raise BenchmarkError("Python clients create resources (put or post) on a target")
    split: list[int | None] = (list(shares(count, clients)) if count is not None
                               else [None] * clients)
    if job.endpoint is None:
        reports, t0, interrupted = _run_threads(job, target, split, seconds)
    else:
        reports, t0, interrupted = _run_processes(job, split, seconds)
    reports.sort(key=lambda r: r[0])
    pairs = sorted((s, x) for r in reports for s, x in zip(r[1], r[2], strict=True))
    ends = [r[4] for r in reports if r[2]]
    # The cause first: a client that failed before the start aborts the others'.
    errors = sorted((r[5] for r in reports if r[5]), key=lambda e: e.endswith(_ABORTED))
    return Outcome(latencies_ms=[x for _, x in pairs],
                   wall_s=round(max(ends) - t0, 4) if ends and t0 else 0.0,
                   clients=clients, rdf=sum(r[3] for r in reports),
                   error=errors[0] if errors else None,
                   interrupted=interrupted or any(r[6] for r in reports),
                   per_client=[len(r[2]) for r in reports],
                   client_cpu_s=round(sum(r[7] for r in reports), 4))


def _run_threads(job: Job, target: Any, split: list[int | None], seconds: float | None
                 ) -> tuple[list[Report], float, bool]:
    barrier = threading.Barrier(len(split) + 1)
    stop = threading.Event()
    reports: list[Report] = []
    threads = [threading.Thread(target=_python_client, daemon=True,
                                args=(job, target, i, share, seconds, barrier, stop, reports))
               for i, share in enumerate(split)]
    for t in threads:
        t.start()
    t0 = 0.0
    interrupted = False
    try:
        barrier.wait(_START_TIMEOUT)
        t0 = time.time()
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        interrupted = True
    except threading.BrokenBarrierError:
        pass    # a client failed before the start: its report says why
    finally:
        stop.set()
        barrier.abort()
        for t in threads:     # the repository closes after: let every call end first
            t.join()
    return reports, t0, interrupted


def _run_processes(job: Job, split: list[int | None], seconds: float | None
                   ) -> tuple[list[Report], float, bool]:
    ctx = mp.get_context("spawn")     # no fork of this process's threads and LMDB handles
    barrier = ctx.Barrier(len(split) + 1)
    out = ctx.Queue()
    procs = [ctx.Process(target=_http_client, args=(job, i, share, seconds, barrier, out),
                         daemon=True) for i, share in enumerate(split)]
    for p in procs:
        p.start()
    t0 = 0.0
    interrupted = False
    reports: list[Report] = []
    try:
        try:
            barrier.wait(_START_TIMEOUT)
            t0 = time.time()
        except threading.BrokenBarrierError:
            pass    # a client failed before the start: its report says why
        while len(reports) < len(procs):
            try:
                reports.append(out.get(timeout=1.0))
            except Exception:  # noqa: BLE001 - queue.Empty: is anyone still running?
                if not any(p.is_alive() for p in procs) and out.empty():
                    break
    except KeyboardInterrupt:
        interrupted = True
        deadline = time.time() + 5     # the clients got the Ctrl-C too: take their reports
        while len(reports) < len(procs) and time.time() < deadline:
            try:
                reports.append(out.get(timeout=0.5))
            except Exception:  # noqa: BLE001 - queue.Empty
                continue
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join()
    missing = len(procs) - len(reports)
    if missing and not interrupted:
        reports.append((len(procs), [], [], 0, time.time(),
                        f"{missing} client process(es) ended without a report", False, 0.0))
    return reports, t0, interrupted
