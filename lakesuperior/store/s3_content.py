"""The content of an S3 write as it is read: its parts, its digests, and the
window of a stream that ``PutObject`` sends (``store/s3.py``)."""
from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator, Mapping
from typing import Any

from lakesuperior.exceptions import (
    ChecksumValidationError,
    ContentChangedError,
    PayloadTooLargeError,
)
from lakesuperior.store import pipeline
from lakesuperior.store.binaries import normalize_algorithm, normalize_digest, reader


class Sized(io.RawIOBase):
    """A readable, seekable stream of ``size`` bytes, at ``_pos``."""

    size = 0
    _pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def _position(self, offset: int, whence: int) -> int:
        return {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence] + offset


class Hashing:
    """The digests of content seen part by part: the store's ``algorithm`` and each
    of ``expected`` (algorithm -> the client's digest, checked by ``check``)."""

    def __init__(self, algorithm: str | None, expected: Mapping[str, str] | None) -> None:
        self.checks = [(normalize_algorithm(a), normalize_digest(a, v) if v else "", a)
                       for a, v in (expected or {}).items()]
        names = dict.fromkeys([*([algorithm] if algorithm else []),
                               *(c[0] for c in self.checks)])
        self.hashers = {a: hashlib.new(a, usedforsecurity=False) for a in names}
        self.size = 0

    def count(self, data: bytes | bytearray | memoryview, max_size: int | None) -> None:
        """Count bytes read: more than ``max_size`` raise ``PayloadTooLargeError``."""
        self.size += len(data)
        if max_size is not None and self.size > max_size:
            raise PayloadTooLargeError(f"Content is larger than {max_size} bytes")

    def update(self, data: bytes | bytearray | memoryview) -> None:
        for h in self.hashers.values():
            h.update(data)

    def expected(self, algorithm: str) -> str | None:
        """The client's digest in ``algorithm`` (hex), if it gave one."""
        return next((want for algo, want, _name in self.checks if algo == algorithm and want),
                    None)

    def hexdigests(self) -> dict[str, str]:
        return {a: h.hexdigest() for a, h in self.hashers.items()}

    def check(self, digests: dict[str, str] | None = None) -> dict[str, str]:
        """The digests (these, or those computed), each checked against the client's."""
        digests = self.hexdigests() if digests is None else digests
        for algo, want, name in self.checks:
            if digests[algo] != want:
                raise ChecksumValidationError(
                    msg=f"{name} digest mismatch: expected {want}, got {digests[algo]}")
        return digests


def changed() -> ContentChangedError:
    return ContentChangedError("The content changed while it was being stored (it was "
                               "read twice): nothing was stored")


class Window(Sized):
    """``size`` bytes of ``stream`` from ``start``, as a file boto3 sends (and seeks
    back in to send again); a stream that ends sooner is ``ContentChangedError``."""

    def __init__(self, stream: Any, start: int, size: int):
        super().__init__()
        self._stream, self._start, self.size = stream, start, size
        self._read: pipeline.Read = reader(stream)
        self.seek(0)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        pos = self._position(offset, whence)
        if isinstance(self._stream, bytes):
            self._read = reader(memoryview(self._stream)[pos:])
        else:
            self._stream.seek(self._start + pos)
        self._pos = pos
        return pos

    def read(self, size: int = -1) -> bytes:
        left = self.size - self._pos
        size = left if size is None or size < 0 else min(size, left)
        data = bytes(self._read(size)) if size else b""
        if len(data) < size:
            raise changed()
        self._pos += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def start_of(stream: Any) -> int | None:
    """Where ``stream`` can be read again from: 0 for ``bytes``, the position of a
    seekable file; None if it cannot be read twice."""
    if isinstance(stream, bytes):
        return 0
    try:
        return int(stream.tell()) if stream.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None


def parts(stream: Any, size: int, hashing: Hashing, max_size: int | None
           ) -> Iterator[bytes | bytearray]:
    """``stream`` in parts of ``size`` bytes (the last shorter: a part shorter than
    ``size`` is the last one), each piece counted as it is read, so that a body
    over ``max_size`` stops the reading there (the caller hashes the parts).
    Content given in memory comes in ``bytes`` parts (boto3 sends no memoryview)."""
    if isinstance(stream, (bytes, bytearray, memoryview)):
        view = memoryview(stream).cast("B")
        for start in range(0, max(len(view), 1), size):
            hashing.count(view[start:start + size], max_size)
            yield bytes(view[start:start + size])
        return
    while True:
        part = bytearray()
        while len(part) < size:
            chunk = stream.read(min(size - len(part), 1 << 20))
            if not chunk:
                break
            hashing.count(chunk, max_size)
            part += chunk
        yield part
        if len(part) < size:
            return
