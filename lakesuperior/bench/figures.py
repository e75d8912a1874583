"""The benchmark's figures: latency statistics, the machine, the summary line, the
plot, the JSON file."""
from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import lmdb

__all__ = ["REPEAT", "summarize", "machine", "timed", "summary_line", "plot", "write_json"]

REPEAT = 3   # post-run measurements: median of this many


def write_json(path: str | None, data: Any, indent: int = 2) -> None:
    """Write a benchmark's results to ``path`` as JSON (nothing if ``path`` is empty)."""
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=indent)


def _pct(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.5) - 1))]


#: Requests in each of the first and last windows whose medians are compared.
WINDOW = 1000


def summarize(ms: Sequence[float]) -> dict[str, float | None]:
    """Latency figures (milliseconds) of requests in the order they were made. The
    first-1K and last-1K medians are None (shown "n/a") unless there are two
    separate thousands of requests (``2 * WINDOW``): with fewer they would share
    requests, and with 1,000 or fewer both be the overall median."""
    keys = ("median", "p95", "p99", "mean", "first_1k_median", "last_1k_median")
    if not ms:
        return dict.fromkeys(keys)
    ordered = sorted(ms)
    out: dict[str, float | None] = {
        "median": statistics.median(ms), "p95": _pct(ordered, 0.95),
        "p99": _pct(ordered, 0.99), "mean": statistics.fmean(ms),
        "first_1k_median": None, "last_1k_median": None}
    if len(ms) >= 2 * WINDOW:
        out["first_1k_median"] = statistics.median(ms[:WINDOW])
        out["last_1k_median"] = statistics.median(ms[-WINDOW:])
    return {k: None if v is None else round(v, 4) for k, v in out.items()}


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
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "lmdb": ".".join(map(str, lmdb.version())),
            "py_lmdb": getattr(lmdb, "__version__", None), "os": platform.platform()}


def timed(fn: Callable[[], Any], repeat: int = REPEAT) -> tuple[float, Any]:
    """Median seconds of ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 4), result


def summary_line(res: dict[str, Any]) -> str:
    """The one line of text printed at the end."""
    lat, post = res["latency_ms"], res["post_run"]

    def f(v: Any, unit: str = "", fmt: str = "{:.3f}") -> str:
        return "n/a" if v is None else fmt.format(v) + unit

    ratio = res["last_first_ratio"]
    parts = [f"lsup-benchmark {res['mode']} {res['method']} {res['resource_type']} "
             f"n={res['count']}"
             + (f" clients={res['clients']}" if res.get("clients", 1) > 1 else "")
             + (" (interrupted)" if res["interrupted"] else ""),
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
             + f", SPARQL count {f(post.get('sparql_count_s'), ' s')}"
             + f" (first, right after the ingest: {f(post.get('first_query_s'), ' s')})"]
    lag = res.get("index_lag")
    if lag:
        parts.append(f"index lag median {f(lag['median_s'], ' s')} max {f(lag['max_s'], ' s')}"
                     f" ({lag['max_entries']} entries)")
    mem = res.get("memory")
    if mem and mem.get("peak_rss_bytes"):
        ingest = (res.get("memory_after_ingest") or {}).get("peak_rss_bytes")
        parts.append(f"peak RSS {mem['peak_rss_bytes'] / 1e6:.0f} MB" + (
            f", {ingest / 1e6:.0f} MB by the end of the ingest" if ingest else "") + (
            f" (indexer process {mem['indexer']['peak_rss_bytes'] / 1e6:.0f} MB)"
            if mem.get("indexer", {}).get("peak_rss_bytes") else ""))
    if res.get("commit_ms"):
        parts.append(f"transactions of {res['transaction']}: commit median "
                     f"{f(res['commit_ms']['median'], ' ms')} p95 {f(res['commit_ms']['p95'])}")
    return " | ".join(parts)


def plot(res: dict[str, Any], path: str) -> None:
    """Save ms per request against request number (rolling median), with the
    first-1K and last-1K medians marked."""
    # matplotlib is optional (the ``bench`` extra): loaded only to plot.
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
        if lat["first_1k_median"] is not None:
            ax.hlines(lat["first_1k_median"], 1, WINDOW, colors="tab:green", lw=2,
                      label=f"first 1K median {lat['first_1k_median']:.2f} ms")
            ax.hlines(lat["last_1k_median"], n - WINDOW + 1, n, colors="tab:red", lw=2,
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
