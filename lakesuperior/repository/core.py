"""What the method modules of ``Repository`` use of it (``access_control``, ``feed``,
``maintenance``, ``querying``: functions bound as methods in its class body, typed against
this protocol so that they need not import the class)."""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

from lakesuperior.auth.access import AclState
from lakesuperior.config import Config
from lakesuperior.model.context import Context, Settings, WriteContext
from lakesuperior.store.backends import BinaryBackend
from lakesuperior.store.quadstore import QuadStore

__all__ = ["Repository"]

_T = TypeVar("_T")


class Repository(Protocol):
    """The members of ``lakesuperior.repository.Repository`` its method modules use."""

    config: Config
    settings: Settings
    acl_state: AclState
    store: QuadStore
    binaries: BinaryBackend

    def snapshot(self, base_uri: str | None = None) -> AbstractContextManager[Context]: ...

    def _write(self, fn: Callable[[WriteContext], _T], base_uri: str | None = None) -> _T: ...
