"""File-system steps of the admin operations that build a directory aside.

Backup, restore and migrate write into a staging directory beside their
destination (same file system), flush it, and rename it into place only when
it is complete; these are the pieces they share.

A staging directory is named for its owner, ``.DEST.TAG-PID@HOST-XXXXXXXX``, so
that one left by a killed process can be told from one in use: it is *stale*
when it was made on this host by a process that is gone. Directories of other
hosts, and names this code does not make, are never taken for stale.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile

from lakesuperior.store import private

__all__ = ["has_content", "inside", "staging_dir", "stale_staging", "remove_stale_staging",
           "fsync_tree", "promote", "dir_bytes", "unlink"]

#: The tags of staging directories: backup, restore, migrate, OCFL export.
STAGING_TAGS = ("partial", "restoring", "migrating", "exporting")
_STAGING = re.compile(rf"\..+\.(?:{'|'.join(STAGING_TAGS)})-([1-9][0-9]*)@([A-Za-z0-9._-]+)"
                      r"-[a-z0-9_]{8}")


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


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "localhost"


def staging_dir(dest: str, tag: str) -> str:
    """A new empty directory beside ``dest`` (same file system, so it can be
    renamed into place), named for this process (see the module doc); ``tag``
    is one of ``STAGING_TAGS``."""
    if tag not in STAGING_TAGS:
        raise ValueError(f"Unknown staging tag {tag!r}")
    parent = os.path.dirname(dest)
    private.make_dirs(parent)
    return tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.{tag}-{os.getpid()}@{_host()}-",
                            dir=parent)


def _running(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):   # another user's; no pid this code made
        return True
    return True


def stale_staging(parent: str) -> list[str]:
    """The staging directories in ``parent`` left by processes of this host that
    are gone (sorted paths). A running operation's directory is never among them."""
    try:
        entries = sorted(os.scandir(parent), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    host = _host()
    out = []
    for entry in entries:
        m = _STAGING.fullmatch(entry.name)
        if (m is not None and m.group(2) == host and entry.is_dir(follow_symlinks=False)
                and not _running(int(m.group(1)))):
            out.append(entry.path)
    return out


def remove_stale_staging(parent: str, *, dry_run: bool = False) -> list[tuple[str, int]]:
    """Remove (with ``dry_run``, only list) the stale staging directories in
    ``parent``: ``(name, bytes)`` of each."""
    out = []
    for path in stale_staging(parent):
        size = dir_bytes(path)
        if not dry_run:
            shutil.rmtree(path, ignore_errors=True)
            if os.path.lexists(path):
                continue
        out.append((os.path.basename(path), size))
    return out


def fsync_tree(root: str) -> None:
    """Flush every file and directory under ``root`` to disk: one ``sync()`` of the
    file systems (Linux returns once it is done), where a flush per file would cost
    a disk round trip for each of an export's many small files; then ``root``
    itself, for the rename that follows."""
    os.sync()
    fd = os.open(root, os.O_RDONLY)
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
