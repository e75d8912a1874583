"""A real, small file system for disk-full tests: a tmpfs mounted on a temp dir.

Mounting needs root (``CAP_SYS_ADMIN``); where it is not permitted the tests
that use it are skipped, saying why.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def small_filesystem(path: str | os.PathLike, size: str = "3m") -> Iterator[str]:
    """Mount a tmpfs of ``size`` on the new directory ``path``; yield it; unmount."""
    path = os.fspath(path)
    os.makedirs(path)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                              capture_output=True, text=True, check=False)
    except FileNotFoundError:
        pytest.skip("no mount command: cannot make a small file system for a disk-full test")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a {size} tmpfs for a disk-full test (needs root): "
                    f"{done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], capture_output=True, check=False)

