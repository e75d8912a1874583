"""Reading the store: the read API (``Reader``) and the read snapshot (``ReadTxn``).

``Reader`` holds every read operation; ``ReadTxn`` (a snapshot, which cannot
write) and ``WriteTxn`` (which reads its own writes) are its two kinds. Each
pattern read asks ``access.access_path`` which table to read. ``match`` streams:
the iterator it returns holds the transaction (and so its snapshot) and reads
the tables as it goes; it fails with ``StoreError`` once the transaction ends.

A union-graph read never writes and never waits for the indexer: it reads the
index snapshot, and the *tail* (the graphs named by the log entries the index
has not taken in, or not yet indexed by a rebuild) from the graphs themselves,
in its own main snapshot.
"""
import lmdb

from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_AS_STRING

from lakesuperior.store.access cimport (PATH_ALL, PATH_COUNT_OSP, PATH_COUNT_POS, PATH_GRAPH,
                                        PATH_GRAPH_S, PATH_GRAPH_SP, PATH_OSP, PATH_SG, Path,
                                        access_path)
from lakesuperior.store.env cimport applied_seq
from lakesuperior.store.layout cimport (GNUM_SIZE, GxRow, IDX_ROW_SIZE, IDX_VAL_SIZE,
                                        OspRow, PosRow, ROW_SIZE, be,
                                        be_n, get_be, get_be32, id_at)
from lakesuperior.store.records cimport Record
from lakesuperior.store.terms cimport KIND_SHIFT, TERM_IRI, kind_of
from lakesuperior.store.txn cimport Txn, check_pattern, check_term
from lakesuperior.store.unionrows cimport (graph_number, graph_of, has16, learn_prefixes,
                                           lit_graphs, prefix_flags, sort_unique_rows)

from lakesuperior.exceptions import StoreBackendError, StoreError, TermError
from lakesuperior.store.indexer import LOG_HEAD

# meta keys of the outbox: the last seq handed out, the last seq published
OUTBOX_SEQ = b"outbox_seq"
OUTBOX_PUBLISHED = b"outbox_published"

Term = str
Triple = tuple[str, str, str]
Quad = tuple[str, str, str, str]


cdef enum:
    LISTING_CHUNK = 4096     # IRIs a streamed containment listing decodes at a time


cdef object backend_error(e):
    """The ``StoreError`` for a raw LMDB error."""
    return StoreBackendError(f"LMDB error: {e}")


cdef inline int kind(uint64_t tid) noexcept nogil:
    return <int>(tid >> KIND_SHIFT)


cdef inline bint is_iri(term) except -1:
    return term is None or kind_of(term) == TERM_IRI


cdef bytes ns_key(prefix):
    """Key of a prefix in ``ns`` (a marker byte: the empty prefix is valid)."""
    if not isinstance(prefix, str):
        raise TermError(f"A prefix must be a str, not {type(prefix).__name__}")
    return b":" + prefix.encode("utf-8")


cdef class Reader(Txn):
    """The read API of a transaction (see the module docstring)."""

    # -- graphs ----------------------------------------------------------------

    def triples(self, g, *, omit=None):
        """All triples of graph ``g`` (empty list if there is none); ``omit``: a
        predicate whose triples are left out, and its one-by-one runs not even read
        (a container's own triples without its ``ldp:contains``)."""
        self._check()
        g = check_term(g, "graph name")
        if kind_of(g) != TERM_IRI:
            raise TermError("A graph name must be an IRI")
        cdef uint64_t gid, pid = 0
        cdef Record rec
        if omit is not None:
            omit = check_term(omit, "predicate")
            if kind_of(omit) != TERM_IRI:
                raise TermError("A predicate must be an IRI")
        try:
            gid = self.iri_id(g, False)
            if not gid:
                return []
            if omit is not None:
                pid = self.iri_id(omit, False)      # 0: no such IRI, nothing to omit
            rec = self.record(gid)
            out = self.record_triples(rec, pid) if rec is not None else []
            # gx: the one-by-one runs (containment), those of ``omit`` skipped unread
            extra = self.gx_ids(gid, 0, 0, pid)
            if extra:
                out.extend(self.decode_triples(gid, extra))
            return out
        except lmdb.Error as e:
            raise backend_error(e) from e

    def objects(self, s, p, g):
        """The objects of ``(s, p, ?)`` in graph ``g``, as one list: its record's, then
        its ``(g, s, p)`` run's (a container's children: one range read, one loop)."""
        self._check()
        s, p, _o, g = check_pattern(s, p, None, g)
        if s is None or p is None or g is None:
            raise TermError("objects() needs a subject, a predicate and a graph")
        cdef uint64_t gid, sid, pid
        try:
            gid = self.iri_id(g, False)
            pid = self.iri_id(p, False)
            if not gid or not pid:
                return []
            out = [q[2] for q in self._graph_hits(gid, g, s, p, None, PATH_GRAPH_SP)]
            sid = self.iri_id(s, False) if kind_of(s) == TERM_IRI else 0
            if sid:
                out.extend(self.run_iris(gid, sid, pid))
            return out
        except lmdb.Error as e:
            raise backend_error(e) from e

    def has_graph(self, g):
        """Whether graph ``g`` holds at least one quad."""
        self._check()
        g = check_term(g, "graph name")
        cdef uint64_t gid
        try:
            gid = self.iri_id(g, False)
            if not gid:
                return False
            rec = self.record(gid)
            if rec is not None and len(rec):
                return True
            cur = self.txn.cursor(db=self.store.db_gx)
            return bool(cur.set_range(be(gid))) and cur.key()[:8] == be(gid)
        except lmdb.Error as e:
            raise backend_error(e) from e

    def graphs(self):
        """Every graph that holds at least one quad."""
        self._check()
        try:
            return iter([self.decode_iri(gid) for gid in sorted(self.graph_id_set())])
        except lmdb.Error as e:
            raise backend_error(e) from e

    def graph_count(self):
        """How many graphs hold at least one quad."""
        self._check()
        try:
            return len(self.graph_id_set())
        except lmdb.Error as e:
            raise backend_error(e) from e

    # -- patterns ---------------------------------------------------------------

    def match(self, s=None, p=None, o=None, g=None):
        """Quads matching a pattern (any of the 16 bound/unbound combinations), streamed."""
        self._check()
        s, p, o, g = check_pattern(s, p, o, g)
        return self._stream(s, p, o, g)

    def _stream(self, s, p, o, g):
        """The generator behind ``match`` (the pattern is already canonical)."""
        try:
            yield from self._quads(s, p, o, g)
        except lmdb.Error as e:
            if self.done:
                raise StoreError("The transaction has ended") from None
            raise backend_error(e) from e

    def _quads(self, s, p, o, g):
        cdef bint bs = s is not None, bp = p is not None, bo = o is not None
        cdef Path path = access_path(bs, bp, bo, g is not None, False, False, False)
        cdef Path in_graph = access_path(bs, bp, bo, True, False, False, False)
        cdef uint64_t gid
        if g is not None:
            gid = self.iri_id(g, False)
            if gid:
                yield from self._graph_quads(gid, g, s, p, o, path)
            return
        if not self.store.index_usable and path != PATH_ALL:
            path = PATH_ALL      # a read-only store whose index is of another format
        if path == PATH_ALL:
            gids = sorted(self.graph_id_set())
        else:
            self._open_index()
        if path == PATH_SG:
            gids = sorted(self._subject_graphs(s))
        if path == PATH_ALL or path == PATH_SG:
            for gid in gids:
                self._check()
                yield from self._graph_quads(gid, self.decode_iri(gid), s, p, o, in_graph)
            return
        cdef set skip = self.touched | self.tail
        yield from self._index_quads(s, p, o, path, skip)
        # The tail and the graphs changed in this (write) transaction: read directly.
        for gid in sorted(skip):
            self._check()
            if self.record(gid) is not None or self.gx_ids(gid, 0, 0):
                yield from self._graph_quads(gid, self.decode_iri(gid), s, p, o, in_graph)

    def _graph_quads(self, uint64_t gid, str g, s, p, o, Path path):
        """Quads of graph ``gid`` matching (s, p, o) on ``path`` (a PATH_GRAPH*)."""
        cdef bytes key, raw
        cdef const GxRow *rows
        cdef Py_ssize_t n, start
        cdef uint64_t sid, pid
        if path == PATH_GRAPH_SP and kind_of(s) == TERM_IRI:
            # A containment listing: the (g, s, p) run of gx, decoded a chunk at a time.
            sid = self.iri_id(s, False)
            pid = self.iri_id(p, False)
            if not sid or not pid:
                return
            key = be_n(gid, sid, pid, 3)
            cur = self.txn.cursor(db=self.store.db_gx)
            if cur.set_key(key):
                raw = bytes(cur.getmulti([key], dupdata=True, dupfixed_bytes=8, keyfixed=True))
                rows = <const GxRow *>PyBytes_AS_STRING(raw)
                n = len(raw) // ROW_SIZE
                for start in range(0, n, LISTING_CHUNK):
                    self._check()
                    for to in self.decode_iris(rows[start].o, min(LISTING_CHUNK, n - start),
                                               ROW_SIZE):
                        self._check()
                        yield (s, p, to, g)
        yield from self._graph_hits(gid, g, s, p, o, path)

    def _index_quads(self, s, p, o, Path path, set skip):
        """Union quads from ``osp`` (o bound) or ``pos`` (p bound), but graphs in ``skip``."""
        cdef uint64_t pid = 0, key, rs, rp, ro, rg
        cdef uint32_t gnum, prev_gnum = 0
        cdef bytes raw
        cdef const OspRow *osp
        cdef const PosRow *pos
        cdef Py_ssize_t i, n
        cdef Record rec
        cdef str gname = None
        if p is not None:
            pid = self.iri_id(p, False)
            if not pid:
                return
        keys = self.candidates(o) if path == PATH_OSP else [pid]
        db = self.store.idb_osp if path == PATH_OSP else self.store.idb_pos
        cur = self.itxn.cursor(db=db)
        for key in keys:
            self._check()
            if path == PATH_OSP and kind(key) != TERM_IRI:
                yield from self._lit_quads(s, pid, o, key, skip)
                continue
            if not cur.set_key(be(key)):
                continue
            raw = bytes(cur.getmulti([be(key)], dupdata=True, dupfixed_bytes=IDX_VAL_SIZE,
                                     keyfixed=True))
            osp = <const OspRow *>PyBytes_AS_STRING(raw)
            pos = <const PosRow *>PyBytes_AS_STRING(raw)
            n = len(raw) // IDX_ROW_SIZE
            prev_gnum = 0
            for i in range(n):
                if path == PATH_OSP:
                    if pid and get_be(osp[i].p) != pid:
                        continue
                    gnum = get_be32(osp[i].g)
                else:
                    gnum = get_be32(pos[i].g)
                if gnum != prev_gnum:   # rows are sorted by graph number first
                    prev_gnum = gnum
                    rg = graph_of(self.itxn, self.store, gnum)
                    gname = None
                    if rg and rg not in skip:
                        gname = self.decode_opt(rg, None)
                    rec = None
                if gname is None:
                    continue    # a graph of the tail (read directly), or unknown here
                if path == PATH_OSP:
                    rs, rp, ro = get_be(osp[i].s), get_be(osp[i].p), key
                else:
                    rs, rp, ro = get_be(pos[i].s), key, get_be(pos[i].o)
                self._check()
                if rec is None and (kind(rs) != TERM_IRI or kind(ro) != TERM_IRI):
                    rec = self.record(rg)
                ts = self.decode_opt(rs, rec)
                tp = self.decode_opt(rp, rec)
                to = self.decode_opt(ro, rec)
                if ts is None or tp is None or to is None:
                    continue   # written after this snapshot
                if (s is not None and ts != s) or (o is not None and to != o):
                    continue
                yield (ts, tp, to, gname)

    def _lit_quads(self, s, uint64_t pid, str o, uint64_t oid, set skip):
        """Union quads whose object is the literal or blank node of id ``oid``,
        but graphs in ``skip``: ``lit`` gives the graphs, their records the triples."""
        cdef uint64_t rg, ts_, tp_, to_
        cdef Record rec
        for gnum in lit_graphs(self.itxn, self.store, oid):
            rg = graph_of(self.itxn, self.store, gnum)
            if not rg or rg in skip:
                continue
            self._check()
            rec = self.record(rg)
            gname = self.decode_opt(rg, None)
            if rec is None or gname is None:
                continue   # written after this snapshot
            for ts_, tp_, to_ in rec.triple_ids():
                if to_ != oid or (pid and tp_ != pid):
                    continue
                ts = self.decode_opt(ts_, rec)
                tp = self.decode_opt(tp_, rec)
                to = self.decode_opt(to_, rec)
                if ts is None or tp is None or to is None:
                    continue
                if (s is not None and ts != s) or to != o:
                    continue   # another term with the same hash
                yield (ts, tp, to, gname)

    cdef list _graph_hits(self, uint64_t gid, str g, s, p, o, Path path):
        """Decoded quads of graph ``gid`` matching (s, p, o): the record, and gx but
        for the (g, s, p) run that ``_graph_quads`` streams on PATH_GRAPH_SP."""
        cdef Record rec = self.record(gid)
        cdef list sc = self.candidates(s) if s is not None else None
        cdef list pc = self.candidates(p) if p is not None else None
        cdef list oc = self.candidates(o) if o is not None else None
        cdef list out = []
        if (sc is not None and not sc) or (pc is not None and not pc) or (
                oc is not None and not oc):
            return out
        cdef uint64_t sid, pid = pc[0] if pc else 0
        cdef list ids = []
        if path == PATH_GRAPH:
            if rec is not None:
                ids = rec.triple_ids()
            ids.extend(self.gx_ids(gid, 0, 0))
        else:
            for sid in sc:
                if path == PATH_GRAPH_S or kind(sid) != TERM_IRI:
                    ids.extend(self.gx_ids(gid, sid, pid))
            if rec is not None:
                ids = [t for sid in sc for t in rec.triple_ids_for(sid, pid)] + ids
        cdef set ps = set(pc) if pc is not None else None
        cdef set os_ = set(oc) if oc is not None else None
        cdef list hits = [t for t in ids
                          if (ps is None or t[1] in ps) and (os_ is None or t[2] in os_)]
        for ts, tp, to in self.decode_triples(gid, hits):
            # Literal / blank node ids are hashes: confirm on the string.
            if (s is None or ts == s) and (o is None or to == o):
                out.append((ts, tp, to, g))
        return out

    def count(self, s=None, p=None, o=None, g=None, *, bint distinct=False,
              str graph_prefix=None):
        """How many quads match the pattern; with ``distinct``, how many distinct
        triples (a triple in several graphs counts once, as in SPARQL's union).
        ``graph_prefix``: count only quads of the graphs whose name (a canonical
        term, ``<...``) starts with it."""
        self._check()
        s, p, o, g = check_pattern(s, p, o, g)
        if graph_prefix is not None and g is not None and not g.startswith(graph_prefix):
            return 0
        cdef Path path = access_path(s is not None, p is not None, o is not None,
                                     g is not None, is_iri(s) and is_iri(o), True,
                                     bool(self.touched) or not self.store.index_usable)
        cdef uint64_t gid
        try:
            if path == PATH_GRAPH_SP:
                gid = self.iri_id(g, False)
                return self._count_graph_sp(gid, s, p) if gid else 0
            if path == PATH_COUNT_OSP or path == PATH_COUNT_POS:
                return self._count_index(s, p, o, distinct, graph_prefix)
            quads = self._quads(s, p, o, g)
            if graph_prefix is not None:
                quads = (q for q in quads if q[3].startswith(graph_prefix))
            if distinct and g is None:
                return len({q[:3] for q in quads})
            return sum(1 for _ in quads)
        except lmdb.Error as e:
            raise backend_error(e) from e

    cdef Py_ssize_t _count_graph_sp(self, uint64_t gid, str s, str p) except -1:
        """Count (s, p, ?) in graph ``gid``: O(1) on the one-by-one quads."""
        cdef uint64_t pid = self.iri_id(p, False), sid
        if not pid:
            return 0
        cdef Py_ssize_t n = 0
        cdef Record rec = self.record(gid)
        cur = self.txn.cursor(db=self.store.db_gx)
        for sid in self.candidates(s):
            if cur.set_key(be_n(gid, sid, pid, 3)):
                n += cur.count()
            if rec is not None:
                n += len(rec.triple_ids_for(sid, pid))
        return n

    cdef Py_ssize_t _count_index(self, s, p, o, bint distinct, str graph_prefix) except -1:
        """Count a union pattern of IRIs on the index (PATH_COUNT_*), decoding
        nothing (with ``graph_prefix``, each graph's name once per store, see
        ``unionrows.prefix_flags``). The tail's graphs are counted from their records
        instead of their rows. O(rows under the key) at most; O(1) for a plain
        count of a bound predicate or object with an empty tail."""
        self._open_index()
        cdef uint64_t sid = 0, pid = 0, oid = 0, key
        cdef uint32_t gnum, prev_gnum = 0
        cdef Py_ssize_t n = 0, i, rows, m = 0
        cdef bytes raw
        cdef bint prev_ok = True
        cdef bytearray flags = None, keys = None
        cdef unsigned char *kbuf = NULL
        cdef set skip = self._graph_numbers(self.tail)
        if s is not None:
            sid = self.iri_id(s, False)
            if not sid:
                return 0
        if p is not None:
            pid = self.iri_id(p, False)
            if not pid:
                return 0
        if o is not None:
            oid = self.iri_id(o, False)
            if not oid:
                return 0
        cdef set tail_keys = set()
        cdef Py_ssize_t tail_n = 0
        if self.tail:
            tail_n = self._count_tail(sid, pid, oid, graph_prefix, tail_keys if distinct else None)
        db = self.store.idb_osp if oid else self.store.idb_pos
        key = oid if oid else pid
        cur = self.itxn.cursor(db=db)
        if not cur.set_key(be(key)):
            return len(tail_keys) if distinct else tail_n
        if not distinct and graph_prefix is None and not sid and not (oid and pid) and not skip:
            return cur.count() + tail_n
        cdef unsigned char *fl = NULL
        cdef Py_ssize_t flen = 0
        if graph_prefix is not None:
            flags = prefix_flags(self.itxn, self.store, graph_prefix)
            fl = <unsigned char *>flags
            flen = len(flags)
        raw = bytes(cur.getmulti([be(key)], dupdata=True, dupfixed_bytes=IDX_VAL_SIZE,
                                 keyfixed=True))
        cdef const OspRow *osp = <const OspRow *>PyBytes_AS_STRING(raw)
        cdef const PosRow *pos = <const PosRow *>PyBytes_AS_STRING(raw)
        rows = len(raw) // IDX_ROW_SIZE
        if flags is not None and rows:
            learn_prefixes(self, self.itxn, flags, graph_prefix, osp[0].g, rows, IDX_ROW_SIZE)
            fl = <unsigned char *>flags    # it may have grown
            flen = len(flags)
        if distinct:
            keys = bytearray(16 * rows)
            kbuf = <unsigned char *>keys
        # ``same`` is the triple's part of a row (osp: s, p; pos: o, s); rows are
        # sorted by graph number first, so each graph's rows are one run.
        cdef const unsigned char *same
        for i in range(rows):
            if oid:
                if (sid and get_be(osp[i].s) != sid) or (pid and get_be(osp[i].p) != pid):
                    continue
                same = osp[i].s
                gnum = get_be32(osp[i].g)
            else:
                if sid and get_be(pos[i].s) != sid:
                    continue
                same = pos[i].o
                gnum = get_be32(pos[i].g)
            if gnum != prev_gnum:
                prev_gnum = gnum
                prev_ok = not (skip and gnum in skip)
                if prev_ok and flags is not None:   # unknown: not in this snapshot
                    prev_ok = gnum < flen and fl[gnum] == 1
            if not prev_ok:
                continue
            if distinct:
                memcpy(kbuf + 16 * m, same, 16)
                m += 1
            else:
                n += 1
        if not distinct:
            return n + tail_n
        m = sort_unique_rows(kbuf, m, 16)
        for k in tail_keys:   # the tail's matches not counted on the index already
            if not has16(kbuf, m, PyBytes_AS_STRING(k)):
                n += 1
        return m + n

    cdef set _graph_numbers(self, set gids):
        """The index's numbers of graphs ``gids`` (those it has met)."""
        cdef set out = set()
        cdef uint32_t gnum
        for gid in gids:
            gnum = graph_number(self.itxn, self.store, gid)
            if gnum:
                out.add(gnum)
        return out

    cdef Py_ssize_t _count_tail(self, uint64_t sid, uint64_t pid, uint64_t oid,
                                str graph_prefix, set keys) except -1:
        """The tail's share of an IRI count: how many of its graphs' triples match,
        or, with ``keys``, each distinct match put in it as the 16 bytes that
        ``_count_index`` compares (osp: s, p; pos: o, s)."""
        cdef Py_ssize_t n = 0
        cdef uint64_t gid, ts, tp, to
        cdef Record rec
        for gid in self.tail:
            if graph_prefix is not None:
                name = self.decode_opt(gid, None)
                if name is None or not name.startswith(graph_prefix):
                    continue
            rec = self.record(gid)
            ids = rec.triple_ids() if rec is not None else []
            ids.extend(self.gx_ids(gid, 0, 0))
            for ts, tp, to in ids:
                if (sid and ts != sid) or (pid and tp != pid) or (oid and to != oid):
                    continue
                if keys is None:
                    n += 1
                elif oid:
                    keys.add(be_n(ts, tp, 0, 2))
                else:
                    keys.add(be_n(to, ts, 0, 2))
        return n

    cdef set _subject_graphs(self, str s):
        """The graphs where ``s`` is a subject (sg), the tail's, and every graph
        this txn changed."""
        cdef set out = set()
        cdef uint64_t gid
        cur = self.itxn.cursor(db=self.store.idb_sg)
        for sid in self.candidates(s):
            if cur.set_key(be(sid)):
                for v in cur.iternext_dup():
                    if len(v) != GNUM_SIZE:
                        raise StoreError("Corrupt index: a graph number is truncated")
                    gid = graph_of(self.itxn, self.store,
                                   get_be32(<const unsigned char *>PyBytes_AS_STRING(v)))
                    if gid:
                        out.add(gid)
        out.update(self.tail)
        out.update(self.touched)
        return out

    cdef int _open_index(self) except -1:
        """Open the index snapshot and find its tail (see the module docstring).

        The tail is every graph named by a log entry after the last one the
        index applied, as this transaction sees the log (in a write transaction,
        its own entries too), and, while a rebuild is under way, every graph it
        has not reached yet. Nothing is written and nothing waited for.
        """
        if self.itxn is not None:
            return 0
        cdef uint64_t applied, after = 0
        cdef bint rebuilding
        cdef set tail
        itxn = self.store.begin(self.store.ienv, False)
        try:
            state = itxn.get(b"rebuild", db=self.store.idb_state)
            rebuilding = state is not None
            if rebuilding:
                if len(state) < 16:
                    raise StoreError("Corrupt index state: rebuild entry truncated")
                applied, after = id_at(state, 0), id_at(state, 8)
            else:
                applied = applied_seq(itxn, self.store.idb_state)
            tail = self._log_graphs(applied)
            if rebuilding:
                tail.update(g for g in self.graph_id_set() if g > after)
        except BaseException:
            itxn.abort()
            raise
        self.itxn = itxn
        self.tail = tail
        return 0

    cdef set _log_graphs(self, uint64_t after):
        """Ids of the graphs named by the log entries after seq ``after``."""
        cdef set out = set()
        cur = self.txn.cursor(db=self.store.db_log)
        if not cur.set_range(be(after + 1)):
            return out
        unpack = LOG_HEAD.unpack_from
        for entry in cur.iternext(keys=False):
            out.add(unpack(entry)[1])
        return out

    # -- namespaces and figures --------------------------------------------------

    def namespaces(self):
        """prefix -> namespace IRI."""
        self._check()
        try:
            cur = self.txn.cursor(db=self.store.db_ns)
            return {k[1:].decode(): v.decode() for k, v in cur.iternext()}
        except lmdb.Error as e:
            raise backend_error(e) from e

    def namespace(self, str prefix):
        """The namespace bound to ``prefix``, or None."""
        self._check()
        try:
            v = self.txn.get(ns_key(prefix), db=self.store.db_ns)
        except lmdb.Error as e:
            raise backend_error(e) from e
        return v.decode() if v is not None else None

    def prefix(self, str namespace):
        """The prefix bound to ``namespace``, or None."""
        self._check()
        try:
            v = self.txn.get(namespace.encode(), db=self.store.db_nsr)
        except lmdb.Error as e:
            raise backend_error(e) from e
        return v.decode() if v is not None else None

    def snapshot_id(self):
        """The LMDB transaction id: for a read snapshot, that of the last write it
        sees (two snapshots of one id read the same state of the store)."""
        self._check()
        return self.txn.id()

    def stats(self):
        """Entry counts of the main tables."""
        self._check()
        cdef Py_ssize_t quads
        try:
            st = self.txn.stat
            quads = st(self.store.db_gx)["entries"]
            cur = self.txn.cursor(db=self.store.db_rec)
            records = 0
            for key, value in cur.iternext():
                if len(key) == 8:     # a graph id; else an IRI's string (``term_key``)
                    quads += Record(value).n_triples
                    records += 1
            return {"quads": quads, "graphs": len(self.graph_id_set()),
                    "iris": st(self.store.db_rec)["entries"] - records,
                    "records": records,
                    "log_entries": st(self.store.db_log)["entries"]}
        except lmdb.Error as e:
            raise backend_error(e) from e

    # -- the outbox (change feed) ------------------------------------------------

    def outbox(self, uint64_t after=0, Py_ssize_t limit=-1):
        """Outbox entries ``(seq, bytes)`` with seq > ``after``, in seq order (at
        most ``limit``; -1: all)."""
        self._check()
        cdef list out = []
        try:
            cur = self.txn.cursor(db=self.store.db_outbox)
            if not cur.set_range(be(after + 1)):
                return out
            for key, value in cur.iternext():
                if limit >= 0 and len(out) >= limit:
                    break
                out.append((id_at(key, 0), value))
        except lmdb.Error as e:
            raise backend_error(e) from e
        return out

    def outbox_state(self):
        """The outbox's figures: ``first`` and ``last`` seq held (0: empty),
        ``entries``, ``seq`` (the last handed out) and ``published`` (the last
        acknowledged by the broker)."""
        self._check()
        try:
            cur = self.txn.cursor(db=self.store.db_outbox)
            first = id_at(cur.key(), 0) if cur.first() else 0
            last = id_at(cur.key(), 0) if cur.last() else 0
            seq = self.txn.get(OUTBOX_SEQ, db=self.store.db_meta)
            pub = self.txn.get(OUTBOX_PUBLISHED, db=self.store.db_meta)
            return {"first": first, "last": last,
                    "entries": self.txn.stat(self.store.db_outbox)["entries"],
                    "seq": max(id_at(seq, 0) if seq is not None else 0, last),
                    "published": id_at(pub, 0) if pub is not None else 0}
        except lmdb.Error as e:
            raise backend_error(e) from e


cdef class ReadTxn(Reader):
    """A read snapshot: reads only; ``with`` ends it (``abort()``) on the way out."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.abort()
        return False

    def commit(self):
        """End the snapshot (a snapshot has nothing to commit)."""
        self.abort()
