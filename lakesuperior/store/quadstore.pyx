"""The LMDB quad store. See ``quadstore.pyi`` for the interface and
``docs/storage.md`` for the layout, summarised here.

Two LMDB environments live in the store directory:

``main`` (durable; every write request commits here, fsync on by default)
    ``meta``     format version and store facts
    ``terms``    IRI dictionary: id -> canonical UTF-8 (ids are content hashes)
    ``collide``  hash collisions: natural id -> probed ids (dupsort)
    ``rec``      graph id -> graph record (triples + the graph's literals and
                 blank nodes, see ``records.pyx``): a resource is one value
    ``gx``       (g, s, p) -> o (dupsort, dupfixed 8 bytes): IRI-only quads
                 added one by one (containment), O(log n) append, O(1) count
    ``log``      seq -> change entry, the input of the union-graph indexer
    ``ns``/``nsr`` prefix <-> namespace

``index`` (derived from ``main``; rebuilt if lost)
    ``state``    format, last applied log seq
    ``pos``      p -> (o, s, g)   (dupfixed 24 bytes)
    ``osp``      o -> (s, p, g)   (dupfixed 24 bytes)
    ``sg``       s -> g           (dupfixed 8 bytes): graphs where s is a subject

A write touches only a few pages of ``main`` (one record, one log entry, new
IRIs). The union-graph indices are brought up to date in batches by
``QuadStore.index()``; a union-graph query first takes in every logged write,
so it sees everything committed before it started.
"""
import os
import struct

import lmdb

from libc.stdint cimport uint64_t, uint32_t
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy, memcmp
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from cpython.exc cimport PyErr_CheckSignals

from lakesuperior.store.terms cimport (term_id, kind_of, canonical_utf8, id_of_utf8,
                                       KIND_SHIFT, KIND_MASK, HASH_MASK)
from lakesuperior.store.records cimport Record, encode_record, sort_unique
from lakesuperior.store.terms import canonical, KIND_IRI, KIND_BNODE, KIND_LITERAL
from lakesuperior.exceptions import StoreError, StoreFormatError, TermError

FORMAT_VERSION = 1
INDEX_FORMAT_VERSION = 1
DEFAULT_MAP_SIZE = 1 << 30
DEFAULT_INDEX_BATCH = 500
INDEX_MAP_SIZE = 1 << 40

# Log entry kinds: a whole graph was set (the indexer reads its current
# content) or single quads were added / removed.
cdef enum:
    LOG_REPLACE = 1
    LOG_DELTA = 2

_LOG_HEAD = struct.Struct("<BQII")  # kind, graph id, n_removed, n_added
_MAX_CACHE = 200_000


# --- byte helpers --------------------------------------------------------------

cdef inline void put_be(unsigned char *buf, uint64_t v) noexcept nogil:
    cdef int i
    for i in range(8):
        buf[i] = (v >> (56 - 8 * i)) & 0xFF


cdef inline uint64_t get_be(const unsigned char *buf) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(8):
        v = (v << 8) | buf[i]
    return v


cdef bytes be(uint64_t v):
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 8)
    put_be(<unsigned char *>PyBytes_AS_STRING(out), v)
    return out


cdef bytes be_n(uint64_t a, uint64_t b, uint64_t c, int n):
    """The first n (1-3) of a, b, c as big-endian bytes."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 8 * n)
    cdef unsigned char *buf = <unsigned char *>PyBytes_AS_STRING(out)
    put_be(buf, a)
    if n > 1:
        put_be(buf + 8, b)
    if n > 2:
        put_be(buf + 16, c)
    return out


cdef inline uint64_t id_of(bytes b, Py_ssize_t pos):
    return get_be(<const unsigned char *>PyBytes_AS_STRING(b) + pos)


cdef inline int kind(uint64_t tid) noexcept nogil:
    return <int>(tid >> KIND_SHIFT)


cdef inline uint64_t next_probe(uint64_t tid, uint64_t mask) noexcept nogil:
    """The next id to try after a collision on ``tid`` (same kind, wraps in mask)."""
    return (tid & KIND_MASK) | ((tid + 1) & mask)


def _check_term(term, str role):
    """Canonical form of a term given by a caller; clear errors on bad input."""
    if type(term) is not str and isinstance(term, str):
        raise TermError(f"The {role} must be a plain str in N-Triples form, not "
                        f"{type(term).__name__} (convert rdflib terms with "
                        "lakesuperior.rdfio.from_rdflib)")
    if not isinstance(term, str):
        raise TermError(f"The {role} must be a str in N-Triples form, "
                        f"not {type(term).__name__}")
    return canonical(term)


def _check_pattern(s, p, o, g):
    """Canonicalise the bound terms of a pattern; check positions."""
    if s is not None:
        s = _check_term(s, "subject")
        if kind_of(s) == KIND_LITERAL:
            raise TermError("A literal cannot be a subject")
    if p is not None:
        p = _check_term(p, "predicate")
        if kind_of(p) != KIND_IRI:
            raise TermError("A predicate must be an IRI")
    if o is not None:
        o = _check_term(o, "object")
    if g is not None:
        g = _check_term(g, "graph name")
        if kind_of(g) != KIND_IRI:
            raise TermError("A graph name must be an IRI")
    return s, p, o, g


# --- the store -------------------------------------------------------------------

class _Nothing:
    """A context manager that gives None (read-only stores open tables without a txn)."""

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


cdef class QuadStore:
    """An RDF quad store in one directory (see the module docstring)."""

    cdef readonly str path
    cdef readonly bint sync
    cdef readonly bint readonly
    cdef readonly Py_ssize_t index_batch
    cdef object env, ienv
    cdef object db_meta, db_terms, db_collide, db_rec, db_gx, db_log, db_ns, db_nsr
    cdef object idb_state, idb_pos, idb_osp, idb_sg
    cdef int pid
    cdef dict iri_ids     # canonical IRI -> id, for committed IRIs only
    cdef dict iri_strs    # id -> canonical IRI
    cdef Py_ssize_t open_txns
    cdef bint closed
    cdef readonly int hash_bits
    cdef uint64_t hash_mask

    def __init__(self, str path, *, map_size=DEFAULT_MAP_SIZE, bint sync=True,
                 bint readonly=False, index_batch=DEFAULT_INDEX_BATCH, hash_bits=None):
        self.path = os.path.abspath(path)
        self.sync = sync
        self.readonly = readonly
        self.index_batch = index_batch
        self.iri_ids = {}
        self.iri_strs = {}
        self.open_txns = 0
        self.closed = True
        if not readonly:
            os.makedirs(os.path.join(self.path, "index"), exist_ok=True)
        elif not os.path.isdir(self.path):
            raise StoreError(f"No store at {self.path}")
        try:
            self.env = lmdb.open(self.path, map_size=map_size, max_dbs=16,
                                 sync=sync, readonly=readonly, max_readers=512,
                                 max_spare_txns=4)
            # The index is derived data, rewritten in batches: give it a large
            # map up front (address space only) so it rarely has to grow.
            self.ienv = lmdb.open(os.path.join(self.path, "index"),
                                  map_size=max(map_size, INDEX_MAP_SIZE),
                                  max_dbs=8, sync=sync, readonly=readonly,
                                  max_readers=512, max_spare_txns=4)
        except lmdb.Error as e:
            raise StoreError(f"Cannot open the store at {self.path}: {e}") from e
        self.pid = os.getpid()
        self.closed = False
        try:
            self._open_dbs()
            self._check_format(hash_bits)
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
            self.db_terms = env.open_db(b"terms", **opts)
            self.db_collide = env.open_db(b"collide", **dup, **opts)
            self.db_rec = env.open_db(b"rec", **opts)
            self.db_gx = env.open_db(b"gx", **dup, **opts)
            self.db_log = env.open_db(b"log", **opts)
            self.db_ns = env.open_db(b"ns", **opts)
            self.db_nsr = env.open_db(b"nsr", **opts)
        with ienv.begin(write=True) if not self.readonly else _Nothing() as txn:
            opts = dict(txn=txn, create=not self.readonly)
            if txn is None:
                del opts["txn"]
            self.idb_state = ienv.open_db(b"state", **opts)
            self.idb_pos = ienv.open_db(b"pos", **dup, **opts)
            self.idb_osp = ienv.open_db(b"osp", **dup, **opts)
            self.idb_sg = ienv.open_db(b"sg", **dup, **opts)

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
                if version != FORMAT_VERSION:
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
        with self.env.begin() as txn:
            has_data = bool(txn.stat(self.db_rec)["entries"] or txn.stat(self.db_gx)["entries"])
            last = _last_seq(txn, self.db_log)
        with self.ienv.begin(write=True) as itxn:
            ifmt = itxn.get(b"format", db=self.idb_state)
            if ifmt != str(INDEX_FORMAT_VERSION).encode():
                # Derived data missing or of another format: drop it; index()
                # rebuilds it from the graphs (nothing to do for an empty store).
                for db in (self.idb_pos, self.idb_osp, self.idb_sg, self.idb_state):
                    itxn.drop(db, delete=False)
                itxn.put(b"format", str(INDEX_FORMAT_VERSION).encode(), db=self.idb_state)
                itxn.put(b"seq", be(last if not has_data else 0), db=self.idb_state)
                if has_data:
                    itxn.put(b"rebuild", be_n(last, 0, 0, 2), db=self.idb_state)

    # -- transactions -------------------------------------------------------------

    cdef _check_open(self):
        if self.closed:
            raise StoreError("The store is closed")
        if os.getpid() != self.pid:
            raise StoreError("The store was opened in another process (before a fork): "
                             "open it again in this process")

    def read(self):
        """A read snapshot (context manager)."""
        self._check_open()
        return ReadTxn(self, False)

    def write(self):
        """The write transaction (context manager)."""
        self._check_open()
        if self.readonly:
            raise StoreError("The store is open read-only")
        self._ensure_room()
        return WriteTxn(self, True)

    cdef _begin(self, env, bint write):
        try:
            return env.begin(write=write)
        except lmdb.MapResizedError:
            env.set_mapsize(0)   # another process grew the map: adopt its size
            return env.begin(write=write)

    cdef _ensure_room(self):
        """Grow the map before a write when it is more than half used."""
        if self.open_txns:
            return
        for env in (self.env, self.ienv):
            info = env.info()
            used = (info["last_pgno"] + 1) * env.stat()["psize"]
            if used * 2 > info["map_size"]:
                self._grow(env)

    cdef _grow(self, env):
        env.set_mapsize(env.info()["map_size"] * 2)

    def index(self):
        """Bring the union-graph indices up to date; returns log entries applied."""
        self._check_open()
        if self.readonly:
            return 0
        return Indexer(self).run()

    def pending(self):
        """How many logged writes the union-graph indices have not taken in yet."""
        self._check_open()
        with self.env.begin() as txn, self.ienv.begin() as itxn:
            return _last_seq(txn, self.db_log) - _applied_seq(itxn, self.idb_state)

    def stats(self):
        """Counts and sizes: quads, graphs, terms, store bytes, map size."""
        self._check_open()
        with self.read() as txn:
            out = txn.stats()
        out["store_bytes"] = self.disk_size()
        out["map_size"] = self.env.info()["map_size"]
        out["format"] = FORMAT_VERSION
        return out

    def disk_size(self):
        """Bytes of the LMDB files on disk."""
        total = 0
        for d in (self.path, os.path.join(self.path, "index")):
            for name in ("data.mdb", "lock.mdb"):
                p = os.path.join(d, name)
                if os.path.exists(p):
                    total += os.stat(p).st_blocks * 512
        return total

    def copy(self, str dest, bint compact=False):
        """A consistent copy of the store into directory ``dest`` (must not exist).

        The main environment is copied from one snapshot; the union-graph index
        is derived data and is not copied: the copy rebuilds it on first use.
        ``compact`` is off by default (py-lmdb 3.0.0 can crash compacting
        dupsort/dupfixed tables).
        """
        self._check_open()
        if os.path.exists(dest):
            raise StoreError(f"{dest} exists already")
        os.makedirs(os.path.join(dest, "index"))
        self.env.copy(dest, compact=compact)

    def close(self):
        if self.closed:
            return
        self.closed = True
        if os.getpid() == self.pid:
            self.env.close()
            self.ienv.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __dealloc__(self):
        pass

    # -- the IRI cache (committed IRIs only; ids never change meaning) -----

    cdef _remember(self, dict iris):
        if len(self.iri_ids) + len(iris) > _MAX_CACHE:
            self.iri_ids.clear()
            self.iri_strs.clear()
        for term, tid in iris.items():
            self.iri_ids[term] = tid
            self.iri_strs[tid] = term

    def _forget_cache(self):
        """Drop the term caches (after a clean-up that removed terms)."""
        self.iri_ids.clear()
        self.iri_strs.clear()


cdef uint64_t _last_seq(txn, db) except? 0:
    cur = txn.cursor(db=db)
    if cur.last():
        return id_of(cur.key(), 0)
    return 0


cdef uint64_t _applied_seq(itxn, db) except? 0:
    v = itxn.get(b"seq", db=db)
    return id_of(v, 0) if v is not None else 0


# --- transactions ---------------------------------------------------------------

cdef class ReadTxn:
    """A read snapshot of the store; the base of ``WriteTxn``."""

    cdef QuadStore store
    cdef object txn, itxn
    cdef bint write
    cdef bint done
    cdef dict records        # graph id -> Record or None (this txn's view)
    cdef dict new_iris       # IRIs written in this txn (str -> id)
    cdef set touched         # graph ids changed in this txn

    def __cinit__(self, QuadStore store, bint write):
        self.store = store
        self.write = write
        self.records = {}
        self.new_iris = {}
        self.touched = set()
        self.txn = store._begin(store.env, write)
        self.itxn = None
        self.done = False
        store.open_txns += 1

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None and self.write:
            self.commit()
        else:
            self.abort()

    def commit(self):
        """Commit (a read snapshot just ends)."""
        if self.done:
            return
        self._end()
        try:
            self.txn.commit()
        except lmdb.MapFullError as e:
            self.store._grow(self.store.env)
            raise StoreError("The store ran out of map space during a commit; "
                             "it has grown: retry the write") from e
        if self.new_iris:
            self.store._remember(self.new_iris)

    def abort(self):
        if self.done:
            return
        self._end()
        self.txn.abort()

    cdef _end(self):
        self.done = True
        self.store.open_txns -= 1
        if self.itxn is not None:
            self.itxn.abort()
            self.itxn = None

    cdef _check(self):
        if self.done:
            raise StoreError("The transaction has ended")

    # -- term ids --------------------------------------------------------------

    cdef inline uint64_t natural_id(self, uint64_t tid) noexcept:
        """A term's hash id cut to the store's hash width; never 0 (0 means none)."""
        cdef uint64_t v = (tid & KIND_MASK) | (tid & self.store.hash_mask)
        return v if v else 1

    cdef uint64_t probe(self, uint64_t tid, uint64_t start) except 0:
        cdef uint64_t nxt = next_probe(tid, self.store.hash_mask)
        if nxt == 0:
            nxt = 1
        if nxt == start:
            raise StoreError("The term id space is full (hash_bits too small)")
        return nxt

    cdef uint64_t iri_id(self, str term, bint create) except? 1:
        """The id of a canonical IRI; 0 when unknown and not ``create``."""
        tid = self.store.iri_ids.get(term)
        if tid is not None:
            return tid
        tid = self.new_iris.get(term)
        if tid is not None:
            return tid
        cdef uint64_t nid = self.natural_id(term_id(term)), cand
        cdef bytes data = term.encode("utf-8", "surrogatepass")
        cdef bytes found = self.txn.get(be(nid), db=self.store.db_terms)
        if found == data:
            self._found_iri(term, nid)
            return nid
        if found is not None:
            for alt in self._collisions(nid):
                if self.txn.get(be(alt), db=self.store.db_terms) == data:
                    self._found_iri(term, alt)
                    return alt
        if not create:
            return 0
        cand = nid
        while found is not None:
            cand = self.probe(cand, nid)
            found = self.txn.get(be(cand), db=self.store.db_terms)
        self.txn.put(be(cand), data, db=self.store.db_terms)
        if cand != nid:
            self.txn.put(be(nid), be(cand), db=self.store.db_collide)
        self.new_iris[term] = cand
        return cand

    cdef _found_iri(self, str term, uint64_t tid):
        if self.write:
            self.new_iris[term] = tid   # cached only once committed
        else:
            self.store._remember({term: tid})

    cdef list _collisions(self, uint64_t nid):
        cur = self.txn.cursor(db=self.store.db_collide)
        if not cur.set_key(be(nid)):
            return []
        return [id_of(v, 0) for v in cur.iternext_dup()]

    cdef list local_candidates(self, str term):
        """Possible ids of a literal / blank node (its hash, then probed ids)."""
        cdef uint64_t nid = self.natural_id(term_id(term))
        return [nid] + self._collisions(nid)

    cdef list candidates(self, str term):
        """Ids a bound pattern term may have (empty: cannot match)."""
        cdef uint64_t tid
        if kind_of(term) == KIND_IRI:
            tid = self.iri_id(term, False)
            return [tid] if tid else []
        return self.local_candidates(term)

    cdef str decode_iri(self, uint64_t tid):
        s = self.store.iri_strs.get(tid)
        if s is not None:
            return s
        data = self.txn.get(be(tid), db=self.store.db_terms)
        if data is None:
            raise StoreError(f"Corrupt store: IRI id {tid:#x} has no term")
        s = data.decode("utf-8", "surrogatepass")
        if not self.write:
            self.store._remember({s: tid})
        return s

    cdef str decode(self, uint64_t tid, Record rec):
        """The term of id ``tid`` in a graph whose record is ``rec``."""
        cdef Py_ssize_t i
        if kind(tid) == KIND_IRI:
            return self.decode_iri(tid)
        if rec is not None:
            i = rec.find(tid)
            if i >= 0:
                return rec.term_at(i)
        return None

    cdef str decode_opt(self, uint64_t tid, Record rec):
        """Like ``decode``, but None for an IRI this snapshot does not hold."""
        if kind(tid) != KIND_IRI:
            return self.decode(tid, rec)
        s = self.store.iri_strs.get(tid)
        if s is not None:
            return s
        data = self.txn.get(be(tid), db=self.store.db_terms)
        if data is None:
            return None
        s = data.decode("utf-8")
        if not self.write:
            self.store._remember({s: tid})
        return s

    # -- graphs ----------------------------------------------------------------

    cdef Record record(self, uint64_t gid):
        if gid in self.records:
            return self.records[gid]
        data = self.txn.get(be(gid), db=self.store.db_rec)
        rec = Record(data) if data is not None else None
        self.records[gid] = rec
        return rec

    cdef list gx_ids(self, uint64_t gid, uint64_t s, uint64_t p):
        """(s, p, o) ids of graph ``gid``'s one-by-one quads, optionally by s / p."""
        cdef list out = []
        cdef int n = 1 + (s != 0) + (s != 0 and p != 0)
        cdef bytes prefix = be_n(gid, s, p, n)
        cdef bytes key
        cur = self.txn.cursor(db=self.store.db_gx)
        if not cur.set_range(prefix):
            return out
        cdef Py_ssize_t plen = 8 * n, i, count
        cdef uint64_t ks, kp
        cdef const unsigned char *buf
        while True:
            key = cur.key()
            if key[:plen] != prefix:
                break
            ks = id_of(key, 8)
            kp = id_of(key, 16)
            if cur.count() > 8:
                view = cur.getmulti([key], dupdata=True, dupfixed_bytes=8, keyfixed=True)
                raw = bytes(view)
                buf = <const unsigned char *>PyBytes_AS_STRING(raw)
                count = len(raw) // 32
                for i in range(count):
                    out.append((ks, kp, get_be(buf + 32 * i + 24)))
                if not cur.set_range(key + b"\xff"):
                    break
            else:
                for v in cur.iternext_dup():
                    out.append((ks, kp, id_of(v, 0)))
                if not cur.next_nodup():
                    break
        return out

    cdef list graph_ids(self, uint64_t gid):
        """All (s, p, o) ids of a graph."""
        cdef Record rec = self.record(gid)
        cdef list out = rec.triple_ids() if rec is not None else []
        out.extend(self.gx_ids(gid, 0, 0))
        return out

    def triples(self, g):
        """All triples of graph ``g`` (empty list if there is none)."""
        self._check()
        g = _check_term(g, "graph name")
        if kind_of(g) != KIND_IRI:
            raise TermError("A graph name must be an IRI")
        cdef uint64_t gid = self.iri_id(g, False)
        if not gid:
            return []
        return self._decode_triples(gid, self.graph_ids(gid))

    cdef list _decode_triples(self, uint64_t gid, list ids):
        cdef Record rec = self.record(gid)
        cdef dict memo = {}
        cdef list out = []
        cdef uint64_t s, p, o
        for s, p, o in ids:
            ts = memo.get(s)
            if ts is None:
                ts = memo[s] = self.decode(s, rec)
            tp = memo.get(p)
            if tp is None:
                tp = memo[p] = self.decode(p, rec)
            to = memo.get(o)
            if to is None:
                to = memo[o] = self.decode(o, rec)
            if ts is None or tp is None or to is None:
                raise StoreError(f"Corrupt store: undecodable term in graph {gid:#x}")
            out.append((ts, tp, to))
        return out

    def has_graph(self, g):
        self._check()
        g = _check_term(g, "graph name")
        cdef uint64_t gid = self.iri_id(g, False)
        if not gid:
            return False
        rec = self.record(gid)
        if rec is not None and len(rec):
            return True
        cur = self.txn.cursor(db=self.store.db_gx)
        return bool(cur.set_range(be(gid))) and cur.key()[:8] == be(gid)

    cdef set graph_id_set(self):
        cdef set out = set()
        cur = self.txn.cursor(db=self.store.db_rec)
        for key, value in cur.iternext():
            if len(value) > 8 and Record(value).n_triples:
                out.add(id_of(key, 0))
        cur = self.txn.cursor(db=self.store.db_gx)
        ok = cur.first()
        while ok:
            gid = id_of(cur.key(), 0)
            out.add(gid)
            ok = cur.set_range(be(gid + 1)) if gid < 0xFFFFFFFFFFFFFFFF else False
        return out

    def graphs(self):
        """Every graph that holds at least one quad."""
        self._check()
        return iter([self.decode_iri(gid) for gid in sorted(self.graph_id_set())])

    def graph_count(self):
        self._check()
        return len(self.graph_id_set())

    # -- patterns ---------------------------------------------------------------

    def match(self, s=None, p=None, o=None, g=None):
        """Quads matching a pattern; any of the 16 bound/unbound combinations."""
        self._check()
        s, p, o, g = _check_pattern(s, p, o, g)
        return iter(self._match(s, p, o, g))

    def count(self, s=None, p=None, o=None, g=None, *, bint distinct=False,
              str graph_prefix=None):
        """How many quads match the pattern; with ``distinct``, how many distinct
        triples (a triple in several graphs counts once, as in SPARQL's union).
        ``graph_prefix``: count only quads of the graphs whose name (a canonical
        term, ``<...``) starts with it."""
        self._check()
        s, p, o, g = _check_pattern(s, p, o, g)
        cdef uint64_t gid, sid, pid
        if graph_prefix is not None:
            if g is not None and not g.startswith(graph_prefix):
                return 0
            if g is None:
                if not self.touched and (o is not None or p is not None) and (
                        s is None or kind_of(s) == KIND_IRI) and (
                        o is None or kind_of(o) == KIND_IRI):
                    return self._count_index(s, p, o, distinct, graph_prefix)
                quads = [q for q in self._match(s, p, o, g) if q[3].startswith(graph_prefix)]
                return len({q[:3] for q in quads}) if distinct else len(quads)
        if g is not None and s is not None and p is not None and o is None:
            # The containment case: O(1) on the one-by-one quads.
            gid = self.iri_id(g, False)
            if not gid:
                return 0
            n = 0
            for sid in self.candidates(s):
                pid = self.iri_id(p, False)
                if not pid:
                    return 0
                cur = self.txn.cursor(db=self.store.db_gx)
                if cur.set_key(be_n(gid, sid, pid, 3)):
                    n += cur.count()
                rec = self.record(gid)
                if rec is not None:
                    n += sum(1 for t in rec.triple_ids() if t[0] == sid and t[1] == pid)
            return n
        if g is None and not self.touched and (o is not None or p is not None) and (
                s is None or kind_of(s) == KIND_IRI) and (o is None or kind_of(o) == KIND_IRI):
            return self._count_index(s, p, o, distinct, None)
        if distinct and g is None:
            return len({q[:3] for q in self._match(s, p, o, g)})
        return len(self._match(s, p, o, g))

    cdef Py_ssize_t _count_index(self, s, p, o, bint distinct, str graph_prefix) except -1:
        """Count a union pattern of IRIs on the index, decoding nothing but, with
        ``graph_prefix``, the name of each graph met (once)."""
        self._ensure_index()
        cdef uint64_t sid = 0, pid = 0, oid = 0, key, rg, prev_g = 0
        cdef Py_ssize_t n = 0, i, rows
        cdef bytes raw
        cdef const unsigned char *buf
        cdef dict keep = {}
        cdef bint prev_ok = False
        for term, slot in ((s, 0), (p, 1), (o, 2)):
            if term is not None:
                key = self.iri_id(term, False)
                if not key:
                    return 0
                if slot == 0:
                    sid = key
                elif slot == 1:
                    pid = key
                else:
                    oid = key
        # osp: o -> (s, p, g); pos: p -> (o, s, g). Which fields must match:
        db = self.store.idb_osp if oid else self.store.idb_pos
        key = oid if oid else pid
        cur = self.itxn.cursor(db=db)
        if not cur.set_key(be(key)):
            return 0
        if not distinct and graph_prefix is None and (
                (oid and not sid and not pid) or (not oid and not sid)):
            return cur.count()
        raw = bytes(cur.getmulti([be(key)], dupdata=True, dupfixed_bytes=24, keyfixed=True))
        buf = <const unsigned char *>PyBytes_AS_STRING(raw)
        rows = len(raw) // 32
        # Values are sorted with the graph last: copies of one triple are adjacent.
        cdef const unsigned char *prev = NULL
        cdef const unsigned char *row
        for i in range(rows):
            row = buf + 32 * i
            if oid:
                if (sid and get_be(row + 8) != sid) or (pid and get_be(row + 16) != pid):
                    continue
            elif sid and get_be(row + 16) != sid:
                continue
            if distinct and prev != NULL and memcmp(prev + 8, row + 8, 16) == 0:
                continue
            if graph_prefix is not None:
                rg = get_be(row + 24)
                if rg != prev_g or not prev_g:
                    ok = keep.get(rg)
                    if ok is None:
                        name = self.decode_opt(rg, None)
                        ok = keep[rg] = name is not None and name.startswith(graph_prefix)
                    prev_g, prev_ok = rg, ok
                if not prev_ok:
                    continue
            prev = row
            n += 1
        return n

    cdef list _match(self, s, p, o, g):
        cdef list out = []
        cdef uint64_t gid
        if g is not None:
            gid = self.iri_id(g, False)
            if gid:
                self._match_graph(gid, g, s, p, o, out)
            return out
        return self._match_union(s, p, o)

    cdef _match_graph(self, uint64_t gid, str g, s, p, o, list out):
        """Match (s, p, o) inside one graph, appending decoded quads to ``out``."""
        cdef Record rec = self.record(gid)
        cdef list sc = self.candidates(s) if s is not None else None
        cdef list pc = self.candidates(p) if p is not None else None
        cdef list oc = self.candidates(o) if o is not None else None
        if (sc is not None and not sc) or (pc is not None and not pc) or (
                oc is not None and not oc):
            return
        cdef list ids
        cdef bint one_s = sc is not None and len(sc) == 1 and (pc is None or len(pc) == 1)
        if one_s and oc is None and kind(sc[0]) == KIND_IRI and pc is not None:
            # (s, p, ?, g): the containment listing; stream decoded quads.
            self._emit_gx(gid, sc[0], pc[0], s, p, g, out)
            ids = rec.triple_ids_for(sc[0], pc[0]) if rec is not None else []
        elif one_s:
            ids = self.gx_ids(gid, sc[0], pc[0] if pc is not None else 0)
            if rec is not None:
                ids = rec.triple_ids_for(sc[0], pc[0] if pc is not None else 0) + ids
        else:
            ids = self.gx_ids(gid, 0, 0)
            if rec is not None:
                ids = rec.triple_ids() + ids
        cdef set ss = set(sc) if sc is not None else None
        cdef set ps = set(pc) if pc is not None else None
        cdef set os_ = set(oc) if oc is not None else None
        cdef list hits = [t for t in ids
                          if (ss is None or t[0] in ss) and (ps is None or t[1] in ps)
                          and (os_ is None or t[2] in os_)]
        for ts, tp, to in self._decode_triples(gid, hits):
            # Literal / blank node ids are hashes: confirm on the string.
            if (s is None or ts == s) and (o is None or to == o):
                out.append((ts, tp, to, g))

    cdef _emit_gx(self, uint64_t gid, uint64_t sid, uint64_t pid, str s, str p, str g,
                  list out):
        """Append the decoded quads (s, p, ?o, g) of graph ``gid``'s gx entries."""
        cur = self.txn.cursor(db=self.store.db_gx)
        cdef bytes key = be_n(gid, sid, pid, 3)
        if not cur.set_key(key):
            return
        cdef bytes raw = bytes(cur.getmulti([key], dupdata=True, dupfixed_bytes=8,
                                            keyfixed=True))
        cdef const unsigned char *buf = <const unsigned char *>PyBytes_AS_STRING(raw)
        cdef Py_ssize_t i, n = len(raw) // 32
        cdef dict cache = self.store.iri_strs
        cdef uint64_t oid
        for i in range(n):
            oid = get_be(buf + 32 * i + 24)
            to = cache.get(oid)
            if to is None:
                to = self.decode_iri(oid)
            out.append((s, p, to, g))

    cdef list _match_union(self, s, p, o):
        """Match over the union of graphs through the indices."""
        cdef list out = []
        cdef set skip = set(self.touched)
        self._ensure_index()
        cdef uint64_t gid
        cdef list gids
        if s is None and p is None and o is None:
            gids = sorted(self.graph_id_set())
        elif s is not None and o is None:
            gids = sorted(self._subject_graphs(s))
        else:
            gids = None
        if gids is not None:
            for gid in gids:
                self._match_graph(gid, self.decode_iri(gid), s, p, o, out)
            return out
        # o bound (osp), or p bound and o unbound (pos).
        cdef list rows = self._index_rows(s, p, o)
        cdef dict gnames = {}
        cdef Record rec
        cdef uint64_t rs, rp, ro, rg
        for rs, rp, ro, rg in rows:
            if rg in skip:
                continue
            rec = self.record(rg) if (kind(rs) != KIND_IRI or kind(ro) != KIND_IRI) else None
            ts = self.decode_opt(rs, rec)
            tp = self.decode_opt(rp, rec)
            to = self.decode_opt(ro, rec)
            if ts is None or tp is None or to is None:
                continue   # written after this snapshot
            if (s is not None and ts != s) or (o is not None and to != o):
                continue
            gname = gnames.get(rg)
            if gname is None:
                gname = gnames[rg] = self.decode_opt(rg, None)
            if gname is None:
                continue
            out.append((ts, tp, to, gname))
        # Graphs changed in this (write) transaction: read them directly.
        for gid in sorted(skip):
            if self.record(gid) is not None or self.gx_ids(gid, 0, 0):
                self._match_graph(gid, self.decode_iri(gid), s, p, o, out)
        return out

    cdef set _subject_graphs(self, str s):
        cdef set out = set()
        cur = self.itxn.cursor(db=self.store.idb_sg)
        for sid in self.candidates(s):
            if cur.set_key(be(sid)):
                for v in cur.iternext_dup():
                    out.add(id_of(v, 0))
        out.difference_update(self.touched)
        out.update(self.touched)
        return out

    cdef list _index_rows(self, s, p, o):
        """(s, p, o, g) id rows from ``osp`` (o bound) or ``pos`` (p bound)."""
        cdef list rows = []
        cdef uint64_t pid = 0, sid = 0
        cdef bytes raw
        cdef const unsigned char *buf
        cdef Py_ssize_t i, n
        if p is not None:
            pid = self.iri_id(p, False)
            if not pid:
                return rows
        if o is not None:
            db = self.store.idb_osp
            keys = self.candidates(o)
        else:
            db = self.store.idb_pos
            keys = [pid]
        cur = self.itxn.cursor(db=db)
        for key in keys:
            if not cur.set_key(be(key)):
                continue
            raw = bytes(cur.getmulti([be(key)], dupdata=True, dupfixed_bytes=24,
                                     keyfixed=True))
            buf = <const unsigned char *>PyBytes_AS_STRING(raw)
            n = len(raw) // 32
            for i in range(n):
                if o is not None:   # osp: o -> s, p, g
                    rows.append((get_be(buf + 32 * i + 8), get_be(buf + 32 * i + 16),
                                 key, get_be(buf + 32 * i + 24)))
                else:               # pos: p -> o, s, g
                    rows.append((get_be(buf + 32 * i + 16), key,
                                 get_be(buf + 32 * i + 8), get_be(buf + 32 * i + 24)))
        if o is not None and p is not None:
            rows = [r for r in rows if r[1] == pid]
        return rows

    cdef _ensure_index(self):
        """Take in every logged write committed before this transaction."""
        if self.itxn is not None:
            return
        cdef uint64_t want = _last_seq(self.txn, self.store.db_log)
        if self.write:
            # Our own uncommitted entries are read from the graphs directly.
            want = _committed_seq(self.store)
        itxn = self.store.ienv.begin()
        if _applied_seq(itxn, self.store.idb_state) < want:
            itxn.abort()
            if self.store.readonly:
                raise StoreError("The union-graph indices are behind and the store "
                                 "is read-only: run lsup-admin index")
            Indexer(self.store).run(want)
            itxn = self.store.ienv.begin()
        self.itxn = itxn

    # -- namespaces -------------------------------------------------------------

    def namespaces(self):
        """prefix -> namespace IRI."""
        self._check()
        cur = self.txn.cursor(db=self.store.db_ns)
        return {k[1:].decode(): v.decode() for k, v in cur.iternext()}

    def namespace(self, str prefix):
        self._check()
        v = self.txn.get(_ns_key(prefix), db=self.store.db_ns)
        return v.decode() if v is not None else None

    def prefix(self, str namespace):
        self._check()
        v = self.txn.get(namespace.encode(), db=self.store.db_nsr)
        return v.decode() if v is not None else None

    def stats(self):
        """Entry counts of the main tables."""
        self._check()
        st = self.txn.stat
        cdef Py_ssize_t quads = st(self.store.db_gx)["entries"]
        cur = self.txn.cursor(db=self.store.db_rec)
        for value in cur.iternext(keys=False):
            quads += Record(value).n_triples
        return {"quads": quads, "graphs": self.graph_count(),
                "iris": st(self.store.db_terms)["entries"],
                "records": st(self.store.db_rec)["entries"],
                "log_entries": st(self.store.db_log)["entries"]}


cdef uint64_t _committed_seq(QuadStore store) except? 0:
    with store.env.begin() as txn:
        return _last_seq(txn, store.db_log)


cdef class WriteTxn(ReadTxn):
    """The one write transaction; commits on success, aborts on exception."""

    def __enter__(self):
        return self

    # -- logging -----------------------------------------------------------------

    cdef _log(self, int kind_, uint64_t gid, list removed, list added):
        """Append a change entry for the indexer (trimming what it has taken in)."""
        cdef uint64_t seq = _last_seq(self.txn, self.store.db_log) + 1
        if not self.touched:
            self._trim_log()
        parts = [_LOG_HEAD.pack(kind_, gid, len(removed), len(added))]
        parts.append(_pack_triples(removed))
        parts.append(_pack_triples(added))
        self.txn.put(be(seq), b"".join(parts), db=self.store.db_log, append=True)
        self.touched.add(gid)

    cdef _trim_log(self):
        """Drop log entries the index has taken in (they are at the log's head)."""
        cur = self.txn.cursor(db=self.store.db_log)
        if not cur.first():
            return
        cdef uint64_t head = id_of(cur.key(), 0)
        with self.store.ienv.begin() as itxn:
            applied = _applied_seq(itxn, self.store.idb_state)
        if head > applied:
            return
        while True:
            key = cur.key()
            if not key or id_of(key, 0) > applied:
                break
            cur.delete()

    # -- encoding for writes ---------------------------------------------------------

    cdef uint64_t _write_local(self, bytes data, int k, dict local) except? 1:
        """Id of a literal / blank node being written into ``local`` (id -> bytes)."""
        cdef uint64_t nid = self.natural_id(id_of_utf8(k, data)), cand = nid
        cur = local.get(cand)
        while cur is not None and cur != data:
            cand = self.probe(cand, nid)
            cur = local.get(cand)
        if cand != nid and cur is None:
            # Deterministic: probed ids are recorded so lookups find them.
            self.txn.put(be(nid), be(cand), db=self.store.db_collide, dupdata=True)
        local[cand] = data
        return cand

    cdef tuple _encode(self, triples, dict local):
        """Check and encode triples: (uint64 buffer as bytes, count)."""
        cdef list rows = list(triples)
        cdef Py_ssize_t n = len(rows), i = 0
        cdef bytes buf = PyBytes_FromStringAndSize(NULL, 24 * n if n else 1)
        cdef uint64_t *ids = <uint64_t *>PyBytes_AS_STRING(buf)
        cdef dict seen = {}
        for row in rows:
            try:
                s, p, o = row
            except (TypeError, ValueError):
                raise TermError(f"A triple must be a (subject, predicate, object) "
                                f"tuple, not {row!r:.80}") from None
            ids[3 * i] = self._triple_term(s, 0, local, seen)
            ids[3 * i + 1] = self._triple_term(p, 1, local, seen)
            ids[3 * i + 2] = self._triple_term(o, 2, local, seen)
            i += 1
        n = sort_unique(ids, n)
        return buf, n

    cdef uint64_t _triple_term(self, term, int pos, dict local, dict seen) except? 1:
        tid = self.store.iri_ids.get(term)   # a known (so canonical) IRI
        if tid is not None:
            return tid
        tid = seen.get(term)
        if tid is not None:
            if pos == 1 and kind(tid) != KIND_IRI:
                raise TermError("A predicate must be an IRI")
            if pos == 0 and kind(tid) == KIND_LITERAL:
                raise TermError("A literal cannot be a subject")
            return tid
        if type(term) is not str:
            _check_term(term, ("subject", "predicate", "object")[pos])
        cdef int k = 0
        cdef bytes data = canonical_utf8(term, &k)
        cdef uint64_t v
        if pos == 0 and k == KIND_LITERAL:
            raise TermError(f"A literal cannot be a subject: {term[:80]}")
        if pos == 1 and k != KIND_IRI:
            raise TermError(f"A predicate must be an IRI: {term[:80]}")
        if k == KIND_IRI:
            v = self.iri_id(data.decode("utf-8"), True)
        else:
            v = self._write_local(data, k, local)
        seen[term] = v
        return v

    cdef uint64_t _graph_id(self, g) except? 1:
        g = _check_term(g, "graph name")
        if kind_of(g) != KIND_IRI:
            raise TermError("A graph name must be an IRI")
        return self.iri_id(g, True)

    # -- writes --------------------------------------------------------------------

    def add_graph(self, g, triples):
        """Set the whole content of graph ``g``."""
        self._check()
        cdef uint64_t gid = self._graph_id(g)
        cdef dict local = {}
        buf, n = self._encode(triples, local)
        cdef list old = self.graph_ids(gid)
        self._clear_gx(gid)
        if n:
            data = encode_record(local, <uint64_t *>PyBytes_AS_STRING(buf), n)
            self.txn.put(be(gid), data, db=self.store.db_rec)
            self.records[gid] = Record(data)
        else:
            self.txn.delete(be(gid), db=self.store.db_rec)
            self.records[gid] = None
        self._log(LOG_REPLACE, gid, old, [])

    cdef _clear_gx(self, uint64_t gid):
        cur = self.txn.cursor(db=self.store.db_gx)
        prefix = be(gid)
        while cur.set_range(prefix) and cur.key()[:8] == prefix:
            cur.delete(dupdata=True)

    def add(self, quads):
        """Add quads (duplicates ignored); returns how many were new."""
        self._check()
        cdef dict by_graph = {}
        for q in quads:
            try:
                s, p, o, g = q
            except (TypeError, ValueError):
                raise TermError(f"A quad must be a (s, p, o, g) tuple, not {q!r:.80}") from None
            by_graph.setdefault(g, []).append((s, p, o))
        cdef int added = 0
        for g, triples in by_graph.items():
            added += self._add_to_graph(self._graph_id(g), triples)
        return added

    cdef int _add_to_graph(self, uint64_t gid, list triples) except -1:
        cdef Record rec = self.record(gid)
        cdef dict local = rec.local_terms() if rec is not None else {}
        cdef Py_ssize_t n_local = len(local)
        buf, n = self._encode(triples, local)
        cdef uint64_t *ids = <uint64_t *>PyBytes_AS_STRING(buf)
        cdef list fresh = []
        cdef list to_record = []
        cdef Py_ssize_t i
        cdef uint64_t s, p, o
        for i in range(n):
            s, p, o = ids[3 * i], ids[3 * i + 1], ids[3 * i + 2]
            if rec is not None and rec.find_triple(s, p, o) >= 0:
                continue
            if kind(s) == KIND_IRI and kind(o) == KIND_IRI:
                if self.txn.put(be_n(gid, s, p, 3), be(o), db=self.store.db_gx,
                                dupdata=False):
                    fresh.append((s, p, o))
            else:
                to_record.append((s, p, o))
        if to_record:
            self._put_record(gid, (rec.triple_ids() if rec is not None else []) + to_record,
                             local)
            fresh.extend(to_record)
        if fresh:
            self._log(LOG_DELTA, gid, [], fresh)
        return len(fresh)

    cdef _put_record(self, uint64_t gid, list triples, dict local):
        """Write graph ``gid``'s record from id triples, keeping only used locals."""
        cdef Py_ssize_t m = len(triples), i
        if not m:
            self.txn.delete(be(gid), db=self.store.db_rec)
            self.records[gid] = None
            return
        cdef bytes mbuf = PyBytes_FromStringAndSize(NULL, 24 * m)
        cdef uint64_t *mids = <uint64_t *>PyBytes_AS_STRING(mbuf)
        for i in range(m):
            mids[3 * i], mids[3 * i + 1], mids[3 * i + 2] = triples[i]
        m = sort_unique(mids, m)
        used = {x for t in triples for x in t}
        data = encode_record({k: v for k, v in local.items() if k in used}, mids, m)
        self.txn.put(be(gid), data, db=self.store.db_rec)
        self.records[gid] = Record(data)

    def remove(self, s=None, p=None, o=None, g=None):
        """Remove every quad matching the pattern; returns how many."""
        self._check()
        s, p, o, g = _check_pattern(s, p, o, g)
        cdef list hits = self._match(s, p, o, g)
        cdef dict by_graph = {}
        for qs, qp, qo, qg in hits:
            by_graph.setdefault(qg, []).append((qs, qp, qo))
        for gname, triples in by_graph.items():
            self._remove_from_graph(self.iri_id(gname, False), triples)
        return len(hits)

    cdef _remove_from_graph(self, uint64_t gid, list triples):
        cdef Record rec = self.record(gid)
        cdef list removed = []
        cdef set in_record = set()
        cdef uint64_t s, p, o
        for ts, tp, to in triples:
            s = self._known_id(ts, rec)
            p = self._known_id(tp, rec)
            o = self._known_id(to, rec)
            if rec is not None and rec.find_triple(s, p, o) >= 0:
                in_record.add((s, p, o))
            else:
                cur = self.txn.cursor(db=self.store.db_gx)
                if cur.set_key_dup(be_n(gid, s, p, 3), be(o)):
                    cur.delete()
            removed.append((s, p, o))
        if in_record:
            self._put_record(gid, [t for t in rec.triple_ids() if t not in in_record],
                             rec.local_terms())
        if removed:
            self._log(LOG_DELTA, gid, removed, [])

    cdef uint64_t _known_id(self, str term, Record rec) except? 1:
        """Id of a term known to be in graph ``rec`` (or in its one-by-one quads)."""
        if kind_of(term) == KIND_IRI:
            return self.iri_id(term, False)
        data = term.encode("utf-8", "surrogatepass")
        for cand in self.local_candidates(term):
            if rec is not None:
                i = rec.find(cand)
                if i >= 0 and rec.term_at(i) == term:
                    return cand
        raise StoreError(f"Term {term[:80]} is not in the graph")

    def remove_graph(self, g):
        """Remove graph ``g`` entirely; returns how many quads it held."""
        self._check()
        g = _check_term(g, "graph name")
        cdef uint64_t gid = self.iri_id(g, False)
        if not gid:
            return 0
        cdef list old = self.graph_ids(gid)
        if not old:
            return 0
        self._clear_gx(gid)
        self.txn.delete(be(gid), db=self.store.db_rec)
        self.records[gid] = None
        self._log(LOG_REPLACE, gid, old, [])
        return len(old)

    def bind(self, str prefix, str namespace, bint override=True):
        """Bind a namespace prefix."""
        self._check()
        namespace = _check_term("<" + namespace + ">", "namespace")[1:-1]
        old_ns = self.txn.get(_ns_key(prefix), db=self.store.db_ns)
        old_prefix = self.txn.get(namespace.encode(), db=self.store.db_nsr)
        if not override and (old_ns is not None or old_prefix is not None):
            return
        if old_ns is not None:
            self.txn.delete(old_ns, db=self.store.db_nsr)
        if old_prefix is not None:
            self.txn.delete(b":" + old_prefix, db=self.store.db_ns)
        self.txn.put(_ns_key(prefix), namespace.encode(), db=self.store.db_ns)
        self.txn.put(namespace.encode(), prefix.encode(), db=self.store.db_nsr)

    def unbind(self, str prefix):
        self._check()
        old_ns = self.txn.get(_ns_key(prefix), db=self.store.db_ns)
        if old_ns is not None:
            self.txn.delete(_ns_key(prefix), db=self.store.db_ns)
            self.txn.delete(old_ns, db=self.store.db_nsr)


def _ns_key(prefix):
    """Key of a prefix in ``ns`` (a marker byte: the empty prefix is valid)."""
    if not isinstance(prefix, str):
        raise TermError(f"A prefix must be a str, not {type(prefix).__name__}")
    return b":" + prefix.encode("utf-8")


cdef bytes _pack_triples(list triples):
    cdef Py_ssize_t n = len(triples), i
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 24 * n)
    cdef unsigned char *buf = <unsigned char *>PyBytes_AS_STRING(out)
    cdef uint64_t s, p, o
    for i in range(n):
        s, p, o = triples[i]
        put_be(buf + 24 * i, s)
        put_be(buf + 24 * i + 8, p)
        put_be(buf + 24 * i + 16, o)
    return out


cdef list _unpack_triples(bytes data, Py_ssize_t start, Py_ssize_t n):
    cdef const unsigned char *buf = <const unsigned char *>PyBytes_AS_STRING(data) + start
    cdef Py_ssize_t i
    return [(get_be(buf + 24 * i), get_be(buf + 24 * i + 8), get_be(buf + 24 * i + 16))
            for i in range(n)]


cdef list _graphs_after(ReadTxn rt, uint64_t after, Py_ssize_t limit):
    """Up to about ``limit`` graph ids greater than ``after``, ascending."""
    cdef set out = set()
    cdef uint64_t upper = 0xFFFFFFFFFFFFFFFF, gid
    if after == upper:
        return []
    cur = rt.txn.cursor(db=rt.store.db_rec)
    ok = cur.set_range(be(after + 1))
    while ok and len(out) < limit:
        out.add(id_of(cur.key(), 0))
        ok = cur.next()
    if ok:
        upper = id_of(cur.key(), 0)    # stopped at the limit: gx up to here only
    cur = rt.txn.cursor(db=rt.store.db_gx)
    ok = cur.set_range(be(after + 1))
    while ok:
        gid = id_of(cur.key(), 0)
        if gid >= upper or (upper == 0xFFFFFFFFFFFFFFFF and len(out) >= 2 * limit):
            break
        out.add(gid)
        ok = gid < 0xFFFFFFFFFFFFFFFF and cur.set_range(be(gid + 1))
    return sorted(out)


cdef int _cmp32(const void *a, const void *b) noexcept nogil:
    return memcmp(a, b, 32)


cdef int _cmp16(const void *a, const void *b) noexcept nogil:
    return memcmp(a, b, 16)


# --- the union-graph indexer --------------------------------------------------------

cdef class Indexer:
    """Applies logged changes to the ``index`` environment, in batches.

    Additions are buffered and written sorted with ``putmulti`` (far fewer
    page visits than one put at a time); the buffer is flushed before any
    removal, so the log's order is kept where it matters.
    """

    cdef QuadStore store
    cdef bytearray pos_add, osp_add, sg_add   # packed key + value records

    def __cinit__(self, QuadStore store):
        self.store = store
        self.pos_add = bytearray()
        self.osp_add = bytearray()
        self.sg_add = bytearray()

    def run(self, uint64_t until=0):
        """Apply log entries (all, or up to ``until``); returns how many."""
        cdef QuadStore st = self.store
        cdef Py_ssize_t total = 0, n
        cdef bint rebuilding
        while True:
            self._make_room()
            try:
                with st.ienv.begin(write=True) as itxn:
                    state = itxn.get(b"rebuild", db=st.idb_state)
                    rebuilding = state is not None
                    if rebuilding:
                        n = self._rebuild_chunk(itxn, state)
                    else:
                        n = self._batch(itxn, until)
            except lmdb.MapFullError:
                self._clear()
                st._grow(st.ienv)
                continue
            total += n
            if not rebuilding and n < st.index_batch:
                return total

    cdef _make_room(self):
        cdef QuadStore st = self.store
        info = st.ienv.info()
        if (info["last_pgno"] + 1) * st.ienv.stat()["psize"] * 2 > info["map_size"]:
            st._grow(st.ienv)

    cdef _clear(self):
        del self.pos_add[:]
        del self.osp_add[:]
        del self.sg_add[:]

    cdef Py_ssize_t _rebuild_chunk(self, itxn, bytes state) except -1:
        """Index the next ``index_batch`` graphs of a rebuild (new or lost index).

        Each chunk reads its own main snapshot; log entries after the rebuild
        started are kept and replayed afterwards, which makes the result exact.
        """
        cdef QuadStore st = self.store
        cdef uint64_t upto = id_of(state, 0), after = id_of(state, 8), gid = 0
        rt = ReadTxn.__new__(ReadTxn, st, False)
        try:
            gids = _graphs_after(<ReadTxn>rt, after, st.index_batch)
            for gid in gids:
                PyErr_CheckSignals()
                self._add(gid, (<ReadTxn>rt).graph_ids(gid))
            self._flush(itxn)
        finally:
            rt.abort()
        if gids:
            itxn.put(b"rebuild", be_n(upto, gids[len(gids) - 1], 0, 2), db=st.idb_state)
        else:
            itxn.put(b"seq", be(upto), db=st.idb_state)
            itxn.delete(b"rebuild", db=st.idb_state)
        return len(gids)

    cdef Py_ssize_t _batch(self, itxn, uint64_t until) except -1:
        cdef QuadStore st = self.store
        cdef uint64_t applied = _applied_seq(itxn, st.idb_state), seq = applied
        cdef Py_ssize_t n = 0
        rt = ReadTxn.__new__(ReadTxn, st, False)
        try:
            cur = (<ReadTxn>rt).txn.cursor(db=st.db_log)
            if not cur.set_range(be(applied + 1)):
                return 0
            for key, entry in cur:
                seq = id_of(key, 0)
                if (until and seq > until and n) or n >= st.index_batch:
                    seq -= 1
                    break
                if n % 64 == 0:
                    PyErr_CheckSignals()   # Ctrl-C aborts the batch (nothing applied)
                kind_, gid, nrem, nadd = _LOG_HEAD.unpack_from(entry)
                if nrem:
                    self._flush(itxn)
                    self._remove(itxn, <ReadTxn>rt, gid,
                                 _unpack_triples(entry, _LOG_HEAD.size, nrem))
                if kind_ == LOG_REPLACE:
                    self._add(gid, (<ReadTxn>rt).graph_ids(gid))
                else:
                    self._add(gid, _unpack_triples(entry, _LOG_HEAD.size + 24 * nrem, nadd))
                n += 1
            self._flush(itxn)
        finally:
            rt.abort()
        if n:
            itxn.put(b"seq", be(seq), db=st.idb_state)
        return n

    cdef _add(self, uint64_t gid, list triples):
        """Buffer index entries for triples of graph ``gid``."""
        cdef Py_ssize_t n = len(triples), i = 0
        cdef Py_ssize_t p0 = len(self.pos_add), o0 = len(self.osp_add)
        self.pos_add.extend(bytes(32 * n))
        self.osp_add.extend(bytes(32 * n))
        cdef unsigned char *pb = <unsigned char *>self.pos_add + p0
        cdef unsigned char *ob = <unsigned char *>self.osp_add + o0
        cdef uint64_t s, p, o, last_s = 0
        for s, p, o in triples:
            put_be(pb + 32 * i, p)
            put_be(pb + 32 * i + 8, o)
            put_be(pb + 32 * i + 16, s)
            put_be(pb + 32 * i + 24, gid)
            put_be(ob + 32 * i, o)
            put_be(ob + 32 * i + 8, s)
            put_be(ob + 32 * i + 16, p)
            put_be(ob + 32 * i + 24, gid)
            if s != last_s:
                self.sg_add.extend(be_n(s, gid, 0, 2))
                last_s = s
            i += 1

    cdef _flush(self, itxn):
        """Write the buffered additions, sorted (duplicates are skipped)."""
        cdef QuadStore st = self.store
        cdef bytes packed
        cdef Py_ssize_t size, n, i
        for db, buf, size in ((st.idb_pos, self.pos_add, 32), (st.idb_osp, self.osp_add, 32),
                              (st.idb_sg, self.sg_add, 16)):
            if not buf:
                continue
            n = len(buf) // size
            qsort(<unsigned char *>(<bytearray>buf), n, size, _cmp32 if size == 32 else _cmp16)
            packed = bytes(buf)
            itxn.cursor(db=db).putmulti(
                [(packed[i:i + 8], packed[i + 8:i + size]) for i in range(0, n * size, size)],
                dupdata=False)
            del buf[:]

    cdef _remove(self, itxn, ReadTxn rt, uint64_t gid, list triples):
        cdef QuadStore st = self.store
        pos = itxn.cursor(db=st.idb_pos)
        osp = itxn.cursor(db=st.idb_osp)
        sg = itxn.cursor(db=st.idb_sg)
        cdef uint64_t s, p, o
        cdef set subjects = set()
        for s, p, o in triples:
            if pos.set_key_dup(be(p), be_n(o, s, gid, 3)):
                pos.delete()
            if osp.set_key_dup(be(o), be_n(s, p, gid, 3)):
                osp.delete()
            subjects.add(s)
        # A subject leaves sg only when the graph has no triple about it now
        # (a range lookup per subject, never a read of the whole graph).
        cdef Record rec = rt.record(gid)
        for s in subjects:
            if rec is not None and rec.triple_ids_for(s):
                continue
            if rt.gx_ids(gid, s, 0):
                continue
            if sg.set_key_dup(be(s), be(gid)):
                sg.delete()
