# C-level contract of the union-graph indexer.
from libc.stdint cimport uint32_t, uint64_t

from lakesuperior.store.env cimport StoreEnv
from lakesuperior.store.txn cimport Txn

cdef class Indexer:
    cdef StoreEnv store
    cdef bytearray pos_add, osp_add, lit_add, sg_add   # packed PosRow / OspRow / LitRow / SgRow
    cdef dict gnums          # graph id -> graph number, met in this batch
    cdef dict spans          # graph number -> its rows' places in the buffers (Span)
    cdef uint32_t next_gnum  # the next graph number to give
    cdef uint32_t append_from  # rows of graph numbers from here on are appended
    cdef bint cut            # the last batch stopped at MAX_BATCH_TRIPLES (more may wait)

    cdef int _make_room(self) except -1
    cdef int _clear(self) except -1
    cdef int _start(self, itxn) except -1
    cdef uint32_t _gnum(self, itxn, uint64_t gid, bint create) except? 0
    cdef Py_ssize_t _rebuild_chunk(self, itxn, bytes state) except -1
    cdef Py_ssize_t _batch(self, itxn, uint64_t until) except -1
    cdef int _add(self, uint32_t gnum, list triples) except -1
    cdef int _flush(self, itxn) except -1
    cdef int _remove(self, itxn, Txn rt, uint64_t gid, list triples) except -1
    cdef int _drop(self, cur, int which, uint32_t gnum, bint buffered, bytes key,
                   bytes val) except -1
    cdef Py_ssize_t _buffered(self, uint32_t gnum)
    cdef int _cancel(self, uint32_t gnum, int which, const unsigned char *row) except -1
