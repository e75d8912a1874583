"""The LMDB quad store: quads of canonical N-Triples term strings.

``QuadStore`` is the front of the store's modules (see ``docs/storage.md``):

``layout``   the byte layout of keys and values (structs) and its codecs
``env``      the environments, tables, format, map growth (``StoreEnv``)
``txn``      one LMDB transaction: term ids, graph reads, the txn account
``access``   the one choice of access path for a pattern
``reads``    the read API (``Reader``) and the read snapshot (``ReadTxn``)
``writes``   the write transaction (``WriteTxn``): journal, growth, retry
``indexer``  the union-graph indexer (log -> ``pos`` / ``osp`` / ``sg``)
"""
import os

import lmdb

from lakesuperior.store.env cimport StoreEnv, applied_seq, last_seq

from lakesuperior.exceptions import DiskFullError, StoreBackendError, StoreError
from lakesuperior.store.env import (DEFAULT_INDEX_BATCH, DEFAULT_MAP_SIZE, FORMAT_VERSION,
                                    INDEX_FORMAT_VERSION)
from lakesuperior.store.indexer import Indexer
from lakesuperior.store.reads import Quad, Reader, ReadTxn, Term, Triple
from lakesuperior.store.writes import WriteTxn

__all__ = ["DEFAULT_INDEX_BATCH", "DEFAULT_MAP_SIZE", "FORMAT_VERSION", "INDEX_FORMAT_VERSION",
           "Indexer", "Quad", "QuadStore", "ReadTxn", "Reader", "Term", "Triple", "WriteTxn"]


cdef class QuadStore(StoreEnv):
    """An RDF quad store in one directory: snapshots, the write transaction, the index."""

    def read(self):
        """A read snapshot (context manager)."""
        self.check_open()
        return ReadTxn(self, False)

    def write(self, bint durable=True):
        """The write transaction (context manager). Its commit returns once the
        write is on disk; with ``durable=False`` the caller makes it durable
        (``make_durable()``) after releasing its own locks, so that one sync
        covers the commits of several threads."""
        self.check_open()
        if self.readonly:
            raise StoreError("The store is open read-only")
        try:
            self.ensure_room()
        except lmdb.Error as e:
            raise StoreBackendError(f"Cannot grow the store's map: {e}") from e
        txn = WriteTxn(self, True)
        txn.deferred = not durable
        return txn

    def index(self, Py_ssize_t batches=0):
        """Bring the union-graph indices up to date (or apply at most ``batches``
        index transactions); returns log entries applied. An admin tool and the
        background indexer's step: queries never need it."""
        self.check_open()
        if self.readonly:
            return 0
        return Indexer(self).run(0, batches)

    def index_state(self):
        """``(applied, last)``: the last log seq the union-graph indices took in
        and the last one committed (a rebuild under way counts as none applied)."""
        self.check_open()
        try:
            with self.ienv.begin() as itxn, self.env.begin() as txn:
                applied = 0 if itxn.get(b"rebuild", db=self.idb_state) is not None else (
                    applied_seq(itxn, self.idb_state))
                return applied, last_seq(txn, self.db_log)
        except lmdb.Error as e:
            raise StoreBackendError(f"LMDB error: {e}") from e

    def pending(self):
        """How many logged writes the union-graph indices have not taken in yet."""
        self.check_open()
        try:
            with self.env.begin() as txn, self.ienv.begin() as itxn:
                return last_seq(txn, self.db_log) - applied_seq(itxn, self.idb_state)
        except lmdb.Error as e:
            raise StoreBackendError(f"LMDB error: {e}") from e

    def stats(self):
        """Counts and sizes: quads, graphs, terms, store bytes, map size."""
        self.check_open()
        with self.read() as txn:
            out = txn.stats()
        out["store_bytes"] = self.disk_size()
        out["map_size"] = self.env.info()["map_size"]
        out["format"] = FORMAT_VERSION
        return out

    def copy(self, str dest, bint compact=False):
        """A consistent copy of the store into directory ``dest`` (must not exist).

        The main environment is copied from one snapshot; the union-graph index
        is derived data and is not copied: the copy rebuilds it on first use.
        ``compact`` is off by default (py-lmdb 3.0.0 can crash compacting
        dupsort/dupfixed tables).
        """
        self.check_open()
        if os.path.exists(dest):
            raise StoreError(f"{dest} exists already")
        os.makedirs(os.path.join(dest, "index"))
        try:
            self.env.copy(dest, compact=compact)
        except lmdb.Error as e:
            if isinstance(e, lmdb.DiskError) or "No space left" in str(e) or (
                    "Disk quota exceeded" in str(e)):
                raise DiskFullError("Insufficient storage: the disk holding the copy of "
                                    "the store is full") from e
            raise StoreBackendError(f"Cannot copy the store: {e}") from e
