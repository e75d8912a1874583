"""What every binary store offers (``BinaryBackend``), and the one the
configuration names (``open_backend``).

Two backends satisfy it: ``store.binaries.BinaryStore`` (content-addressed
files under ``DATA_DIR/ldpnr``) and ``store.s3.S3BinaryStore`` (objects in an
S3 bucket). Everything that uses ``Repository.binaries`` (the model, the
endpoints, fixity, clean-up, stats, backup and restore, OCFL export) goes
through this interface and works on either.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, runtime_checkable

from lakesuperior.store.binaries import BinaryInfo, BinaryStore, Upload
from lakesuperior.store.s3 import S3BinaryStore

if TYPE_CHECKING:
    from lakesuperior.config import Config


@runtime_checkable
class BinaryBackend(Protocol):
    """Content addressed by its digest in ``algorithm``."""

    algorithm: str

    def put(self, stream: Any, *, expected: Mapping[str, str] | None = None,
            max_size: int | None = None) -> BinaryInfo:
        """Store the content of ``stream``; it is whole and durable when this returns.
        A refused or failed write stores nothing."""

    def receive(self, stream: Any, *, algorithms: Iterable[str] = (),
                max_size: int | None = None) -> Upload:
        """Take in ``stream``, hashed (the store's algorithm and ``algorithms``), not
        yet stored: ``put`` of the ``Upload`` stores it, closing it removes it."""

    def delete(self, digest: str) -> bool:
        """Remove a binary; False if there was none."""

    def remove_temp_files(self, min_age: float = 0.0) -> int:
        """Remove leftovers of interrupted writes older than ``min_age`` seconds."""

    def leftovers(self) -> Iterator[tuple[str, int, float]]:
        """(name, size, modification time) of each leftover of an interrupted write."""

    def remove_leftover(self, name: str) -> bool:
        """Remove one of ``leftovers``; False if it was gone."""

    def open(self, digest: str) -> BinaryIO:
        """The content, readable and seekable; ``BinaryNotFoundError`` if absent."""

    def exists(self, digest: str) -> bool:
        """Whether a binary is stored under ``digest``."""

    def __contains__(self, digest: object) -> bool: ...

    def size(self, digest: str) -> int:
        """Length in bytes of a stored binary."""

    def modified(self, digest: str) -> float:
        """When a stored binary was last written (or renewed), as a POSIX time."""

    def __iter__(self) -> Iterator[str]:
        """The digests of all stored binaries."""

    def objects(self) -> Iterator[tuple[str, int, float]]:
        """(digest, size, modification time) of every stored binary, in one listing."""

    def total_size(self) -> int:
        """Bytes used by all stored binaries."""

    def compute(self, digest: str, algorithms: Iterable[str]) -> dict[str, str]:
        """Hex digests of a stored binary, keyed by hashlib name."""

    def verify(self, digest: str) -> bool:
        """Fixity: whether the stored content still hashes to ``digest``."""

    def describe(self) -> str:
        """Where the content is, for messages (no credentials)."""

    def redirect_url(self, digest: str, *, content_type: str | None = None,
                     disposition: str | None = None) -> str | None:
        """Where a client may GET the content itself instead of through the server
        (answered with ``content_type`` and ``disposition``), or None."""


def open_backend(cfg: Config, backend: str | None = None) -> BinaryBackend:
    """The binary store ``cfg`` configures (``binaries.backend``), or ``backend``
    (``file`` or ``s3``) with the rest of ``cfg``'s settings."""
    if (backend or cfg.binaries_backend) == "s3":
        return S3BinaryStore.from_config(cfg)
    return BinaryStore(os.path.join(cfg.data_dir, "ldpnr"), cfg.digest_algorithm,
                       sync=cfg.sync)
