"""The union-graph indexer: applies the change log of ``main`` to ``index``.

A write touches only a few pages of ``main`` (one record, one log entry, new
IRIs). The indices ``pos``, ``osp`` and ``sg`` are brought up to date in
batches, by the background indexer (``background.py``) or ``QuadStore.index()``;
a union-graph read never runs it: it reads the entries not applied yet (the
tail) from the graphs themselves (``reads.pyx``). Each batch is one index
transaction: a batch cut short (a crash, SIGKILL) is simply done again.
"""
import struct

import lmdb

from libc.stdint cimport uint64_t
from libc.stdlib cimport qsort
from libc.string cimport memcmp
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.exc cimport PyErr_CheckSignals

from lakesuperior.store.env cimport StoreEnv, applied_seq
from lakesuperior.store.layout cimport (ID_SIZE, LOG_REPLACE, OspRow, PosRow, RebuildState,
                                        ROW_SIZE, SG_ROW_SIZE,
                                        SgRow, TRIPLE_SIZE, be, be_n, get_be, id_at, put_be,
                                        unpack_triples)
from lakesuperior.store.records cimport Record
from lakesuperior.store.txn cimport Txn

from lakesuperior.exceptions import DiskFullError, StoreBackendError, StoreError

LOG_HEAD = struct.Struct("<BQII")  # kind, graph id, n_removed, n_added


cdef int _cmp_row(const void *a, const void *b) noexcept nogil:
    return memcmp(a, b, ROW_SIZE)


cdef int _cmp_sg(const void *a, const void *b) noexcept nogil:
    return memcmp(a, b, SG_ROW_SIZE)


cdef list _graphs_after(Txn rt, uint64_t after, Py_ssize_t limit):
    """Up to about ``limit`` graph ids greater than ``after``, ascending."""
    cdef set out = set()
    cdef uint64_t upper = 0xFFFFFFFFFFFFFFFF, gid
    if after == upper:
        return []
    cur = rt.txn.cursor(db=rt.store.db_rec)
    ok = cur.set_range(be(after + 1))
    while ok and len(out) < limit:
        out.add(id_at(cur.key(), 0))
        ok = cur.next()
    if ok:
        upper = id_at(cur.key(), 0)    # stopped at the limit: gx up to here only
    cur = rt.txn.cursor(db=rt.store.db_gx)
    ok = cur.set_range(be(after + 1))
    while ok:
        gid = id_at(cur.key(), 0)
        if gid >= upper or (upper == 0xFFFFFFFFFFFFFFFF and len(out) >= 2 * limit):
            break
        out.add(gid)
        ok = gid < 0xFFFFFFFFFFFFFFFF and cur.set_range(be(gid + 1))
    return sorted(out)


cdef class Indexer:
    """Applies logged changes to the ``index`` environment, in batches.

    Additions are buffered and written sorted with ``putmulti`` (far fewer
    page visits than one put at a time); the buffer is flushed before any
    removal, so the log's order is kept where it matters.
    """

    def __cinit__(self, StoreEnv store):
        self.store = store
        self.pos_add = bytearray()
        self.osp_add = bytearray()
        self.sg_add = bytearray()

    def run(self, uint64_t until=0, Py_ssize_t batches=0):
        """Apply log entries (all, or up to ``until``; at most ``batches`` index
        transactions, 0: no limit); returns how many (graphs, in a rebuild)."""
        cdef StoreEnv st = self.store
        cdef Py_ssize_t total = 0, n, done = 0
        cdef bint rebuilding
        while True:
            try:
                self._make_room()
                with st.ienv.begin(write=True) as itxn:
                    state = itxn.get(b"rebuild", db=st.idb_state)
                    rebuilding = state is not None
                    if rebuilding:
                        n = self._rebuild_chunk(itxn, state)
                        # The chunk read graphs as committed: make them durable
                        # first (the open-time check sees only log seqs).
                        st.make_durable()
                    else:
                        n = self._batch(itxn, until)
            except lmdb.MapFullError:
                self._clear()
                st.grow(st.ienv, 0)
                continue
            except lmdb.Error as e:
                if isinstance(st.write_failure(e, 0), DiskFullError):
                    raise DiskFullError(
                        "Insufficient storage: the disk holding the repository's index is "
                        "full; the union index cannot take in recent writes (they are kept)"
                    ) from e
                raise StoreBackendError(f"Indexing failed: {e}") from e
            total += n
            done += 1
            if (not rebuilding and n < st.index_batch) or (batches and done >= batches):
                return total

    cdef int _make_room(self) except -1:
        cdef StoreEnv st = self.store
        info = st.ienv.info()
        if (info["last_pgno"] + 1) * st.ienv.stat()["psize"] * 2 > info["map_size"]:
            st.grow(st.ienv, 0)
        return 0

    cdef int _clear(self) except -1:
        del self.pos_add[:]
        del self.osp_add[:]
        del self.sg_add[:]
        return 0

    cdef Py_ssize_t _rebuild_chunk(self, itxn, bytes state) except -1:
        """Index the next ``index_batch`` graphs of a rebuild (new or lost index).

        Each chunk reads its own main snapshot; log entries after the rebuild
        started are kept and replayed afterwards, which makes the result exact.
        """
        cdef StoreEnv st = self.store
        if len(state) < sizeof(RebuildState):
            raise StoreError("Corrupt index state: rebuild entry truncated")
        cdef const RebuildState *rs = <const RebuildState *>PyBytes_AS_STRING(state)
        cdef uint64_t upto = get_be(rs.upto), after = get_be(rs.after), gid = 0
        cdef Txn rt = Txn(st, False)
        try:
            gids = _graphs_after(rt, after, st.index_batch)
            for gid in gids:
                PyErr_CheckSignals()
                self._add(gid, rt.graph_ids(gid))
            self._flush(itxn)
        finally:
            rt.abort()
        if gids:   # a new RebuildState
            itxn.put(b"rebuild", be(upto) + be(gids[len(gids) - 1]), db=st.idb_state)
        else:
            itxn.put(b"seq", be(upto), db=st.idb_state)
            itxn.delete(b"rebuild", db=st.idb_state)
        return len(gids)

    cdef Py_ssize_t _batch(self, itxn, uint64_t until) except -1:
        cdef StoreEnv st = self.store
        cdef uint64_t applied = applied_seq(itxn, st.idb_state), seq = applied
        cdef Py_ssize_t n = 0, head = LOG_HEAD.size
        cdef Txn rt = Txn(st, False)
        try:
            cur = rt.txn.cursor(db=st.db_log)
            if not cur.set_range(be(applied + 1)):
                return 0
            for key, entry in cur:
                seq = id_at(key, 0)
                if (until and seq > until and n) or n >= st.index_batch:
                    seq -= 1
                    break
                if n % 64 == 0:
                    PyErr_CheckSignals()   # Ctrl-C aborts the batch (nothing applied)
                kind_, gid, nrem, nadd = LOG_HEAD.unpack_from(entry)
                if nrem:
                    self._flush(itxn)
                    self._remove(itxn, rt, gid, unpack_triples(entry, head, nrem))
                if kind_ == LOG_REPLACE:
                    self._add(gid, rt.graph_ids(gid))
                else:
                    self._add(gid, unpack_triples(entry, head + TRIPLE_SIZE * nrem, nadd))
                n += 1
            self._flush(itxn)
        finally:
            rt.abort()
        if n:
            itxn.put(b"seq", be(seq), db=st.idb_state)
        return n

    cdef int _add(self, uint64_t gid, list triples) except -1:
        """Buffer index rows for the (s, p, o) id triples of graph ``gid``."""
        cdef Py_ssize_t n = len(triples), i = 0
        cdef Py_ssize_t p0 = len(self.pos_add), o0 = len(self.osp_add)
        self.pos_add.extend(bytes(ROW_SIZE * n))
        self.osp_add.extend(bytes(ROW_SIZE * n))
        cdef PosRow *pos = <PosRow *>(<unsigned char *>self.pos_add + p0)
        cdef OspRow *osp = <OspRow *>(<unsigned char *>self.osp_add + o0)
        cdef uint64_t s, p, o, last_s = 0
        cdef SgRow sg
        for s, p, o in triples:
            put_be(pos[i].p, p)
            put_be(pos[i].o, o)
            put_be(pos[i].s, s)
            put_be(pos[i].g, gid)
            put_be(osp[i].o, o)
            put_be(osp[i].s, s)
            put_be(osp[i].p, p)
            put_be(osp[i].g, gid)
            if s != last_s:
                put_be(sg.s, s)
                put_be(sg.g, gid)
                self.sg_add.extend((<unsigned char *>&sg)[:SG_ROW_SIZE])
                last_s = s
            i += 1
        return 0

    cdef int _flush(self, itxn) except -1:
        """Write the buffered rows, sorted (duplicates are skipped)."""
        cdef StoreEnv st = self.store
        cdef bytes packed
        cdef Py_ssize_t size, n, i
        for db, buf, size in ((st.idb_pos, self.pos_add, ROW_SIZE),
                              (st.idb_osp, self.osp_add, ROW_SIZE),
                              (st.idb_sg, self.sg_add, SG_ROW_SIZE)):
            if not buf:
                continue
            n = len(buf) // size
            qsort(<unsigned char *>(<bytearray>buf), n, size,
                  _cmp_row if size == ROW_SIZE else _cmp_sg)
            packed = bytes(buf)
            itxn.cursor(db=db).putmulti(
                [(packed[i:i + ID_SIZE], packed[i + ID_SIZE:i + size])
                 for i in range(0, n * size, size)],
                dupdata=False)
            del buf[:]
        return 0

    cdef int _remove(self, itxn, Txn rt, uint64_t gid, list triples) except -1:
        """Delete the index rows of removed triples of graph ``gid``."""
        cdef StoreEnv st = self.store
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
        return 0
