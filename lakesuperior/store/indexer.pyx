"""The union-graph indexer: applies the change log of ``main`` to ``index``.

A write touches only a few pages of ``main`` (one record, one log entry, new
IRIs). The indices ``pos``, ``osp`` and ``sg`` are brought up to date in
batches, by the background indexer (``background.py``) or ``QuadStore.index()``;
a union-graph read never runs it: it reads the entries not applied yet (the
tail) from the graphs themselves (``reads.pyx``). Each batch is one index
transaction: a batch cut short (a crash, SIGKILL) is simply done again.

Rows name a graph by its graph number (``gn`` / ``ng``), given in the order the
indexer first meets graphs and first in every value: the rows of graphs new to
the index sort after every row already there under the same key, so they are
appended (``MDB_APPENDDUP``): full pages, and a batch touches the last pages of
each key's run instead of pages all over the index.
"""
import struct

import lmdb

from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcmp, memset
from cpython.bytes cimport PyBytes_AS_STRING
from cpython.exc cimport PyErr_CheckSignals

from lakesuperior.store.env cimport StoreEnv, applied_seq
from lakesuperior.store.layout cimport (EPOCH_SHIFT, GNUM_SIZE, ID_SIZE, IDX_ROW_SIZE,
                                        LIT_ROW_SIZE, LOG_REPLACE, LitRow, OspRow, PosRow,
                                        RebuildState, SG_ROW_SIZE, SgRow, TRIPLE_SIZE, be, be32,
                                        be_n, get_be, get_be32, id_at, put_be, put_be32,
                                        unpack_triples)
from lakesuperior.store.records cimport Record
from lakesuperior.store.terms cimport KIND_SHIFT, TERM_IRI
from lakesuperior.store.unionrows cimport graph_number, sort_unique_rows
from lakesuperior.store.txn cimport Txn

from lakesuperior.exceptions import DiskFullError, StoreBackendError, StoreError

LOG_HEAD = struct.Struct("<BQII")  # kind, graph id, n_removed, n_added

cdef uint32_t MAX_GNUM = 0xFFFFFFFF
# The four row buffers (pos, osp, lit, sg): row sizes, and where a row's graph
# number is (0 in a buffered row: cancelled by a later removal).
cdef Py_ssize_t ROW_SIZE[4]
ROW_SIZE[:] = [IDX_ROW_SIZE, IDX_ROW_SIZE, LIT_ROW_SIZE, SG_ROW_SIZE]
cdef Py_ssize_t GNUM_AT[4]
GNUM_AT[:] = [ID_SIZE, ID_SIZE, LIT_ROW_SIZE - GNUM_SIZE, ID_SIZE]


cdef struct Span:
    # The rows one ``_add`` buffered, [start, end) in each buffer, in rows.
    Py_ssize_t start[4]
    Py_ssize_t end[4]

cdef enum:
    PUT_CHUNK = 256   # rows put between two looks of the map trimmer (``residency``)
#: Most triples one batch applies (added or removed), whatever ``index_batch``
#: says: a batch touches up to a page of the index per row (new keys land all
#: over ``osp`` and ``sg``) and LMDB keeps a copy of each page it dirties, so
#: rows, not log entries, decide a batch's memory (about 128 MB at most here).
MAX_BATCH_TRIPLES = 32768
#: A removal cancels the buffered rows it undoes by looking through its graph's
#: buffered rows, once per removed triple; where that would be more than this
#: many looks (a large graph replaced again in the same batch), the buffer is
#: written first instead, and the removal finds its rows in the index.
MAX_CANCEL_LOOKS = 16384


cdef list _graphs_after(Txn rt, uint64_t after, Py_ssize_t limit):
    """Up to about ``limit`` graph ids greater than ``after``, ascending."""
    cdef set out = set()
    cdef uint64_t upper = 0xFFFFFFFFFFFFFFFF, gid
    if after == upper:
        return []
    cur = rt.txn.cursor(db=rt.store.db_rec)
    ok = cur.set_range(be(after + 1))
    while ok and len(out) < limit:
        if len(cur.key()) == ID_SIZE:    # a record (else an IRI's string)
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


cdef int _put_rows(StoreEnv st, cur, list rows, bint append) except -1:
    """Put ``(key, value)`` rows (sorted) with ``cur``, ``PUT_CHUNK`` at a time,
    the map trimmer looking after each chunk (a row may fault in a page of the
    index). ``append``: appended where they sort after every row there, else put
    in place."""
    cdef Py_ssize_t i
    for i in range(0, len(rows), PUT_CHUNK):
        chunk = rows[i:i + PUT_CHUNK]
        consumed, added = cur.putmulti(chunk, dupdata=False, append=append)
        if append and added != consumed:   # not after the last row: put them in place
            cur.putmulti(chunk, dupdata=False)
        st.mapped(len(chunk))
    return 0


cdef class Indexer:
    """Applies logged changes to the ``index`` environment, in batches.

    Additions are buffered and written sorted, once per batch (far fewer page
    visits than one put at a time), those of graphs numbered in this batch
    appended. A removal deletes its rows from the index and cancels their
    buffered copies, so the log's last word on a row is the one that stays
    (or, where that would cost more looks than ``MAX_CANCEL_LOOKS``, writes
    the buffer first).
    """

    def __cinit__(self, StoreEnv store):
        self.store = store
        self.pos_add = bytearray()
        self.osp_add = bytearray()
        self.lit_add = bytearray()
        self.sg_add = bytearray()
        self.gnums = {}
        self.spans = {}

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
                    self._start(itxn)
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
                self._clear()
                if isinstance(st.write_failure(e, 0), DiskFullError):
                    raise DiskFullError(
                        "Insufficient storage: the disk holding the repository's index is "
                        "full; the union index cannot take in recent writes (they are kept)"
                    ) from e
                raise StoreBackendError(f"Indexing failed: {e}") from e
            except BaseException:
                self._clear()
                raise
            total += n
            done += 1
            if ((not rebuilding and n < st.index_batch and not self.cut)
                    or (batches and done >= batches)):
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
        del self.lit_add[:]
        del self.sg_add[:]
        self.gnums.clear()
        self.spans.clear()
        return 0

    cdef int _start(self, itxn) except -1:
        """Begin an index transaction: the next graph number to give."""
        self.gnums.clear()
        cur = itxn.cursor(db=self.store.idb_ng)
        if cur.last():
            self.next_gnum = get_be32(<const unsigned char *>PyBytes_AS_STRING(cur.key())) + 1
        else:
            self.next_gnum = 1
        self.append_from = self.next_gnum
        return 0

    cdef uint32_t _gnum(self, itxn, uint64_t gid, bint create) except? 0:
        """Graph ``gid``'s number; a new one if it has none and ``create`` (else 0)."""
        got = self.gnums.get(gid)
        if got is not None:
            return got
        cdef uint32_t n = graph_number(itxn, self.store, gid)
        if not n:
            if not create:
                return 0
            if self.next_gnum == MAX_GNUM:
                raise StoreError("The union index has no graph number left: rebuild it")
            n = self.next_gnum
            self.next_gnum += 1
            itxn.put(be(gid), be32(n), db=self.store.idb_gn)
            itxn.put(be32(n), be(gid), db=self.store.idb_ng, append=True)
        self.gnums[gid] = n
        return n

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
                ids = rt.graph_ids(gid)
                if ids:
                    self._add(self._gnum(itxn, gid, True), ids)
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
        cdef Py_ssize_t n = 0, head = LOG_HEAD.size, triples = 0
        cdef Txn rt = Txn(st, False)
        self.cut = False
        try:
            cur = rt.txn.cursor(db=st.db_log)
            if not cur.set_range(be(applied + 1)):
                return 0
            for key, entry in cur:
                seq = id_at(key, 0)
                if (until and seq > until and n) or n >= st.index_batch:
                    seq -= 1
                    break
                if n and triples >= MAX_BATCH_TRIPLES:
                    self.cut = True
                    seq -= 1
                    break
                if n % 64 == 0:
                    PyErr_CheckSignals()   # Ctrl-C aborts the batch (nothing applied)
                kind_, gid, nrem, nadd = LOG_HEAD.unpack_from(entry)
                triples += nrem
                if nrem:
                    gnum = self.gnums.get(gid)
                    if gnum is not None and nrem * self._buffered(gnum) > MAX_CANCEL_LOOKS:
                        self._flush(itxn)
                    self._remove(itxn, rt, gid, unpack_triples(entry, head, nrem))
                if kind_ == LOG_REPLACE:
                    ids = rt.graph_ids(gid)
                else:
                    ids = unpack_triples(entry, head + TRIPLE_SIZE * nrem, nadd)
                if ids:
                    triples += len(ids)
                    self._add(self._gnum(itxn, gid, True), ids)
                n += 1
            self._flush(itxn)
        finally:
            rt.abort()
        if n:
            itxn.put(b"seq", be(seq), db=st.idb_state)
        return n

    cdef int _add(self, uint32_t gnum, list triples) except -1:
        """Buffer index rows for the (s, p, o) id triples of graph number ``gnum``."""
        cdef Py_ssize_t n = len(triples), i = 0, j = 0, k = 0
        cdef Py_ssize_t p0 = len(self.pos_add), o0 = len(self.osp_add), l0 = len(self.lit_add)
        cdef Span span
        span.start[:] = [p0 // IDX_ROW_SIZE, o0 // IDX_ROW_SIZE, l0 // LIT_ROW_SIZE,
                         len(self.sg_add) // SG_ROW_SIZE]
        self.pos_add.extend(bytes(IDX_ROW_SIZE * n))
        self.osp_add.extend(bytes(IDX_ROW_SIZE * n))
        self.lit_add.extend(bytes(LIT_ROW_SIZE * n))
        cdef PosRow *pos = <PosRow *>(<unsigned char *>self.pos_add + p0)
        cdef OspRow *osp = <OspRow *>(<unsigned char *>self.osp_add + o0)
        cdef LitRow *lit = <LitRow *>(<unsigned char *>self.lit_add + l0)
        cdef uint64_t s, p, o, last_s = 0
        cdef SgRow sg
        for s, p, o in triples:
            put_be(pos[i].p, p)
            put_be32(pos[i].g, gnum)
            put_be(pos[i].o, o)
            put_be(pos[i].s, s)
            if (o >> KIND_SHIFT) == TERM_IRI:
                put_be(osp[j].o, o)
                put_be32(osp[j].g, gnum)
                put_be(osp[j].s, s)
                put_be(osp[j].p, p)
                j += 1
            else:
                put_be32(lit[k].epoch, gnum >> EPOCH_SHIFT)
                put_be(lit[k].o, o)
                put_be32(lit[k].g, gnum)
                k += 1
            if s != last_s:
                put_be(sg.s, s)
                put_be32(sg.g, gnum)
                self.sg_add.extend((<unsigned char *>&sg)[:SG_ROW_SIZE])
                last_s = s
            i += 1
        del self.osp_add[o0 + IDX_ROW_SIZE * j:]
        del self.lit_add[l0 + LIT_ROW_SIZE * k:]
        span.end[:] = [span.start[0] + n, span.start[1] + j, span.start[2] + k,
                       len(self.sg_add) // SG_ROW_SIZE]
        spans = self.spans.get(gnum)
        if spans is None:
            self.spans[gnum] = spans = bytearray()
        spans.extend((<unsigned char *>&span)[:sizeof(Span)])
        return 0

    cdef int _flush(self, itxn) except -1:
        """Write the buffered rows, sorted and unique (rows already there are
        skipped, cancelled ones dropped); in pos, osp and sg, the rows of graphs
        numbered in this transaction are appended (lit's rows are in object
        order: put in place)."""
        cdef StoreEnv st = self.store
        cdef bytes packed
        cdef const unsigned char *rows
        cdef unsigned char *ptr
        cdef Py_ssize_t size, n, i
        cdef uint32_t gn
        cdef list old, new
        for db, buf, size in ((st.idb_pos, self.pos_add, IDX_ROW_SIZE),
                              (st.idb_osp, self.osp_add, IDX_ROW_SIZE),
                              (st.idb_lit, self.lit_add, LIT_ROW_SIZE),
                              (st.idb_sg, self.sg_add, SG_ROW_SIZE)):
            if not buf:
                continue
            ptr = <unsigned char *>(<bytearray>buf)
            n = len(buf) // size
            with nogil:          # the writer's thread may run meanwhile
                n = sort_unique_rows(ptr, n, size)
            packed = bytes(buf[:n * size])
            del buf[:]
            rows = <const unsigned char *>PyBytes_AS_STRING(packed)
            cur = itxn.cursor(db=db)
            if size == LIT_ROW_SIZE:
                _put_rows(st, cur, [(packed[i:i + GNUM_SIZE], packed[i + GNUM_SIZE:i + size])
                                    for i in range(0, n * size, size)
                                    if get_be32(rows + i + LIT_ROW_SIZE - GNUM_SIZE)], False)
                continue
            old = []
            new = []
            for i in range(0, n * size, size):   # the graph number follows the key
                gn = get_be32(rows + i + ID_SIZE)
                if gn:
                    (new if gn >= self.append_from else old).append(
                        (packed[i:i + ID_SIZE], packed[i + ID_SIZE:i + size]))
            _put_rows(st, cur, old, False)
            _put_rows(st, cur, new, True)
        self.spans.clear()
        # Rows of the graphs numbered so far are in the tree now: later rows of
        # theirs may sort before them, so they are no longer appended.
        self.append_from = self.next_gnum
        return 0

    cdef int _remove(self, itxn, Txn rt, uint64_t gid, list triples) except -1:
        """Delete the index rows of removed triples of graph ``gid``, and cancel
        their copies buffered in this batch."""
        cdef StoreEnv st = self.store
        cdef uint32_t gnum = self._gnum(itxn, gid, False)
        if not gnum:
            return 0     # never indexed: no rows
        cdef bint buffered = gnum in self.spans
        pos = itxn.cursor(db=st.idb_pos)
        osp = itxn.cursor(db=st.idb_osp)
        lit = itxn.cursor(db=st.idb_lit)
        sg = itxn.cursor(db=st.idb_sg)
        cdef bytes g = be32(gnum)
        cdef uint64_t s, p, o
        cdef set subjects = set(), objects = set()
        for s, p, o in triples:
            self._drop(pos, 0, gnum, buffered, be(p), g + be_n(o, s, 0, 2))
            if (o >> KIND_SHIFT) == TERM_IRI:
                self._drop(osp, 1, gnum, buffered, be(o), g + be_n(s, p, 0, 2))
            else:
                objects.add(o)
            subjects.add(s)
        cdef Record rec = rt.record(gid)
        # A literal or blank node leaves lit only when no triple of the graph has
        # it as its object now (they are all in the record).
        if objects:
            if rec is not None:
                objects.difference_update([t[2] for t in rec.triple_ids()])
            for o in objects:
                self._drop(lit, 2, gnum, buffered, be32(gnum >> EPOCH_SHIFT), be(o) + g)
        # A subject leaves sg only when the graph has no triple about it now
        # (a range lookup per subject, never a read of the whole graph).
        for s in subjects:
            if rec is not None and rec.triple_ids_for(s):
                continue
            if rt.gx_ids(gid, s, 0):
                continue
            self._drop(sg, 3, gnum, buffered, be(s), g)
        return 0

    cdef int _drop(self, cur, int which, uint32_t gnum, bint buffered, bytes key,
                   bytes val) except -1:
        """Delete the row ``key`` + ``val`` of graph ``gnum`` with ``cur``, and,
        if the graph has rows ``buffered``, its copies in buffer ``which``."""
        if cur.set_key_dup(key, val):
            cur.delete()
        cdef bytes row
        if buffered:
            row = key + val
            self._cancel(gnum, which, row)
        return 0

    cdef Py_ssize_t _buffered(self, uint32_t gnum):
        """How many rows graph ``gnum``'s additions buffered in this batch."""
        cdef bytearray spans = self.spans.get(gnum)
        if spans is None:
            return 0
        cdef const Span *span = <const Span *>(<unsigned char *>spans)
        cdef Py_ssize_t k, w, n = 0
        for k in range(len(spans) // sizeof(Span)):
            for w in range(4):
                n += span[k].end[w] - span[k].start[w]
        return n

    cdef int _cancel(self, uint32_t gnum, int which, const unsigned char *row) except -1:
        """Cancel the copies of ``row`` that graph ``gnum``'s additions put in
        buffer ``which`` (0-3: pos, osp, lit, sg) earlier in this batch."""
        cdef bytearray spans = self.spans[gnum]
        cdef bytearray buf = (self.pos_add, self.osp_add, self.lit_add, self.sg_add)[which]
        cdef unsigned char *rows = <unsigned char *>buf
        cdef const Span *span = <const Span *>(<unsigned char *>spans)
        cdef Py_ssize_t size = ROW_SIZE[which], k, i
        for k in range(len(spans) // sizeof(Span)):
            for i in range(span[k].start[which], span[k].end[which]):
                if memcmp(rows + i * size, row, size) == 0:
                    memset(rows + i * size + GNUM_AT[which], 0, GNUM_SIZE)
        return 0
