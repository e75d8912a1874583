# C-level contract of the read API shared by read snapshots and the write transaction.
from libc.stdint cimport uint32_t, uint64_t

from lakesuperior.store.access cimport Path
from lakesuperior.store.txn cimport Txn

cdef class Reader(Txn):
    cdef set tail            # graphs the index snapshot lacks: read them directly
    cdef list _graph_hits(self, uint64_t gid, str g, s, p, o, Path path)
    cdef Py_ssize_t _count_graph_sp(self, uint64_t gid, str s, str p) except -1
    cdef Py_ssize_t _count_index(self, s, p, o, bint distinct, str graph_prefix) except -1
    cdef Py_ssize_t _count_tail(self, uint64_t sid, uint64_t pid, uint64_t oid,
                                str graph_prefix, set keys) except -1
    cdef set _graph_numbers(self, set gids)
    cdef set _subject_graphs(self, str s)
    cdef int _open_index(self) except -1
    cdef set _log_graphs(self, uint64_t after)

cdef class ReadTxn(Reader):
    pass

cdef object backend_error(e)
cdef bytes ns_key(prefix)
