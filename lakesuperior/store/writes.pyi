"""The write transaction: commits on success, aborts on exception.

A full map (on a put or on commit) grows it, replays the transaction's writes
and retries the failed one once; a second failure is ``StoreFullError``.
Savepoints, growth and commit: ``journal``.
"""
from collections.abc import Iterable, Iterator

from lakesuperior.store.journal import JournaledTxn
from lakesuperior.store.reads import Quad, Term, Triple

class WriteTxn(JournaledTxn):
    """The one write transaction; reads its own writes."""
    def match(self, s: Term | None = None, p: Term | None = None,
              o: Term | None = None, g: Term | None = None) -> Iterator[Quad]:
        """Quads matching a pattern, read at the call: the caller may write while
        iterating."""
    def add_graph(self, g: Term, triples: Iterable[Triple], *,
                  canonical: bool = False, keep: Term | None = None) -> None:
        """Set the whole content of graph ``g`` (the fast path for resources).

        ``canonical=True``: every term is vouched canonical (``rdfio.parse`` output,
        ``terms`` builders): only kinds and positions are checked. ``keep``: a
        predicate whose triples in ``g`` stay as they are, neither read nor
        rewritten: the write is as large as the other triples."""
    def add(self, quads: Iterable[Quad], *, canonical: bool = False) -> int:
        """Add quads (duplicates ignored); returns how many were new."""
    def remove(self, s: Term | None = None, p: Term | None = None,
               o: Term | None = None, g: Term | None = None) -> int:
        """Remove every quad matching the pattern; returns how many."""
    def set_value(self, s: Term, p: Term, o: Term, g: Term) -> int:
        """Make ``o`` the one object of ``(s, p, ?)`` in graph ``g``; returns how
        many quads were removed or added (one record write, one log entry)."""
    def remove_graph(self, g: Term) -> int:
        """Remove graph ``g`` entirely; returns how many quads it held."""
    def bind(self, prefix: str, namespace: str, override: bool = True) -> None:
        """Bind a namespace prefix (bare namespace IRI)."""
    def unbind(self, prefix: str) -> None:
        """Remove a prefix binding."""
    def outbox_append(self, entries: Iterable[bytes]) -> int:
        """Append change entries to the outbox; returns the seq of the last (0: none)."""
    def outbox_drop(self, upto: int, limit: int = -1) -> int:
        """Drop the outbox entries with seq <= ``upto`` (at most ``limit``); how many."""
    def outbox_mark(self, seq: int) -> None:
        """Record that the entries up to ``seq`` were published."""
