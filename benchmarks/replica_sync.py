"""Read replica benchmark (issue 33, "Speed"): sync into a real Oxigraph server.

1. Builds the benchmark repository through the Python API: ``--count`` resources
   (default 10,000) of the workload graph (200 triples: ``lakesuperior.bench.workload``)
   under one container, plus the 5 resources they link to. Not timed.
2. Starts ``oxigraph serve`` on 127.0.0.1 (a new, empty store) and times
   ``lsup-admin sync sparql --quads-url STORE --reindex --once`` (a subprocess,
   start-up included; ``--protocol graph-store``: ``sync sparql STORE``, PUT per
   graph) against the repository: resources/s (target: 10,000 in under 60 s)
   and the CPU time the Oxigraph server spent. A no-op ``--once`` run right after
   gives the command's fixed cost.
3. Starts ``lsup-server`` on loopback on the same data directory (authentication
   on, as the administrator) and ``lsup-admin sync sparql STORE --follow`` beside
   it, then PUTs ``--ingest`` new workload resources one at a time with one client
   (keep-alive) while the lag of the replica is sampled every ``--interval``
   seconds (0.2): the target's checkpoint (``DATA_DIR/replicas/``, moved only
   once Oxigraph acknowledged) against the change feed's last seq (the server's
   store, opened read-only). The lag of a sample, in events, is the difference;
   in seconds, the age of the oldest event not yet applied (target: within 2 s).
   Then the time the replica takes to catch up after the last PUT, the CPU time of
   the sync process and of Oxigraph per event, and the named graphs Oxigraph holds
   against the resources the repository has.

Prints one line per measurement and writes every figure to ``--json FILE``::

    python benchmarks/replica_sync.py --count 10000 --ingest 2000 --json replica_sync.json
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from lakesuperior import Repository
from lakesuperior.bench.clients import POOL, process_cpu_s
from lakesuperior.bench.figures import machine, summarize, write_json
from lakesuperior.bench.lag import LagSampler
from lakesuperior.bench.ports import free_port
from lakesuperior.bench.serving import clean_env, lsup_server, running, stop
from lakesuperior.bench.targets import TURTLE, HttpTarget, Options
from lakesuperior.bench.workload import GRAPH_SIZE, workload_turtle
from lakesuperior.replicas import state as replica_state
from lakesuperior.store.quadstore import QuadStore

BIN = Path(sys.executable).parent
LSUP_ADMIN = str(BIN / "lsup-admin")
#: Seconds the replica may take to catch up before the benchmark gives up.
CATCH_UP_TIMEOUT = 300.0
LAG_TARGET_S = 2.0
REINDEX_TARGET_S = 60.0     # for 10,000 resources


def oxigraph_binary() -> str:
    found = shutil.which("oxigraph") or str(BIN / "oxigraph")
    if not os.path.exists(found):
        raise SystemExit("The oxigraph server is not installed: pip install oxigraph")
    return found


def start_oxigraph(location: Path, log: Path, stack: ExitStack) -> tuple[str, int]:
    """``oxigraph serve`` on a free loopback port; returns its Graph Store URL and
    its process id (for its CPU time)."""
    port = free_port()

    def answers() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/query?query=ASK%7B%7D",
                                        timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    proc = stack.enter_context(running(
        [oxigraph_binary(), "serve", "--location", str(location), "--bind",
         f"127.0.0.1:{port}"], log, answers))
    return f"http://127.0.0.1:{port}/store", proc.pid


def replica_graphs(store_url: str, prefix: str) -> int:
    """How many named graphs under ``prefix`` the Oxigraph behind ``store_url`` holds."""
    query_url = store_url.rsplit("/", 1)[0] + "/query"
    query = ("SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } "
             f"FILTER(STRSTARTS(STR(?g), {json.dumps(prefix)})) }}")
    req = urllib.request.Request(query_url, data=urllib.parse.urlencode(
        {"query": query}).encode(), headers={"Accept": "application/sparql-results+json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        rows = json.loads(resp.read())["results"]["bindings"]
    return int(rows[0]["n"]["value"])


def build(data_dir: str, count: int, seed: int) -> dict[str, Any]:
    """The benchmark repository: ``count`` workload resources under ``/bench``."""
    rng = random.Random(seed)
    repo = Repository(data_dir, sync=False)
    try:
        base = str(repo.base_uri)
        repo.create_or_replace("/bench")
        internal = []
        for i in range(5):
            repo.create_or_replace(f"/bench-ref-{i}")
            internal.append(f"{base}/bench-ref-{i}")
        t0 = time.perf_counter()
        for i in range(count):
            seg = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            repo.create_or_replace(f"/bench/{seg}", data=workload_turtle(rng, internal),
                                   media_type=TURTLE)
            if (i + 1) % 1000 == 0:
                print(f"\rbuilding {i + 1}/{count}", end="", file=sys.stderr, flush=True)
        if count >= 1000:
            print(file=sys.stderr)
        wall = time.perf_counter() - t0
        feed_seq = repo.feed_state()["seq"]
        repo.make_durable()
    finally:
        repo.close()
    return {"base_uri": base, "build_s": round(wall, 3), "feed_seq": feed_seq}


def sync_command(data_dir: str, *args: str) -> list[str]:
    return [LSUP_ADMIN, "--data-dir", data_dir, "sync", "sparql", *args]


def target_args(store: str, protocol: str) -> tuple[str, ...]:
    """How ``sync sparql`` names the target ``store`` written with ``protocol``."""
    return ("--quads-url", store) if protocol == "quads" else (store,)


def run_once(data_dir: str, target: tuple[str, ...], *extra: str) -> tuple[float, str]:
    """Run ``sync sparql TARGET --once EXTRA``; its wall seconds and output."""
    t0 = time.perf_counter()
    res = subprocess.run(sync_command(data_dir, *target, "--once", *extra), env=clean_env(),
                         capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"lsup-admin sync sparql {' '.join(extra)} failed "
                         f"({res.returncode}):\n{res.stdout}{res.stderr}")
    return wall, res.stdout + res.stderr


def cpu_delta(pid: int, before: float | None) -> float | None:
    after = process_cpu_s(pid)
    return None if before is None or after is None else round(after - before, 3)


def reindex(data_dir: str, store: str, store_pid: int, base: str,
            protocol: str) -> dict[str, Any]:
    target = target_args(store, protocol)
    cpu0 = process_cpu_s(store_pid)
    wall, out = run_once(data_dir, target, "--reindex")
    store_cpu = cpu_delta(store_pid, cpu0)
    m = re.search(r"reindexed ([\d,]+) resources", out)
    if not m:
        raise SystemExit(f"lsup-admin sync sparql --reindex said nothing of a reindex:\n{out}")
    written = int(m.group(1).replace(",", ""))
    noop, _ = run_once(data_dir, target)
    work = max(wall - noop, 1e-9)
    return {"resources": written, "wall_s": round(wall, 3),
            "resources_per_s": round(written / wall, 1),
            "command_noop_s": round(noop, 3),
            "resources_per_s_without_startup": round(written / work, 1),
            "store_cpu_s": store_cpu,
            "store_cpu_ms_per_resource": round(store_cpu * 1e3 / written, 3)
            if store_cpu is not None and written else None,
            "replica_graphs": replica_graphs(store, base + "/")}


class Feed:
    """The server's change feed position and the target's checkpoint, read from
    the data directory (the store opened read-only)."""

    def __init__(self, data_dir: str, store: str):
        self.data_dir, self.store = data_dir, store
        self.quads = QuadStore(os.path.join(data_dir, "ldprs"), readonly=True)

    def checkpoint(self) -> int:
        s = replica_state.load(self.data_dir, self.store)
        return s.seq if s is not None else 0

    def seq(self) -> int:
        with self.quads.read() as txn:
            return int(txn.outbox_state()["seq"])

    def state(self) -> tuple[int, int]:
        """(applied, last): what ``LagSampler`` samples."""
        applied = self.checkpoint()
        return applied, self.seq()

    def wait_caught_up(self, timeout: float = CATCH_UP_TIMEOUT) -> float:
        """Seconds until the checkpoint reaches the feed's last seq (as it was when
        called)."""
        want, t0 = self.seq(), time.perf_counter()
        while self.checkpoint() < want:
            if time.perf_counter() - t0 > timeout:
                raise SystemExit(f"the replica did not catch up in {timeout:g} s "
                                 f"(at seq {self.checkpoint()} of {want})")
            time.sleep(0.02)
        return time.perf_counter() - t0

    def close(self) -> None:
        self.quads.close()


def follow_lag(data_dir: str, store: str, store_pid: int, args: argparse.Namespace,
               tmp: Path) -> dict[str, Any]:
    with ExitStack() as stack:
        port = free_port()
        stack.enter_context(lsup_server(data_dir, port, tmp / "server.log"))
        password = (Path(data_dir) / "initial-admin-password").read_text().strip()
        sync_log = open(tmp / "sync.log", "ab")
        stack.callback(sync_log.close)
        sync = subprocess.Popen(sync_command(data_dir, *target_args(store, args.protocol),
                                             "--follow"), env=clean_env(),
                                stdout=sync_log, stderr=subprocess.STDOUT)
        stack.callback(stop, sync)
        feed = Feed(data_dir, store)
        stack.callback(feed.close)
        target = HttpTarget(Options(mode="http", endpoint=f"http://127.0.0.1:{port}/rest",
                                    auth=("admin", password)))
        stack.callback(target.close)
        parent = "/ingest-" + uuid.uuid4().hex[:8]
        internal = target.prepare(parent, False)
        feed.wait_caught_up()      # the follower is running
        if sync.poll() is not None:
            raise SystemExit("lsup-admin sync sparql --follow exited:\n"
                             + (tmp / "sync.log").read_text(errors="replace"))
        rng = random.Random(args.seed + 1)
        bodies = [workload_turtle(rng, internal) for _ in range(min(POOL, args.ingest))]
        cpu0 = process_cpu_s(sync.pid)
        store_cpu0 = process_cpu_s(store_pid)
        seq0 = feed.seq()
        sampler = LagSampler(feed.state, interval=args.interval).start()
        latencies = []
        t0 = time.perf_counter()
        try:
            for i in range(args.ingest):
                s = time.perf_counter()
                target.put(f"{parent}/{uuid.uuid4()}", bodies[i % len(bodies)], TURTLE)
                latencies.append((time.perf_counter() - s) * 1e3)
        finally:
            wall = time.perf_counter() - t0
            lag = sampler.stop()
        catch_up = feed.wait_caught_up()
        cpu1 = process_cpu_s(sync.pid)
        store_cpu = cpu_delta(store_pid, store_cpu0)
        events = feed.seq() - seq0
        if sync.poll() is not None:
            raise SystemExit("lsup-admin sync sparql --follow exited:\n"
                             + (tmp / "sync.log").read_text(errors="replace"))
    sync_cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    return {"resources": len(latencies), "events": events, "wall_s": round(wall, 3),
            "puts_per_s": round(len(latencies) / wall, 1) if wall else None,
            "put_latency_ms": summarize(latencies), "lag": lag,
            "catch_up_after_last_put_s": round(catch_up, 3),
            "sync_cpu_s": None if sync_cpu is None else round(sync_cpu, 3),
            "sync_cpu_ms_per_event": round(sync_cpu * 1e3 / events, 3)
            if sync_cpu is not None and events else None,
            "store_cpu_s": store_cpu,
            "store_cpu_ms_per_event": round(store_cpu * 1e3 / events, 3)
            if store_cpu is not None and events else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000,
                    help="resources in the repository that is reindexed (default 10,000)")
    ap.add_argument("--ingest", type=int, default=2000,
                    help="resources PUT over HTTP while the lag is sampled (default 2,000)")
    ap.add_argument("--interval", type=float, default=0.2, help="seconds between lag samples")
    ap.add_argument("--protocol", choices=("quads", "graph-store"), default="quads",
                    help="how the sync writes Oxigraph: one N-Quads load per batch "
                         "(--quads-url, the default) or a PUT per graph")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR",
                    help="work in DIR (kept: repository, Oxigraph store, logs) "
                         "instead of a temporary directory")
    ap.add_argument("--json", metavar="FILE", help="write every figure to FILE")
    args = ap.parse_args(argv)
    if args.count < 0 or args.ingest < 1 or args.interval <= 0:
        ap.error("--count >= 0, --ingest >= 1 and --interval > 0")

    with ExitStack() as stack:
        if args.keep:
            tmp = Path(args.keep)
            tmp.mkdir(parents=True, exist_ok=True)
        else:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(
                prefix="lsup-replica-bench-")))
        data_dir = str(tmp / "data")
        built = build(data_dir, args.count, args.seed)
        base = built["base_uri"]
        print(f"repository: {args.count:,} resources of {GRAPH_SIZE} triples built in "
              f"{built['build_s']} s (feed at seq {built['feed_seq']:,})", flush=True)
        store, store_pid = start_oxigraph(tmp / "oxigraph", tmp / "oxigraph.log", stack)
        rx = reindex(data_dir, store, store_pid, base, args.protocol)
        print(f"reindex ({args.protocol}): {rx['resources']:,} resources in {rx['wall_s']} s = "
              f"{rx['resources_per_s']} resources/s ({rx['resources_per_s_without_startup']}/s "
              f"without the command's {rx['command_noop_s']} s start-up); Oxigraph CPU "
              f"{rx['store_cpu_ms_per_resource']} ms/resource; "
              f"{rx['replica_graphs']:,} graphs in Oxigraph", flush=True)
        fl = follow_lag(data_dir, store, store_pid, args, tmp)
        lag = fl["lag"] or {}
        print(f"follow lag during a 1-client HTTP ingest of {fl['resources']:,} resources "
              f"({fl['puts_per_s']} PUT/s, {fl['events']:,} events): median "
              f"{lag.get('median_s')} s / {lag.get('median_entries')} events, max "
              f"{lag.get('max_s')} s / {lag.get('max_entries')} events "
              f"({lag.get('samples')} samples every {args.interval:g} s); caught up "
              f"{fl['catch_up_after_last_put_s']} s after the last PUT; CPU per event: "
              f"sync {fl['sync_cpu_ms_per_event']} ms, Oxigraph "
              f"{fl['store_cpu_ms_per_event']} ms", flush=True)
        graphs = replica_graphs(store, base + "/")
        # the ingest's container, its -refs container and the 5 resources in it
        expected = rx["resources"] + fl["resources"] + 7
        print(f"replica at the end: {graphs:,} graphs in Oxigraph "
              f"({expected:,} resources in the repository)", flush=True)

    # 10,000 resources at this run's rate, plus the command's fixed cost
    rate = rx["resources_per_s_without_startup"]
    per_10k = rx["command_noop_s"] + 10_000 / rate if rx["resources"] else None
    result = {
        "count": args.count, "graph_size": GRAPH_SIZE, "protocol": args.protocol,
        "build": built,
        "reindex": rx, "follow": fl, "replica_graphs_at_end": graphs,
        "replica_graphs_expected_at_end": expected,
        "targets": {"reindex_10k_s": REINDEX_TARGET_S, "lag_s": LAG_TARGET_S,
                    "reindex_10k_s_projected": round(per_10k, 1) if per_10k else None,
                    "reindex_met": per_10k is not None and per_10k < REINDEX_TARGET_S,
                    "lag_met": bool(lag) and lag["max_s"] <= LAG_TARGET_S},
        "machine": machine(), "load_average": os.getloadavg(),
    }
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
