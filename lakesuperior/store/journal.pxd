# C-level contract of the write transaction's life: its journal, savepoints,
# growth with replay, commit and abort (the writes themselves: writes.pxd).
from lakesuperior.store.reads cimport Reader

cdef class JournaledTxn(Reader):
    cdef list journal         # (op, args) of every write kept so far: replayed after growth
    cdef list saves           # open savepoints, outermost first (see journal.pyx)
    cdef Py_ssize_t written   # bytes put so far (sizes the growth)
    cdef public bint deferred  # commit without the durability sync (the caller makes it)

    cdef object _run(self, int op, tuple args)
    cdef object _apply(self, int op, tuple args)
    cdef int _restart(self) except -1
    cdef int _replay(self, Py_ssize_t start, Py_ssize_t stop) except -1
    cdef int _open_savepoint(self, Py_ssize_t mark) except -1
    cdef int _check_depth(self, Py_ssize_t depth) except -1
    cdef int _close(self, Py_ssize_t depth, bint keep) except -1
    cdef int _restore(self, tuple save) except -1
    cdef int _abort_nested(self) except -1
