"""Concurrent HTTP clients against a running server: throughput and latency.

``--clients N`` processes, each with its own keep-alive connection, repeat one
request for ``--seconds``: ``get`` fetches one resource (``--path``, created
first if missing, as a workload resource); ``put`` creates new workload
resources under ``--parent`` (PUT to ``<parent>/<uuid4>``). Prints one line and
writes JSON (``--output``)::

    python benchmarks/http_clients.py --endpoint http://127.0.0.1:8000/rest/ \\
        --clients 8 --seconds 10 --op get --output get8.json
"""
from __future__ import annotations

import argparse
import base64
import http.client
import json
import multiprocessing as mp
import random
import statistics
import time
import uuid
from urllib.parse import urlsplit

from lakesuperior.bench.figures import machine
from lakesuperior.bench.workload import workload_turtle

TURTLE = "text/turtle"


def _connect(endpoint: str) -> tuple[http.client.HTTPConnection, str]:
    u = urlsplit(endpoint)
    return (http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port or 80, timeout=60),
            u.path.rstrip("/"))


def _headers(auth: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    h = dict(extra or {})
    if auth:
        h["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    return h


def _request(conn: http.client.HTTPConnection, method: str, path: str,
             headers: dict[str, str], body: bytes | None = None) -> int:
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    resp.read()
    return resp.status


def _body(args: argparse.Namespace, seed: int) -> bytes:
    """A workload graph whose internal links point at the parent container."""
    return workload_turtle(random.Random(seed), [args.endpoint.rstrip("/") + args.parent])


def _client(args: argparse.Namespace, index: int, start_at: float, out: mp.Queue) -> None:
    conn, root = _connect(args.endpoint)
    headers = _headers(args.auth, {"Content-Type": TURTLE})
    bodies = [_body(args, index * 1000 + i) for i in range(16)]
    lat: list[float] = []
    errors = 0
    while time.time() < start_at:
        time.sleep(0.001)
    end = start_at + args.seconds
    i = 0
    while time.time() < end:
        t0 = time.perf_counter()
        if args.op == "get":
            status = _request(conn, "GET", root + args.path, _headers(args.auth))
        else:
            status = _request(conn, "PUT", f"{root}{args.parent}/{uuid.uuid4()}", headers,
                              bodies[i % len(bodies)])
        lat.append((time.perf_counter() - t0) * 1000)
        if status >= 300:
            errors += 1
        i += 1
    out.put((lat, errors))


def prepare(args: argparse.Namespace) -> None:
    """Create the parent container, and the resource that ``get`` fetches."""
    conn, root = _connect(args.endpoint)
    h = _headers(args.auth, {"Content-Type": TURTLE})
    for path, body in ((args.parent, b""), (args.path, _body(args, 0))):
        if _request(conn, "HEAD", root + path, _headers(args.auth)) == 404:
            status = _request(conn, "PUT", root + path, h, body)
            if status >= 300:
                raise SystemExit(f"PUT {path}: {status}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", default="http://127.0.0.1:8000/rest/")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--op", choices=("get", "put"), default="get")
    p.add_argument("--path", default="/bench-clients/one", help="resource for --op get")
    p.add_argument("--parent", default="/bench-clients", help="container for --op put")
    p.add_argument("--auth", help="USER:PASS for HTTP Basic")
    p.add_argument("--output")
    args = p.parse_args()
    prepare(args)
    out: mp.Queue = mp.Queue()
    start_at = time.time() + 1.0
    procs = [mp.Process(target=_client, args=(args, i, start_at, out))
             for i in range(args.clients)]
    for pr in procs:
        pr.start()
    results = [out.get() for _ in procs]
    for pr in procs:
        pr.join()
    lat = sorted(x for r in results for x in r[0])
    errors = sum(r[1] for r in results)
    q = statistics.quantiles(lat, n=100)
    res = {
        "op": args.op, "clients": args.clients, "seconds": args.seconds,
        "requests": len(lat), "errors": errors,
        "throughput_per_s": round(len(lat) / args.seconds, 1),
        "latency_ms": {"median": round(statistics.median(lat), 3), "p95": round(q[94], 3),
                       "p99": round(q[98], 3)},
        "machine": machine(),
    }
    print(f"{args.op} x{args.clients}: {res['throughput_per_s']}/s, median "
          f"{res['latency_ms']['median']} ms, p95 {res['latency_ms']['p95']} ms, "
          f"errors {errors}")
    if args.output:
        with open(args.output, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
