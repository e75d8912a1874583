"""The graph record: one LMDB value holding a graph's triples and local terms.

Layout, format 3 (native little-endian, no padding, offsets from the start)::

    u32 n_terms | u32 n_triples | u32 n_iris | u32 n_subjects | u8 width | u8 ends_width
    n_terms    x u64    the ids of every term the graph uses, ascending: its
                        IRIs first (kind 0 in the top bits), then its blank
                        nodes and literals (the local terms)
    n_subjects x width  the subjects, as indices into the ids, ascending
    n_subjects x u32    end of each subject's run of (p, o) pairs
    n_locals   x ends_width  end offset of each local term's UTF-8 bytes
    n_triples  x 2 x width   (p, o) indices, ascending within each subject's run
    string area: the local terms' canonical UTF-8 bytes, concatenated

``width`` is 1, 2 or 4 bytes (the fewest that index ``n_terms``), ``ends_width``
2 or 4 (the fewest that hold the string area's size). A triple is three small
indices into the record's own id table, its subject shared by its run: the
200-triple benchmark resource (161 distinct IRIs, 100 literals of 64 characters)
takes 16.0 KB, 4 LMDB overflow pages, where format 2 (3 x u64 per triple, u32
ends) took 18.9 KB, 5 pages. Local terms are the literals and blank nodes of the
graph; IRIs live in the store's term dictionary. Keeping a resource's literals
inside its own record is what makes a write touch few pages (docs/storage.md).

``record_from_v2`` re-encodes a format-2 record (the upgrade of a store).
"""
cimport cython
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE

from lakesuperior.exceptions import StoreError

from lakesuperior.store.terms cimport KIND_SHIFT

cdef enum:
    HEADER = 18


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


cdef void radix_sort_u64(uint64_t *a, uint64_t *tmp, Py_ssize_t n, int nbytes) noexcept nogil:
    """Sort ``a`` (``n`` values below 2**(8 * ``nbytes``)) in place, LSD radix by byte;
    ``tmp`` has room for ``n`` values. No comparisons, no calls: a few passes."""
    cdef Py_ssize_t count[256]
    cdef Py_ssize_t i, total, c
    cdef int shift
    cdef uint64_t *src = a
    cdef uint64_t *dst = tmp
    cdef uint64_t *swap
    for shift in range(0, 8 * nbytes, 8):
        memset(count, 0, sizeof(count))
        for i in range(n):
            count[(src[i] >> shift) & 0xFF] += 1
        if count[(src[0] >> shift) & 0xFF] == n:
            continue                  # every value has this byte: nothing to move
        total = 0
        for i in range(256):
            c = count[i]
            count[i] = total
            total += c
        for i in range(n):
            c = (src[i] >> shift) & 0xFF
            dst[count[c]] = src[i]
            count[c] += 1
        swap = src
        src = dst
        dst = swap
    if src != a:
        memcpy(a, src, n * sizeof(uint64_t))


cdef inline int _bytes_for(uint64_t v) noexcept nogil:
    cdef int k = 1
    while k < 8 and v >> (8 * k):
        k += 1
    return k


cdef inline Py_ssize_t _search(const uint64_t *ids, Py_ssize_t n, uint64_t v) noexcept nogil:
    """Index of ``v`` in the ascending ``ids``, or -1."""
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    while lo <= hi:
        mid = (lo + hi) >> 1
        if ids[mid] < v:
            lo = mid + 1
        elif ids[mid] > v:
            hi = mid - 1
        else:
            return mid
    return -1


cdef inline void _put_w(unsigned char *buf, int width, uint32_t v) noexcept nogil:
    cdef uint16_t v16
    if width == 1:
        buf[0] = <uint8_t>v
    elif width == 2:
        v16 = <uint16_t>v
        memcpy(buf, &v16, 2)
    else:
        memcpy(buf, &v, 4)


cdef inline uint32_t _get_w(const unsigned char *buf, int width) noexcept nogil:
    cdef uint16_t v16
    cdef uint32_t v32
    if width == 1:
        return buf[0]
    if width == 2:
        memcpy(&v16, buf, 2)
        return v16
    memcpy(&v32, buf, 4)
    return v32


cdef inline int _width_for(Py_ssize_t n) noexcept nogil:
    return 1 if n <= 0x100 else (2 if n <= 0x10000 else 4)


@cython.boundscheck(False)   # indices < their array's length by construction
@cython.wraparound(False)
cdef bytes encode_record(dict local_terms, uint64_t *triples, Py_ssize_t n):
    """Encode ``n`` (s, p, o) id triples (any order, repeats dropped);
    ``local_terms`` maps the id of each blank node and literal they use to its
    UTF-8 bytes (others are ignored).

    The ids are radix-sorted into the term table; each triple becomes one u64
    key of its three term indices (21 bits each: up to 2 million distinct terms,
    else a comparison sort), radix-sorted too: no comparison callbacks.
    """
    cdef Py_ssize_t size = max(3 * n, 1)
    cdef uint64_t *ids = <uint64_t *>malloc(3 * size * sizeof(uint64_t))
    if ids == NULL:
        raise MemoryError()
    cdef uint64_t *tmp = ids + size
    cdef uint64_t *keys = ids + 2 * size
    cdef Py_ssize_t i, m = 0, n_iris = 0, n_subj = 0, strings_size = 0, k = 0
    cdef uint64_t key, prev = 0
    cdef list blobs = []
    try:
        memcpy(ids, triples, 3 * n * sizeof(uint64_t))
        if n:
            radix_sort_u64(ids, tmp, 3 * n, 8)
            m = 1
            for i in range(1, 3 * n):
                if ids[i] != ids[m - 1]:
                    ids[m] = ids[i]
                    m += 1
        while n_iris < m and (ids[n_iris] >> KIND_SHIFT) == 0:
            n_iris += 1
        for i in range(n_iris, m):
            b = local_terms.get(ids[i])
            if b is None:
                raise StoreError(f"Graph record: local term {ids[i]:#x} has no string")
            blobs.append(b)
            strings_size += PyBytes_GET_SIZE(b)
        if m <= (1 << 21):
            for i in range(n):
                keys[i] = ((<uint64_t>_search(ids, m, triples[3 * i]) << 42)
                           | (<uint64_t>_search(ids, m, triples[3 * i + 1]) << 21)
                           | <uint64_t>_search(ids, m, triples[3 * i + 2]))
            if n:
                radix_sort_u64(keys, tmp, n, _bytes_for((<uint64_t>m) << 42))
            for i in range(n):
                key = keys[i]
                if i and key == prev:
                    continue
                if not k or (key >> 42) != (prev >> 42):
                    n_subj += 1
                keys[k] = key
                prev = key
                k += 1
        else:
            k = sort_unique(triples, n)
            for i in range(k):
                if i == 0 or triples[3 * i] != triples[3 * (i - 1)]:
                    n_subj += 1
        return _write(ids, m, n_iris, n_subj, triples, keys, k, m <= (1 << 21), blobs,
                      strings_size)
    finally:
        free(ids)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef bytes _write(const uint64_t *ids, Py_ssize_t m, Py_ssize_t n_iris, Py_ssize_t n_subj,
                  const uint64_t *triples, const uint64_t *keys, Py_ssize_t n, bint packed,
                  list blobs, Py_ssize_t strings_size):
    """The record of ``n`` sorted unique triples: ``keys`` (packed indices) when
    ``packed``, else ``triples`` (ids)."""
    cdef int width = _width_for(m)
    cdef int ends_width = 2 if strings_size <= 0xFFFF else 4
    cdef Py_ssize_t n_locals = m - n_iris
    cdef Py_ssize_t off_subj = HEADER + 8 * m
    cdef Py_ssize_t off_runs = off_subj + width * n_subj
    cdef Py_ssize_t off_ends = off_runs + 4 * n_subj
    cdef Py_ssize_t off_pairs = off_ends + ends_width * n_locals
    cdef Py_ssize_t off_strings = off_pairs + 2 * width * n
    cdef bytes out = PyBytes_FromStringAndSize(NULL, off_strings + strings_size)
    cdef unsigned char *buf = <unsigned char *>PyBytes_AS_STRING(out)
    cdef uint32_t u32, si, pi, oi, prev_s = 0
    cdef Py_ssize_t i, k = -1, pos = 0
    cdef uint32_t header[4]
    header[0] = <uint32_t>m
    header[1] = <uint32_t>n
    header[2] = <uint32_t>n_iris
    header[3] = <uint32_t>n_subj
    memcpy(buf, header, 16)
    buf[16] = <uint8_t>width
    buf[17] = <uint8_t>ends_width
    memcpy(buf + HEADER, ids, 8 * m)
    for i in range(n):
        if packed:
            si = <uint32_t>(keys[i] >> 42)
            pi = <uint32_t>((keys[i] >> 21) & 0x1FFFFF)
            oi = <uint32_t>(keys[i] & 0x1FFFFF)
        else:
            si = <uint32_t>_search(ids, m, triples[3 * i])
            pi = <uint32_t>_search(ids, m, triples[3 * i + 1])
            oi = <uint32_t>_search(ids, m, triples[3 * i + 2])
        if i == 0 or si != prev_s:
            if k >= 0:
                u32 = <uint32_t>i
                memcpy(buf + off_runs + 4 * k, &u32, 4)
            k += 1
            _put_w(buf + off_subj + width * k, width, si)
            prev_s = si
        _put_w(buf + off_pairs + 2 * width * i, width, pi)
        _put_w(buf + off_pairs + 2 * width * i + width, width, oi)
    if k >= 0:
        u32 = <uint32_t>n
        memcpy(buf + off_runs + 4 * k, &u32, 4)
    for i in range(n_locals):
        b = blobs[i]
        memcpy(buf + off_strings + pos, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))
        pos += PyBytes_GET_SIZE(b)
        _put_w(buf + off_ends + ends_width * i, ends_width, <uint32_t>pos)
    return out


cdef bytes record_from_v2(bytes data):
    """A format-2 record (u32 n_terms, u32 n_triples, local ids u64, ends u32,
    padding to 8, (s, p, o) u64 triples, strings) re-encoded in this format."""
    cdef Py_ssize_t size = PyBytes_GET_SIZE(data)
    if size < 8:
        raise StoreError("Corrupt format-2 graph record: too short")
    cdef const unsigned char *buf = <const unsigned char *>PyBytes_AS_STRING(data)
    cdef uint32_t nt, n, start = 0, end
    cdef uint64_t tid
    memcpy(&nt, buf, 4)
    memcpy(&n, buf + 4, 4)
    cdef Py_ssize_t off_ends = 8 + 8 * <Py_ssize_t>nt
    cdef Py_ssize_t off_triples = (off_ends + 4 * <Py_ssize_t>nt + 7) & ~7
    cdef Py_ssize_t off_strings = off_triples + 24 * <Py_ssize_t>n, i
    if off_strings > size:
        raise StoreError("Corrupt format-2 graph record: truncated")
    cdef dict local = {}
    for i in range(nt):
        memcpy(&tid, buf + 8 + 8 * i, 8)
        memcpy(&end, buf + off_ends + 4 * i, 4)
        if end < start or off_strings + end > size:
            raise StoreError("Corrupt format-2 graph record: bad string offsets")
        local[tid] = data[off_strings + start:off_strings + end]
        start = end
    cdef bytes triples = data[off_triples:off_strings] if n else b"\0"
    return encode_record(local, <uint64_t *>PyBytes_AS_STRING(triples), n)


def upgrade_record_v2(bytes data):
    """A format-2 graph record re-encoded in the current format (the store's upgrade)."""
    return record_from_v2(data)


cdef class Record:
    """A read-only view of an encoded record (keeps its bytes alive)."""

    def __cinit__(self, bytes data):
        cdef Py_ssize_t size = len(data)
        if size < HEADER:
            raise StoreError("Corrupt graph record: too short")
        self.data = data
        cdef const unsigned char *buf = <const unsigned char *>PyBytes_AS_STRING(data)
        cdef uint32_t h[4]
        memcpy(h, buf, 16)
        self.n_terms = h[0]
        self.n_triples = h[1]
        self.n_iris = h[2]
        self.n_subjects = h[3]
        self.width = buf[16]
        self.ends_width = buf[17]
        if (self.width not in (1, 2, 4) or self.ends_width not in (2, 4)
                or self.n_iris > self.n_terms or self.n_subjects > self.n_triples
                or (self.n_triples and not self.n_subjects)):
            raise StoreError("Corrupt graph record: bad header")
        cdef Py_ssize_t off_subj = HEADER + 8 * self.n_terms
        cdef Py_ssize_t off_runs = off_subj + self.width * self.n_subjects
        cdef Py_ssize_t off_ends = off_runs + 4 * self.n_subjects
        cdef Py_ssize_t off_pairs = off_ends + self.ends_width * (self.n_terms - self.n_iris)
        cdef Py_ssize_t off_strings = off_pairs + 2 * self.width * self.n_triples
        if off_strings > size:
            raise StoreError("Corrupt graph record: truncated")
        self._ids = buf + HEADER
        self._subj = buf + off_subj
        self._runs = buf + off_runs
        self._ends = buf + off_ends
        self._pairs = buf + off_pairs
        self._strings = buf + off_strings
        self._strings_size = size - off_strings
        self._decoded = None

    cdef uint64_t term_id_at(self, Py_ssize_t i) noexcept nogil:
        cdef uint64_t v
        memcpy(&v, self._ids + 8 * i, 8)
        return v

    cdef Py_ssize_t find(self, uint64_t tid) noexcept nogil:
        """Index of term ``tid`` (an IRI or a local term), or -1."""
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

    cdef Py_ssize_t run_end(self, Py_ssize_t k) noexcept nogil:
        cdef uint32_t v
        memcpy(&v, self._runs + 4 * k, 4)
        return v

    cdef Py_ssize_t find_subject(self, Py_ssize_t si) noexcept nogil:
        """Run number of subject index ``si``, or -1."""
        cdef Py_ssize_t lo = 0, hi = self.n_subjects - 1, mid
        cdef uint32_t v
        while lo <= hi:
            mid = (lo + hi) >> 1
            v = _get_w(self._subj + self.width * mid, self.width)
            if v < si:
                lo = mid + 1
            elif v > si:
                hi = mid - 1
            else:
                return mid
        return -1

    cdef uint32_t subject_at(self, Py_ssize_t k) noexcept nogil:
        """Term index of the subject of run ``k``."""
        return _get_w(self._subj + self.width * k, self.width)

    cdef Py_ssize_t _lower_id(self, uint64_t v) noexcept nogil:
        """First term index whose id is >= ``v``."""
        cdef Py_ssize_t lo = 0, hi = self.n_terms, mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.term_id_at(mid) < v:
                lo = mid + 1
            else:
                hi = mid
        return lo

    cdef Py_ssize_t lower(self, uint64_t s, uint64_t p) noexcept nogil:
        """First triple index >= (s, p, 0) in id order (n_triples if none)."""
        cdef Py_ssize_t si = self._lower_id(s), lo = 0, hi = self.n_subjects, mid, pi
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.subject_at(mid) < si:
                lo = mid + 1
            else:
                hi = mid
        if lo == self.n_subjects:
            return self.n_triples
        cdef Py_ssize_t k = lo
        lo = self.run_end(k - 1) if k else 0
        if self.subject_at(k) != si or self.term_id_at(si) != s:
            return lo            # s is not a subject: the next subject's run
        pi = self._lower_id(p)
        hi = self.run_end(k)
        while lo < hi:
            mid = (lo + hi) >> 1
            if self.pair_at(mid, 0) < pi:
                lo = mid + 1
            else:
                hi = mid
        return lo

    cdef uint64_t triple_at(self, Py_ssize_t i, int pos) noexcept nogil:
        """Id of the subject (``pos`` 0), predicate (1) or object (2) of triple ``i``."""
        cdef Py_ssize_t lo = 0, hi = self.n_subjects - 1, mid
        if pos:
            return self.term_id_at(self.pair_at(i, pos - 1))
        while lo < hi:           # the first run ending after i
            mid = (lo + hi) >> 1
            if self.run_end(mid) <= i:
                lo = mid + 1
            else:
                hi = mid
        return self.term_id_at(self.subject_at(lo))

    cdef uint32_t pair_at(self, Py_ssize_t i, int pos) noexcept nogil:
        """Term index of the predicate (pos 0) or object (pos 1) of triple ``i``."""
        return _get_w(self._pairs + 2 * self.width * i + self.width * pos, self.width)

    cdef Py_ssize_t find_triple(self, uint64_t s, uint64_t p, uint64_t o) noexcept nogil:
        """Index of triple (s, p, o), or -1."""
        cdef Py_ssize_t si = self.find(s), pi = self.find(p), oi = self.find(o), k
        if si < 0 or pi < 0 or oi < 0:
            return -1
        k = self.find_subject(si)
        if k < 0:
            return -1
        cdef Py_ssize_t lo = self.run_end(k - 1) if k else 0, hi = self.run_end(k) - 1, mid
        cdef uint32_t mp, mo
        while lo <= hi:
            mid = (lo + hi) >> 1
            mp = self.pair_at(mid, 0)
            mo = self.pair_at(mid, 1)
            if mp < pi or (mp == pi and mo < oi):
                lo = mid + 1
            elif mp > pi or mo > oi:
                hi = mid - 1
            else:
                return mid
        return -1

    cpdef str term_at(self, Py_ssize_t i):
        """The canonical string of local term ``i`` (an index ``find`` gave;
        decoded once, then cached); None for an IRI (they are in the dictionary)."""
        if i < self.n_iris or i >= self.n_terms:
            return None
        cdef Py_ssize_t li = i - self.n_iris
        cdef uint32_t start = 0, end
        if self._decoded is None:
            self._decoded = [None] * (self.n_terms - self.n_iris)
        s = self._decoded[li]
        if s is None:
            if li > 0:
                start = _get_w(self._ends + self.ends_width * (li - 1), self.ends_width)
            end = _get_w(self._ends + self.ends_width * li, self.ends_width)
            if end < start or end > self._strings_size:
                raise StoreError("Corrupt graph record: bad string offsets")
            s = (<const char *>self._strings)[start:end].decode("utf-8", "surrogatepass")
            self._decoded[li] = s
        return s

    def triple_ids_for(self, uint64_t s, uint64_t p=0):
        """The (s, p, o) id triples with subject ``s`` (and predicate ``p`` if not 0)."""
        cdef list out = []
        cdef Py_ssize_t si = self.find(s), pi = -1, k, i, end
        if si < 0:
            return out
        if p:
            pi = self.find(p)
            if pi < 0:
                return out
        k = self.find_subject(si)
        if k < 0:
            return out
        i = self.run_end(k - 1) if k else 0
        end = self.run_end(k)
        if p:
            i = self.lower(s, p)
        while i < end and (not p or self.pair_at(i, 0) == pi):
            out.append((s, self.term_id_at(self.pair_at(i, 0)),
                        self.term_id_at(self.pair_at(i, 1))))
            i += 1
        return out

    def local_terms(self):
        """``{id: utf8 bytes}`` of the local terms (to re-encode after a change)."""
        cdef Py_ssize_t i
        cdef uint32_t start = 0, end
        out = {}
        for i in range(self.n_terms - self.n_iris):
            end = _get_w(self._ends + self.ends_width * i, self.ends_width)
            if end < start or end > self._strings_size:
                raise StoreError("Corrupt graph record: bad string offsets")
            out[self.term_id_at(self.n_iris + i)] = (<const char *>self._strings)[start:end]
            start = end
        return out

    def triple_ids(self):
        """All (s, p, o) id triples, as a list of tuples."""
        cdef list out = []
        cdef Py_ssize_t k, i = 0, end
        cdef uint64_t s
        for k in range(self.n_subjects):
            s = self.term_id_at(_get_w(self._subj + self.width * k, self.width))
            end = self.run_end(k)
            while i < end:
                out.append((s, self.term_id_at(self.pair_at(i, 0)),
                            self.term_id_at(self.pair_at(i, 1))))
                i += 1
        return out

    def __len__(self):
        return self.n_triples

    def __getitem__(self, Py_ssize_t i):
        """The ``i``-th (s, p, o) id triple, in id order."""
        if i < 0:
            i += self.n_triples
        if not 0 <= i < self.n_triples:
            raise IndexError("record triple index out of range")
        return (self.triple_at(i, 0), self.triple_at(i, 1), self.triple_at(i, 2))
