"""File-system steps of the admin operations that build a directory aside.

Backup, restore and migrate write into a staging directory beside their
destination (same file system), flush it, and rename it into place only when
it is complete; these are the pieces they share.
"""
from __future__ import annotations

import os
import tempfile

__all__ = ["has_content", "inside", "staging_dir", "fsync_tree", "promote", "dir_bytes",
           "unlink"]


def has_content(path: str) -> bool:
    """Whether ``path`` is a non-empty directory or a file (False if it does not exist)."""
    try:
        with os.scandir(path) as it:
            return any(True for _ in it)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        return True


def inside(path: str, parent: str) -> bool:
    """Whether ``path`` is ``parent`` or below it (symbolic links resolved)."""
    path, parent = os.path.realpath(path), os.path.realpath(parent)
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def staging_dir(dest: str, tag: str) -> str:
    """A new empty directory beside ``dest`` (same file system, so it can be
    renamed into place)."""
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    return tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.{tag}-", dir=parent)


def fsync_tree(root: str) -> None:
    """Flush every file and directory under ``root`` to disk."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(dirpath, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def promote(staging: str, dest: str) -> None:
    """Make the finished ``staging`` directory ``dest``: flush it to disk, then
    rename it over ``dest`` (which must not exist, or be an empty directory)."""
    fsync_tree(staging)
    if os.path.isdir(dest):
        os.rmdir(dest)
    os.rename(staging, dest)


def dir_bytes(path: str) -> int:
    """Bytes allocated on disk under ``path`` (sparse files count what they use)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(dirpath, name)).st_blocks * 512
            except FileNotFoundError:
                continue
    return total


def unlink(path: str) -> None:
    """Remove a file if it exists."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
