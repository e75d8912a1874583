"""Each target's checkpoint and status, in the data directory.

One JSON file per target in ``DATA_DIR/replicas/`` (named for its URL): the
last feed seq the target acknowledged (``seq``), whether it was ever filled
from the repository's state (``filled``: a reindex finished), the filter it was
filled with (``readable_by``), and what the last round saw (``applied_at``,
``last_error``). Each save writes a new file, flushes it and renames it over the
old one (then flushes the directory): a kill at any moment leaves the old
checkpoint or the new one, never a torn one. A lock file beside it
(``.lock``) keeps one process syncing a target at a time.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lakesuperior.auth.users import write_private
from lakesuperior.exceptions import StoreError
from lakesuperior.store import private
from lakesuperior.store.background import LeaderLock

__all__ = ["STATE_DIR", "TargetState", "TargetLock", "load", "save", "all_states", "now_iso"]

#: The folder of the checkpoints, in the data directory.
STATE_DIR = "replicas"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class TargetState:
    """What is known of one target (see the module doc)."""

    target: str
    protocol: str
    seq: int = 0
    filled: bool = False
    readable_by: str = ""
    applied_at: str | None = None
    last_error: str = ""
    last_error_at: str | None = None

    def failed(self, message: str) -> None:
        self.last_error, self.last_error_at = message, now_iso()


def _key(target: str) -> str:
    """A file name for a target URL: readable part and a hash (two URLs never share one)."""
    readable = re.sub(r"[^A-Za-z0-9]+", "_", target.split("://", 1)[-1]).strip("_")[:60]
    return f"{readable}-{hashlib.sha256(target.encode()).hexdigest()[:12]}"


def _dir(data_dir: str) -> str:
    return os.path.join(data_dir, STATE_DIR)


def _path(data_dir: str, target: str) -> str:
    return os.path.join(_dir(data_dir), _key(target) + ".json")


def load(data_dir: str, target: str) -> TargetState | None:
    """The saved state of ``target`` (None: never synced)."""
    return _read(_path(data_dir, target))


def _read(path: str) -> TargetState | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data: dict[str, Any] = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise StoreError(f"The replica checkpoint {path} cannot be read: {e}") from e
    names = {f.name for f in dataclasses.fields(TargetState)}
    try:
        return TargetState(**{k: v for k, v in data.items() if k in names})
    except TypeError as e:
        raise StoreError(f"The replica checkpoint {path} is incomplete: {e}") from e


def save(data_dir: str, state: TargetState) -> None:
    """Write ``state`` atomically and durably (see the module doc)."""
    private.make_dirs(_dir(data_dir))
    data = json.dumps(dataclasses.asdict(state), indent=1, sort_keys=True) + "\n"
    write_private(_path(data_dir, state.target), data.encode("utf-8"))


def all_states(data_dir: str) -> list[TargetState]:
    """Every target synced from this data directory, by URL."""
    try:
        names = sorted(n for n in os.listdir(_dir(data_dir)) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    found = [_read(os.path.join(_dir(data_dir), n)) for n in names]
    return sorted((s for s in found if s is not None), key=lambda s: s.target)


class TargetLock(LeaderLock):
    """The lock that keeps one process syncing ``target``."""

    def __init__(self, data_dir: str, target: str):
        private.make_dirs(_dir(data_dir))
        super().__init__(_dir(data_dir), _key(target) + ".lock")

    def in_use(self) -> bool:
        """Whether another process (or another lock object) holds it now."""
        if self.held:
            return False
        if self.acquire():
            self.release()
            return False
        return True
