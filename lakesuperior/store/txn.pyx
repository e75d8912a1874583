"""A transaction on the store: the base of ``ReadTxn``, ``WriteTxn`` and the indexer's reads.

``Txn`` owns one LMDB transaction on the main environment and keeps the store's
account of open transactions: ``abort()``, ``commit()`` or, for a transaction
dropped without either, deallocation ends it exactly once. It resolves term ids
(IRIs through the IRI dictionary in ``rec``, literals and blank nodes through their
graph's record) and reads graphs; it has no public methods of its own.
"""
import os

import lmdb

cimport cython
from libc.stdint cimport uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8

from lakesuperior.store.env cimport StoreEnv
from lakesuperior.store.layout cimport (GxRow, ID_SIZE, ROW_SIZE, be, be_n, get_be, id_at,
                                        term_key)
from lakesuperior.store.records cimport Record
from lakesuperior.store.terms cimport (KIND_MASK, KIND_SHIFT, TERM_IRI, TERM_LITERAL, canonical,
                                       kind_of, term_id)

from lakesuperior.exceptions import StoreBackendError, StoreError, TermError


cdef str check_term(term, str role):
    """Canonical form of a term given by a caller; clear errors on bad input."""
    if type(term) is not str and isinstance(term, str):
        raise TermError(f"The {role} must be a plain str in N-Triples form, not "
                        f"{type(term).__name__} (convert rdflib terms with "
                        "lakesuperior.rdfio.from_rdflib)")
    if not isinstance(term, str):
        raise TermError(f"The {role} must be a str in N-Triples form, "
                        f"not {type(term).__name__}")
    return canonical(term)


cdef tuple check_pattern(s, p, o, g):
    """Canonicalise the bound terms of a pattern; check positions."""
    if s is not None:
        s = check_term(s, "subject")
        if kind_of(s) == TERM_LITERAL:
            raise TermError("A literal cannot be a subject")
    if p is not None:
        p = check_term(p, "predicate")
        if kind_of(p) != TERM_IRI:
            raise TermError("A predicate must be an IRI")
    if o is not None:
        o = check_term(o, "object")
    if g is not None:
        g = check_term(g, "graph name")
        if kind_of(g) != TERM_IRI:
            raise TermError("A graph name must be an IRI")
    return s, p, o, g


cdef enum:
    # Records a read snapshot keeps for reading again; a write keeps every one
    # it read or wrote (its own view of the graphs it changes).
    SNAPSHOT_RECORDS = 1024


cdef inline int kind(uint64_t tid) noexcept nogil:
    return <int>(tid >> KIND_SHIFT)


@cython.no_gc_clear   # __dealloc__ needs ``store`` and ``txn`` even when a cycle is broken
cdef class Txn:
    """One LMDB transaction on the main environment (see the module docstring)."""

    def __cinit__(self, StoreEnv store, bint write):
        self.done = True          # nothing to end until the LMDB txn exists
        self.store = store
        self.write = write
        self.records = {}
        self.new_iris = {}
        self.touched = set()
        self.itxn = None
        self.txn = store.begin(store.env, write)
        store.open_txns += 1
        self.done = False

    def __dealloc__(self):
        # A transaction dropped without abort()/commit(): end it and keep the
        # account right, or the map could never grow again.
        if self.done or self.store is None:
            return
        self.done = True
        self.store.open_txns -= 1
        if self.store.closed or os.getpid() != self.store.pid:
            return
        try:
            if self.itxn is not None:
                self.itxn.abort()
            self.txn.abort()
        except lmdb.Error:
            pass

    cdef int _end(self) except -1:
        """Mark the transaction ended (once) and release the index snapshot."""
        self.done = True
        self.store.open_txns -= 1
        if self.itxn is not None:
            self.itxn.abort()
            self.itxn = None
        return 0

    cdef int _check(self) except -1:
        if self.done:
            raise StoreError("The transaction has ended")
        return 0

    def abort(self):
        """End the transaction; nothing it wrote is kept."""
        if self.done:
            return
        try:
            self._end()
            self.txn.abort()
        except lmdb.Error as e:
            raise StoreBackendError(f"Cannot end the transaction: {e}") from e

    # -- term ids --------------------------------------------------------------

    cdef uint64_t natural_id(self, uint64_t tid) noexcept:
        """A term's hash id cut to the store's hash width; never 0 (0 means none)."""
        cdef uint64_t v = (tid & KIND_MASK) | (tid & self.store.hash_mask)
        return v if v else 1

    cdef uint64_t probe(self, uint64_t tid, uint64_t start) except 0:
        """The next id to try after a collision on ``tid`` (same kind, wraps)."""
        cdef uint64_t nxt = (tid & KIND_MASK) | ((tid + 1) & self.store.hash_mask)
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
        cdef bytes found = self.txn.get(term_key(nid), db=self.store.db_rec)
        if found == data:
            self._found_iri(term, nid)
            return nid
        if found is not None:
            for alt in self.collisions(nid):
                if self.txn.get(term_key(alt), db=self.store.db_rec) == data:
                    self._found_iri(term, alt)
                    return alt
        if not create:
            return 0
        cand = nid
        while found is not None:
            cand = self.probe(cand, nid)
            found = self.txn.get(term_key(cand), db=self.store.db_rec)
        self.txn.put(term_key(cand), data, db=self.store.db_rec)
        if cand != nid:
            self.txn.put(be(nid), be(cand), db=self.store.db_collide)
        self.new_iris[term] = cand
        return cand

    cdef int _found_iri(self, str term, uint64_t tid) except -1:
        if self.write:
            self.new_iris[term] = tid   # cached only once committed
        else:
            self.store.remember({term: tid})
        return 0

    cdef list collisions(self, uint64_t nid):
        """The probed ids recorded for natural id ``nid``."""
        cur = self.txn.cursor(db=self.store.db_collide)
        if not cur.set_key(be(nid)):
            return []
        return [id_at(v, 0) for v in cur.iternext_dup()]

    cdef list local_candidates(self, str term):
        """Possible ids of a literal / blank node (its hash, then probed ids)."""
        cdef uint64_t nid = self.natural_id(term_id(term))
        return [nid] + self.collisions(nid)

    cdef list candidates(self, str term):
        """Ids a bound pattern term may have (empty: cannot match)."""
        cdef uint64_t tid
        if kind_of(term) == TERM_IRI:
            tid = self.iri_id(term, False)
            return [tid] if tid else []
        return self.local_candidates(term)

    cdef str decode_iri(self, uint64_t tid):
        s = self.store.iri_strs.get(tid)
        if s is not None:
            return s
        data = self.txn.get(term_key(tid), db=self.store.db_rec)
        self.store.mapped(1)
        if data is None:
            raise StoreError(f"Corrupt store: IRI id {tid:#x} has no term")
        s = data.decode("utf-8", "surrogatepass")
        if not self.write:
            self.store.remember({s: tid})
        return s

    cdef str decode(self, uint64_t tid, Record rec):
        """The term of id ``tid`` in a graph whose record is ``rec``."""
        cdef Py_ssize_t i
        if kind(tid) == TERM_IRI:
            return self.decode_iri(tid)
        if rec is not None:
            i = rec.find(tid)
            if i >= 0:
                return rec.term_at(i)
        return None

    cdef str decode_opt(self, uint64_t tid, Record rec):
        """Like ``decode``, but None for an IRI this snapshot does not hold."""
        if kind(tid) != TERM_IRI:
            return self.decode(tid, rec)
        s = self.store.iri_strs.get(tid)
        if s is not None:
            return s
        data = self.txn.get(term_key(tid), db=self.store.db_rec)
        self.store.mapped(1)
        if data is None:
            return None
        s = data.decode("utf-8")
        if not self.write:
            self.store.remember({s: tid})
        return s

    cdef list decode_iris(self, const unsigned char *ids, Py_ssize_t n, Py_ssize_t stride,
                          bint strict=True):
        """The IRIs of ``n`` ids (8 bytes, big-endian, ``stride`` bytes apart, best
        in ascending order): the cached ones from the IRI cache, the others read
        with one cursor on ``rec`` (a lookup near the last one stays on its
        page). In a snapshot, the IRIs read go into the cache while it has room;
        a listing larger than the cache never empties it. An id this snapshot
        does not hold is a corrupt store, or None if not ``strict``. The room is
        measured at each insert: other threads' listings fill the same cache while
        a read here lets the GIL go."""
        cdef list out = [None] * n
        cdef dict cache = self.store.iri_strs, ids_of = self.store.iri_ids
        cdef Py_ssize_t i, limit = 0 if self.write else self.store.iri_cache
        cdef uint64_t tid
        cdef const unsigned char *at
        cdef bytes data
        cur = None
        for i in range(n):
            at = ids + i * stride
            tid = get_be(at)
            term = cache.get(tid)
            if term is None:
                if cur is None:
                    cur = self.txn.cursor(db=self.store.db_rec)
                data = cur.get(term_key(tid))
                self.store.mapped(1)
                if data is None:
                    if not strict:
                        continue
                    raise StoreError(f"Corrupt store: IRI id {tid:#x} has no term")
                term = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data),
                                            "surrogatepass")
                if len(cache) < limit:
                    cache[tid] = term
                    ids_of[term] = tid
            out[i] = term
        return out

    # -- graphs ----------------------------------------------------------------

    cdef Record record(self, uint64_t gid):
        """Graph ``gid``'s record (None: it has none), read once per transaction."""
        if gid in self.records:
            return self.records[gid]
        if not self.write and len(self.records) >= SNAPSHOT_RECORDS:
            # A snapshot reads what it read before unchanged: a long one (an
            # export, a reindex) forgets its records rather than keep them all.
            self.records.clear()
        data = self.txn.get(be(gid), db=self.store.db_rec)
        if data is not None:
            self.store.mapped(1 + (len(data) >> 16))   # a step per 64 KiB read
        rec = Record(data) if data is not None else None
        self.records[gid] = rec
        return rec

    cdef list gx_ids(self, uint64_t gid, uint64_t s, uint64_t p, uint64_t skip_p=0):
        """(s, p, o) ids of graph ``gid``'s one-by-one quads, optionally by s / p;
        the runs of predicate ``skip_p`` (if not 0) are skipped unread."""
        cdef list out = []
        cdef int n = 1 + (s != 0) + (s != 0 and p != 0)
        cdef bytes prefix = be_n(gid, s, p, n)
        cdef bytes key, raw
        cur = self.txn.cursor(db=self.store.db_gx)
        if not cur.set_range(prefix):
            return out
        cdef Py_ssize_t plen = 8 * n, i, count
        cdef uint64_t ks, kp
        cdef const GxRow *rows
        while True:
            key = cur.key()
            if key[:plen] != prefix:
                break
            ks = get_be((<const GxRow *>PyBytes_AS_STRING(key)).s)   # a key: g, s, p
            kp = get_be((<const GxRow *>PyBytes_AS_STRING(key)).p)
            if skip_p and kp == skip_p:
                if not cur.next_nodup():
                    break
            elif cur.count() > 8:
                raw = bytes(cur.getmulti([key], dupdata=True, dupfixed_bytes=8, keyfixed=True))
                rows = <const GxRow *>PyBytes_AS_STRING(raw)
                count = len(raw) // ROW_SIZE
                for i in range(count):
                    out.append((ks, kp, get_be(rows[i].o)))
                if not cur.set_range(key + b"\xff"):
                    break
            else:
                for v in cur.iternext_dup():
                    out.append((ks, kp, id_at(v, 0)))
                if not cur.next_nodup():
                    break
        return out

    cdef list run_iris(self, uint64_t gid, uint64_t sid, uint64_t pid):
        """The IRIs of the ``(g, s, p)`` run of gx, in id order."""
        cdef bytes key = be_n(gid, sid, pid, 3), raw
        cur = self.txn.cursor(db=self.store.db_gx)
        if not cur.set_key(key):
            return []
        raw = bytes(cur.getmulti([key], dupdata=True, dupfixed_bytes=8, keyfixed=True))
        return self.decode_iris((<const GxRow *>PyBytes_AS_STRING(raw))[0].o,
                                len(raw) // ROW_SIZE, ROW_SIZE)

    cdef list graph_ids(self, uint64_t gid):
        """All (s, p, o) ids of a graph."""
        cdef Record rec = self.record(gid)
        cdef list out = rec.triple_ids() if rec is not None else []
        out.extend(self.gx_ids(gid, 0, 0))
        return out

    cdef set graph_id_set(self):
        """Ids of every graph that holds at least one quad."""
        cdef set out = set()
        cur = self.txn.cursor(db=self.store.db_rec)
        for key, value in cur.iternext():
            if len(key) == ID_SIZE and len(value) > 8 and Record(value).n_triples:
                out.add(id_at(key, 0))
        cur = self.txn.cursor(db=self.store.db_gx)
        ok = cur.first()
        while ok:
            gid = id_at(cur.key(), 0)
            out.add(gid)
            ok = cur.set_range(be(gid + 1)) if gid < 0xFFFFFFFFFFFFFFFF else False
        return out

    cdef list record_triples(self, Record rec, uint64_t omit=0):
        """The triples of a graph record as term strings, but those of predicate
        ``omit``: each term index decoded once, the tuples built straight from
        the record's runs (no id tuples in between)."""
        cdef Py_ssize_t k, i = 0, end, pi, oi, skip = rec.find(omit) if omit else -1
        cdef Py_ssize_t n = rec.n_terms
        cdef list strs = [None] * n
        cdef list out = []
        for k in range(rec.n_subjects):
            ts = self.term_of(rec, strs, rec.subject_at(k))
            end = rec.run_end(k)
            if end > rec.n_triples:
                raise StoreError("Corrupt graph record: a run past its triples")
            while i < end:
                pi = rec.pair_at(i, 0)
                oi = rec.pair_at(i, 1)
                i += 1
                if pi >= n or oi >= n:
                    raise StoreError("Corrupt graph record: a term index out of range")
                if pi == skip:
                    continue
                tp = strs[pi]
                if tp is None:
                    tp = self.term_of(rec, strs, pi)
                to = strs[oi]
                if to is None:
                    to = self.term_of(rec, strs, oi)
                out.append((ts, tp, to))
        return out

    cdef str term_of(self, Record rec, list strs, Py_ssize_t i):
        """The term at index ``i`` of ``rec``, decoded into ``strs[i]``."""
        if i >= rec.n_terms:
            raise StoreError("Corrupt graph record: a term index out of range")
        t = self.decode_iri(rec.term_id_at(i)) if i < rec.n_iris else rec.term_at(i)
        strs[i] = t
        return t

    cdef list decode_triples(self, uint64_t gid, list ids):
        """Decode id triples of graph ``gid`` (each distinct id once)."""
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
