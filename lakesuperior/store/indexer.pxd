# C-level contract of the union-graph indexer.
from libc.stdint cimport uint64_t

from lakesuperior.store.env cimport StoreEnv
from lakesuperior.store.txn cimport Txn

cdef class Indexer:
    cdef StoreEnv store
    cdef bytearray pos_add, osp_add, sg_add   # packed PosRow / OspRow / SgRow

    cdef int _make_room(self) except -1
    cdef int _clear(self) except -1
    cdef Py_ssize_t _rebuild_chunk(self, itxn, bytes state) except -1
    cdef Py_ssize_t _batch(self, itxn, uint64_t until) except -1
    cdef int _add(self, uint64_t gid, list triples) except -1
    cdef int _flush(self, itxn) except -1
    cdef int _remove(self, itxn, Txn rt, uint64_t gid, list triples) except -1
