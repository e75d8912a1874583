"""How much of the store's LMDB maps one process keeps resident.

LMDB reads through a shared, read-only ``mmap`` of its files: every page a
process has read stays mapped into it and counts in its resident set
(``RssFile`` in ``/proc/self/status``) until the kernel wants the memory back,
so a worker that has read a 4 GB store shows 4 GB of RSS. Those pages belong
to the page cache, not to the process: dropping them from its page tables
(``madvise(MADV_DONTNEED)``, safe on a shared file mapping at any moment, open
transactions included) costs one minor fault the next time each is read, and
the data stay cached. ``MapTrimmer`` does that when the process's resident
file pages pass a bound (``store.resident_map_limit``), so that a process's
RSS stays bounded however large the store. The store owns it (``StoreEnv``),
and it looks (reads ``/proc/self/statm``, about 8 us):

* every ``CHECK_EVERY`` calls of the ``Repository`` and after each batch of
  the background indexer;
* inside one call or one index batch, every ``CHECK_STEPS`` reads that may map
  new pages (``StoreEnv.mapped``: an IRI read from the IRI dictionary, a graph
  record, a chunk of index rows put).

A page fault maps the cached pages around the page it needs too (the kernel's
fault-around: up to a whole page-cache folio, which on ext4 can be megabytes),
so one read of a term can add far more than its page to the resident set: the
pages mapped between two looks, not the bound, set how far the peak passes it
(a 100,000-child listing mapped 163 MB in one call when only calls were
counted). Linux only; elsewhere it does nothing.
"""
from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable

__all__ = ["CHECK_EVERY", "CHECK_STEPS", "MapTrimmer"]

MADV_DONTNEED = 4
#: Calls between two looks at ``/proc/self/statm``: at 200 triples a write, 128
#: calls mapped up to 50 MB past the bound in a 20,000-resource store.
CHECK_EVERY = 16
#: Reads between two looks inside one call or one index batch (``StoreEnv.mapped``):
#: a read faults in its page and the cached pages around it (a 100,000-child
#: listing mapped about 1.4 MB per 256 reads); a look costs about 8 us.
CHECK_STEPS = 256


def _resident_shared_bytes(page_size: int) -> int:
    """This process's resident shared pages (``RssFile`` plus ``RssShmem``, from
    ``/proc/self/statm``: cheaper to read than ``status``), in bytes (0 where
    ``/proc`` does not say)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[2]) * page_size
    except (OSError, ValueError, IndexError):
        return 0


def _madvise() -> Callable[[int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


class MapTrimmer:
    """Keeps the resident pages of a store's LMDB maps under ``limit`` bytes
    (0: no bound) in this process (see the module docstring)."""

    def __init__(self, store_dir: str, limit: int, every: int = CHECK_EVERY):
        root = os.path.abspath(store_dir)
        self.files = (os.path.join(root, "data.mdb"), os.path.join(root, "index", "data.mdb"))
        self.limit = limit
        self.every = max(1, every)
        self.calls = 0
        self.trims = 0
        self._madvise = _madvise() if limit > 0 else None
        self._page_size = os.sysconf("SC_PAGE_SIZE") if self._madvise is not None else 4096

    def tick(self) -> None:
        """Count one call; every ``every`` calls, trim if the resident file pages
        are over the limit."""
        if self._madvise is None:
            return
        self.calls += 1
        if self.calls % self.every == 0:
            self.check()

    def check(self) -> None:
        """Trim now if the resident file pages are over the limit (the background
        indexer calls it after each batch: a batch reads pages all over the index)."""
        if (self._madvise is not None
                and _resident_shared_bytes(self._page_size) > self.limit):
            self.trim()

    def trim(self) -> int:
        """Drop the store maps' pages from this process's resident set; return
        how many mappings were trimmed."""
        madvise = self._madvise or _madvise()
        if madvise is None:
            return 0
        done = 0
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
                ranges = [line.split(None, 1)[0] for line in fh
                          if line.rstrip("\n").endswith(self.files)]
        except OSError:
            return 0
        for span in ranges:
            start, end = (int(x, 16) for x in span.split("-"))
            if madvise(start, end - start, MADV_DONTNEED) == 0:
                done += 1
        self.trims += 1
        return done
