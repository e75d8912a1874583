"""The benchmark's memory figures: the peak resident set of the process that holds
the repository (this one in python mode; the server's workers over HTTP, found by
the store file they map), and of the store's indexer process, read from ``/proc``
(Linux; None elsewhere).

``peak_rss_bytes`` is the kernel's high-water mark (``VmHWM``); ``rss_anon_bytes``
and ``rss_file_bytes`` split the resident set at the end of the run into the
process's own memory (heap, caches) and the mapped pages of files (LMDB's map:
pages of the store the process read, which the kernel reclaims under pressure).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from lakesuperior.store import indexer_process

__all__ = ["is_indexer_process", "memory_figures", "process_memory", "store_processes",
           "wait_for_indexer"]

#: What the command line of an indexer process holds (``python -m`` its module).
INDEXER_MODULE = indexer_process.__name__.encode()

_FIELDS = {"VmHWM": "peak_rss_bytes", "VmRSS": "rss_bytes", "RssAnon": "rss_anon_bytes",
           "RssFile": "rss_file_bytes"}


def process_memory(pid: int | str = "self") -> dict[str, int] | None:
    """The resident-set figures (bytes) of a process, or None if ``/proc`` says nothing."""
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return None
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        key = _FIELDS.get(name)
        if key is not None:
            amount, _, unit = value.strip().partition(" ")
            out[key] = int(amount) * (1024 if unit.lower() == "kb" else 1)
    return out or None


def store_processes(data_dir: str) -> list[int]:
    """Pids of the other processes that map the store of ``data_dir`` (a server's
    workers), from ``/proc/<pid>/maps``."""
    target = str(Path(data_dir).resolve() / "ldprs" / "data.mdb")
    me = os.getpid()
    pids = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/maps", encoding="utf-8", errors="replace") as fh:
                if any(line.rstrip().endswith(target) for line in fh):
                    pids.append(int(entry))
        except OSError:
            continue
    return sorted(pids)


def is_indexer_process(pid: int) -> bool:
    """Whether ``pid`` is a store's indexer process (``store.indexer_process``)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return INDEXER_MODULE in fh.read()
    except OSError:
        return False


def wait_for_indexer(data_dir: str, timeout: float = 10.0) -> int | None:
    """The pid of the store's indexer process once it has opened the store of
    ``data_dir`` (None if none has within ``timeout`` seconds): a benchmark
    starts its clock with the indexer running, not starting."""
    deadline = time.monotonic() + timeout
    while True:
        found = [pid for pid in store_processes(data_dir) if is_indexer_process(pid)]
        if found or time.monotonic() >= deadline:
            return found[0] if found else None
        time.sleep(0.02)


def memory_figures(mode: str, data_dir: str | None) -> dict[str, Any] | None:
    """Python mode: this process's figures. HTTP with ``data_dir``: each server
    process's (``processes``, by pid) and the largest peak of a worker
    (``peak_rss_bytes``). In both, the store's indexer process, when it runs in
    one of its own, under ``indexer`` (its figures, its pid). None when nothing
    can be read."""
    found = {pid: fig for pid in (store_processes(data_dir) if data_dir else [])
             if (fig := process_memory(pid)) is not None}
    indexer = next((pid for pid in found if is_indexer_process(pid)), None)
    indexer_fig = found.pop(indexer) if indexer is not None else None
    if mode == "python":
        out: dict[str, Any] | None = process_memory()
    elif found:
        out = {"peak_rss_bytes": max(f.get("peak_rss_bytes", 0) for f in found.values()),
               "processes": {str(pid): fig for pid, fig in found.items()}}
    else:
        return None
    if out is not None and indexer_fig is not None:
        out["indexer"] = {"pid": indexer, **indexer_fig}
    return out
