"""The data directory: whether it holds a repository, opening it, creating one."""
from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from lakesuperior.admin.files import has_content
from lakesuperior.config import Config
from lakesuperior.exceptions import AdminError, NoRepositoryError
from lakesuperior.repository import Repository
from lakesuperior.store import private

__all__ = ["store_exists", "has_data", "open_repository", "bootstrap"]


def store_exists(config: Config) -> bool:
    """Whether ``config.data_dir`` holds a quad store (of any format)."""
    return os.path.isfile(os.path.join(config.store_dir, "data.mdb"))


def has_data(config: Config) -> bool:
    """Whether the store or binary directory of ``config`` holds anything (what
    ``bootstrap(wipe=True)`` deletes)."""
    return any(has_content(p) for p in (config.store_dir, config.binary_dir))


def open_repository(config: Config, **overrides: Any) -> Repository:
    """Open the existing repository of ``config``; ``NoRepositoryError`` if there is none.

    A store of another format raises ``StoreFormatError`` (from the store).
    """
    if not store_exists(config):
        raise NoRepositoryError(
            f"No repository in {os.path.abspath(config.data_dir)}: create one with "
            "`lsup-admin bootstrap`, or name the right one with --data-dir or --config")
    return Repository(config=config, **overrides)


def bootstrap(config: Config, *, wipe: bool = False) -> dict[str, Any]:
    """Create a repository (with its root) in ``config.data_dir``.

    If the directory already holds a store or binaries, ``wipe=True`` deletes
    them first (only the ``ldprs`` and ``ldpnr`` subdirectories, nothing else in
    the data directory); without it ``AdminError`` is raised. The deletion
    first renames both directories aside, so an interruption leaves either the
    old repository or none, never half of one.
    """
    data_dir = os.path.abspath(config.data_dir)
    existing = has_data(config)
    if existing and not wipe:
        raise AdminError(f"{data_dir} holds a repository already; wiping it needs an "
                         "explicit confirmation")
    private.make_dirs(data_dir)
    for leftover in os.listdir(data_dir):
        if leftover.startswith(".lsup-wipe-"):
            shutil.rmtree(os.path.join(data_dir, leftover), ignore_errors=True)
    if existing:
        trash = tempfile.mkdtemp(prefix=".lsup-wipe-", dir=data_dir)
        for path in (config.store_dir, config.binary_dir):
            if os.path.lexists(path):
                os.rename(path, os.path.join(trash, os.path.basename(path)))
        shutil.rmtree(trash, ignore_errors=True)
    with Repository(config=config) as repo:
        st = repo.stats()
    return {"data_dir": data_dir, "wiped": existing, "resources": st["resources"]}
