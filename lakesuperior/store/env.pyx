"""The store environment: the owner of the LMDB environments, the format and the map size.

Two LMDB environments live in the store directory (see ``docs/storage.md``):

``main`` (durable; every write request commits here, fsync on by default:
         one fsync of the data pages in the commit, then a coalesced sync
         before the write is acknowledged, ``durability.py``)
    ``meta``     format version and store facts
    ``rec``      graph id -> graph record (``records.pyx``): a resource is one value;
                 and the IRI dictionary: (IRI id, ``i``) -> canonical UTF-8 (ids are
                 content hashes), a graph's name right after its record
    ``collide``  hash collisions: natural id -> probed ids (dupsort)
    ``gx``       (g, s, p) -> o (dupsort, dupfixed): IRI-only quads added one by one
    ``log``      seq -> change entry, the input of the union-graph indexer
    ``ns``/``nsr`` prefix <-> namespace
    ``outbox``   seq -> change event (the change feed, ``model/events.py``),
                 written in the same transaction as the change it describes

``index`` (derived from ``main``; rebuilt if lost or of another format)
    ``state``    format, last applied log seq
    ``pos``, ``osp``, ``lit``, ``sg``  the union-graph indices (``layout.pxd``)
    ``gn``/``ng`` graph id <-> graph number (the index's 4-byte name of a graph)

Every transaction on ``main`` is counted in ``open_txns`` (``txn.pyx`` keeps the
account, also for a transaction dropped without ``abort()``): the map can only
grow when no transaction of this process is open.
"""
import os
from itertools import islice

import lmdb

from libc.stdint cimport uint64_t

from lakesuperior.store.layout cimport be, be_n, id_at, term_key
from lakesuperior.store.records cimport record_from_v2
from lakesuperior.store.terms cimport HASH_MASK

from lakesuperior.exceptions import (DiskFullError, StoreBackendError, StoreBusyError,
                                     StoreError, StoreFormatError)
from lakesuperior.store import private
from lakesuperior.store.durability import DurabilityGate
from lakesuperior.store.residency import CHECK_STEPS as _CHECK_STEPS
from lakesuperior.store.residency import MapTrimmer

# 2: the ``outbox`` table (a format-1 store is upgraded in place when opened
# for writing: the table is created empty).
# 3: compact graph records (``records.pyx``): a format-1 or -2 store is upgraded
# in place when opened for writing, every record re-encoded in one transaction.
# 4: the IRI dictionary moves from the ``terms`` table into ``rec`` (``layout.pxd``,
# ``term_key``), beside the records: a new resource's record and name share a leaf,
# and a commit touches one B-tree fewer. A format-1, -2 or -3 store is upgraded in
# place when opened for writing, in one transaction.
FORMAT_VERSION = 4
UPGRADABLE_FORMATS = (1, 2, 3)
# 2: rows name graphs by 4-byte graph numbers (``gn``, ``ng``), first in each value.
INDEX_FORMAT_VERSION = 2
# Address space, not disk: the data file grows with its pages. Reserved large up
# front so that the map (almost) never has to grow: LMDB can remap only when no
# transaction of this process is open, which a threaded server rarely offers.
DEFAULT_MAP_SIZE = 1 << 40
DEFAULT_INDEX_BATCH = 500
INDEX_MAP_SIZE = 1 << 40
DEFAULT_IRI_CACHE = 100_000
# LMDB reports a short write (what a full disk gives) as EIO: it is taken for a
# full disk when the file system has less than this much room besides the write.
NO_ROOM_MARGIN = 1 << 20
# The main data file is kept written (zeros) this far past LMDB's last page: a
# sixteenth of the pages in use, within these bounds (``StoreEnv.write_ahead``).
WRITE_AHEAD_MIN = 256 << 10
WRITE_AHEAD_MAX = 32 << 20


class _Nothing:
    """A context manager that gives None (read-only stores open tables without a txn)."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


cdef class StoreEnv:
    """The environments of a store directory: opening, format, growth, caches."""

    def __init__(self, str path, *, map_size=DEFAULT_MAP_SIZE, bint sync=True,
                 bint readonly=False, index_batch=DEFAULT_INDEX_BATCH, hash_bits=None,
                 iri_cache=DEFAULT_IRI_CACHE, resident_map_limit=0):
        self.path = os.path.abspath(path)
        self.sync = sync
        self.readonly = readonly
        self.index_batch = index_batch
        if iri_cache < 1:
            raise StoreError("iri_cache must be positive")
        self.iri_cache = iri_cache
        self.iri_ids = {}
        self.iri_strs = {}
        self.prefix_gen = None
        self.prefix_ok = {}
        self.open_txns = 0
        self.ahead_end = 0
        self.map_trimmer = MapTrimmer(self.path, resident_map_limit)
        self.map_steps = 0
        self.closed = True
        self.durability = DurabilityGate(self._sync_main) if sync and not readonly else None
        if not readonly:
            private.make_dirs(os.path.join(self.path, "index"))
        elif not os.path.isdir(self.path):
            raise StoreError(f"No store at {self.path}")
        try:
            # metasync off: a commit flushes its data pages, and the meta page
            # is flushed by the coalesced sync that acknowledges the write.
            # mode: of the files LMDB creates (data.mdb, lock.mdb), owner-only
            self.env = lmdb.open(self.path, map_size=map_size, max_dbs=16,
                                 sync=sync, metasync=False, readonly=readonly,
                                 max_readers=512, max_spare_txns=4,
                                 mode=private.FILE_MODE)
            # The index is derived data, rewritten in batches: give it a large
            # map up front (address space only) so it rarely has to grow.
            self.ienv = lmdb.open(os.path.join(self.path, "index"),
                                  map_size=max(map_size, INDEX_MAP_SIZE),
                                  max_dbs=8, sync=sync, readonly=readonly,
                                  max_readers=512, max_spare_txns=4,
                                  mode=private.FILE_MODE)
        except lmdb.Error as e:
            raise StoreError(f"Cannot open the store at {self.path}: {e}") from e
        self.pid = os.getpid()
        self.closed = False
        self.page_size = self.env.stat()["psize"]
        try:
            self._open_dbs()
            self._check_format(hash_bits)
        except lmdb.Error as e:
            self.close()
            raise StoreBackendError(f"Cannot open the store at {self.path}: {e}") from e
        except BaseException:
            self.close()
            raise

    cdef _open_dbs(self):
        env, ienv = self.env, self.ienv
        dup = dict(dupsort=True, dupfixed=True)
        with env.begin(write=True) if not self.readonly else _Nothing() as txn:
            opts = dict(txn=txn, create=not self.readonly)
            if txn is None:
                del opts["txn"]
            self.db_meta = env.open_db(b"meta", **opts)
            self.db_collide = env.open_db(b"collide", **dup, **opts)
            self.db_rec = env.open_db(b"rec", **opts)
            self.db_gx = env.open_db(b"gx", **dup, **opts)
            self.db_log = env.open_db(b"log", **opts)
            self.db_ns = env.open_db(b"ns", **opts)
            self.db_nsr = env.open_db(b"nsr", **opts)
            self.db_outbox = self._open_outbox(env, opts)
        with ienv.begin(write=True) if not self.readonly else _Nothing() as txn:
            opts = dict(txn=txn, create=not self.readonly)
            if txn is None:
                del opts["txn"]
            try:
                self.idb_state = ienv.open_db(b"state", **opts)
                self.idb_pos = ienv.open_db(b"pos", **dup, **opts)
                self.idb_osp = ienv.open_db(b"osp", **dup, **opts)
                self.idb_sg = ienv.open_db(b"sg", **dup, **opts)
                self.idb_lit = ienv.open_db(b"lit", **dup, **opts)
                self.idb_gn = ienv.open_db(b"gn", **opts)
                self.idb_ng = ienv.open_db(b"ng", **opts)
            except lmdb.NotFoundError:
                # Read-only, and the index is missing or of an older format:
                # queries read every graph directly (``index_usable``).
                self.index_usable = False
                return
        self.index_usable = True
        if self.readonly:
            with ienv.begin() as itxn:
                ifmt = itxn.get(b"format", db=self.idb_state)
            self.index_usable = ifmt == str(INDEX_FORMAT_VERSION).encode()

    cdef object _open_outbox(self, env, dict opts):
        """The outbox table; a read-only open of a format-1 store (which has none)
        is refused with a message saying how to upgrade it."""
        try:
            return env.open_db(b"outbox", **opts)
        except lmdb.NotFoundError:
            raise StoreFormatError(
                f"The store at {self.path} has format 1 and is opened read-only: open "
                f"it once for writing (lsup-server or Repository) to upgrade it to "
                f"format {FORMAT_VERSION}") from None

    cdef _check_format(self, hash_bits):
        with self.env.begin(write=not self.readonly) as txn:
            fmt = txn.get(b"format", db=self.db_meta)
            if fmt is None:
                if txn.stat(self.db_rec)["entries"] or txn.stat(self.db_gx)["entries"]:
                    raise StoreFormatError(
                        f"The store at {self.path} has data but no format version: "
                        "it was not made by this Lakesuperior. Use an empty data "
                        "directory, or restore a backup made by lsup-admin.")
                if self.readonly:
                    raise StoreError(f"The store at {self.path} is empty")
                bits = 62 if hash_bits is None else int(hash_bits)
                if not 4 <= bits <= 62:
                    raise StoreError("hash_bits must be between 4 and 62")
                txn.put(b"format", str(FORMAT_VERSION).encode(), db=self.db_meta)
                txn.put(b"hash_bits", str(bits).encode(), db=self.db_meta)
            else:
                try:
                    version = int(fmt)
                except ValueError:
                    version = -1
                if version in UPGRADABLE_FORMATS and not self.readonly:
                    if version < 3:
                        self._upgrade_records(txn)
                    self._move_terms(txn)
                    txn.put(b"format", str(FORMAT_VERSION).encode(), db=self.db_meta)
                elif version in UPGRADABLE_FORMATS:
                    raise StoreFormatError(
                        f"The store at {self.path} has format {version} and is opened "
                        f"read-only: open it once for writing (lsup-server, Repository or "
                        f"any lsup-admin command that writes) to upgrade it to format "
                        f"{FORMAT_VERSION}")
                elif version != FORMAT_VERSION:
                    raise StoreFormatError(
                        f"The store at {self.path} has format {fmt.decode(errors='replace')}"
                        f", but this Lakesuperior reads format {FORMAT_VERSION}. "
                        + ("Upgrade Lakesuperior to open it." if version > FORMAT_VERSION
                           else "Migrate it with an older Lakesuperior (lsup-admin "
                                "migrate) or restore a backup of this format."))
            bits = int(txn.get(b"hash_bits", db=self.db_meta) or b"62")
            if hash_bits is not None and int(hash_bits) != bits:
                raise StoreError(f"The store at {self.path} uses {bits}-bit hashes, "
                                 f"not {hash_bits}")
        self.hash_bits = bits
        self.hash_mask = (HASH_MASK >> (62 - bits))
        if self.readonly:
            return
        with self.ienv.begin(write=True) as itxn:
            # Main is read after the index's write lock is taken: no indexer
            # can apply a commit this snapshot does not hold.
            with self.env.begin() as txn:
                has_data = bool(txn.stat(self.db_rec)["entries"]
                                or txn.stat(self.db_gx)["entries"])
                last = last_seq(txn, self.db_log)
            ifmt = itxn.get(b"format", db=self.idb_state)
            rebuild = itxn.get(b"rebuild", db=self.idb_state)
            ahead = (id_at(rebuild, 0) if rebuild is not None and len(rebuild) >= 8
                     else applied_seq(itxn, self.idb_state)) > last
            if ifmt != str(INDEX_FORMAT_VERSION).encode() or ahead:
                # Derived data missing, of another format, or ahead of main (a
                # machine crash undid main's last commits, not yet synced, after
                # the indexer applied them): drop it; the indexer rebuilds it
                # from the graphs (nothing to do for an empty store).
                for db in (self.idb_pos, self.idb_osp, self.idb_lit, self.idb_sg, self.idb_gn,
                           self.idb_ng, self.idb_state):
                    itxn.drop(db, delete=False)
                itxn.put(b"format", str(INDEX_FORMAT_VERSION).encode(), db=self.idb_state)
                itxn.put(b"gen", os.urandom(8), db=self.idb_state)
                itxn.put(b"seq", be(last if not has_data else 0), db=self.idb_state)
                if has_data:
                    itxn.put(b"rebuild", be_n(last, 0, 0, 2), db=self.idb_state)

    cdef int _upgrade_records(self, txn) except -1:
        """Re-encode every format-2 graph record (formats 1 and 2 share it) in
        ``txn`` (before ``_move_terms``: ``rec`` holds records only); ids, the
        log and the index stay as they are."""
        cur = txn.cursor(db=self.db_rec)
        ok = cur.first()
        while ok:
            cur.put(cur.key(), record_from_v2(cur.value()))
            ok = cur.next()
        return 0

    cdef int _move_terms(self, txn) except -1:
        """Move the IRI dictionary of a format-1 to -3 store from its ``terms``
        table into ``rec`` (``term_key``) and drop the table, in ``txn``."""
        try:
            terms = self.env.open_db(b"terms", txn=txn, create=False)
        except lmdb.NotFoundError:
            return 0
        cur = txn.cursor(db=terms)
        ok = cur.first()
        while ok:
            txn.put(term_key(id_at(cur.key(), 0)), cur.value(), db=self.db_rec)
            ok = cur.next()
        txn.drop(terms, delete=True)
        return 0

    cdef int check_open(self) except -1:
        if self.closed:
            raise StoreError("The store is closed")
        if os.getpid() != self.pid:
            raise StoreError("The store was opened in another process (before a fork): "
                             "open it again in this process")
        return 0

    cdef object begin(self, env, bint write):
        """An LMDB transaction on ``env``, adopting a map another process grew
        (only with no other transaction of this process open: ``StoreBusyError``
        otherwise, as remapping under an open transaction is undefined)."""
        try:
            try:
                return env.begin(write=write)
            except lmdb.MapResizedError:
                if env is self.env:
                    self.check_no_txns("adopt the map another process grew")
                with self.map_trimmer.remapping():
                    env.set_mapsize(0)
                return env.begin(write=write)
        except lmdb.Error as e:
            raise StoreBackendError(f"Cannot begin a transaction: {e}") from e

    cdef int ensure_room(self) except -1:
        """Grow the maps before a write when they are more than half used."""
        if self.open_txns:
            return 0
        for env in (self.env, self.ienv):
            info = env.info()
            used = (info["last_pgno"] + 1) * env.stat()["psize"]
            if used * 2 > info["map_size"]:
                self.grow(env, 0)
        return 0

    cdef int grow(self, env, Py_ssize_t need) except -1:
        """Double the map of ``env``, or more when ``need`` bytes must fit.

        LMDB can only remap with no transaction of this process open on ``env``:
        the caller has ended its own (``open_txns`` counts those of ``main``).
        """
        if env is self.env:
            self.check_no_txns("grow its map")
        info = env.info()
        used = (info["last_pgno"] + 1) * env.stat()["psize"]
        size = max(info["map_size"] * 2, 2 * (used + 2 * need))
        with self.map_trimmer.remapping():
            env.set_mapsize(size)
        return 0

    cdef int write_ahead(self) except -1:
        """Keep the main data file written past LMDB's last page (with ``sync`` on;
        called holding the write lock, before the transaction writes anything).

        A commit's new pages go past the last one: written into a part of the file
        that does not exist yet, they make its fsync also allocate blocks and
        commit the file system's journal (ext4: about a fifth of a commit's time
        on the reference disk). Writing zeros ahead, a sixteenth of the file at a time, and syncing
        them once, lets the fsync of each commit flush data pages only. Zeros past
        the last page are no part of the store (LMDB reads its pages up to the
        last one of its meta page); the region is written only under the write
        lock, where nothing else writes past the end. A disk without room for it
        leaves the file as it was: the commit then fails (or fits) as before.
        """
        if self.durability is None:
            return 0
        info = self.env.info()
        cdef Py_ssize_t psize = self.page_size
        cdef Py_ssize_t used = (info["last_pgno"] + 1) * psize
        cdef Py_ssize_t ahead = min(max(used >> 4, WRITE_AHEAD_MIN), WRITE_AHEAD_MAX)
        cdef Py_ssize_t target = min(used + ahead, info["map_size"]), size
        if self.ahead_end >= used + ahead // 2 or self.ahead_end >= target:
            return 0
        try:
            fd = os.open(os.path.join(self.path, "data.mdb"), os.O_WRONLY)
        except OSError:
            return 0        # the commit goes on as without the zeros
        size = -1
        try:
            size = os.fstat(fd).st_size
            if size >= used + ahead // 2 or size >= target:
                self.ahead_end = size    # another process wrote ahead
                return 0
            size -= size % psize
            zeros = bytes(min(target - size, 1 << 20))
            at = size
            while at < target:
                at += os.pwrite(fd, zeros[:target - at], at)
            os.fdatasync(fd)
            self.ahead_end = target
        except OSError:
            if size >= 0:
                try:
                    os.ftruncate(fd, max(size, used))   # no room: give the zeros back
                except OSError:
                    pass
        finally:
            os.close(fd)
        return 0

    cdef int check_no_txns(self, str what) except -1:
        """Raise ``StoreBusyError`` if a transaction of this process is open on
        ``main``. (The index map is reserved at 1 TiB up front and is not counted.)"""
        if self.open_txns:
            raise StoreBusyError(
                f"The store must {what}, which cannot happen while other transactions "
                f"of this process are open ({self.open_txns}); retry shortly")
        return 0

    cdef object write_failure(self, e, Py_ssize_t need):
        """The ``StoreError`` for an LMDB error while writing ``need`` bytes:
        ``DiskFullError`` when the disk has no room for them (ENOSPC, or EIO on
        a short write with the file system nearly full), else ``StoreBackendError``."""
        full = isinstance(e, lmdb.DiskError) or "No space left" in str(e) or (
            "Disk quota exceeded" in str(e))
        if not full and "Input/output error" in str(e):
            try:
                st = os.statvfs(self.path)
                full = st.f_bavail * st.f_frsize < need + NO_ROOM_MARGIN
            except OSError:
                full = False
        if full:
            return DiskFullError("Insufficient storage: the disk holding the repository's "
                                 "store is full; the write was not kept")
        return StoreBackendError(f"LMDB error: {e}")

    cdef int remember(self, dict iris) except -1:
        """Cache committed IRIs (ids never change meaning, so a cache cannot go stale).
        A full cache drops its oldest quarter (first in, first out), so that a
        burst of new IRIs never empties it; more IRIs than it holds are not cached."""
        cdef Py_ssize_t over = len(self.iri_strs) + len(iris) - self.iri_cache
        if len(iris) > self.iri_cache:
            return 0
        if over > 0:
            for tid, term in list(islice(self.iri_strs.items(), over + self.iri_cache // 4)):
                del self.iri_strs[tid]
                self.iri_ids.pop(term, None)
        for term, tid in iris.items():
            self.iri_ids[term] = tid
            self.iri_strs[tid] = term
        return 0

    cdef int mapped(self, Py_ssize_t steps) except -1:
        """Count ``steps`` reads that may each have mapped pages of the store into
        this process (a page fault maps cached pages around the one read); every
        ``residency.CHECK_STEPS`` of them, the trimmer looks at the resident set,
        so that one long read or index batch cannot go far past the bound."""
        self.map_steps += steps
        if self.map_steps >= _CHECK_STEPS:
            self.map_steps = 0
            self.map_trimmer.check()
        return 0

    def iri_cache_size(self):
        """How many IRIs the in-memory IRI cache holds."""
        return len(self.iri_strs)

    def _sync_main(self):
        """Flush the main environment, meta page included (fsync)."""
        try:
            self.env.sync(True)
        except lmdb.Error as e:
            raise StoreBackendError(f"Cannot sync the store to disk: {e}") from e

    def make_durable(self):
        """Return once every write committed before the call is on disk (one
        coalesced sync, ``durability.py``; nothing to do with ``sync`` off)."""
        if self.durability is not None:
            self.check_open()
            self.durability.sync()

    def _forget_cache(self):
        """Drop the term caches (after a clean-up that removed terms)."""
        self.iri_ids.clear()
        self.iri_strs.clear()

    def disk_size(self):
        """Bytes of the LMDB files on disk."""
        total = 0
        for d in (self.path, os.path.join(self.path, "index")):
            for name in ("data.mdb", "lock.mdb"):
                p = os.path.join(d, name)
                if os.path.exists(p):
                    total += os.stat(p).st_blocks * 512
        return total

    def close(self):
        """Close the environments (transactions still open become unusable)."""
        if self.closed:
            return
        self.closed = True
        self.map_trimmer.close()
        if os.getpid() == self.pid:
            with self.map_trimmer.remapping():
                self.env.close()
                self.ienv.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


cdef uint64_t last_seq(txn, db) except? 0:
    """The sequence number of the last log entry (0: none)."""
    cur = txn.cursor(db=db)
    if cur.last():
        return id_at(cur.key(), 0)
    return 0


cdef uint64_t applied_seq(itxn, db) except? 0:
    """The last log entry the index has taken in."""
    v = itxn.get(b"seq", db=db)
    return id_at(v, 0) if v is not None else 0


cdef uint64_t committed_seq(StoreEnv store) except? 0:
    """The last committed log entry (read in a fresh snapshot)."""
    with store.env.begin() as txn:
        return last_seq(txn, store.db_log)
