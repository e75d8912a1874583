"""Lakesuperior: an embeddable Linked Data Platform repository on LMDB.

``from lakesuperior import Repository, Config`` gives the Python API. Nothing
is read or opened at import time.
"""
from lakesuperior.config import Config
from lakesuperior.version import __version__

__all__ = ["Repository", "Config", "__version__"]


def __getattr__(name: str):
    # The repository imports the compiled store: load it only when asked for.
    if name == "Repository":
        from lakesuperior.repository import Repository
        return Repository
    raise AttributeError(f"module 'lakesuperior' has no attribute {name!r}")
