"""The LMDB quad store: quads of canonical N-Triples term strings.

Usage::

    store = QuadStore(path)            # creates or opens; checks the format
    with store.write() as txn:         # one LMDB write transaction
        txn.add_graph(g, triples)      # replace graph g's content
        txn.add([(s, p, o, g)])        # add single quads
    with store.read() as txn:          # one read snapshot
        txn.triples(g)                 # all triples of a graph
        txn.match(s=None, p=P, o=None, g=None)
    store.close()

An exception inside ``with store.write()`` aborts: nothing is written.
Terms are ``str`` (see ``lakesuperior.store.terms``); ``None`` is a wildcard.
"""
from collections.abc import Iterable, Iterator
from typing import Any

Term = str
Triple = tuple[str, str, str]
Quad = tuple[str, str, str, str]

FORMAT_VERSION: int

class ReadTxn:
    """A read snapshot. Also the base of ``WriteTxn`` (which reads its own writes)."""
    def triples(self, g: Term) -> list[Triple]:
        """All triples of graph ``g`` (empty list if there is none)."""
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
    def has_graph(self, g: Term) -> bool: ...
    def graphs(self) -> Iterator[Term]:
        """Every graph that holds at least one quad."""
    def graph_count(self) -> int: ...
    def namespaces(self) -> dict[str, str]:
        """prefix -> namespace IRI (bare, without angle brackets)."""
    def namespace(self, prefix: str) -> str | None: ...
    def prefix(self, namespace: str) -> str | None: ...
    def __enter__(self) -> ReadTxn: ...
    def __exit__(self, *exc: Any) -> None: ...

class WriteTxn(ReadTxn):
    """The one write transaction; commits on success, aborts on exception."""
    def add(self, quads: Iterable[Quad]) -> int:
        """Add quads (duplicates ignored); returns how many were new."""
    def add_graph(self, g: Term, triples: Iterable[Triple]) -> None:
        """Set the whole content of graph ``g`` (the fast path for resources)."""
    def remove(self, s: Term | None = None, p: Term | None = None,
               o: Term | None = None, g: Term | None = None) -> int:
        """Remove every quad matching the pattern; returns how many."""
    def remove_graph(self, g: Term) -> int:
        """Remove graph ``g`` entirely; returns how many quads it held."""
    def bind(self, prefix: str, namespace: str, override: bool = True) -> None:
        """Bind a namespace prefix (bare namespace IRI)."""
    def unbind(self, prefix: str) -> None: ...
    def __enter__(self) -> WriteTxn: ...

class QuadStore:
    path: str
    def __init__(self, path: str, *, map_size: int = ..., sync: bool = True,
                 readonly: bool = False, index_batch: int = ...) -> None:
        """Open (creating if new) the store in directory ``path``."""
    def read(self) -> ReadTxn:
        """A read snapshot (context manager)."""
    def write(self) -> WriteTxn:
        """The write transaction (context manager); one at a time per process."""
    def index(self) -> int:
        """Bring the union-graph indices up to date; returns log entries applied."""
    def pending(self) -> int:
        """How many writes the union-graph indices have not taken in yet."""
    def stats(self) -> dict[str, Any]:
        """Counts and sizes: quads, graphs, terms, store bytes, map size."""
    def copy(self, dest: str, compact: bool = False) -> None:
        """A consistent copy of the main data into ``dest`` (must not exist); the
        copy rebuilds its union-graph index on first use."""
    def close(self) -> None: ...
    def __enter__(self) -> QuadStore: ...
    def __exit__(self, *exc: Any) -> None: ...
