"""The export's file-system writes, done in order by a thread of their own.

Making a directory or a file costs the export about as much system time as
everything else costs it in Python; a second thread makes them, in batches
(``fswrite.write_batch``: the system calls alone, without the GIL), while the
export's thread reads and encodes the next object.
The writes are done exactly in the order they were asked for (an object's
inventory after its content, as written synchronously), each batch of them
whole; after a failed write nothing more is written, and the failure is raised
in the export's thread by the next call (``wait`` at the latest). Memory holds
at most ``_QUEUED`` batches of about ``_BATCH_BYTES`` bytes at most (a batch
is handed over once it holds as many, the export's files being at most 1 MB
each: it copies a larger binary itself, after ``wait``), and the export never
reads what it wrote, except after ``wait``.
"""
from __future__ import annotations

import os
import queue
import threading
from types import TracebackType

from lakesuperior.ocfl.fswrite import MKDIR, PUT, REPLACE, write_batch

__all__ = ["FileSink", "new_file", "put_file", "write_all"]

#: A batch is handed to the thread once it holds this many writes or bytes.
_BATCH_OPS = 256
_BATCH_BYTES = 1 << 21
#: Batches handed over and not yet written, at most (the export waits beyond).
_QUEUED = 8

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


class FileSink:
    """Directories and files written behind the caller, in order (see the module
    doc): ``mkdir``, ``put`` (a new file in a tree being built), ``replace`` (a
    file others may read, replaced whole by a rename); ``wait`` until all are
    written; ``close`` (or the ``with`` block's end) waits and stops the thread."""

    def __init__(self) -> None:
        self._ops: list[tuple[int, str, bytes]] = []
        self._bytes = 0
        self._queue: queue.Queue[list[tuple[int, str, bytes]] | None] = \
            queue.Queue(_QUEUED)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ocfl-file-sink", daemon=True)
        self._thread.start()

    def __enter__(self) -> FileSink:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close(check=exc is None)

    # -- what the export asks for ------------------------------------------------------

    def mkdir(self, path: str) -> None:
        """Make the directory ``path`` (it may exist; its parent must, by then)."""
        self._add(MKDIR, path, b"")

    def put(self, path: str, body: bytes) -> None:
        """Write ``body`` as ``path`` (made, or truncated), with one open."""
        self._add(PUT, path, body)

    def replace(self, path: str, body: bytes) -> None:
        """Replace ``path`` by ``body`` whole or not at all (a temporary file renamed)."""
        self._add(REPLACE, path, body)

    def wait(self) -> None:
        """Return once everything asked for is written; raise what failed."""
        self._hand_over()
        self._queue.join()
        self._check()

    def close(self, *, check: bool = True) -> None:
        """Write what is left and stop the thread (``check``: raise what failed)."""
        if not self._thread.is_alive():
            return
        if self._error is None:
            self._hand_over()
        self._queue.put(None)
        self._thread.join()
        if check:
            self._check()

    # -- the two threads --------------------------------------------------------------

    def _add(self, op: int, path: str, body: bytes) -> None:
        self._ops.append((op, path, body))
        self._bytes += len(body)
        if len(self._ops) >= _BATCH_OPS or self._bytes >= _BATCH_BYTES:
            self._hand_over()

    def _hand_over(self) -> None:
        self._check()
        if self._ops:
            self._queue.put(self._ops)
            self._ops = []
            self._bytes = 0

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        while True:
            batch = self._queue.get()
            try:
                if batch is None:
                    return
                if self._error is None:
                    write_batch(batch)
            except BaseException as e:      # raised in the caller's thread
                self._error = e
            finally:
                self._queue.task_done()


# -- one file ----------------------------------------------------------------------------
#
# An export writes a tree no one else sees (a staging directory, or a version
# directory the object's inventory does not name yet): each file is written with
# one open, no checks before it; a file others may read (the root inventory of an
# existing object) is replaced whole by a rename. Nothing is flushed per file:
# the export flushes the finished tree once (``admin.files.promote``).

def new_file(path: str) -> int:
    """Open ``path`` to write it from the start (made, or truncated): a descriptor."""
    return os.open(path, _NEW_FILE, 0o666)


def put_file(path: str, body: bytes) -> None:
    """Write ``body`` to ``path`` in a tree being built (one open, no flush)."""
    fd = new_file(path)
    try:
        write_all(fd, body)
    finally:
        os.close(fd)


def write_all(fd: int, body: bytes) -> None:
    """Write all of ``body`` to the file descriptor ``fd``."""
    view = memoryview(body)
    while view:
        view = view[os.write(fd, view):]
