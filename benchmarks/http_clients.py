"""Concurrent HTTP clients against a running server: throughput and latency.

``--clients N`` processes, each with its own keep-alive connection, repeat one
request for ``--seconds`` (or share ``--count`` requests): ``get`` fetches one
resource (``--path``, created first if missing, as a workload resource);
``put`` creates new workload resources under ``--parent`` (PUT to
``<parent>/<uuid4>``), ``post`` creates them by POST to it; ``query`` sends
``--query`` to the SPARQL endpoint (``--sparql-path``) for JSON results (over
the resource of ``get``, created first if missing). Prints one line and writes
JSON (``--output``)::

    python benchmarks/http_clients.py --endpoint http://127.0.0.1:8000/rest/ \\
        --clients 8 --seconds 10 --op get --output get8.json
    python benchmarks/http_clients.py --clients 8 --op query --output query8.json

The clients are ``lakesuperior.bench.clients`` (as ``lsup-benchmark --clients``).
"""
from __future__ import annotations

import argparse
import os
import random

from lakesuperior.bench import clients
from lakesuperior.bench.figures import machine, summarize, write_json
from lakesuperior.bench.memory import is_indexer_process, store_processes
from lakesuperior.bench.targets import TURTLE, HttpTarget, Options
from lakesuperior.bench.workload import workload_turtle
from lakesuperior.http.client import parse_auth

#: A query with a filter, an order and a limit over the resource of ``get``.
DEFAULT_QUERY = ("SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o)) } "
                 "ORDER BY ?p ?o LIMIT 10")


def prepare(target: HttpTarget, args: argparse.Namespace) -> list[str]:
    """Create the parent container (and the resources the graphs link to), and for
    ``get`` the resource it fetches; return the link targets."""
    internal = target.prepare(args.parent, False)
    head = target.client.request("HEAD", target.base + args.path)
    if args.op in ("get", "query") and head.status == 404:
        target.put(args.path, workload_turtle(random.Random(0), internal), TURTLE)
    return internal


def server_cpu_s(pids: list[int]) -> float:
    """CPU seconds the processes ``pids`` (the server's workers and its indexer
    process) have used."""
    return sum(clients.process_cpu_s(pid) or 0.0 for pid in pids)


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--endpoint", default="http://127.0.0.1:8000/rest/")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--count", type=int, help="requests in all, instead of --seconds")
    p.add_argument("--op", choices=("get", "put", "post", "query"), default="get")
    p.add_argument("--path", default="/bench-clients/one", help="resource for --op get")
    p.add_argument("--parent", default="/bench-clients", help="container for put and post")
    p.add_argument("--query", default=DEFAULT_QUERY, help="the SPARQL query of --op query")
    p.add_argument("--sparql-path", default="/query/sparql",
                   help="the SPARQL endpoint's path on the endpoint's host, for --op query")
    p.add_argument("--auth", help="USER:PASS for HTTP Basic")
    p.add_argument("--server-data-dir", metavar="DIR",
                   help="the server's data directory: report the CPU per request of its "
                        "workers and indexer process")
    p.add_argument("--output")
    args = p.parse_args()
    auth = parse_auth(args.auth)
    target = HttpTarget(Options(mode="http", endpoint=args.endpoint, auth=auth))
    try:
        internal = prepare(target, args)
    finally:
        target.close()
    path = {"get": args.path, "query": args.sparql_path}.get(args.op, args.parent)
    job = clients.Job(op=args.op, path=path, endpoint=args.endpoint, auth=auth,
                      internal=tuple(internal), query=args.query)
    workers = store_processes(args.server_data_dir) if args.server_data_dir else []
    cpu0 = server_cpu_s(workers)
    out = clients.run(job, args.clients, count=args.count,
                      seconds=None if args.count else args.seconds)
    server_cpu = server_cpu_s(workers) - cpu0
    cores = os.cpu_count() or 1
    indexers = [pid for pid in workers if is_indexer_process(pid)]
    cpu = {"client_ms_per_request": out.client_cpu_ms, "server_ms_per_request": None,
           "server_workers": len(workers) - len(indexers), "server_indexer": bool(indexers),
           "idle_share": None}
    if workers and out.count and out.wall_s > 0:
        cpu["server_ms_per_request"] = round(server_cpu * 1000 / out.count, 4)
        cpu["idle_share"] = round(1 - (server_cpu + out.client_cpu_s) / (cores * out.wall_s), 3)
    res = {
        "op": args.op, "clients": args.clients, "seconds": out.wall_s,
        "requests": out.count, "errors": int(out.error is not None), "error": out.error,
        "throughput_per_s": out.requests_per_s,
        "latency_ms": summarize(out.latencies_ms), "per_client": out.per_client,
        "cpu": cpu,
        "machine": machine(),
    }
    lat = res["latency_ms"]
    print(f"{args.op} x{args.clients}: {res['throughput_per_s']}/s, median "
          f"{lat['median']} ms, p95 {lat['p95']} ms, p99 {lat['p99']} ms, errors "
          f"{res['errors']}; CPU ms/request client {cpu['client_ms_per_request']}"
          + (f", server {cpu['server_ms_per_request']}, idle {cpu['idle_share']}"
             if cpu["server_ms_per_request"] is not None else ""))
    if out.error:
        print(out.error)
    write_json(args.output, res)
    if out.error or out.interrupted:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
