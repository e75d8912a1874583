# C-level contract of the graph record codec.
from libc.stdint cimport uint64_t, uint32_t

cdef class Record:
    cdef readonly bytes data
    cdef readonly Py_ssize_t n_terms
    cdef readonly Py_ssize_t n_triples
    cdef const unsigned char *_ids
    cdef const unsigned char *_ends
    cdef const unsigned char *_triples
    cdef const unsigned char *_strings
    cdef list _decoded

    cdef uint64_t term_id_at(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t find(self, uint64_t tid) noexcept nogil
    cdef uint64_t triple_at(self, Py_ssize_t i, int pos) noexcept nogil
    cdef Py_ssize_t find_triple(self, uint64_t s, uint64_t p, uint64_t o) noexcept nogil
    cpdef str term_at(self, Py_ssize_t i)
    cdef Py_ssize_t lower(self, uint64_t s, uint64_t p) noexcept nogil

cdef bytes encode_record(dict local_terms, uint64_t *triples, Py_ssize_t n)
cdef Py_ssize_t sort_unique(uint64_t *triples, Py_ssize_t n) noexcept nogil
