# C-level contract of a transaction on the store: one LMDB transaction on the
# main environment, its term-id lookups and its graph reads.
from libc.stdint cimport uint64_t

from lakesuperior.store.env cimport StoreEnv
from lakesuperior.store.records cimport Record

cdef class Txn:
    cdef StoreEnv store
    cdef object txn, itxn
    cdef bint write
    cdef bint done
    cdef dict records        # graph id -> Record or None (this txn's view)
    cdef dict new_iris       # IRIs written in this txn (str -> id)
    cdef set touched         # graph ids changed in this txn

    cdef int _end(self) except -1
    cdef int _check(self) except -1
    cdef uint64_t natural_id(self, uint64_t tid) noexcept
    cdef uint64_t probe(self, uint64_t tid, uint64_t start) except 0
    cdef uint64_t iri_id(self, str term, bint create) except? 1
    cdef int _found_iri(self, str term, uint64_t tid) except -1
    cdef list collisions(self, uint64_t nid)
    cdef list local_candidates(self, str term)
    cdef list candidates(self, str term)
    cdef str decode_iri(self, uint64_t tid)
    cdef str decode(self, uint64_t tid, Record rec)
    cdef str decode_opt(self, uint64_t tid, Record rec)
    cdef list decode_iris(self, const unsigned char *ids, Py_ssize_t n, Py_ssize_t stride,
                          bint strict=*)
    cdef Record record(self, uint64_t gid)
    cdef list gx_ids(self, uint64_t gid, uint64_t s, uint64_t p, uint64_t skip_p=*)
    cdef list run_iris(self, uint64_t gid, uint64_t sid, uint64_t pid)
    cdef list graph_ids(self, uint64_t gid)
    cdef set graph_id_set(self)
    cdef list decode_triples(self, uint64_t gid, list ids)
    cdef list record_triples(self, Record rec, uint64_t omit=*)
    cdef str term_of(self, Record rec, list strs, Py_ssize_t i)

cdef str check_term(term, str role)
cdef tuple check_pattern(s, p, o, g)
