"""Where the resident set peaks (issue 15, deliverable 6): ``lsup-benchmark`` in
python mode, with this process's memory after each phase.

Runs the benchmark's own ``run()`` (ingest, then its post-run measurements)
and records, at the end of each phase (the ingest, then each timed post-run
step: first SPARQL count, container GET as Turtle, Python retrieval, the
index catch-up and the count after it), ``VmHWM`` (the peak so far),
``RssAnon``, ``RssFile`` and the resident share of the two LMDB maps
(``main``, ``index``, from ``/proc/self/smaps``), plus the largest
``RssAnon`` / ``RssFile`` a 10 ms sampler saw within the phase, in MB. The
post-run phase ``retrieval_and_catch_up`` includes the index catch-up (what
the background indexer had not taken in). Linux only.
Prints one line per phase and writes JSON (``--output``)::

    python benchmarks/memory_phases.py --count 20000 --data-dir /tmp/m20k
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

from lakesuperior.bench import benchmark, targets
from lakesuperior.bench.figures import write_json
from lakesuperior.bench.memory import process_memory

MB = 1 << 20


def map_shares() -> dict[str, int]:
    """Resident bytes of this process's mappings of the store's two data files."""
    out = {"main_map_bytes": 0, "index_map_bytes": 0}
    name = None
    with open("/proc/self/smaps", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):
                path = line.rstrip("\n")
                name = ("index_map_bytes" if path.endswith("/index/data.mdb") else
                        "main_map_bytes" if path.endswith("/data.mdb") else None)
            elif name and line.startswith("Rss:"):
                out[name] += int(line.split()[1]) * 1024
    return out


class Phases:
    """Figures at each phase's end, and the largest a sampler saw within it."""

    def __init__(self) -> None:
        self.name = "prepare"
        self.rows: list[dict[str, Any]] = []
        self.highs: dict[str, int] = {}
        self.t0 = time.perf_counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stop.wait(0.01):
            fig = process_memory() or {}
            for key in ("rss_anon_bytes", "rss_file_bytes"):
                self.highs[key] = max(self.highs.get(key, 0), fig.get(key, 0))

    def mark(self, following: str) -> None:
        """End the current phase (its figures) and start ``following``."""
        fig = {**(process_memory() or {}), **map_shares()}
        row = {"phase": self.name, "t_s": round(time.perf_counter() - self.t0, 2),
               **{k.replace("_bytes", "_mb"): v // MB for k, v in fig.items()},
               **{"max_" + k.replace("_bytes", "_mb"): v // MB for k, v in self.highs.items()}}
        self.rows.append(row)
        print(json.dumps(row), flush=True)
        self.name, self.highs = following, {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--data-dir", help="repository directory, kept (default: a temporary one)")
    ap.add_argument("--output", help="write the phases and the benchmark's figures as JSON")
    opts = ap.parse_args(argv)
    phases = Phases()
    steps = iter(["first_query", "container_get", "retrieval_and_catch_up", "sparql_count"])
    timed = targets.timed
    put = targets.PythonTarget.put

    def timed_phase(fn: Any, repeat: int = 5) -> Any:
        phases.mark(next(steps, "post_run"))
        return timed(fn, repeat)

    def put_phase(self: targets.PythonTarget, path: str, body: bytes, ctype: str) -> None:
        if phases.name == "prepare":
            phases.mark("ingest")
        put(self, path, body, ctype)

    targets.timed = timed_phase               # the post-run steps, named in order
    targets.PythonTarget.put = put_phase      # type: ignore[method-assign]
    phases.thread.start()
    try:
        res = benchmark.run(targets.Options(mode="python", count=opts.count,
                                            data_dir=opts.data_dir))
    finally:
        phases.stop.set()
        targets.timed = timed
        targets.PythonTarget.put = put            # type: ignore[method-assign]
    phases.mark("end")
    res.pop("latencies_ms", None)
    print(f"memory_phases n={res['count']} | peak RSS "
          f"{(res['memory'] or {}).get('peak_rss_bytes', 0) // MB} MB | python retrieval "
          f"{res['post_run']['python_retrieval_s']} s")
    write_json(opts.output, {"phases": phases.rows, "benchmark": res}, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
