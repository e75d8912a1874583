# C-level contract of the term codec.
from libc.stdint cimport uint64_t

cdef enum:
    KIND_SHIFT = 62
    TERM_IRI = 0         # the C values of KIND_IRI, KIND_BNODE, KIND_LITERAL
    TERM_BNODE = 1
    TERM_LITERAL = 2

cdef uint64_t KIND_MASK
cdef uint64_t HASH_MASK

cdef uint64_t hash_bytes(const unsigned char *data, size_t size) noexcept nogil
cpdef uint64_t term_id(str term) except? 0
cpdef int kind_of(str term) except -1
cpdef str canonical(term)
cdef bytes canonical_utf8(str term, int *kind)
cdef uint64_t id_of_utf8(int kind, bytes data) noexcept
