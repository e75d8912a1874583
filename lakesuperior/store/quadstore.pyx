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

# A compacting copy commits every this many bytes written.
COPY_BATCH = 64 << 20

__all__ = ["DEFAULT_INDEX_BATCH", "DEFAULT_MAP_SIZE", "FORMAT_VERSION", "INDEX_FORMAT_VERSION",
           "Indexer", "Quad", "QuadStore", "ReadTxn", "Reader", "Term", "Triple", "WriteTxn"]


cdef class QuadStore(StoreEnv):
    """An RDF quad store in one directory: snapshots, the write transaction, the index."""

    def read(self):
        """A read snapshot (context manager)."""
        self.check_open()
        return ReadTxn(self, False)

    def write(self):
        """The write transaction (context manager)."""
        self.check_open()
        if self.readonly:
            raise StoreError("The store is open read-only")
        try:
            self.ensure_room()
        except lmdb.Error as e:
            raise StoreBackendError(f"Cannot grow the store's map: {e}") from e
        return WriteTxn(self, True)

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

    def copy(self, str dest, bint compact=True):
        """A consistent copy of the store into directory ``dest`` (must not exist).

        The main environment is copied from one snapshot; the union-graph index
        is derived data and is not copied: the copy rebuilds it on first use.
        ``compact`` (the default): every table is rewritten in key order into a
        new environment, so the copy has no free pages and full leaves (LMDB's
        own compacting copy, ``mdb_env_copy2(MDB_CP_COMPACT)``, crashes on this
        store's dupsort tables with py-lmdb 3.0 / LMDB 0.9.36); else a page copy.
        """
        self.check_open()
        if os.path.exists(dest):
            raise StoreError(f"{dest} exists already")
        os.makedirs(os.path.join(dest, "index"))
        try:
            if compact:
                self._compact_copy(dest)
            else:
                self.env.copy(dest)
        except lmdb.Error as e:
            if isinstance(e, lmdb.DiskError) or "No space left" in str(e) or (
                    "Disk quota exceeded" in str(e)):
                raise DiskFullError("Insufficient storage: the disk holding the copy of "
                                    "the store is full") from e
            raise StoreBackendError(f"Cannot copy the store: {e}") from e

    cdef int _compact_copy(self, str dest) except -1:
        """Every main table, read from one snapshot, appended in key order to a
        new environment in ``dest`` (committed every ``COPY_BATCH`` bytes, synced
        once at the end)."""
        out = lmdb.open(dest, map_size=self.env.info()["map_size"], max_dbs=16, sync=False)
        try:
            with self.env.begin() as txn:
                for name, db in self._main_tables():
                    flags = db.flags(txn)
                    dup = bool(flags["dupsort"])
                    with out.begin(write=True) as otxn:
                        odb = out.open_db(name, txn=otxn, dupsort=dup,
                                          dupfixed=bool(flags["dupfixed"]))
                    batch, size = [], 0
                    for item in txn.cursor(db=db).iternext():
                        batch.append(item)
                        size += len(item[0]) + len(item[1])
                        if size >= COPY_BATCH:
                            _append(out, odb, batch, dup)
                            batch, size = [], 0
                    _append(out, odb, batch, dup)
            out.sync(True)
        finally:
            out.close()
        return 0

    cdef list _main_tables(self):
        return [(b"meta", self.db_meta), (b"terms", self.db_terms),
                (b"collide", self.db_collide), (b"rec", self.db_rec), (b"gx", self.db_gx),
                (b"log", self.db_log), (b"ns", self.db_ns), (b"nsr", self.db_nsr),
                (b"outbox", self.db_outbox)]


cdef int _append(out, odb, list batch, bint dup) except -1:
    """Append ``batch`` (sorted (key, value) pairs) to table ``odb`` of ``out``."""
    if batch:
        with out.begin(write=True) as otxn:
            otxn.cursor(db=odb).putmulti(batch, dupdata=dup, append=True)
    return 0
