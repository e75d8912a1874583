"""Security probes of issue 29, measured: a catastrophic regular expression.

Starts ``lsup-server`` (default workers and threads, authentication on, on a
free port of 127.0.0.1, its data in a temporary directory) and, ``--rounds``
times, sends two copies of the catastrophic query at once, anonymously::

    SELECT ?x WHERE { BIND("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!" AS ?x)
                      FILTER(REGEX(?x, "^(a+)+$")) }

while an anonymous client GETs ``/rest/`` again and again. Reports the time
each query took (and its status), and the latency of the anonymous GETs made
while the queries ran, beside that of GETs on the idle server; the load
average before and after (the machine may be shared). Prints the figures and
writes JSON (``--output``)::

    python benchmarks/security_probes.py --output security_probes.json
"""
from __future__ import annotations

import argparse
import http.client
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from lakesuperior.bench.figures import machine, summarize, write_json
from lakesuperior.bench.ports import free_port
from lakesuperior.bench.serving import lsup_server

CATASTROPHIC = ('SELECT ?x WHERE { BIND("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!" AS ?x) '
                'FILTER(REGEX(?x, "^(a+)+$")) }')
START_TIMEOUT = 120.0


def timed_get(port: int, path: str, headers: dict[str, str] | None = None,
              timeout: float = 120.0) -> tuple[int, float]:
    """(status, seconds) of one GET on a new connection; status 0 if it failed."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        resp.read()
        status = resp.status
    except OSError:
        status = 0
    finally:
        conn.close()
    return status, time.perf_counter() - started


def one_round(port: int, query_path: str) -> dict[str, Any]:
    """Two catastrophic queries at once; anonymous GETs while they run."""
    results: list[tuple[int, float]] = []

    def query() -> None:
        results.append(timed_get(port, query_path,
                                 {"Accept": "application/sparql-results+json"}))

    threads = [threading.Thread(target=query) for _ in range(2)]
    for t in threads:
        t.start()
    gets: list[tuple[int, float]] = []
    while any(t.is_alive() for t in threads) or not gets:
        gets.append(timed_get(port, "/rest/"))
        time.sleep(0.02)
    for t in threads:
        t.join()
    return {"queries": results, "gets": gets}


def figures(ms: list[float]) -> dict[str, Any]:
    """Latency figures of a list of milliseconds: ``summarize``'s, count and max."""
    return {**summarize(ms), "count": len(ms), "max": round(max(ms), 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--idle-gets", type=int, default=50)
    ap.add_argument("--query-timeout", type=float, default=5.0,
                    help="the server's query_timeout (the issue measured with 5 s)")
    ap.add_argument("--output", default="security_probes.json")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="lsup-probes-")
    port = free_port()
    settings = {"LSUP_AUTH_ENABLED": "true", "LSUP_QUERY_TIMEOUT": str(args.query_timeout)}
    with lsup_server(os.path.join(tmp, "data"), port, Path(tmp) / "server.log",
                     settings=settings,
                     ready=lambda: timed_get(port, "/rest/", timeout=5)[0] == 200):
        idle = [timed_get(port, "/rest/")[1] * 1e3 for _ in range(args.idle_gets)]
        path = "/query/sparql?" + urllib.parse.urlencode({"query": CATASTROPHIC})
        rounds = [one_round(port, path) for _ in range(args.rounds)]
    shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    query_s = [s for r in rounds for _, s in r["queries"]]
    statuses = sorted({st for r in rounds for st, _ in r["queries"]})
    get_ms = [s * 1e3 for r in rounds for _, s in r["gets"]]
    get_statuses = sorted({st for r in rounds for st, _ in r["gets"]})
    out = {
        "machine": machine(), "load_before": load_before, "load_after": load_after,
        "server": {"workers": "default", "threads": "default", "auth": True,
                   "query_timeout_s": args.query_timeout},
        "rounds": args.rounds,
        "catastrophic_query_s": {"each": [round(s, 4) for s in query_s],
                                 "max": round(max(query_s), 4), "statuses": statuses},
        "anonymous_get_ms_during_queries": {**figures(get_ms), "statuses": get_statuses},
        "anonymous_get_ms_idle": figures(idle),
    }
    write_json(args.output, out)
    print(f"load average before {load_before[0]:.2f} after {load_after[0]:.2f} "
          f"(1 min; {os.cpu_count()} cores, the machine may be shared)")
    print(f"catastrophic query, {len(query_s)} runs (2 at once, query_timeout "
          f"{args.query_timeout:g} s): max {max(query_s):.3f} s, statuses {statuses}")
    during = out["anonymous_get_ms_during_queries"]
    print(f"anonymous GET during the queries, {len(get_ms)} requests: median "
          f"{during['median']:.1f} ms, max {during['max']:.1f} ms, statuses {get_statuses}")
    idle_figures = out["anonymous_get_ms_idle"]
    print(f"anonymous GET on the idle server: median {idle_figures['median']:.1f} ms, "
          f"max {idle_figures['max']:.1f} ms")
    print(f"JSON: {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
