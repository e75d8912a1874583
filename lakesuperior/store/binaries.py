"""Content-addressed files for LDP-NR content.

A binary is stored once, under the hex digest of its bytes in the store's
algorithm, in two levels of fan-out directories::

    root/ab/cd/abcd...      (the full hex digest)
    root/tmp/put-*          (writes in progress; leftovers of killed writes)

A write streams into a temporary file in ``root/tmp`` (same file system),
hashes while it writes, fsyncs, then renames the file into place and fsyncs
the directory: a reader sees either nothing or the whole content. A store
opened with ``sync=False`` (``store.sync: false``) does no fsync at all: a
machine crash may lose the last binaries written, as it may lose the store's
last commits. Fan-out directories are never removed, so a rename never races
a ``rmdir``. A full disk (``ENOSPC``, ``EDQUOT``) while writing is
``DiskFullError``, and the temporary file is removed: nothing is stored.
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
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
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
from lakesuperior.store import pipeline, private

CHUNK_SIZE = pipeline.CHUNK
#: Bytes written between two starts of their write-back to the disk (measured:
#: docs/performance.md, "Large uploads").
WRITEBACK = 32 << 20
_FADVISE = hasattr(os, "posix_fadvise")
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


class Upload:
    """Content received into a store's temporary folder (``BinaryStore.receive``),
    hashed, not yet stored: ``BinaryStore.put`` stores it; leaving its ``with``
    block, or ``discard``, removes it if it was not. It reads as a binary file
    of its content (from the start), so it can stand for the stream it came from."""

    def __init__(self, store: BinaryStore, path: str, size: int, digests: dict[str, str],
                 synced: bool):
        self.store = store
        self.size = size
        self.digests = digests   #: hashlib name -> hex digest, computed while received
        self.synced = synced     #: whether the temporary file was synced to disk
        self._path: str | None = path
        self._file: BinaryIO | None = None

    def __repr__(self) -> str:
        return f"Upload({self._path!r}, {self.size} bytes)"

    def hexdigests(self, algorithms: Iterable[str]) -> dict[str, str]:
        """The digests received, with those of ``algorithms`` (hashlib names) not
        computed then computed now, from the temporary file."""
        missing = [a for a in algorithms if a not in self.digests]
        if missing:
            with open(self._live(), "rb") as f:
                self.digests.update(pipeline.run(f.read, missing).digests)
        return self.digests

    def read(self, size: int = -1) -> bytes:
        """The content, as ``BinaryIO.read``."""
        if self._file is None:
            self._file = open(self._live(), "rb")
        return self._file.read(size)

    def take(self) -> str:
        """The temporary file's path, now the caller's to move or remove."""
        path = self._live()
        self._close_file()
        self._path = None
        return path

    def discard(self) -> None:
        """Remove the temporary file (if ``put`` did not take it)."""
        self._close_file()
        if self._path is not None:
            _unlink(self._path)
            self._path = None

    def close(self) -> None:
        """``discard`` (an upload is closed as the stream it stands for)."""
        self.discard()

    def __enter__(self) -> Upload:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def _live(self) -> str:
        if self._path is None:
            raise ValueError("This upload was stored or discarded")
        return self._path

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class BinaryStore:
    """Files addressed by the digest of their content, under ``root``."""

    def __init__(self, root: str | os.PathLike, algorithm: str | None = None, *,
                 sync: bool = True):
        self.root = os.fspath(root)
        self.algorithm = normalize_algorithm(algorithm or defaults()["digest_algorithm"])
        #: Whether a stored binary is flushed to disk (file and directory) before
        #: ``put`` returns (``store.sync``).
        self.sync = sync
        self._hex_len = 2 * _new_hash(self.algorithm).digest_size
        self._tmp = os.path.join(self.root, _TMP_DIR)
        private.make_dirs(self._tmp)

    def __repr__(self) -> str:
        return f"BinaryStore({self.root!r}, {self.algorithm!r})"

    # -- writing --------------------------------------------------------------

    def receive(self, stream: pipeline.Readable | bytes, *, algorithms: Iterable[str] = (),
                max_size: int | None = None) -> Upload:
        """Read ``stream`` (a readable binary file or bytes) into a temporary file of
        the store, hashing it in the store's algorithm and ``algorithms`` as it is
        written (``pipeline``: reading, hashing and writing overlap), and sync it
        (with ``sync``) unless the store holds that content already. ``put``
        stores the ``Upload`` (a rename); leaving its ``with`` block without doing
        so removes it.

        So a request's body is received before any write lock is taken, and
        stored under it at the cost of a rename. More than ``max_size`` bytes raise
        ``PayloadTooLargeError``, no room on the disk ``DiskFullError``; on any
        error the temporary file is removed.
        """
        names = [self.algorithm, *(normalize_algorithm(a) for a in algorithms)]
        try:
            fd, tmp = tempfile.mkstemp(prefix="put-", dir=self._tmp)
        except OSError as e:
            if e.errno in NO_ROOM:
                raise _disk_full(e, 0) from e
            raise
        sink = _FileSink(fd)
        with _removed_on_failure(tmp, lambda: sink.written):
            try:
                result = pipeline.run(reader(stream), names, sink.write, max_size=max_size)
                synced = self.sync and not os.path.exists(
                    self.path(result.digests[self.algorithm]))
                if synced:
                    os.fsync(fd)
            finally:
                os.close(fd)
        return Upload(self, tmp, result.size, result.digests, synced)

    def put(self, stream: pipeline.Readable | bytes | Upload, *,
            expected: Mapping[str, str] | None = None,
            max_size: int | None = None) -> BinaryInfo:
        """Store the content of ``stream`` (a readable binary file, bytes, or an
        ``Upload`` of this store's ``receive``).

        ``expected`` maps algorithm names to client-supplied digests (hex or
        base64); a mismatch raises ``ChecksumValidationError``. More than
        ``max_size`` bytes raise ``PayloadTooLargeError``; no room on the disk
        raises ``DiskFullError``. Either way nothing is stored (an ``Upload`` is
        removed). Storing the same content again is harmless, and cheap: the file
        stored before (made durable then) is kept, only its time renewed
        (``cleanup``'s age), and nothing is synced.
        """
        checks = [(normalize_algorithm(a), normalize_digest(a, v), a)
                  for a, v in (expected or {}).items()]
        if isinstance(stream, Upload):
            if stream.store is not self:
                raise ValueError(f"{stream!r} was received by another binary store")
            upload = stream
            if max_size is not None and upload.size > max_size:
                upload.discard()
                raise PayloadTooLargeError(f"Content is larger than {max_size} bytes")
        else:
            upload = self.receive(stream, algorithms=[c[0] for c in checks], max_size=max_size)
        with upload:
            digests = upload.hexdigests(c[0] for c in checks)
            for algo, want, name in checks:
                if digests[algo] != want:
                    raise ChecksumValidationError(msg=(
                        f"{name} digest mismatch: expected {want}, got {digests[algo]}"))
            return self._commit(upload, digests)

    def _commit(self, upload: Upload, digests: dict[str, str]) -> BinaryInfo:
        """Move a received upload into place (synced first if ``receive`` did not),
        or keep the file already there."""
        path = upload.take()
        digest = digests[self.algorithm]
        final = self.path(digest)
        info = BinaryInfo(digest, self.algorithm, upload.size, digests)
        with _removed_on_failure(path, lambda: upload.size):
            if _renew(final):
                _unlink(path)
                return info
            if self.sync and not upload.synced:   # it was stored when it was received
                _fsync_file(path)
            try:
                os.replace(path, final)
            except FileNotFoundError:   # its fan-out directories are not there yet
                self._makedirs(os.path.dirname(final))
                os.replace(path, final)
            if self.sync:
                _fsync_dir(os.path.dirname(final))
        return info

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

    def leftovers(self) -> Iterator[tuple[str, int, float]]:
        """(name, size, modification time) of each leftover of an interrupted write."""
        with os.scandir(self._tmp) as entries:
            found = sorted(entries, key=lambda e: e.name)
        for entry in found:
            try:
                if entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    yield entry.name, st.st_size, st.st_mtime
            except FileNotFoundError:
                continue

    def remove_leftover(self, name: str) -> bool:
        """Remove one of ``leftovers``; False if it was gone."""
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise ValueError(f"Not a leftover's name: {name!r}")
        return _unlink(os.path.join(self._tmp, name))

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

    def modified(self, digest: str) -> float:
        """When a stored binary was written (or last stored again), as a POSIX time."""
        try:
            return os.stat(self.path(digest)).st_mtime
        except FileNotFoundError:
            raise BinaryNotFoundError(f"No binary with digest {digest}") from None

    def describe(self) -> str:
        """Where the content is, for messages."""
        return f"the files under {self.root}"

    def redirect_url(self, digest: str, *, content_type: str | None = None,
                     disposition: str | None = None) -> str | None:
        """None: files are served by the server itself (``sendfile``)."""
        return None

    def __iter__(self) -> Iterator[str]:
        """The digests of all stored binaries."""
        for digest, _ in self._entries():
            yield digest

    def objects(self) -> Iterator[tuple[str, int, float]]:
        """(digest, size, modification time) of every stored binary."""
        for digest, entry in self._entries():
            try:
                st = entry.stat()
            except FileNotFoundError:  # deleted meanwhile
                continue
            yield digest, st.st_size, st.st_mtime

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
        names = [normalize_algorithm(a) for a in algorithms]
        with self.open(digest) as f:
            return pipeline.run(f.read, names).digests

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
        """Create the two fan-out levels, fsyncing each parent that changed (with
        ``sync``)."""
        mid = os.path.dirname(leaf)
        for parent, child in ((self.root, mid), (mid, leaf)):
            try:
                os.mkdir(child, private.DIR_MODE)
            except FileExistsError:
                continue
            if self.sync:
                _fsync_dir(parent)


#: errno values that mean the file system has no room (left, or for this user).
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT})


@contextmanager
def _removed_on_failure(path: str, written: Callable[[], int]) -> Iterator[None]:
    """Remove the file ``path`` if the block fails; no room on the disk is raised
    as ``DiskFullError`` (``written()``: the bytes written by then)."""
    try:
        yield
    except OSError as e:
        _unlink(path)
        if e.errno in NO_ROOM:
            raise _disk_full(e, written()) from e
        raise
    except BaseException:
        _unlink(path)
        raise


def _disk_full(error: OSError, written: int) -> DiskFullError:
    """The ``DiskFullError`` for an ``OSError`` whose errno is in ``NO_ROOM``."""
    what = "over its quota" if error.errno == errno.EDQUOT else "full"
    return DiskFullError(f"Insufficient storage: the disk holding the binary store is {what} "
                         f"(no room after {written} bytes of the content); nothing was stored")


def _new_hash(algorithm: str) -> hashlib._Hash:
    return hashlib.new(algorithm, usedforsecurity=False)


def reader(stream: pipeline.Readable | bytes | bytearray | memoryview) -> pipeline.Read:
    """A ``read(size)`` of ``stream``: a file's own, or slices of bytes."""
    if not isinstance(stream, (bytes, bytearray, memoryview)):
        return stream.read
    view = memoryview(stream).cast("B")
    pos = 0

    def read(size: int) -> memoryview:
        nonlocal pos
        piece = view[pos:pos + size]
        pos += len(piece)
        return piece
    return read


class _FileSink:
    """Writes chunks to a file descriptor, and starts writing them back to the disk
    every ``WRITEBACK`` bytes (``posix_fadvise`` ``DONTNEED``: asynchronous), so the
    final ``fsync`` does not find the whole content still in memory."""

    def __init__(self, fd: int):
        self.fd = fd
        self.written = 0
        self._flushed = 0

    def write(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        self.written += len(data)
        if self.written - self._flushed >= WRITEBACK and _FADVISE:
            os.posix_fadvise(self.fd, self._flushed, self.written - self._flushed,
                             os.POSIX_FADV_DONTNEED)
            self._flushed = self.written


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


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
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
