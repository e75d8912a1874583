"""Codecs of the quad store's byte layout (the structs are in ``layout.pxd``)."""
cimport cython
from libc.stdint cimport uint32_t, uint64_t
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE

from lakesuperior.exceptions import StoreError


cdef void put_be(unsigned char *buf, uint64_t v) noexcept nogil:
    """Write ``v`` as 8 big-endian bytes."""
    cdef int i
    for i in range(8):
        buf[i] = (v >> (56 - 8 * i)) & 0xFF


cdef uint64_t get_be(const unsigned char *buf) noexcept nogil:
    """Read 8 big-endian bytes."""
    cdef uint64_t v = 0
    cdef int i
    for i in range(8):
        v = (v << 8) | buf[i]
    return v


cdef void put_be32(unsigned char *buf, uint32_t v) noexcept nogil:
    """Write ``v`` as 4 big-endian bytes (a graph number)."""
    buf[0] = (v >> 24) & 0xFF
    buf[1] = (v >> 16) & 0xFF
    buf[2] = (v >> 8) & 0xFF
    buf[3] = v & 0xFF


cdef uint32_t get_be32(const unsigned char *buf) noexcept nogil:
    """Read 4 big-endian bytes."""
    return (<uint32_t>buf[0] << 24) | (<uint32_t>buf[1] << 16) | (<uint32_t>buf[2] << 8) | buf[3]


cdef bytes be32(uint32_t v):
    """``v`` as 4 big-endian bytes."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, GNUM_SIZE)
    put_be32(<unsigned char *>PyBytes_AS_STRING(out), v)
    return out


cdef bytes be(uint64_t v):
    """``v`` as 8 big-endian bytes."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, ID_SIZE)
    put_be(<unsigned char *>PyBytes_AS_STRING(out), v)
    return out


cdef bytes term_key(uint64_t v):
    """The ``rec`` key of IRI ``v``'s string: ``v`` big-endian, then ``TERM_KEY_TAG``."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, TERM_KEY_SIZE)
    cdef unsigned char *buf = <unsigned char *>PyBytes_AS_STRING(out)
    put_be(buf, v)
    buf[ID_SIZE] = TERM_KEY_TAG
    return out


cdef bytes be_n(uint64_t a, uint64_t b, uint64_t c, int n):
    """The first ``n`` (1-3) of a, b, c as big-endian bytes (a key or key prefix)."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, ID_SIZE * n)
    cdef unsigned char *buf = <unsigned char *>PyBytes_AS_STRING(out)
    put_be(buf, a)
    if n > 1:
        put_be(buf + ID_SIZE, b)
    if n > 2:
        put_be(buf + 2 * ID_SIZE, c)
    return out


cdef uint64_t id_at(bytes data, Py_ssize_t pos) except? 0:
    """The big-endian id at byte ``pos`` of ``data``."""
    if data is None or PyBytes_GET_SIZE(data) < pos + ID_SIZE:
        raise StoreError("Corrupt store: an id is truncated")
    return get_be(<const unsigned char *>PyBytes_AS_STRING(data) + pos)


@cython.boundscheck(False)   # i < len(...) by the loop bounds
@cython.wraparound(False)
cdef bytes pack_triples(list triples):
    """``(s, p, o)`` id tuples as packed ``TripleRow``s."""
    cdef Py_ssize_t n = len(triples), i
    cdef bytes out = PyBytes_FromStringAndSize(NULL, TRIPLE_SIZE * n)
    cdef TripleRow *rows = <TripleRow *>PyBytes_AS_STRING(out)
    cdef uint64_t s, p, o
    for i in range(n):
        s, p, o = triples[i]
        put_be(rows[i].s, s)
        put_be(rows[i].p, p)
        put_be(rows[i].o, o)
    return out


cdef list unpack_triples(bytes data, Py_ssize_t start, Py_ssize_t n):
    """``n`` packed ``TripleRow``s from byte ``start`` of ``data``, as id tuples."""
    if PyBytes_GET_SIZE(data) < start + TRIPLE_SIZE * n:
        raise StoreError("Corrupt store: a log entry is truncated")
    cdef const TripleRow *rows = <const TripleRow *>(PyBytes_AS_STRING(data) + start)
    cdef Py_ssize_t i
    return [(get_be(rows[i].s), get_be(rows[i].p), get_be(rows[i].o)) for i in range(n)]
