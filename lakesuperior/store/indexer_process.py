"""The background indexer in a process of its own (``store.indexer_process``).

The union-graph indexer (``background.IndexerThread``) costs about a quarter of
a write's CPU. As a thread of the process that writes, it takes the writer's
GIL: a write coming back from its fsync waits for the indexer to let go of it.
In a child process it runs on another core and the writer never waits for it
(python mode: about -17% per ``create_or_replace``; 8 HTTP PUT clients: about
+9% PUT/s; docs/performance.md).

Election stays the store's lock file (``indexer.lock``): a process whose
``IndexerProcess`` takes the lock starts the child and hands it the locked
file (an inherited descriptor: a ``flock`` belongs to the open file, so the
child holds it and the parent closes its copy). Each ``IndexerProcess`` looks
every ``LOCK_POLL`` seconds; when the child has died (killed, or its parent
gone) the lock is free again and the first process to look starts another,
which resumes from the last batch committed, as a thread would.

The child reads its standard input, a pipe from the parent, until it ends: when
the parent closes it (``stop()``) or dies, however killed, the child stops after
the batch under way and exits. It ignores the terminal's interrupts (it is in a
session of its own) and reads no configuration: the parent passes the store's
options on its command line.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

from lakesuperior.store.background import (
    LOCK_POLL,
    MAX_BACKOFF,
    HeldLock,
    IndexerLock,
    IndexerThread,
)
from lakesuperior.store.quadstore import QuadStore

log = logging.getLogger(__name__)

#: Seconds ``stop()`` waits for the child to finish its batch before killing it.
STOP_TIMEOUT = 30.0
#: A child that fails within this many seconds of its start counts as a failure
#: to start: the next start waits twice as long as the last (up to MAX_BACKOFF).
EARLY_EXIT = 10.0
#: The store options the child is opened with (``QuadStore`` keywords).
OPTIONS = ("map_size", "sync", "index_batch", "iri_cache", "resident_map_limit")


class IndexerProcess:
    """Starts, watches and stops the store's indexer child (see the module).

    ``options``: the ``QuadStore`` keywords of ``OPTIONS`` for the child.
    ``pid`` is the child's while this process has one running, else None.
    """

    def __init__(self, store_dir: str, options: dict[str, Any], *,
                 lock_poll: float = LOCK_POLL):
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise ValueError(f"Unknown indexer options: {', '.join(sorted(unknown))}")
        self.store_dir = os.path.abspath(store_dir)
        self.options = dict(options)
        self.lock_poll = lock_poll
        self.lock = IndexerLock(self.store_dir)
        self.started = 0                    #: children this process started
        self.failures = 0                   #: children in a row that failed early
        self._since = 0.0
        self._proc: subprocess.Popen[bytes] | None = None
        self._mutex = threading.Lock()
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="lsup-indexer-watch",
                                       daemon=True)

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    @property
    def leader(self) -> bool:
        """Whether this process's child is the store's indexer."""
        return self.pid is not None

    def start(self) -> IndexerProcess:
        self.thread.start()
        return self

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop watching; let the child finish its batch and exit (killed after
        ``timeout`` seconds)."""
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)
        with self._mutex:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        _close(proc.stdin)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("The indexer process %d did not stop in %.0f s: killed",
                        proc.pid, timeout)
            proc.kill()
            proc.wait()

    def _watch(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.step()
            except OSError as e:       # cannot start a process (no memory, no pids)
                self.failures += 1
                log.warning("Cannot start the indexer process: %s", e)
            self.stop_event.wait(min(self.lock_poll * 2 ** self.failures, MAX_BACKOFF)
                                 if self.failures else self.lock_poll)

    def step(self) -> bool:
        """One look: reap a dead child; start one if the lock is free. Whether
        this process's child is (now) running."""
        with self._mutex:
            if self.stop_event.is_set():
                return False
            proc = self._proc
            if proc is not None:
                if proc.poll() is None:
                    return True
                self._proc = None
                _close(proc.stdin)
                early = time.monotonic() - self._since < EARLY_EXIT
                self.failures = self.failures + 1 if proc.returncode and early else 0
                if proc.returncode:
                    log.warning("The indexer process %d ended with status %d; another "
                                "takes over", proc.pid, proc.returncode)
            if not self.lock.acquire():
                return False
            try:
                self._proc = self._spawn()
                self._since = time.monotonic()
                self.started += 1
            finally:
                self.lock.release()    # the child's descriptor keeps the lock
            return True

    def _spawn(self) -> subprocess.Popen[bytes]:
        fh = self.lock.file
        assert fh is not None
        fd = fh.fileno()
        cmd = [sys.executable, "-m", __name__, self.store_dir, json.dumps(self.options),
               str(fd)]
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, pass_fds=(fd,),
                                start_new_session=True, close_fds=True)


def _close(fh: IO[bytes] | None) -> None:
    if fh is not None:
        try:
            fh.close()
        except OSError:
            pass


def run_child(store_dir: str, options: dict[str, Any], lock_fd: int,
              stdin: IO[bytes]) -> int:
    """The child: index ``store_dir`` while ``stdin`` stays open, holding the
    lock on ``lock_fd``; 0 once stopped."""
    store = QuadStore(store_dir, **options)
    try:
        indexer = IndexerThread(store, lock=HeldLock(lock_fd),
                                after_batch=store.map_trimmer.check).start()
        while stdin.read(4096):       # until the parent closes the pipe or dies
            pass
        indexer.stop(STOP_TIMEOUT)
    finally:
        store.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3:
        print("usage: python -m lakesuperior.store.indexer_process STORE_DIR OPTIONS_JSON "
              "LOCK_FD", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s [indexer %(process)d] %(levelname)s %(message)s")
    return run_child(args[0], json.loads(args[1]), int(args[2]), sys.stdin.buffer)


if __name__ == "__main__":
    sys.exit(main())
