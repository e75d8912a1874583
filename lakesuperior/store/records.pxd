# C-level contract of the graph record codec (layout in records.pyx).
from libc.stdint cimport uint32_t, uint64_t

cdef class Record:
    cdef readonly bytes data
    cdef readonly Py_ssize_t n_terms       # every term id the graph uses
    cdef readonly Py_ssize_t n_triples
    cdef readonly Py_ssize_t n_iris        # the first n_iris ids are IRIs
    cdef readonly Py_ssize_t n_subjects
    cdef int width                         # bytes of a term index: 1, 2 or 4
    cdef int ends_width                    # bytes of a string end offset: 2 or 4
    cdef const unsigned char *_ids
    cdef const unsigned char *_subj
    cdef const unsigned char *_runs
    cdef const unsigned char *_ends
    cdef const unsigned char *_pairs
    cdef const unsigned char *_strings
    cdef Py_ssize_t _strings_size
    cdef list _decoded

    cdef uint64_t term_id_at(self, Py_ssize_t i) noexcept nogil
    cdef Py_ssize_t find(self, uint64_t tid) noexcept nogil
    cdef Py_ssize_t run_end(self, Py_ssize_t k) noexcept nogil
    cdef Py_ssize_t find_subject(self, Py_ssize_t si) noexcept nogil
    cdef uint32_t subject_at(self, Py_ssize_t k) noexcept nogil
    cdef Py_ssize_t _lower_id(self, uint64_t v) noexcept nogil
    cdef Py_ssize_t lower(self, uint64_t s, uint64_t p) noexcept nogil
    cdef uint64_t triple_at(self, Py_ssize_t i, int pos) noexcept nogil
    cdef uint32_t pair_at(self, Py_ssize_t i, int pos) noexcept nogil
    cdef Py_ssize_t find_triple(self, uint64_t s, uint64_t p, uint64_t o) noexcept nogil
    cpdef str term_at(self, Py_ssize_t i)

cdef bytes encode_record(dict local_terms, uint64_t *triples, Py_ssize_t n)
cdef bytes record_from_v2(bytes data)
cdef Py_ssize_t sort_unique(uint64_t *triples, Py_ssize_t n) noexcept nogil
