# C-level contract of the write transaction.
from libc.stdint cimport uint64_t

from lakesuperior.store.journal cimport JournaledTxn
from lakesuperior.store.records cimport Record

cdef class WriteTxn(JournaledTxn):
    cdef object _apply(self, int op, tuple args)
    cdef bint _put(self, bytes key, bytes value, db, bint dupdata=*, bint append=*) except -1
    cdef int _log(self, int kind_, uint64_t gid, list removed, list added) except -1
    cdef int _trim_log(self) except -1
    cdef uint64_t _write_local(self, bytes data, int k, dict local) except? 1
    cdef tuple _encode(self, list rows, dict local, bint trusted)
    cdef uint64_t _triple_term(self, term, int pos, dict local, dict seen,
                               bint trusted) except? 1
    cdef uint64_t _graph_id(self, g) except? 1
    cdef int _add_graph(self, g, list rows, bint trusted) except -1
    cdef int _add_graph_keeping(self, g, list rows, bint trusted, str keep) except -1
    cdef list _clear_gx_except(self, uint64_t gid, uint64_t kid)
    cdef int _clear_gx(self, uint64_t gid) except -1
    cdef Py_ssize_t _add(self, list quads, bint trusted) except -1
    cdef Py_ssize_t _add_to_graph(self, uint64_t gid, list triples, bint trusted) except -1
    cdef int _put_record(self, uint64_t gid, list triples, dict local) except -1
    cdef Py_ssize_t _remove(self, s, p, o, g) except -1
    cdef int _remove_from_graph(self, uint64_t gid, list triples) except -1
    cdef bint _unlink(self, uint64_t gid, Record rec, uint64_t s, uint64_t p,
                      uint64_t o) except -1
    cdef uint64_t _known_id(self, str term, Record rec) except? 1
    cdef Py_ssize_t _set_value(self, s, p, o, g) except -1
    cdef Py_ssize_t _remove_graph(self, g) except -1
    cdef int _bind(self, str prefix, str namespace, bint override) except -1
    cdef int _unbind(self, str prefix) except -1
    cdef uint64_t _outbox_seq(self) except? 0
    cdef uint64_t _outbox_append(self, list entries) except? 0
    cdef Py_ssize_t _outbox_drop(self, uint64_t upto, Py_ssize_t limit) except -1
    cdef int _outbox_mark(self, uint64_t seq) except -1
