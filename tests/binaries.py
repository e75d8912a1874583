"""Binary content changed behind a store's back, on either backend (files, or
objects in S3): what the fixity, clean-up and store tests need."""
from __future__ import annotations

import os
from typing import Any

from lakesuperior.config import env_names
from lakesuperior.store.binaries import BinaryStore


def read(store: Any, digest: str) -> bytes:
    with store.open(digest) as f:
        return f.read()


def rewrite(store: Any, digest: str, data: bytes) -> None:
    """Put ``data`` where the content of ``digest`` is stored."""
    if isinstance(store, BinaryStore):
        os.chmod(store.path(digest), 0o600)
        with open(store.path(digest), "wb") as f:
            f.write(data)
    else:
        store.client.put_object(Bucket=store.bucket, Key=store.key(digest), Body=data)


def corrupt(store: Any, digest: str) -> None:
    """Change the first byte of stored content."""
    body = read(store, digest)
    rewrite(store, digest, (b"J" if body[:1] != b"J" else b"K") + body[1:])


def remove(store: Any, digest: str) -> None:
    """Remove stored content without the store knowing (as a disk fault would)."""
    if isinstance(store, BinaryStore):
        os.unlink(store.path(digest))
    else:
        store.client.delete_object(Bucket=store.bucket, Key=store.key(digest))


def leftover(store: Any, name: str, data: bytes = b"partial") -> None:
    """A leftover of an interrupted write, where the store keeps them."""
    if isinstance(store, BinaryStore):
        with open(os.path.join(store.root, "tmp", name), "wb") as f:
            f.write(data)
    else:
        store.client.put_object(Bucket=store.bucket, Key=f"{store.prefix}tmp/{name}",
                                Body=data)


def age(store: Any, digest: str, seconds: float) -> None:
    """Make stored content look ``seconds`` old (files only: S3 sets its own times)."""
    path = store.path(digest)
    when = os.stat(path).st_mtime - seconds
    os.utime(path, (when, when))


def lsup_env(keywords: dict[str, Any]) -> dict[str, str]:
    """The ``LSUP_*`` variables that set the ``Config`` keywords ``keywords``
    (the naming rule of ``config.env_names``)."""
    names = {key: name for name, key in env_names().items()}
    return {names[key]: str(value) for key, value in keywords.items()}


def cli_env(repo: Any) -> dict[str, str | None]:
    """The ``LSUP_BINARIES_*`` variables of ``repo``'s binary backend, for a command
    run on its data directory (none for the file store)."""
    cfg = repo.config
    if cfg.binaries_backend != "s3":
        return {}
    keys = ("backend", "s3_endpoint", "s3_bucket", "s3_region", "s3_prefix",
            "s3_access_key_id", "s3_secret_access_key")
    return dict(lsup_env({f"binaries_{k}": getattr(cfg, f"binaries_{k}") for k in keys}))
