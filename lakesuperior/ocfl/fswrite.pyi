"""Directories and files written in batches, without holding the GIL."""

MKDIR: int
PUT: int
REPLACE: int

def write_batch(ops: list[tuple[int, str, bytes]]) -> None:
    """Do every ``(kind, path, data)`` of ``ops`` in order, the GIL released;
    ``OSError`` naming the path for the first that fails (nothing after it is done)."""
