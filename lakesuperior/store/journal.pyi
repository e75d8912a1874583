"""The write transaction's life: its journal, savepoints, growth and commit.

A savepoint is a nested LMDB transaction: ``release`` keeps its writes in the
enclosing transaction, ``rollback`` undoes them (and what the transaction keeps
on the Python side). A full map grows; the journal is replayed, the open
savepoints opened again where they were.
"""
from typing import Any, Literal, Self

from typing_extensions import disjoint_base

from lakesuperior.store.reads import Reader

@disjoint_base
class JournaledTxn(Reader):
    """A write transaction's journal, savepoints, growth and commit."""
    deferred: bool
    def __enter__(self) -> Self: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]: ...
    @property
    def depth(self) -> int:
        """How many savepoints are open (0: none, or the transaction has ended)."""
    def commit(self) -> None:
        """Commit every write (open savepoints released first; growing the map and
        replaying them if it is full); then, unless ``deferred``, make it durable."""
    def abort(self) -> None:
        """End the transaction (its savepoints first); nothing it wrote is kept."""
    def savepoint(self) -> int:
        """Begin a savepoint (a nested LMDB transaction); returns its depth (1: the
        outermost)."""
    def release(self, depth: int) -> None:
        """Keep the writes made since savepoint ``depth`` (ending the savepoints
        inside it) in the enclosing transaction."""
    def rollback(self, depth: int) -> None:
        """Undo every write made since savepoint ``depth`` and end it (and those
        inside it)."""
