"""The graph record: one LMDB value holding a graph's triples and local terms.

Layout (native little-endian, all offsets from the start)::

    u32 n_terms | u32 n_triples
    n_terms   x u64   local term ids, ascending
    n_terms   x u32   end offset of each term's UTF-8 bytes in the string area
    (padding to 8 bytes)
    n_triples x 3 x u64  (s, p, o) ids, ascending, unique
    string area: the local terms' canonical UTF-8 bytes, concatenated

Local terms are the literals and blank nodes of the graph; IRIs live in the
store's term dictionary. Keeping a resource's literals inside its own record
is what makes a write touch few pages (see docs/storage.md).
"""
cimport cython
from libc.stdint cimport uint64_t, uint32_t
from libc.stdlib cimport qsort
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING

from lakesuperior.exceptions import StoreError

cdef enum:
    HEADER = 8


cdef inline Py_ssize_t _pad8(Py_ssize_t n) noexcept nogil:
    return (n + 7) & ~7


cdef int _cmp_triple(const void *a, const void *b) noexcept nogil:
    cdef const uint64_t *x = <const uint64_t *>a
    cdef const uint64_t *y = <const uint64_t *>b
    cdef int i
    for i in range(3):
        if x[i] < y[i]:
            return -1
        if x[i] > y[i]:
            return 1
    return 0


cdef Py_ssize_t sort_unique(uint64_t *triples, Py_ssize_t n) noexcept nogil:
    """Sort ``n`` (s, p, o) id triples in place and drop repeats; returns the new n."""
    if n < 2:
        return n
    qsort(triples, n, 3 * sizeof(uint64_t), _cmp_triple)
    cdef Py_ssize_t i, j = 0
    for i in range(1, n):
        if _cmp_triple(&triples[3 * i], &triples[3 * j]) != 0:
            j += 1
            if j != i:
                memcpy(&triples[3 * j], &triples[3 * i], 3 * sizeof(uint64_t))
    return j + 1


@cython.boundscheck(False)   # i < len(...) by the loop bounds
@cython.wraparound(False)
cdef bytes encode_record(dict local_terms, uint64_t *triples, Py_ssize_t n):
    """Encode sorted unique triples and ``{id: utf8 bytes}`` local terms."""
    cdef list ids = sorted(local_terms)
    cdef Py_ssize_t nt = len(ids), i, strings_size = 0
    cdef list blobs = [local_terms[tid] for tid in ids]
    for b in blobs:
        strings_size += len(<bytes>b)
    cdef Py_ssize_t off_ids = HEADER
    cdef Py_ssize_t off_ends = off_ids + 8 * nt
    cdef Py_ssize_t off_triples = _pad8(off_ends + 4 * nt)
    cdef Py_ssize_t off_strings = off_triples + 24 * n
    cdef bytes out = PyBytes_FromStringAndSize(NULL, off_strings + strings_size)
    cdef unsigned char *buf = <unsigned char *>PyBytes_AS_STRING(out)
    cdef uint32_t u32
    cdef uint64_t u64
    u32 = <uint32_t>nt
    memcpy(buf, &u32, 4)
    u32 = <uint32_t>n
    memcpy(buf + 4, &u32, 4)
    if off_triples > off_ends + 4 * nt:
        memcpy(buf + off_ends + 4 * nt, b"\0\0\0\0", 4)
    cdef Py_ssize_t pos = 0
    for i in range(nt):
        u64 = ids[i]
        memcpy(buf + off_ids + 8 * i, &u64, 8)
        b = blobs[i]
        memcpy(buf + off_strings + pos, PyBytes_AS_STRING(b), len(<bytes>b))
        pos += len(<bytes>b)
        u32 = <uint32_t>pos
        memcpy(buf + off_ends + 4 * i, &u32, 4)
    if n:
        memcpy(buf + off_triples, triples, 24 * n)
    return out


cdef class Record:
    """A read-only view of an encoded record (keeps its bytes alive)."""

    def __cinit__(self, bytes data):
        cdef Py_ssize_t size = len(data)
        if size < HEADER:
            raise StoreError("Corrupt graph record: too short")
        self.data = data
        cdef const unsigned char *buf = <const unsigned char *>PyBytes_AS_STRING(data)
        cdef uint32_t nt, n
        memcpy(&nt, buf, 4)
        memcpy(&n, buf + 4, 4)
        self.n_terms = nt
        self.n_triples = n
        cdef Py_ssize_t off_ends = HEADER + 8 * nt
        cdef Py_ssize_t off_triples = _pad8(off_ends + 4 * nt)
        cdef Py_ssize_t off_strings = off_triples + 24 * n
        if off_strings > size:
            raise StoreError("Corrupt graph record: truncated")
        self._ids = buf + HEADER
        self._ends = buf + off_ends
        self._triples = buf + off_triples
        self._strings = buf + off_strings
        self._decoded = None

    cdef uint64_t term_id_at(self, Py_ssize_t i) noexcept nogil:
        cdef uint64_t v
        memcpy(&v, self._ids + 8 * i, 8)
        return v

    cdef Py_ssize_t find(self, uint64_t tid) noexcept nogil:
        """Index of local term ``tid``, or -1."""
        cdef Py_ssize_t lo = 0, hi = self.n_terms - 1, mid
        cdef uint64_t v
        while lo <= hi:
            mid = (lo + hi) >> 1
            v = self.term_id_at(mid)
            if v < tid:
                lo = mid + 1
            elif v > tid:
                hi = mid - 1
            else:
                return mid
        return -1

    cdef uint64_t triple_at(self, Py_ssize_t i, int pos) noexcept nogil:
        cdef uint64_t v
        memcpy(&v, self._triples + 24 * i + 8 * pos, 8)
        return v

    cdef Py_ssize_t find_triple(self, uint64_t s, uint64_t p, uint64_t o) noexcept nogil:
        """Index of triple (s, p, o), or -1."""
        cdef uint64_t key[3]
        key[0] = s
        key[1] = p
        key[2] = o
        cdef uint64_t cur[3]
        cdef Py_ssize_t lo = 0, hi = self.n_triples - 1, mid
        cdef int c
        while lo <= hi:
            mid = (lo + hi) >> 1
            memcpy(cur, self._triples + 24 * mid, 24)
            c = _cmp_triple(cur, key)
            if c < 0:
                lo = mid + 1
            elif c > 0:
                hi = mid - 1
            else:
                return mid
        return -1

    cpdef str term_at(self, Py_ssize_t i):
        """The canonical string of local term ``i`` (decoded once, then cached)."""
        cdef uint32_t start = 0, end = 0
        if self._decoded is None:
            self._decoded = [None] * self.n_terms
        s = self._decoded[i]
        if s is None:
            if i > 0:
                memcpy(&start, self._ends + 4 * (i - 1), 4)
            memcpy(&end, self._ends + 4 * i, 4)
            s = (<const char *>self._strings)[start:end].decode("utf-8", "surrogatepass")
            self._decoded[i] = s
        return s

    cdef Py_ssize_t lower(self, uint64_t s, uint64_t p) noexcept nogil:
        """First triple index >= (s, p, 0)."""
        cdef Py_ssize_t lo = 0, hi = self.n_triples, mid
        cdef uint64_t ms, mp
        while lo < hi:
            mid = (lo + hi) >> 1
            ms = self.triple_at(mid, 0)
            mp = self.triple_at(mid, 1)
            if ms < s or (ms == s and mp < p):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def triple_ids_for(self, uint64_t s, uint64_t p=0):
        """The (s, p, o) id triples with subject ``s`` (and predicate ``p`` if not 0)."""
        cdef Py_ssize_t i = self.lower(s, p), n = self.n_triples
        cdef list out = []
        while i < n and self.triple_at(i, 0) == s and (p == 0 or self.triple_at(i, 1) == p):
            out.append((s, self.triple_at(i, 1), self.triple_at(i, 2)))
            i += 1
        return out

    def local_terms(self):
        """``{id: utf8 bytes}`` of the local terms (to re-encode after a change)."""
        cdef Py_ssize_t i
        cdef uint32_t start = 0, end
        out = {}
        for i in range(self.n_terms):
            memcpy(&end, self._ends + 4 * i, 4)
            out[self.term_id_at(i)] = (<const char *>self._strings)[start:end]
            start = end
        return out

    def triple_ids(self):
        """All (s, p, o) id triples, as a list of tuples."""
        cdef Py_ssize_t i
        return [(self.triple_at(i, 0), self.triple_at(i, 1), self.triple_at(i, 2))
                for i in range(self.n_triples)]

    def __len__(self):
        return self.n_triples
