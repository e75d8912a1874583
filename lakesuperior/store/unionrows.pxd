# C-level contract of the union index's row readers (see unionrows.pyx).
from libc.stdint cimport uint32_t, uint64_t

from lakesuperior.store.env cimport StoreEnv
from lakesuperior.store.txn cimport Txn

cdef uint32_t graph_number(itxn, StoreEnv store, uint64_t gid) except? 0
cdef uint64_t graph_of(itxn, StoreEnv store, uint32_t gnum) except? 0
cdef Py_ssize_t sort_unique_rows(unsigned char *rows, Py_ssize_t n, Py_ssize_t size) noexcept nogil
cdef bint has16(const unsigned char *keys, Py_ssize_t n, const void *key) noexcept nogil
cdef bytearray prefix_flags(itxn, StoreEnv store, str graph_prefix)
cdef int learn_prefixes(Txn t, itxn, bytearray flags, str graph_prefix,
                        const unsigned char *g, Py_ssize_t n, Py_ssize_t stride) except -1
cdef list lit_graphs(itxn, StoreEnv store, uint64_t oid)
