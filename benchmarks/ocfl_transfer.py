"""OCFL benchmark (issue 30, "Speed"): export and import of the benchmark repository.

Builds a repository of ``--count`` children of one container, each the 200-triple
graph of WORKLOAD.md (``lakesuperior.bench.workload.workload_turtle``, linking to 5
repository resources), then exports it with ``lakesuperior.ocfl.export.export_ocfl``
into a new OCFL storage root and imports that root with
``lakesuperior.ocfl.imports.import_ocfl`` into a new repository.

``--binaries``: each child also has one 4 KB binary (random bytes) below it, and
the child and its binary have 3 versions each: written three times (new triples,
new bytes), a day apart in 2024 (``Repository.clock`` in a ``transaction()``, with
automatic versioning on as by default), so every version has its own content.

The repository is built with sync off (``Repository(path, sync=False)``) and the
configuration's defaults otherwise: automatic versioning on and the background
indexer on, in a process of its own (``background_index``/``indexer_process``);
the build ends with ``repo.index()``, so the export starts from an indexed
store. The export opens the repository the same way, as ``lsup-admin export-ocfl``
does (``export_config``: its IRI cache at most 4,096 IRIs); the import gets the default
configuration with sync off (``import_ocfl`` itself turns automatic versioning
off), so its indexer process runs during the import as deployed.

Export and import each run in a child process of their own (multiprocessing,
spawn), so their figures are not mixed with the build: wall time of the call,
resources per second (every resource the report counts, containers and binaries,
the root and the 6 resources of the setup included; ``workload_per_s`` counts
only the ``--count`` children), and memory from ``/proc`` (Linux): the child's
peak resident set (``VmHWM``), the largest own (anonymous) memory sampled during
the run (``peak_rss_anon_bytes``: heap, caches, without LMDB's mapped pages),
the child's CPU time (``cpu_user_s``, ``cpu_system_s``, and per resource in
``cpu_ms_per_resource``: steadier than the wall time on a shared machine),
samples of both along the run (flat memory: the last sample near the first), and
the peak of the store's indexer process (``indexer_peak_rss_bytes``). Build and
export write into a temporary directory in the current one (removed after),
or ``--dir`` (kept). On ext4 without a journal, files made within minutes of a
mass deletion are slow (docs/performance.md, "Why the disk's time moves"): to
alternate runs, give each a new ``--dir`` and delete them all at the end.

Prints one line and writes every figure as JSON (``--json``)::

    python benchmarks/ocfl_transfer.py --count 10000 --json ocfl.json
    python benchmarks/ocfl_transfer.py --count 10000 --binaries --json ocfl-bin.json
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from lakesuperior.admin.files import dir_bytes
from lakesuperior.admin.progress import Progress
from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.memory import is_indexer_process, process_memory, store_processes
from lakesuperior.bench.workload import GRAPH_SIZE, random_bytes, workload_turtle

PARENT = "/bench"
BINARY_SIZE = 4096
VERSIONS = 3
#: The dates of the versions of ``--binaries`` (version v of child i: FIRST + v days + i s).
FIRST = datetime(2024, 1, 1, tzinfo=UTC)
SAMPLES = 20      # memory samples along a run


class MemorySampler(Progress):
    """A progress reporter that samples this process's memory (and the peak of
    the store's indexer process) about ``SAMPLES`` times along the run."""

    def __init__(self, data_dir: str | None = None):
        self.data_dir = data_dir
        self.total = 0
        self.done = 0
        self.every = 1
        self.samples: list[dict[str, int]] = []
        self.indexer_peak = None

    def start(self, label: str, total: int | None = None) -> None:
        self.total = total or 0
        self.done = 0
        self.every = max(1, self.total // SAMPLES)
        self.sample()

    def advance(self, n: int = 1) -> None:
        before = self.done
        self.done += n
        if self.done // self.every != before // self.every:
            self.sample()
            if self.done // (self.every * 5) != before // (self.every * 5):
                print(f"\r{self.done}/{self.total}", end="", file=sys.stderr, flush=True)

    def finish(self) -> None:
        self.sample()
        print(file=sys.stderr)

    def sample(self) -> None:
        mem = process_memory() or {}
        self.samples.append({"done": self.done, "rss_bytes": mem.get("rss_bytes"),
                             "rss_anon_bytes": mem.get("rss_anon_bytes")})
        if self.data_dir is not None:
            for pid in store_processes(self.data_dir):
                if is_indexer_process(pid):
                    peak = (process_memory(pid) or {}).get("peak_rss_bytes")
                    if peak is not None:
                        self.indexer_peak = max(self.indexer_peak or 0, peak)

    def figures(self) -> dict[str, Any]:
        mem = process_memory() or {}
        anon = [s["rss_anon_bytes"] for s in self.samples if s["rss_anon_bytes"] is not None]
        return {"peak_rss_bytes": mem.get("peak_rss_bytes"),
                "rss_anon_bytes_end": mem.get("rss_anon_bytes"),
                "rss_file_bytes_end": mem.get("rss_file_bytes"),
                "peak_rss_anon_bytes": max(anon) if anon else None,
                "indexer_peak_rss_bytes": self.indexer_peak,
                "memory_samples": self.samples}


# -- the repository -------------------------------------------------------------------------

def build(data_dir: str, count: int, binaries: bool, seed: int) -> dict[str, Any]:
    """The benchmark repository in ``data_dir``: ``count`` children of ``PARENT``."""
    from lakesuperior import Repository

    rng = random.Random(seed)
    t0 = time.perf_counter()
    with Repository(data_dir, sync=False) as repo:
        base = repo.base_uri
        repo.create_or_replace(PARENT)
        internal = []
        for i in range(5):
            uid = f"/bench-ref-{i}"
            repo.create_or_replace(uid)
            internal.append(base + uid)
        for i in range(count):
            uid = f"{PARENT}/{uuid.UUID(int=rng.getrandbits(128), version=4)}"
            if not binaries:
                repo.create_or_replace(uid, data=workload_turtle(rng, internal),
                                       media_type="text/turtle")
            else:
                for v in range(VERSIONS):
                    with repo.transaction(), repo.clock(FIRST + timedelta(days=v, seconds=i)):
                        repo.create_or_replace(uid, data=workload_turtle(rng, internal),
                                               media_type="text/turtle")
                        repo.create_or_replace(f"{uid}/file.bin",
                                               data=random_bytes(rng, BINARY_SIZE),
                                               media_type="application/octet-stream")
            if (i + 1) % 1000 == 0:
                print(f"\rbuilt {i + 1}/{count}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        repo.index()
    return {"build_s": round(time.perf_counter() - t0, 3), "store_bytes": dir_bytes(data_dir)}


# -- the two children ---------------------------------------------------------------------

def _export_child(data_dir: str, dest: str, ocfl_version: str, out) -> None:
    from lakesuperior import Config, Repository
    from lakesuperior.ocfl.export import export_config, export_ocfl

    sampler = MemorySampler(data_dir)
    with Repository(config=export_config(Config().with_(data_dir=data_dir, sync=False))) as repo:
        t0, cpu0 = time.perf_counter(), os.times()
        report = export_ocfl(repo, dest, ocfl_version=ocfl_version, progress=sampler)
        wall, cpu = time.perf_counter() - t0, _cpu(cpu0)
        figures = sampler.figures()
    out.put({"report": report.as_dict(), "wall_s": wall, **cpu, **figures})


def _import_child(src: str, data_dir: str, out) -> None:
    from lakesuperior import Config
    from lakesuperior.ocfl.imports import import_ocfl

    sampler = MemorySampler(data_dir)
    t0, cpu0 = time.perf_counter(), os.times()
    report = import_ocfl(src, Config().with_(data_dir=data_dir, sync=False), progress=sampler)
    wall, cpu = time.perf_counter() - t0, _cpu(cpu0)
    out.put({"report": report.as_dict(), "wall_s": wall, **cpu, **sampler.figures()})


def _cpu(before: os.times_result) -> dict[str, float]:
    """This process's CPU seconds (user, system) since ``before`` (``os.times()``)."""
    now = os.times()
    return {"cpu_user_s": round(now.user - before.user, 3),
            "cpu_system_s": round(now.system - before.system, 3)}


def in_child(target, *args) -> dict[str, Any]:
    """``target(*args, queue)`` in a spawned process; what it put in the queue."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    try:
        while True:
            try:
                result = queue.get(timeout=1)
                break
            except Exception:       # queue.Empty: is the child still there?
                if not proc.is_alive():
                    raise RuntimeError(f"{target.__name__} exited with code "
                                       f"{proc.exitcode} and no result") from None
    finally:
        proc.join()
    return result


def _rates(res: dict[str, Any], count: int) -> dict[str, Any]:
    wall = res["wall_s"]
    res["wall_s"] = round(wall, 3)
    res["resources_per_s"] = round(res["report"]["resources"] / wall, 1) if wall else None
    res["workload_per_s"] = round(count / wall, 1) if wall else None
    n = res["report"]["resources"]
    res["cpu_ms_per_resource"] = {"user": round(res["cpu_user_s"] * 1000 / n, 3),
                                  "system": round(res["cpu_system_s"] * 1000 / n, 3)}
    return res


def run(count: int, binaries: bool, ocfl_version: str, seed: int, work: str) -> dict[str, Any]:
    source, root, target = (os.path.join(work, n) for n in ("source", "ocfl", "target"))
    built = build(source, count, binaries, seed)
    exported = _rates(in_child(_export_child, source, root, ocfl_version), count)
    exported["ocfl_bytes"] = dir_bytes(root)
    imported = _rates(in_child(_import_child, root, target), count)
    imported["store_bytes"] = dir_bytes(target)
    if imported["report"]["failed"]:
        raise RuntimeError(f"the import failed for {len(imported['report']['failed'])} "
                           f"objects, e.g. {imported['report']['failed'][0]}")
    return {"count": count, "graph_size": GRAPH_SIZE, "binaries": binaries,
            "binary_size": BINARY_SIZE if binaries else None,
            "versions_per_resource": VERSIONS if binaries else 1,
            "ocfl_version": ocfl_version, "sync": False, "indexer": "process (default)",
            "seed": seed, "build": built, "export": exported, "import": imported,
            "machine": machine()}


def _cpu_line(res: dict[str, Any]) -> str:
    cpu = res["cpu_ms_per_resource"]
    return f"CPU {cpu['user']:.2f} + {cpu['system']:.2f} ms/resource"


def _mb(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:.0f} MB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--binaries", action="store_true",
                    help=f"a {BINARY_SIZE}-byte binary per resource, {VERSIONS} versions of each")
    ap.add_argument("--ocfl-version", choices=("1.1", "1.0"), default="1.1")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", help="working directory (default: a temp dir here, removed)")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args(argv)
    work = args.dir or tempfile.mkdtemp(prefix="lsup-ocfl-bench-", dir=os.getcwd())
    try:
        res = run(args.count, args.binaries, args.ocfl_version, args.seed, work)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    ex, im = res["export"], res["import"]
    extra = f" (+binaries, {VERSIONS} versions each)" if args.binaries else ""
    print(f"ocfl export n={res['count']}{extra}: {ex['resources_per_s']:.0f} resources/s, "
          f"{_cpu_line(ex)}, peak RSS {_mb(ex['peak_rss_bytes'])}; import: "
          f"{im['resources_per_s']:.0f} resources/s, {_cpu_line(im)}, peak RSS "
          f"{_mb(im['peak_rss_bytes'])}")
    write_json(args.json, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
