"""The graph record: one LMDB value with a graph's triples and local terms.

``Record`` is a read-only view; records are encoded by the quad store.
"""
from typing import Self

from typing_extensions import disjoint_base

def upgrade_record_v2(data: bytes) -> bytes:
    """A format-2 graph record re-encoded in the current format."""

@disjoint_base
class Record:
    data: bytes
    n_terms: int
    n_triples: int
    n_iris: int
    n_subjects: int
    def __new__(cls, data: bytes) -> Self: ...
    def term_at(self, i: int) -> str | None:
        """The canonical string of local term ``i`` (None for an IRI)."""
    def local_terms(self) -> dict[int, bytes]:
        """``{id: utf8 bytes}`` of the local terms."""
    def triple_ids(self) -> list[tuple[int, int, int]]:
        """All (s, p, o) id triples."""
    def triple_ids_for(self, s: int, p: int = 0) -> list[tuple[int, int, int]]:
        """The id triples with subject ``s`` (and predicate ``p`` unless 0)."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> tuple[int, int, int]:
        """The ``i``-th (s, p, o) id triple, in id order."""
