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
and it looks (reads ``/proc/self/statm`` through a descriptor it keeps open,
about 1 us):

* after every call of the ``Repository`` and after each batch of the
  background indexer;
* inside one call or one index batch, every ``CHECK_STEPS`` reads that may map
  new pages (``StoreEnv.mapped``: an IRI read from the IRI dictionary, a graph
  record, a chunk of index rows put).

A page fault maps the cached pages around the page it needs too (the kernel's
fault-around; since Linux 6.18 a whole large page-cache folio, which on ext4
can be megabytes), so one read of a term can add far more than its page to the
resident set: the pages mapped between two looks, not the bound, set how far
the peak passes it. On a 100,000-resource store, one ``Repository.info`` of a
resource whose pages were not mapped added 13 MB, and a thousand of them 0.47
MB each. Linux only; elsewhere it does nothing.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["CHECK_EVERY", "CHECK_STEPS", "MapTrimmer"]

MADV_DONTNEED = 4
#: Calls between two looks at ``/proc/self/statm``: a look costs about 1 us, and
#: one call can map megabytes (the module docstring).
CHECK_EVERY = 1
#: Reads between two looks inside one call or one index batch (``StoreEnv.mapped``):
#: a read faults in its page and the cached pages around it (0.47 MB a read
#: over a thousand reads of a 100,000-resource store, so up to about 15 MB
#: between two looks).
CHECK_STEPS = 32


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
        self._statm: tuple[int, int] | None = None   # (pid, descriptor of its statm)
        self._lock = threading.Lock()
        self._ranges: list[tuple[int, int]] | None = None   # (start, length) of the maps

    def resident_shared_bytes(self) -> int:
        """This process's resident shared pages (``RssFile`` plus ``RssShmem``,
        from ``/proc/self/statm``, re-read through a descriptor kept open: a
        forked child opens its own), in bytes; 0 where ``/proc`` does not say."""
        pid = os.getpid()
        try:
            if self._statm is None or self._statm[0] != pid:
                self._statm = (pid, os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
            return int(os.pread(self._statm[1], 256, 0).split()[2]) * self._page_size
        except (OSError, ValueError, IndexError):
            return 0

    def close(self) -> None:
        """Close the descriptor of ``/proc/self/statm`` (a later look reopens it)."""
        statm, self._statm = self._statm, None
        if statm is not None and statm[0] == os.getpid():
            try:
                os.close(statm[1])
            except OSError:
                pass

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
                and self.resident_shared_bytes() > self.limit):
            self.trim()

    @contextmanager
    def remapping(self) -> Iterator[None]:
        """Hold while the store's maps are remapped or unmapped (LMDB's
        ``set_mapsize``, ``close``): no trim runs meanwhile, and the next one
        finds the maps again (a stale range could by then hold other memory)."""
        with self._lock:
            self._ranges = None
            yield

    def trim(self) -> int:
        """Drop the store maps' pages from this process's resident set; return
        how many mappings were trimmed. Where the maps are is read from
        ``/proc/self/maps`` (about 0.3 ms) once, and again after ``remapping``
        (every time if the files are mapped more than once in this process)."""
        madvise = self._madvise or _madvise()
        if madvise is None:
            return 0
        done = 0
        with self._lock:
            if self._ranges is None:
                self._ranges = self._find_maps()
            ranges = self._ranges
            for start, length in ranges:
                if madvise(start, length, MADV_DONTNEED) == 0:
                    done += 1
                else:
                    self._ranges = None   # look again next time
            if len(ranges) != len(self.files):
                # Not one map per file: another environment of the same files is
                # open in this process, whose remaps this trimmer is not told of.
                self._ranges = None
        self.trims += 1
        return done

    def _find_maps(self) -> list[tuple[int, int]]:
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
                spans = [line.split(None, 1)[0] for line in fh
                         if line.rstrip("\n").endswith(self.files)]
        except OSError:
            return []
        out = []
        for span in spans:
            start, end = (int(x, 16) for x in span.split("-"))
            out.append((start, end - start))
        return out
