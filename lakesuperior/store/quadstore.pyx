"""The LMDB quad store: quads of canonical N-Triples term strings.

``QuadStore`` is the front of the store's modules (see ``docs/storage.md``):

``layout``   the byte layout of keys and values (structs) and its codecs
``env``      the environments, tables, format, map growth (``StoreEnv``)
``txn``      one LMDB transaction: term ids, graph reads, the txn account
``access``   the one choice of access path for a pattern
``reads``    the read API (``Reader``) and the read snapshot (``ReadTxn``)
``journal``  the write transaction's life: journal, savepoints, growth, commit
``writes``   the write transaction (``WriteTxn``): the writes
``indexer``  the union-graph indexer (log -> ``pos`` / ``osp`` / ``sg``)
"""
import errno
import os
import resource

import lmdb

from lakesuperior.store.env cimport StoreEnv, applied_seq, last_seq

from lakesuperior.exceptions import DiskFullError, StoreBackendError, StoreError
from lakesuperior.store.env import (DEFAULT_INDEX_BATCH, DEFAULT_MAP_SIZE, FORMAT_VERSION,
                                    INDEX_FORMAT_VERSION, NO_ROOM_MARGIN)
from lakesuperior.store import private
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

    def table_stats(self):
        """``mdb_stat``-like figures of both environments: for each (``main``,
        ``index``), ``tables`` (name -> depth, branch / leaf / overflow pages,
        entries, bytes), ``file_pages`` (pages the data file has used) and
        ``free_pages`` (those no table holds: free or LMDB's own bookkeeping)."""
        self.check_open()
        out = {}
        try:
            for label, env in (("main", self.env), ("index", self.ienv)):
                psize = env.stat()["psize"]
                tables = {}
                with env.begin() as txn:
                    names = [bytes(k) for k in txn.cursor().iternext(values=False)]
                    for name in names:
                        st = txn.stat(env.open_db(name, txn=txn, create=False))
                        pages = st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"]
                        tables[name.decode("utf-8", "replace")] = {
                            k: st[k] for k in ("depth", "branch_pages", "leaf_pages",
                                               "overflow_pages", "entries")} | {
                            "bytes": pages * psize}
                    top = txn.stat()
                used = sum(t["bytes"] for t in tables.values()) // psize + 2 + (
                    top["branch_pages"] + top["leaf_pages"])
                file_pages = env.info()["last_pgno"] + 1
                out[label] = {"page_size": psize, "tables": tables, "file_pages": file_pages,
                              "free_pages": max(file_pages - used, 0)}
        except lmdb.Error as e:
            raise StoreBackendError(f"LMDB error: {e}") from e
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
        private.make_dirs(os.path.join(dest, "index"))
        try:
            if compact:
                self._compact_copy(dest)
            else:
                self.env.copy(dest)
        except lmdb.Error as e:
            raise _copy_failure(e, dest) from e

    cdef int _compact_copy(self, str dest) except -1:
        """Every main table, read from one snapshot, appended in key order to a
        new environment in ``dest`` (committed every ``COPY_BATCH`` bytes, synced
        once at the end)."""
        out = lmdb.open(dest, map_size=self.env.info()["map_size"], max_dbs=16, sync=False,
                        mode=private.FILE_MODE)
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
        return [(b"meta", self.db_meta),
                (b"collide", self.db_collide), (b"rec", self.db_rec), (b"gx", self.db_gx),
                (b"log", self.db_log), (b"ns", self.db_ns), (b"nsr", self.db_nsr),
                (b"outbox", self.db_outbox)]


cdef object _copy_failure(e, str dest):
    """The ``StoreError`` for an LMDB error while copying into ``dest``. LMDB
    reports a short write as EIO: taken for a full disk when the file system has
    less than ``NO_ROOM_MARGIN`` free, for the file size limit when the copy
    reached it."""
    msg = str(e)
    full = isinstance(e, lmdb.DiskError) or "No space left" in msg or (
        "Disk quota exceeded" in msg)
    if not full and "Input/output error" in msg:
        try:
            st = os.statvfs(dest)
            full = st.f_bavail * st.f_frsize < NO_ROOM_MARGIN
            limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
            if limit != resource.RLIM_INFINITY and (
                    os.path.getsize(os.path.join(dest, "data.mdb")) + COPY_BATCH >= limit):
                msg = f"{os.strerror(errno.EFBIG)} (the process's file size limit)"
        except OSError:
            pass
    if full:
        return DiskFullError("Insufficient storage: the disk holding the copy of "
                             "the store is full")
    return StoreBackendError(f"Cannot copy the store: {msg}")


cdef int _append(out, odb, list batch, bint dup) except -1:
    """Append ``batch`` (sorted (key, value) pairs) to table ``odb`` of ``out``."""
    if batch:
        with out.begin(write=True) as otxn:
            otxn.cursor(db=odb).putmulti(batch, dupdata=dup, append=True)
    return 0
