"""Files and folders only their owner may read: the data directory and all in it.

The data directory holds everything a repository knows: literals of resources
that access control hides, binaries, staged transaction bodies, password hashes
(``users.json``) and the first administrator's password. A file created with
the default mode takes ``0666`` less the umask (``0644`` under the usual
``022``): readable by every local user, whatever the access control says. So
every folder the package makes there is created ``0700`` and every file
``0600``: the umask can only take permissions away, never add them, so these
hold under any umask. ``exposed`` tells which of them another user can reach
(every ``lsup-admin`` command warns).
"""
from __future__ import annotations

import os
import stat

__all__ = ["DIR_MODE", "FILE_MODE", "make_dirs", "open_file", "copy_file", "exposed"]

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_dirs(path: str | os.PathLike[str]) -> None:
    """``os.makedirs(path, exist_ok=True)``, every folder it creates ``0700``
    (``os.makedirs`` gives its ``mode`` to the last one only)."""
    path = os.path.abspath(os.fspath(path))
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise


def open_file(path: str | os.PathLike[str], flags: int) -> int:
    """``os.open(path, flags | O_CREAT | O_CLOEXEC)``, a file it creates ``0600``."""
    return os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)


def exposed(data_dir: str | os.PathLike[str]) -> list[str]:
    """The data directory, and the folders and files directly in it, that a user
    other than the owner may read or enter (group or other permission bits)."""
    root = os.fspath(data_dir)
    out = []
    try:
        entries = [root] + [os.path.join(root, name) for name in sorted(os.listdir(root))]
    except OSError:
        return []
    for path in entries:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if not stat.S_ISLNK(mode) and mode & 0o077:
            out.append(path)
    return out


def copy_file(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
    """Copy a file's bytes into a new ``dest`` created ``0600``."""
    with open(source, "rb") as src, os.fdopen(
            open_file(dest, os.O_WRONLY | os.O_TRUNC), "wb") as out:
        while chunk := src.read(1 << 20):
            out.write(chunk)
