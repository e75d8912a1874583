"""Reading, hashing and writing a stream at once: the pipeline of binary uploads.

The calling thread reads the source in chunks of ``CHUNK`` bytes and hands
each chunk to one thread per digest algorithm and to one thread that writes it
(the *sink*: a file, or a part of an object store upload), so that reading the
network, hashing (``hashlib`` releases the GIL while it hashes more than 2 KiB)
and writing overlap. Each of those threads takes its chunks from a queue of at
most ``DEPTH`` chunks, so the reader is never more than ``DEPTH + 1`` chunks
ahead of the slowest of them: an upload holds at most ``max_buffered(chunk,
depth)`` bytes (``(DEPTH + 2) * CHUNK``, 1.5 MiB) whatever its size.

Content that fits in one chunk is hashed and written in the calling thread: no
thread is started for a small binary.

A failure anywhere (the source raises: the client went away, the body is too
large; a sink or hasher raises: the disk is full) stops the pipeline: the other
threads drop what is queued, are joined, and the first error is raised in the
calling thread. Nothing here removes what a sink wrote: its owner does.
"""
from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from lakesuperior.exceptions import PayloadTooLargeError

#: Bytes per read of the source. Measured (docs/performance.md, "Large uploads"):
#: 256 KiB, 512 KiB and 1 MiB upload at the same speed (SHA-512 runs at full
#: speed from 256 KiB on), and a worker grows least with 256 KiB.
CHUNK = 1 << 18
#: Chunks each hashing or writing thread may have waiting.
DEPTH = 4

Chunk = bytes | memoryview
Read = Callable[[int], Chunk]
Sink = Callable[[Chunk], Any]


class Readable(Protocol):
    """What content is read from: a binary file, a request body."""

    def read(self, size: int = -1, /) -> bytes: ...


def max_buffered(chunk: int = CHUNK, depth: int = DEPTH) -> int:
    """The most bytes one pipeline holds at once: ``depth`` chunks queued for the
    slowest stage, the one it is working on, and the one being read."""
    return (depth + 2) * chunk


@dataclass(frozen=True)
class Result:
    """What went through a pipeline."""

    size: int                 #: bytes read from the source (and written)
    digests: dict[str, str]   #: hashlib name -> hex digest of those bytes


_END = None


class _Stage(threading.Thread):
    """A thread applying ``work`` to each chunk of its bounded queue; after a
    failure it keeps taking chunks (so the reader never waits on it) and drops them."""

    def __init__(self, work: Sink, depth: int, name: str):
        super().__init__(name=name, daemon=True)
        self.work = work
        self.chunks: queue.Queue[Chunk | None] = queue.Queue(maxsize=depth)
        self.error: BaseException | None = None

    def run(self) -> None:
        while (chunk := self.chunks.get()) is not _END:
            if self.error is None:
                try:
                    self.work(chunk)
                except BaseException as e:   # kept, raised in the reading thread
                    self.error = e


def run(read: Read, algorithms: Iterable[str], sink: Sink | None = None, *,
        max_size: int | None = None, chunk: int = CHUNK, depth: int = DEPTH) -> Result:
    """Read ``read(chunk)`` until it returns nothing, hashing every chunk with each
    of ``algorithms`` (hashlib names) and passing it to ``sink`` (if any), at once.

    More than ``max_size`` bytes raise ``PayloadTooLargeError``. The first
    error of the source, a hasher or the sink is raised once every thread has
    stopped; the sink is then given nothing more.
    """
    hashers = {a: hashlib.new(a, usedforsecurity=False) for a in dict.fromkeys(algorithms)}
    works: list[Sink] = [h.update for h in hashers.values()]
    if sink is not None:
        works.append(sink)
    size = 0

    def counted(piece: Chunk) -> Chunk:
        nonlocal size
        size += len(piece)
        if max_size is not None and size > max_size:
            raise PayloadTooLargeError(f"Content is larger than {max_size} bytes")
        return piece

    first = counted(read(chunk))
    second = counted(read(chunk)) if first else b""
    if not second:                       # one chunk at most: no thread
        if first:
            for work in works:
                work(first)
        return Result(size, {a: h.hexdigest() for a, h in hashers.items()})
    stages = [_Stage(work, depth, f"upload-{i}") for i, work in enumerate(works)]
    for stage in stages:
        stage.start()
    pending: list[Chunk] = [second]
    piece, first, second = first, b"", b""     # the reader holds one chunk, two at first
    try:
        while piece:
            for stage in stages:
                stage.chunks.put(piece)
            failed = next((s.error for s in stages if s.error is not None), None)
            if failed is not None:
                raise failed
            piece = pending.pop() if pending else counted(read(chunk))
    finally:
        for stage in stages:
            stage.chunks.put(_END)
        for stage in stages:
            stage.join()
    failed = next((s.error for s in stages if s.error is not None), None)
    if failed is not None:
        raise failed
    return Result(size, {a: h.hexdigest() for a, h in hashers.items()})
