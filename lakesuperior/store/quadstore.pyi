"""The LMDB quad store: quads of canonical N-Triples term strings.

Usage::

    store = QuadStore(path)            # creates or opens; checks the format
    with store.write() as txn:         # one LMDB write transaction
        txn.add_graph(g, triples)      # replace graph g's content
        txn.add([(s, p, o, g)])        # add single quads
    with store.read() as txn:          # one read snapshot
        txn.triples(g)                 # all triples of a graph
        txn.match(s=None, p=P, o=None, g=None)   # streamed
    store.close()

An exception inside ``with store.write()`` aborts: nothing is written.
Terms are ``str`` (see ``lakesuperior.store.terms``); ``None`` is a wildcard.
"""
from typing import Any

from lakesuperior.store.env import DEFAULT_INDEX_BATCH as DEFAULT_INDEX_BATCH
from lakesuperior.store.env import DEFAULT_MAP_SIZE as DEFAULT_MAP_SIZE
from lakesuperior.store.env import FORMAT_VERSION as FORMAT_VERSION
from lakesuperior.store.env import INDEX_FORMAT_VERSION as INDEX_FORMAT_VERSION
from lakesuperior.store.env import StoreEnv
from lakesuperior.store.indexer import Indexer as Indexer
from lakesuperior.store.reads import Quad as Quad
from lakesuperior.store.reads import Reader as Reader
from lakesuperior.store.reads import ReadTxn as ReadTxn
from lakesuperior.store.reads import Term as Term
from lakesuperior.store.reads import Triple as Triple
from lakesuperior.store.writes import WriteTxn as WriteTxn

__all__ = ["DEFAULT_INDEX_BATCH", "DEFAULT_MAP_SIZE", "FORMAT_VERSION", "INDEX_FORMAT_VERSION",
           "Indexer", "Quad", "QuadStore", "ReadTxn", "Reader", "Term", "Triple", "WriteTxn"]

COPY_BATCH: int

class QuadStore(StoreEnv):
    """An RDF quad store in one directory: snapshots, the write transaction, the index."""
    def read(self) -> ReadTxn:
        """A read snapshot (context manager)."""
    def write(self, durable: bool = True) -> WriteTxn:
        """The write transaction (context manager); one at a time per process.
        Its commit returns once the write is on disk; with ``durable=False`` the
        caller makes it durable (``make_durable()``) after releasing its locks."""
    def index(self, batches: int = 0) -> int:
        """Bring the union-graph indices up to date (or apply at most ``batches``
        index transactions); returns log entries applied."""
    def index_state(self) -> tuple[int, int]:
        """``(applied, last)``: the last log seq the union-graph indices took in
        and the last one committed."""
    def pending(self) -> int:
        """How many writes the union-graph indices have not taken in yet."""
    def stats(self) -> dict[str, Any]:
        """Counts and sizes: quads, graphs, terms, store bytes, map size."""
    def table_stats(self) -> dict[str, dict[str, Any]]:
        """``mdb_stat``-like figures of both environments, per table."""
    def copy(self, dest: str, compact: bool = True) -> None:
        """A consistent copy of the main data into ``dest`` (must not exist); the
        copy rebuilds its union-graph index on first use."""
    def __enter__(self) -> QuadStore: ...
