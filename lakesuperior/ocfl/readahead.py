"""The import's read-ahead: a child process reads, checks and parses the objects
the import writes next, on another core.

Reading an object (its inventories, its header files and their checks), parsing
its RDF (pyoxigraph holds the GIL) and reading its small binaries is about half
of the import's CPU; writing them is the rest, in one process (LMDB's writer).
``ReadAhead`` starts ``python -m lakesuperior.ocfl.readahead`` and hands it the
objects in the import's order; the child makes each one's ``FedoraObject``, its
versions and their ``read_ahead`` and writes them, pickled, to its standard
output. The pipe bounds how far ahead it gets (``PIPE_BYTES``, and
``OBJECT_BUDGET`` for one object): the child waits while the pipe is full, so
memory stays flat however many objects there are.

The child only reads, and reads no configuration. An object it cannot read it
sends as None: the import reads that one itself, so that every error is raised
where, when and as it would be without the child (naming the object and the
file; a content file that fails is left for ``FedoraObject.rdf``/``open`` the
same way). If the child dies, the import reads the remaining objects itself.
"""
from __future__ import annotations

import fcntl
import logging
import os
import pickle
import struct
import subprocess
import sys
from typing import IO, Any

from lakesuperior.ocfl.reading import FedoraObject, VersionView

__all__ = ["ReadAhead", "Prepared", "PIPE_BYTES", "OBJECT_BUDGET", "INLINE_BYTES"]

log = logging.getLogger(__name__)

#: The capacity asked for the pipe from the child (Linux allows up to 1 MiB
#: without privileges): how far ahead of the import the child gets, in bytes.
PIPE_BYTES = 1 << 20
#: The most bytes of files the child reads ahead for one object (an Archival Group
#: holds all its members): the rest the import reads as it writes them.
OBJECT_BUDGET = 4 << 20
#: Binaries of at most this many bytes are read ahead (larger ones are streamed
#: from their files as they are written).
INLINE_BYTES = 64 << 10

#: An object read ahead: its ``FedoraObject`` and its versions.
Prepared = tuple[FedoraObject, list[VersionView]]
_LENGTH = struct.Struct(">Q")


class ReadAhead:
    """The child reading ``objects`` ((id, directory), in the import's order) ahead
    of the import; ``next`` for each of them in turn. A context manager: the child
    stops at its end."""

    def __init__(self, objects: list[tuple[str, str]]):
        self.objects = objects
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None

    def __enter__(self) -> ReadAhead:
        job = {"objects": self.objects, "budget": OBJECT_BUDGET, "inline": INLINE_BYTES}
        try:
            proc = self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, start_new_session=True, close_fds=True)
            assert proc.stdin is not None
            self._out = proc.stdout
            assert self._out is not None
            try:
                fcntl.fcntl(self._out.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
            except OSError:
                pass            # a smaller pipe: less far ahead
            with proc.stdin:
                proc.stdin.write(pickle.dumps(job, pickle.HIGHEST_PROTOCOL))
        except OSError as e:
            self._give_up(f"it could not be started ({e})")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    def next(self, oid: str) -> Prepared | None:
        """The object ``oid`` (the next one of ``objects``) read ahead, or None: the
        import reads it itself (the child could not, or is gone)."""
        if self._out is None:
            return None
        try:
            size, = _LENGTH.unpack(self._read(_LENGTH.size))
            got, prepared = pickle.loads(self._read(size))
        except (OSError, EOFError, ValueError, pickle.UnpicklingError) as e:
            self._give_up(f"its output ended ({e or type(e).__name__})")
            return None
        if got != oid:
            self._give_up(f"it sent {got!r:.200} for {oid!r:.200}")
            return None
        return prepared

    def _read(self, n: int) -> bytes:
        assert self._out is not None
        data = self._out.read(n)
        if len(data) != n:
            raise EOFError("end of the pipe")
        return data

    def _give_up(self, why: str) -> None:
        log.warning("The OCFL reader process stopped: %s; the import reads the "
                    "objects itself", why)
        self.close()

    def close(self) -> None:
        """Stop the child (it only reads: nothing is lost)."""
        proc, out = self._proc, self._out
        self._proc = self._out = None
        if out is not None:
            out.close()
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def run_child(job: dict[str, Any], out: int) -> int:
    """The child: every object of ``job`` read ahead, written to the descriptor ``out`` in order
    (a length, then the pickle of (id, ``Prepared`` or None)); 0 at the end."""
    for oid, obj_dir in job["objects"]:
        try:
            obj = FedoraObject(obj_dir, oid)
            versions = obj.versions()
            obj.read_ahead(versions, budget=job["budget"], inline=job["inline"])
            frame = pickle.dumps((oid, (obj, versions)), pickle.HIGHEST_PROTOCOL)
        except Exception:       # noqa: BLE001 - the import reads it itself, and fails
            frame = pickle.dumps((oid, None), pickle.HIGHEST_PROTOCOL)
        _write_all(out, _LENGTH.pack(len(frame)) + frame)
    return 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def main() -> int:
    job = pickle.loads(sys.stdin.buffer.read())
    out = os.dup(1)
    os.dup2(2, 1)           # a stray print goes to standard error, not into the frames
    try:
        return run_child(job, out)
    except BrokenPipeError:     # the import stopped reading: it is done, or gone
        return 0


if __name__ == "__main__":
    sys.exit(main())
