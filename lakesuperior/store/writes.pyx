"""The write transaction: one LMDB write transaction on the main environment.

``WriteTxn`` reads its own writes (it is a ``Reader``) and commits on success,
aborts on exception. Every write method is applied through ``_run``
(``journal.pyx``: the journal, savepoints, growth with replay, commit): when
LMDB reports its map full, the transaction is started again on a grown map,
its earlier writes are replayed from the journal, and the failed write is
retried once.
"""

cimport cython
from libc.stdint cimport uint64_t
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from lakesuperior.store.layout cimport (IdTriple, LOG_DELTA, LOG_REPLACE, TRIPLE_SIZE, be, be_n,
                                        id_at, pack_triples)
from lakesuperior.store.env cimport last_seq, applied_seq
from lakesuperior.store.journal cimport JournaledTxn
from lakesuperior.store.reads cimport Reader, ns_key
from lakesuperior.store.records cimport Record, encode_record, sort_unique
from lakesuperior.store.terms cimport (KIND_SHIFT, TERM_IRI, TERM_LITERAL, canonical_utf8,
                                       id_of_utf8, kind_of)
from lakesuperior.store.txn cimport check_pattern, check_term

from lakesuperior.exceptions import StoreError, TermError
from lakesuperior.store.indexer import LOG_HEAD
from lakesuperior.store.reads import OUTBOX_PUBLISHED as _OUTBOX_PUBLISHED
from lakesuperior.store.reads import OUTBOX_SEQ as _OUTBOX_SEQ

cdef enum:
    OP_ADD_GRAPH = 1
    OP_ADD = 2
    OP_REMOVE = 3
    OP_REMOVE_GRAPH = 4
    OP_BIND = 5
    OP_UNBIND = 6
    OP_OUTBOX_APPEND = 7
    OP_OUTBOX_DROP = 8
    OP_OUTBOX_MARK = 9
    OP_ADD_GRAPH_KEEPING = 10
    OP_SET_VALUE = 11

_ROLES = ("subject", "predicate", "object")


cdef inline int kind(uint64_t tid) noexcept nogil:
    return <int>(tid >> KIND_SHIFT)


cdef class WriteTxn(JournaledTxn):
    """The one write transaction; commits on success, aborts on exception."""

    def match(self, s=None, p=None, o=None, g=None):
        """Quads matching a pattern, read at the call: the caller may write while
        iterating (a stream over a changing transaction would be undefined)."""
        return iter(list(Reader.match(self, s, p, o, g)))

    # -- the journal's writes ------------------------------------------------------

    cdef object _apply(self, int op, tuple args):
        if op == OP_ADD_GRAPH:
            return self._add_graph(args[0], args[1], args[2])
        if op == OP_ADD_GRAPH_KEEPING:
            return self._add_graph_keeping(args[0], args[1], args[2], args[3])
        if op == OP_ADD:
            return self._add(args[0], args[1])
        if op == OP_REMOVE:
            return self._remove(args[0], args[1], args[2], args[3])
        if op == OP_REMOVE_GRAPH:
            return self._remove_graph(args[0])
        if op == OP_SET_VALUE:
            return self._set_value(args[0], args[1], args[2], args[3])
        if op == OP_BIND:
            return self._bind(args[0], args[1], args[2])
        if op == OP_UNBIND:
            return self._unbind(args[0])
        if op == OP_OUTBOX_APPEND:
            return self._outbox_append(args[0])
        if op == OP_OUTBOX_DROP:
            return self._outbox_drop(args[0], args[1])
        return self._outbox_mark(args[0])

    cdef bint _put(self, bytes key, bytes value, db, bint dupdata=True,
                   bint append=False) except -1:
        self.written += len(key) + len(value)
        return self.txn.put(key, value, db=db, dupdata=dupdata, append=append)

    # -- logging -----------------------------------------------------------------

    cdef int _log(self, int kind_, uint64_t gid, list removed, list added) except -1:
        """Append a change entry for the indexer (trimming what it has taken in)."""
        cdef uint64_t seq = last_seq(self.txn, self.store.db_log) + 1
        if not self.touched:
            self._trim_log()
        entry = b"".join([LOG_HEAD.pack(kind_, gid, len(removed), len(added)),
                          pack_triples(removed), pack_triples(added)])
        self._put(be(seq), entry, self.store.db_log, True, True)
        self.touched.add(gid)
        return 0

    cdef int _trim_log(self) except -1:
        """Drop log entries the index has taken in (they are at the log's head)."""
        cur = self.txn.cursor(db=self.store.db_log)
        if not cur.first():
            return 0
        cdef uint64_t head = id_at(cur.key(), 0)
        itxn = self.store.begin(self.store.ienv, False)
        try:
            applied = applied_seq(itxn, self.store.idb_state)
        finally:
            itxn.abort()
        if head > applied:
            return 0
        while True:
            key = cur.key()
            if not key or id_at(key, 0) > applied:
                break
            cur.delete()
        return 0

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
            self._put(be(nid), be(cand), self.store.db_collide)
        local[cand] = data
        return cand

    cdef tuple _encode(self, list rows, dict local, bint trusted):
        """Check and encode triples: (uint64 buffer as bytes, count), in the
        given order, repeats kept (``encode_record`` sorts and drops them)."""
        cdef Py_ssize_t n = len(rows), i = 0
        cdef bytes buf = PyBytes_FromStringAndSize(NULL, TRIPLE_SIZE * n if n else 1)
        cdef IdTriple *ids = <IdTriple *>PyBytes_AS_STRING(buf)
        cdef dict seen = {}
        for row in rows:
            try:
                s, p, o = row
            except (TypeError, ValueError):
                raise TermError(f"A triple must be a (subject, predicate, object) "
                                f"tuple, not {row!r:.80}") from None
            ids[i].s = self._triple_term(s, 0, local, seen, trusted)
            ids[i].p = self._triple_term(p, 1, local, seen, trusted)
            ids[i].o = self._triple_term(o, 2, local, seen, trusted)
            i += 1
        return buf, n

    cdef uint64_t _triple_term(self, term, int pos, dict local, dict seen,
                               bint trusted) except? 1:
        tid = self.store.iri_ids.get(term)   # a known (so canonical) IRI
        if tid is not None:
            return tid
        tid = seen.get(term)
        if tid is not None:
            if pos == 1 and kind(tid) != TERM_IRI:
                raise TermError("A predicate must be an IRI")
            if pos == 0 and kind(tid) == TERM_LITERAL:
                raise TermError("A literal cannot be a subject")
            return tid
        cdef int k = 0
        cdef bytes data
        cdef str canon
        if trusted and type(term) is str:
            # Canonical already (rdfio.parse output, terms builders): no re-validation.
            k = kind_of(term)
            try:
                data = term.encode("utf-8")
            except UnicodeEncodeError:
                raise TermError(f"Not valid Unicode (lone surrogate): {term[:80]!r}") from None
            canon = term
        else:
            if type(term) is not str:
                check_term(term, _ROLES[pos])
            data = canonical_utf8(term, &k)
            canon = None
        cdef uint64_t v
        if pos == 0 and k == TERM_LITERAL:
            raise TermError(f"A literal cannot be a subject: {term[:80]}")
        if pos == 1 and k != TERM_IRI:
            raise TermError(f"A predicate must be an IRI: {term[:80]}")
        if k == TERM_IRI:
            v = self.iri_id(canon if canon is not None else data.decode("utf-8"), True)
        else:
            v = self._write_local(data, k, local)
        seen[term] = v
        return v

    cdef uint64_t _graph_id(self, g) except? 1:
        g = check_term(g, "graph name")
        if kind_of(g) != TERM_IRI:
            raise TermError("A graph name must be an IRI")
        return self.iri_id(g, True)

    # -- writes --------------------------------------------------------------------

    def add_graph(self, g, triples, *, bint canonical=False, keep=None):
        """Set the whole content of graph ``g``.

        ``canonical=True``: the caller vouches that every term is canonical (as
        ``rdfio.parse`` and the ``terms`` builders make them); the store then checks
        only each term's kind and position, not its syntax. Other callers' terms are
        validated and canonicalised.

        ``keep``: a predicate whose triples in ``g`` stay as they are, neither read
        nor rewritten (a container's ``ldp:contains`` when its own triples are
        replaced): the other triples become ``triples``, and the write (its log entry
        included) is as large as they are, however many triples are kept.
        """
        if keep is None:
            self._run(OP_ADD_GRAPH, (g, list(triples), canonical))
            return
        keep = check_term(keep, "predicate")
        if kind_of(keep) != TERM_IRI:
            raise TermError("A predicate must be an IRI")
        self._run(OP_ADD_GRAPH_KEEPING, (g, list(triples), canonical, keep))

    cdef int _add_graph(self, g, list rows, bint trusted) except -1:
        cdef uint64_t gid = self._graph_id(g)
        cdef dict local = {}
        buf, n = self._encode(rows, local, trusted)
        cdef list old = self.graph_ids(gid)
        self._clear_gx(gid)
        if n:
            data = encode_record(local, <uint64_t *>PyBytes_AS_STRING(buf), n)
            self._put(be(gid), data, self.store.db_rec)
            self.records[gid] = Record(data)
        else:
            self.txn.delete(be(gid), db=self.store.db_rec)
            self.records[gid] = None
        self._log(LOG_REPLACE, gid, old, [])
        return 0

    cdef int _add_graph_keeping(self, g, list rows, bint trusted, str keep) except -1:
        """``add_graph`` with ``keep``: the record is rewritten (O(its triples)), gx
        loses its runs of other predicates, and the log gets the difference."""
        cdef uint64_t gid = self._graph_id(g)
        cdef uint64_t kid = self.iri_id(keep, False)
        cdef Record rec = self.record(gid)
        cdef dict local = rec.local_terms() if rec is not None else {}
        buf, n = self._encode(rows, local, trusted)
        cdef const IdTriple *ids = <const IdTriple *>PyBytes_AS_STRING(buf)
        cdef list old = rec.triple_ids() if rec is not None else []
        cdef list new = []
        cdef Py_ssize_t i
        cdef uint64_t s, p, o
        gx = self.txn.cursor(db=self.store.db_gx)
        for i in range(n):
            s, p, o = ids[i].s, ids[i].p, ids[i].o
            if (kid and p == kid and kind(s) == TERM_IRI and kind(o) == TERM_IRI
                    and gx.set_key_dup(be_n(gid, s, p, 3), be(o))):
                continue   # already one of the kept quads
            new.append((s, p, o))
        cdef set fresh = set(new)
        new.extend(t for t in old if t[1] == kid and t not in fresh)
        fresh = set(new)
        cdef set before = set(old)
        cdef list removed = [t for t in old if t not in fresh]
        removed.extend(self._clear_gx_except(gid, kid))
        cdef list added = [t for t in new if t not in before]
        if removed or added:
            self._put_record(gid, new, local)
            self._log(LOG_DELTA, gid, removed, added)
        return 0

    cdef list _clear_gx_except(self, uint64_t gid, uint64_t kid):
        """Delete graph ``gid``'s gx runs but those of predicate ``kid`` (skipped
        whole, unread); return the (s, p, o) ids deleted."""
        cdef list out = self.gx_ids(gid, 0, 0, kid)
        cdef set keys = {(s, p) for s, p, _ in out}
        for s, p in keys:
            self.txn.delete(be_n(gid, s, p, 3), db=self.store.db_gx)
        return out

    cdef int _clear_gx(self, uint64_t gid) except -1:
        cur = self.txn.cursor(db=self.store.db_gx)
        prefix = be(gid)
        while cur.set_range(prefix) and cur.key()[:8] == prefix:
            cur.delete(dupdata=True)
        return 0

    def add(self, quads, *, bint canonical=False):
        """Add quads (duplicates ignored); returns how many were new.

        ``canonical``: as for ``add_graph``.
        """
        return self._run(OP_ADD, (list(quads), canonical))

    cdef Py_ssize_t _add(self, list quads, bint trusted) except -1:
        cdef dict by_graph = {}
        for q in quads:
            try:
                s, p, o, g = q
            except (TypeError, ValueError):
                raise TermError(f"A quad must be a (s, p, o, g) tuple, not {q!r:.80}") from None
            by_graph.setdefault(g, []).append((s, p, o))
        cdef Py_ssize_t added = 0
        for g, triples in by_graph.items():
            added += self._add_to_graph(self._graph_id(g), triples, trusted)
        return added

    cdef Py_ssize_t _add_to_graph(self, uint64_t gid, list triples, bint trusted) except -1:
        cdef Record rec = self.record(gid)
        cdef dict local = rec.local_terms() if rec is not None else {}
        buf, n = self._encode(triples, local, trusted)
        n = sort_unique(<uint64_t *>PyBytes_AS_STRING(buf), n)
        cdef const IdTriple *ids = <const IdTriple *>PyBytes_AS_STRING(buf)
        cdef list fresh = []
        cdef list to_record = []
        cdef Py_ssize_t i
        cdef uint64_t s, p, o
        for i in range(n):
            s, p, o = ids[i].s, ids[i].p, ids[i].o
            if rec is not None and rec.find_triple(s, p, o) >= 0:
                continue
            if kind(s) == TERM_IRI and kind(o) == TERM_IRI:
                if self._put(be_n(gid, s, p, 3), be(o), self.store.db_gx, False):
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

    @cython.boundscheck(False)   # i < m == len(triples) by the loop bounds
    @cython.wraparound(False)
    cdef int _put_record(self, uint64_t gid, list triples, dict local) except -1:
        """Write graph ``gid``'s record from id triples, keeping only used locals."""
        cdef Py_ssize_t m = len(triples), i
        if not m:
            self.txn.delete(be(gid), db=self.store.db_rec)
            self.records[gid] = None
            return 0
        cdef bytes mbuf = PyBytes_FromStringAndSize(NULL, TRIPLE_SIZE * m)
        cdef IdTriple *mids = <IdTriple *>PyBytes_AS_STRING(mbuf)
        for i in range(m):
            mids[i].s, mids[i].p, mids[i].o = triples[i]
        data = encode_record(local, <uint64_t *>mids, m)   # keeps the locals used
        self._put(be(gid), data, self.store.db_rec)
        self.records[gid] = Record(data)
        return 0

    def remove(self, s=None, p=None, o=None, g=None):
        """Remove every quad matching the pattern; returns how many."""
        self._check()
        return self._run(OP_REMOVE, check_pattern(s, p, o, g))

    cdef Py_ssize_t _remove(self, s, p, o, g) except -1:
        cdef list hits = list(self._quads(s, p, o, g))
        cdef dict by_graph = {}
        for qs, qp, qo, qg in hits:
            by_graph.setdefault(qg, []).append((qs, qp, qo))
        for gname, triples in by_graph.items():
            self._remove_from_graph(self.iri_id(gname, False), triples)
        return len(hits)

    cdef int _remove_from_graph(self, uint64_t gid, list triples) except -1:
        cdef Record rec = self.record(gid)
        cdef list removed = []
        cdef set in_record = set()
        cdef uint64_t s, p, o
        for ts, tp, to in triples:
            s = self._known_id(ts, rec)
            p = self._known_id(tp, rec)
            o = self._known_id(to, rec)
            if self._unlink(gid, rec, s, p, o):
                in_record.add((s, p, o))
            removed.append((s, p, o))
        if in_record:
            self._put_record(gid, [t for t in rec.triple_ids() if t not in in_record],
                             rec.local_terms())
        if removed:
            self._log(LOG_DELTA, gid, removed, [])
        return 0

    cdef bint _unlink(self, uint64_t gid, Record rec, uint64_t s, uint64_t p,
                      uint64_t o) except -1:
        """Triple ``(s, p, o)`` of graph ``gid`` removed from gx unless the graph's
        record ``rec`` holds it: True if it does (the caller rewrites the record)."""
        if rec is not None and rec.find_triple(s, p, o) >= 0:
            return True
        cur = self.txn.cursor(db=self.store.db_gx)
        if cur.set_key_dup(be_n(gid, s, p, 3), be(o)):
            cur.delete()
        return False

    cdef uint64_t _known_id(self, str term, Record rec) except? 1:
        """Id of a term known to be in graph ``rec`` (or in its one-by-one quads)."""
        cdef Py_ssize_t i
        if kind_of(term) == TERM_IRI:
            return self.iri_id(term, False)
        for cand in self.local_candidates(term):
            if rec is not None:
                i = rec.find(cand)
                if i >= 0 and rec.term_at(i) == term:
                    return cand
        raise StoreError(f"Term {term[:80]} is not in the graph")

    def set_value(self, s, p, o, g):
        """Make ``o`` the one object of ``(s, p, ?)`` in graph ``g`` (the other
        objects removed); returns how many quads were removed or added. One write
        of the graph's record and one log entry, where ``remove`` then ``add``
        make two of each (a resource's ``fcrepo:lastModified`` on every write
        of a child)."""
        self._check()
        s, p, o, g = check_pattern(s, p, o, g)
        if s is None or p is None or o is None or g is None:
            raise TermError("set_value() needs a subject, a predicate, an object and a graph")
        return self._run(OP_SET_VALUE, (s, p, o, g))

    cdef Py_ssize_t _set_value(self, s, p, o, g) except -1:
        cdef uint64_t gid = self._graph_id(g)
        cdef list hits = [q[:3] for q in self._quads(s, p, None, g)]
        cdef Record rec = self.record(gid)
        cdef dict local = rec.local_terms() if rec is not None else {}
        buf, _ = self._encode([(s, p, o)], local, False)
        cdef const IdTriple *ids = <const IdTriple *>PyBytes_AS_STRING(buf)
        cdef tuple new = (ids[0].s, ids[0].p, ids[0].o)
        cdef set gone = set()          # removed triples that are in the record
        cdef list removed = [], added = []
        cdef bint present = False
        cdef uint64_t ts, tp, to
        for hs, hp, ho in hits:
            ts = self._known_id(hs, rec)
            tp = self._known_id(hp, rec)
            to = self._known_id(ho, rec)
            if (ts, tp, to) == new:
                present = True
                continue
            if self._unlink(gid, rec, ts, tp, to):
                gone.add((ts, tp, to))
            removed.append((ts, tp, to))
        cdef bint to_record = False
        if not present:
            if kind(ids[0].s) == TERM_IRI and kind(ids[0].o) == TERM_IRI:
                self._put(be_n(gid, ids[0].s, ids[0].p, 3), be(ids[0].o), self.store.db_gx,
                          False)
            else:
                to_record = True
            added.append(new)
        if gone or to_record:
            kept = [t for t in rec.triple_ids() if t not in gone] if rec is not None else []
            self._put_record(gid, kept + [new] if to_record else kept, local)
        if removed or added:
            self._log(LOG_DELTA, gid, removed, added)
        return len(removed) + len(added)

    def remove_graph(self, g):
        """Remove graph ``g`` entirely; returns how many quads it held."""
        self._check()
        return self._run(OP_REMOVE_GRAPH, (check_term(g, "graph name"),))

    cdef Py_ssize_t _remove_graph(self, g) except -1:
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
        """Bind a namespace prefix (bare namespace IRI)."""
        self._check()
        namespace = check_term("<" + namespace + ">", "namespace")[1:-1]
        self._run(OP_BIND, (prefix, namespace, override))

    cdef int _bind(self, str prefix, str namespace, bint override) except -1:
        key = ns_key(prefix)
        old_ns = self.txn.get(key, db=self.store.db_ns)
        old_prefix = self.txn.get(namespace.encode(), db=self.store.db_nsr)
        if not override and (old_ns is not None or old_prefix is not None):
            return 0
        if old_ns is not None:
            self.txn.delete(old_ns, db=self.store.db_nsr)
        if old_prefix is not None:
            self.txn.delete(b":" + old_prefix, db=self.store.db_ns)
        self._put(key, namespace.encode(), self.store.db_ns)
        self._put(namespace.encode(), prefix.encode(), self.store.db_nsr)
        return 0

    def unbind(self, str prefix):
        """Remove a prefix binding."""
        self._check()
        self._run(OP_UNBIND, (prefix,))

    cdef int _unbind(self, str prefix) except -1:
        key = ns_key(prefix)
        old_ns = self.txn.get(key, db=self.store.db_ns)
        if old_ns is not None:
            self.txn.delete(key, db=self.store.db_ns)
            self.txn.delete(old_ns, db=self.store.db_nsr)
        return 0

    # -- the outbox (change feed) ---------------------------------------------------

    def outbox_append(self, entries):
        """Append change entries (bytes) to the outbox; returns the seq of the last
        (0 if none). Seqs are never reused, also after entries are dropped."""
        self._check()
        entries = list(entries)
        for e in entries:
            if not isinstance(e, bytes):
                raise TypeError("outbox entries are bytes")
        if not entries:
            return 0
        return self._run(OP_OUTBOX_APPEND, (entries,))

    cdef uint64_t _outbox_seq(self) except? 0:
        """The last seq handed out: the outbox's last key, or ``meta.outbox_seq``
        (written when entries are dropped, so that seqs are never reused)."""
        raw = self.txn.get(_OUTBOX_SEQ, db=self.store.db_meta)
        cdef uint64_t seq = id_at(raw, 0) if raw is not None else 0
        cur = self.txn.cursor(db=self.store.db_outbox)
        if cur.last():
            seq = max(seq, id_at(cur.key(), 0))
        return seq

    cdef uint64_t _outbox_append(self, list entries) except? 0:
        # meta is not written: a commit touches one B-tree fewer.
        cdef uint64_t seq = self._outbox_seq()
        for e in entries:
            seq += 1
            self._put(be(seq), e, self.store.db_outbox, True, True)
        return seq

    def outbox_drop(self, uint64_t upto, Py_ssize_t limit=-1):
        """Drop the outbox entries with seq <= ``upto`` (at most ``limit`` of them,
        oldest first; -1: all); returns how many."""
        self._check()
        return self._run(OP_OUTBOX_DROP, (upto, limit))

    cdef Py_ssize_t _outbox_drop(self, uint64_t upto, Py_ssize_t limit) except -1:
        cur = self.txn.cursor(db=self.store.db_outbox)
        cdef Py_ssize_t n = 0
        if not cur.first() or id_at(cur.key(), 0) > upto or limit == 0:
            return 0
        self._put(_OUTBOX_SEQ, be(self._outbox_seq()), self.store.db_meta)   # kept past the drop
        while limit < 0 or n < limit:
            key = cur.key()
            if not key or id_at(key, 0) > upto:
                break
            cur.delete()
            n += 1
        return n

    def outbox_mark(self, uint64_t seq):
        """Record that the entries up to ``seq`` were published (acknowledged)."""
        self._check()
        self._run(OP_OUTBOX_MARK, (seq,))

    cdef int _outbox_mark(self, uint64_t seq) except -1:
        self._put(_OUTBOX_PUBLISHED, be(seq), self.store.db_meta)
        return 0
