"""Content-addressed files for LDP-NR content.

A binary is stored once, under the hex digest of its bytes in the store's
algorithm, in two levels of fan-out directories::

    root/ab/cd/abcd...      (the full hex digest)
    root/tmp/put-*          (writes in progress; leftovers of killed writes)

A write streams into a temporary file in ``root/tmp`` (same file system),
hashes while it writes, fsyncs, then renames the file into place and fsyncs
the directory: a reader sees either nothing or the whole content. Fan-out
directories are never removed, so a rename never races a ``rmdir``. A full
disk (``ENOSPC``, ``EDQUOT``) while writing is ``DiskFullError``, and the
temporary file is removed: nothing is stored.
"""
from __future__ import annotations

import base64
import binascii
import errno
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import BinaryIO

from lakesuperior.config import defaults
from lakesuperior.exceptions import (
    BinaryNotFoundError,
    ChecksumValidationError,
    DiskFullError,
    InvalidDigestError,
    PayloadTooLargeError,
    UnsupportedDigestError,
)
from lakesuperior.http import digests
from lakesuperior.store import private

CHUNK_SIZE = 1 << 20
_TMP_DIR = "tmp"
_HEX = re.compile(r"[0-9a-f]+")
_FAN = re.compile(r"[0-9a-f]{2}")


def normalize_algorithm(name: str) -> str:
    """The hashlib name (``sha512``, ``sha256``, ``sha1``, ``md5``) of an algorithm.

    Accepts RFC 3230 / HTTP spellings in any case: ``SHA-256``, ``sha-512``,
    ``sha`` and ``SHA-1`` (SHA-1), ``MD5``. Raises ``UnsupportedDigestError``.
    """
    key = name.strip().lower().replace("-", "").replace("_", "") if isinstance(name, str) else ""
    key = "sha1" if key == "sha" else key
    if key not in digests.ALGORITHMS:
        raise UnsupportedDigestError(f"Unsupported digest algorithm: {name!r}")
    return key


def is_supported(name: str) -> bool:
    """Whether ``normalize_algorithm(name)`` would succeed."""
    try:
        normalize_algorithm(name)
    except UnsupportedDigestError:
        return False
    return True


def normalize_digest(algorithm: str, value: str) -> str:
    """A digest given in hex or base64 (RFC 3230 ``Digest`` values) as lowercase hex.

    The encoding is told apart by length, which differs for every supported
    algorithm. Raises ``InvalidDigestError`` or ``UnsupportedDigestError``.
    """
    algo = normalize_algorithm(algorithm)
    size = _new_hash(algo).digest_size
    text = value.strip() if isinstance(value, str) else ""
    if len(text) == 2 * size and _HEX.fullmatch(text.lower()):
        return text.lower()
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise InvalidDigestError(f"Not a hex or base64 {algo} digest: {value!r}")
    return raw.hex()


@dataclass(frozen=True)
class BinaryInfo:
    """What ``BinaryStore.put`` stored."""

    digest: str  #: hex digest in the store's algorithm: the binary's address
    algorithm: str  #: the store's algorithm (hashlib name)
    size: int  #: length in bytes
    digests: dict[str, str] = field(default_factory=dict, hash=False)
    """Every digest computed while writing: hashlib name -> hex."""


class BinaryStore:
    """Files addressed by the digest of their content, under ``root``."""

    def __init__(self, root: str | os.PathLike, algorithm: str | None = None):
        self.root = os.fspath(root)
        self.algorithm = normalize_algorithm(algorithm or defaults()["digest_algorithm"])
        self._hex_len = 2 * _new_hash(self.algorithm).digest_size
        self._tmp = os.path.join(self.root, _TMP_DIR)
        private.make_dirs(self._tmp)

    def __repr__(self) -> str:
        return f"BinaryStore({self.root!r}, {self.algorithm!r})"

    # -- writing --------------------------------------------------------------

    def put(self, stream: BinaryIO | bytes, *, expected: Mapping[str, str] | None = None,
            max_size: int | None = None) -> BinaryInfo:
        """Store the content of ``stream`` (a readable binary file or bytes).

        ``expected`` maps algorithm names to client-supplied digests (hex or
        base64); a mismatch raises ``ChecksumValidationError``. More than
        ``max_size`` bytes raise ``PayloadTooLargeError``; no room on the disk
        raises ``DiskFullError``. Either way nothing is stored. Storing the same
        content again is harmless, and cheap: the file stored before (made durable
        then) is kept, only its time renewed (``cleanup``'s age), and nothing is synced.
        """
        checks = [(normalize_algorithm(a), normalize_digest(a, v), a)
                  for a, v in (expected or {}).items()]
        names = dict.fromkeys([self.algorithm, *(c[0] for c in checks)])
        hashers = {a: _new_hash(a) for a in names}
        try:
            fd, tmp = tempfile.mkstemp(prefix="put-", dir=self._tmp)
        except OSError as e:
            if e.errno in NO_ROOM:
                raise _disk_full(e, 0) from e
            raise
        size = 0
        try:
            with os.fdopen(fd, "wb") as f:
                for chunk in _chunks(stream):
                    size += len(chunk)
                    if max_size is not None and size > max_size:
                        raise PayloadTooLargeError(f"Content is larger than {max_size} bytes")
                    for h in hashers.values():
                        h.update(chunk)
                    f.write(chunk)
                f.flush()
                digests = {a: h.hexdigest() for a, h in hashers.items()}
                for algo, want, name in checks:
                    if digests[algo] != want:
                        raise ChecksumValidationError(msg=(
                            f"{name} digest mismatch: expected {want}, got {digests[algo]}"))
                digest = digests[self.algorithm]
                final = self.path(digest)
                if _renew(final):
                    _unlink(tmp)
                    return BinaryInfo(digest, self.algorithm, size, digests)
                os.fsync(f.fileno())
            self._makedirs(os.path.dirname(final))
            os.replace(tmp, final)
            _fsync_dir(os.path.dirname(final))
        except OSError as e:
            _unlink(tmp)
            if e.errno in NO_ROOM:
                raise _disk_full(e, size) from e
            raise
        except BaseException:
            _unlink(tmp)
            raise
        return BinaryInfo(digest, self.algorithm, size, digests)

    def delete(self, digest: str) -> bool:
        """Remove a binary; False if there was none."""
        return _unlink(self.path(digest))

    def remove_temp_files(self, min_age: float = 0.0) -> int:
        """Remove leftovers of interrupted writes older than ``min_age`` seconds.

        With the default age of 0, call it only when no ``put`` is running
        (e.g. at start-up): it would also remove a write in progress.
        """
        limit = time.time() - min_age
        removed = 0
        with os.scandir(self._tmp) as entries:
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime <= limit:
                        removed += _unlink(entry.path)
                except FileNotFoundError:
                    continue
        return removed

    # -- reading --------------------------------------------------------------

    def path(self, digest: str) -> str:
        """The file path of a digest (whether stored or not).

        Raises ``InvalidDigestError`` (a ``ValueError``) unless ``digest`` is a
        lowercase hex digest of the store's algorithm: no path tricks.
        """
        if not (isinstance(digest, str) and len(digest) == self._hex_len
                and _HEX.fullmatch(digest)):
            raise InvalidDigestError(f"Not a {self.algorithm} hex digest: {digest!r}")
        return os.path.join(self.root, digest[:2], digest[2:4], digest)

    def open(self, digest: str) -> BinaryIO:
        """The stored content, open for reading; the caller closes it."""
        try:
            return open(self.path(digest), "rb")
        except FileNotFoundError:
            raise BinaryNotFoundError(f"No binary with digest {digest}") from None

    def exists(self, digest: str) -> bool:
        """Whether a binary is stored under ``digest`` (which must be valid)."""
        return os.path.isfile(self.path(digest))

    def __contains__(self, digest: object) -> bool:
        try:
            return self.exists(digest)  # type: ignore[arg-type]
        except InvalidDigestError:
            return False

    def size(self, digest: str) -> int:
        """Length in bytes of a stored binary."""
        try:
            return os.stat(self.path(digest)).st_size
        except FileNotFoundError:
            raise BinaryNotFoundError(f"No binary with digest {digest}") from None

    def __iter__(self) -> Iterator[str]:
        """The digests of all stored binaries."""
        for digest, _ in self._entries():
            yield digest

    def total_size(self) -> int:
        """Bytes used by all stored binaries."""
        total = 0
        for _, entry in self._entries():
            try:
                total += entry.stat().st_size
            except FileNotFoundError:  # deleted meanwhile
                continue
        return total

    def compute(self, digest: str, algorithms: Iterable[str]) -> dict[str, str]:
        """Hex digests of a stored binary, keyed by hashlib name (for ``Want-Digest``)."""
        names = dict.fromkeys(normalize_algorithm(a) for a in algorithms)
        hashers = {a: _new_hash(a) for a in names}
        with self.open(digest) as f:
            while chunk := f.read(CHUNK_SIZE):
                for h in hashers.values():
                    h.update(chunk)
        return {a: h.hexdigest() for a, h in hashers.items()}

    def verify(self, digest: str) -> bool:
        """Fixity check: whether the stored content still hashes to ``digest``."""
        return self.compute(digest, [self.algorithm])[self.algorithm] == digest

    # -- helpers --------------------------------------------------------------

    def _entries(self) -> Iterator[tuple[str, os.DirEntry]]:
        for top in _subdirs(self.root):
            for mid in _subdirs(top.path):
                prefix = top.name + mid.name
                with os.scandir(mid.path) as files:
                    found = sorted(files, key=lambda e: e.name)
                for entry in found:
                    name = entry.name
                    if (len(name) == self._hex_len and name.startswith(prefix)
                            and _HEX.fullmatch(name) and entry.is_file(follow_symlinks=False)):
                        yield name, entry

    def _makedirs(self, leaf: str) -> None:
        """Create the two fan-out levels, fsyncing each parent that changed."""
        mid = os.path.dirname(leaf)
        for parent, child in ((self.root, mid), (mid, leaf)):
            try:
                os.mkdir(child, private.DIR_MODE)
            except FileExistsError:
                continue
            _fsync_dir(parent)


#: errno values that mean the file system has no room (left, or for this user).
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT})


def _disk_full(error: OSError, written: int) -> DiskFullError:
    """The ``DiskFullError`` for an ``OSError`` whose errno is in ``NO_ROOM``."""
    what = "over its quota" if error.errno == errno.EDQUOT else "full"
    return DiskFullError(f"Insufficient storage: the disk holding the binary store is {what} "
                         f"(no room after {written} bytes of the content); nothing was stored")


def _new_hash(algorithm: str) -> hashlib._Hash:
    return hashlib.new(algorithm, usedforsecurity=False)


def _chunks(stream: BinaryIO | bytes) -> Iterator[bytes | memoryview]:
    if isinstance(stream, (bytes, bytearray, memoryview)):
        view = memoryview(stream).cast("B")
        for start in range(0, len(view), CHUNK_SIZE):
            yield view[start:start + CHUNK_SIZE]
        return
    while chunk := stream.read(CHUNK_SIZE):
        yield chunk


def _subdirs(path: str) -> list[os.DirEntry]:
    """Fan-out directories (two hex digits) under ``path``, sorted."""
    with os.scandir(path) as entries:
        found = [e for e in entries if _FAN.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    return sorted(found, key=lambda e: e.name)


def _fsync_dir(path: str) -> None:
    """Make a rename or creation in ``path`` durable (POSIX; a no-op elsewhere)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def _renew(path: str) -> bool:
    """Whether the file ``path`` exists (content stored before: durable since its
    own ``put``); its modification time renewed if so."""
    try:
        os.utime(path)
    except FileNotFoundError:
        return False
    return True
