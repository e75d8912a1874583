"""Reading the store: the read API (``Reader``) and the read snapshot (``ReadTxn``).

``match`` streams: the iterator holds the transaction (and its snapshot) and reads
as it goes; once the transaction ends it raises ``StoreError``.
"""
from collections.abc import Iterator
from typing import Any, Literal

from typing_extensions import disjoint_base

from lakesuperior.store.txn import Txn

OUTBOX_SEQ: bytes
OUTBOX_PUBLISHED: bytes

Term = str
Triple = tuple[str, str, str]
Quad = tuple[str, str, str, str]

@disjoint_base
class Reader(Txn):
    """The read API shared by ``ReadTxn`` and ``WriteTxn``."""
    def triples(self, g: Term, *, omit: Term | None = None) -> list[Triple]:
        """All triples of graph ``g`` (empty list if there is none); ``omit``: a
        predicate whose triples are left out, and its one-by-one runs not even read
        (a container's own triples without its ``ldp:contains``)."""
    def objects(self, s: Term, p: Term, g: Term) -> list[Term]:
        """The objects of ``(s, p, ?)`` in graph ``g``, as one list: its record's, then
        its ``(g, s, p)`` run's (a container's children: one range read, one loop)."""
    def has_graph(self, g: Term) -> bool:
        """Whether graph ``g`` holds at least one quad."""
    def graphs(self) -> Iterator[Term]:
        """Every graph that holds at least one quad."""
    def graph_count(self) -> int:
        """How many graphs hold at least one quad."""
    def match(self, s: Term | None = None, p: Term | None = None,
              o: Term | None = None, g: Term | None = None) -> Iterator[Quad]:
        """Quads matching a pattern; any of the 16 bound/unbound combinations."""
    def count(self, s: Term | None = None, p: Term | None = None,
              o: Term | None = None, g: Term | None = None, *,
              distinct: bool = False, graph_prefix: str | None = None) -> int:
        """How many quads match; with ``distinct``, how many distinct triples
        (a triple in several graphs counts once, as in SPARQL's union graph).
        ``graph_prefix``: only quads of graphs whose name starts with it (e.g.
        ``"<info:fcres"``); an IRI-only union pattern is still counted on the
        index, decoding each graph name met once."""
    def namespaces(self) -> dict[str, str]:
        """prefix -> namespace IRI (bare, without angle brackets)."""
    def namespace(self, prefix: str) -> str | None:
        """The namespace bound to ``prefix``, or None."""
    def prefix(self, namespace: str) -> str | None:
        """The prefix bound to ``namespace``, or None."""
    def outbox(self, after: int = 0, limit: int = -1) -> list[tuple[int, bytes]]:
        """Outbox entries ``(seq, bytes)`` with seq > ``after``, in seq order."""
    def outbox_state(self) -> dict[str, int]:
        """``first``, ``last``, ``entries``, ``seq`` and ``published`` of the outbox."""
    def snapshot_id(self) -> int:
        """The LMDB transaction id: for a read snapshot, that of the last write it
        sees (two snapshots of one id read the same state of the store)."""
    def stats(self) -> dict[str, int]:
        """Entry counts of the main tables."""

class ReadTxn(Reader):
    """A read snapshot: reads only; ``with`` ends it on the way out."""
    def __enter__(self) -> ReadTxn: ...
    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]: ...
    def commit(self) -> None:
        """End the snapshot (a snapshot has nothing to commit)."""
