"""This server against its request floor (and Fedora, if given), alternated in rounds.

Starts the floor (``floor_app.py``: a bare Flask app under lsup-server's own
gunicorn settings) and ``lsup-server`` (a new data folder, authentication on, as
the administrator) on loopback, then, round by round, each target in turn: with 1
and with ``--many`` clients (processes, keep-alive connections), ``--count``
PUTs of new 200-triple workload resources under one container, then ``--count``
GETs of one such resource as Turtle. ``--fedora URL`` (Fedora's LDP root, with
``--fedora-auth USER:PASS``) adds Fedora as a third target in every round;
``--set LSUP_NAME=VALUE`` (repeatable) configures ``lsup-server``.

Prints, per operation and client count, the median latency (1 client) or the
throughput (``--many``) of each target across rounds, the server CPU per request
(floor and ours: every thread of the server's processes, from the moment it is
idle before the requests to the moment it is idle after them, its background
indexing included), and the ratios: ours to the floor (latency: how many times
the floor a request costs; throughput: what share of the floor's we sustain; CPU)
and Fedora to ours. ``--json F`` writes every figure; ``--check BASELINE``
compares the CPU ratios (PUT, GET) with a recorded run and exits 1 when one is
more than ``--tolerance`` (default 30%) worse in each of ``--attempts`` sessions
(default 3: a regression is worse every time, a noisy moment of a shared machine
is not; ``make perf-check``, which CI runs). CPU per request, not time, is held:
times and rates move with what else the machine runs::

    python benchmarks/compare.py [--rounds 3] [--count 300] [--many 8] [--json F]
    python benchmarks/compare.py --fedora http://127.0.0.1:8080/rest --fedora-auth u:p
    python benchmarks/compare.py --rounds 2 --count 150 --check benchmarks/compare-baseline.json
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from lakesuperior.bench import clients
from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.ports import free_port
from lakesuperior.bench.serving import accepts, lsup_server, running, tree_cpu_s
from lakesuperior.bench.targets import TURTLE, HttpTarget, Options
from lakesuperior.bench.workload import workload_turtle
from lakesuperior.http.client import parse_auth

HERE = Path(__file__).resolve().parent
#: The ratios ``--check`` holds: the server CPU a PUT and a GET cost, ours to the
#: floor's. Times and rates move with what else the machine runs; CPU per request
#: much less.
CHECKED = ("put_cpu_ratio", "get_cpu_ratio")
SETTLED_CPU_S = 0.005   #: CPU a server may use in 0.2 s and count as idle


def prepared(name: str, endpoint: str, auth: tuple[str, str] | None) -> dict[str, Any]:
    """The jobs of one target, after creating its container and GET target."""
    parent, one = "/compare-" + uuid.uuid4().hex[:8], None
    if name == "floor":       # links as the server's graphs have them; nothing to create
        internal = [f"{endpoint}{parent}/refs/r{i}" for i in range(5)]
    else:
        target = HttpTarget(Options(mode="http", endpoint=endpoint, auth=auth))
        try:
            internal = target.prepare(parent, False)
            one = parent + "/one"
            target.put(one, workload_turtle(random.Random(0), internal), TURTLE)
        finally:
            target.close()
    return {"put": clients.Job(op="put", path=parent, endpoint=endpoint, auth=auth,
                               internal=tuple(internal)),
            "get": clients.Job(op="get", path=one or parent + "/one", endpoint=endpoint,
                               auth=auth, internal=tuple(internal))}


def settle(cpu: Callable[[], float], limit: float = 10.0) -> float:
    """Wait until a server is idle (its background indexing done), at most
    ``limit`` seconds; its CPU seconds then."""
    last, deadline = cpu(), time.monotonic() + limit
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = cpu()
        if now - last < SETTLED_CPU_S:
            return now
        last = now
    return cpu()


def measure(jobs: dict[str, Any], counts: tuple[int, ...], count: int,
            cpu: Callable[[], float] | None) -> dict[int, dict[str, Any]]:
    """For each client count of ``counts``, each job's ``count`` requests on that many
    clients: median latency, throughput and (``cpu``: the server's CPU seconds)
    server CPU per request, the work it does after the last answer included (from
    the idle server before the requests to the idle server after them; the one
    after is the one before the next)."""
    out: dict[int, dict[str, Any]] = {}
    idle = settle(cpu) if cpu else 0.0
    for n_clients in counts:
        out[n_clients] = {}
        for op, job in jobs.items():
            res = clients.run(job, n_clients, count=count)
            if res.error:
                raise SystemExit(f"{job.endpoint} {op} x{n_clients}: {res.error}")
            out[n_clients][op] = {"median_ms": round(statistics.median(res.latencies_ms), 3),
                                  "per_s": res.requests_per_s}
            if cpu:
                before, idle = idle, settle(cpu)
                out[n_clients][op]["cpu_ms"] = round((idle - before) * 1000 / count, 4)
    return out


def summarize(rounds: list[dict[str, Any]], names: list[str], many: int) -> dict[str, Any]:
    """Medians across rounds, and the ratios."""
    fig: dict[str, Any] = {}
    for name in names:
        for n in (1, many):
            for op in ("put", "get"):
                key = "median_ms" if n == 1 else "per_s"
                fig[f"{name}_{op}_{n}"] = round(statistics.median(
                    r[name][n][op][key] for r in rounds), 3)
        for op in ("put", "get"):
            if "cpu_ms" in rounds[0][name][1][op]:
                fig[f"{name}_{op}_cpu_ms"] = round(statistics.median(
                    r[name][n][op]["cpu_ms"] for r in rounds for n in (1, many)), 4)
    ratios: dict[str, float] = {}
    for op in ("put", "get"):
        ratios[f"{op}_cpu_ratio"] = round(fig[f"ours_{op}_cpu_ms"]
                                          / fig[f"floor_{op}_cpu_ms"], 2)
        ratios[f"{op}_1_latency_ratio"] = round(fig[f"ours_{op}_1"] / fig[f"floor_{op}_1"], 2)
        ratios[f"{op}_many_throughput_ratio"] = round(
            fig[f"ours_{op}_{many}"] / fig[f"floor_{op}_{many}"], 3)
        if "fedora" in names:
            ratios[f"fedora_{op}_1_latency_vs_ours"] = round(
                fig[f"fedora_{op}_1"] / fig[f"ours_{op}_1"], 2)
            ratios[f"fedora_{op}_many_throughput_vs_ours"] = round(
                fig[f"fedora_{op}_{many}"] / fig[f"ours_{op}_{many}"], 3)
    return {"figures": fig, "ratios": ratios}


def check(ratios: dict[str, float], baseline_path: str, tolerance: float) -> list[str]:
    """The ratios more than ``tolerance`` worse than the recorded ones."""
    recorded = json.loads(Path(baseline_path).read_text(encoding="utf-8"))["ratios"]
    worse = []
    for name in CHECKED:
        was, now = recorded[name], ratios[name]
        if now > was * (1 + tolerance):
            worse.append(f"{name}: {now} (recorded {was}, tolerance {tolerance:.0%})")
    return worse


def session(args: argparse.Namespace) -> dict[str, Any]:
    """Start the targets, measure them in alternated rounds; the summary."""
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        ours_port, floor_port = free_port(), free_port()
        data = Path(tmp) / "data"
        floor = stack.enter_context(running(
            [sys.executable, str(HERE / "floor_app.py"), "--bind", f"127.0.0.1:{floor_port}"],
            Path(tmp) / "floor.log", lambda: accepts(floor_port)))
        ours = stack.enter_context(lsup_server(data, ours_port, Path(tmp) / "server.log",
                                               settings=dict(args.set)))
        cpus: dict[str, Callable[[], float] | None] = {
            "floor": lambda: tree_cpu_s(floor.pid), "ours": lambda: tree_cpu_s(ours.pid),
            "fedora": None}
        admin = ("admin", (data / "initial-admin-password").read_text().strip())
        targets = {"floor": (f"http://127.0.0.1:{floor_port}/rest", None),
                   "ours": (f"http://127.0.0.1:{ours_port}/rest", admin)}
        if args.fedora:
            targets["fedora"] = (args.fedora.rstrip("/"), parse_auth(args.fedora_auth))
        names = list(targets)
        rounds: list[dict[str, Any]] = []
        for r in range(args.rounds):
            this: dict[str, Any] = {}
            order = names if r % 2 == 0 else names[::-1]   # alternated
            for name in order:
                jobs = prepared(name, *targets[name])
                this[name] = measure(jobs, (1, args.many), args.count, cpus[name])
            rounds.append(this)
            print(f"round {r + 1}: " + "; ".join(
                f"{name} PUT {this[name][1]['put']['median_ms']} ms, "
                f"GET {this[name][1]['get']['median_ms']} ms" for name in names))
    result = summarize(rounds, names, args.many)
    result.update(rounds=rounds, count=args.count, many=args.many, settings=dict(args.set),
                  machine=machine(), load_average=os.getloadavg())
    fig, ratios = result["figures"], result["ratios"]
    print("server CPU per request, ms: " + "; ".join(
        f"{op.upper()} floor {fig[f'floor_{op}_cpu_ms']}, ours {fig[f'ours_{op}_cpu_ms']}, "
        f"ours/floor {ratios[f'{op}_cpu_ratio']}" for op in ("put", "get")))
    for op in ("put", "get"):
        print(f"{op.upper()} 1 client, median ms: " + ", ".join(
            f"{n} {fig[f'{n}_{op}_1']}" for n in names)
              + f"; ours/floor {ratios[f'{op}_1_latency_ratio']}")
        print(f"{op.upper()} {args.many} clients, per s: " + ", ".join(
            f"{n} {fig[f'{n}_{op}_{args.many}']}" for n in names)
              + f"; ours/floor {ratios[f'{op}_many_throughput_ratio']}")
    if "fedora" in names:
        print("Fedora vs ours: " + ", ".join(f"{k} {v}" for k, v in ratios.items()
                                              if k.startswith("fedora_")))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return result


def _setting(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.startswith("LSUP_"):
        raise argparse.ArgumentTypeError(f"not LSUP_NAME=VALUE: {text!r}")
    return name, value


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--count", type=int, default=300, help="requests per measurement")
    p.add_argument("--many", type=int, default=8, help="the larger client count")
    p.add_argument("--fedora", help="Fedora's LDP root URL, measured as a third target")
    p.add_argument("--fedora-auth", help="USER:PASS for Fedora")
    p.add_argument("--set", action="append", default=[], type=_setting, metavar="LSUP_X=V",
                   help="a setting of lsup-server (repeatable; its defaults otherwise)")
    p.add_argument("--json")
    p.add_argument("--check", metavar="BASELINE", help="a recorded --json to hold ratios to")
    p.add_argument("--tolerance", type=float, default=0.3)
    p.add_argument("--attempts", type=int, default=3,
                   help="with --check: sessions run before a ratio counts as worse "
                        "(each must find it worse: a regression stays, noise passes)")
    args = p.parse_args()
    for attempt in range(1, (args.attempts if args.check else 1) + 1):
        result = session(args)
        write_json(args.json, result)
        if not args.check:
            return
        worse = check(result["ratios"], args.check, args.tolerance)
        if not worse:
            print(f"ratios within {args.tolerance:.0%} of {args.check}")
            return
        for line in worse:
            print(f"WORSE (session {attempt} of {args.attempts}):", line)
    raise SystemExit(1)


if __name__ == "__main__":
    main()
