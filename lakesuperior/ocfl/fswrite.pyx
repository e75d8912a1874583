"""Directories and files written in batches, without holding the GIL.

``write_batch`` makes a list of directories and files with the system calls
alone, the GIL released for the whole batch: a thread writing an export's files
with it runs beside the thread that encodes them, instead of taking the GIL back
after each call (``ocfl.filesink``). Each call is announced first as the os
module announces it (audit events ``os.mkdir``, ``open``, ``os.rename``).
"""
import os
import sys

from libc.errno cimport EEXIST, EINTR, errno
from libc.stdlib cimport free, malloc
from posix.fcntl cimport O_CLOEXEC, O_CREAT, O_TRUNC, O_WRONLY, open
from posix.stat cimport mkdir
from posix.types cimport mode_t
from posix.unistd cimport close, write

#: What a write is: make a directory (it may exist), write a new file (made, or
#: truncated), replace a file whole (written as ``path + ".tmp"``, then renamed).
cdef enum _Kind:
    _MKDIR = 0
    _PUT = 1
    _REPLACE = 2

MKDIR = _MKDIR
PUT = _PUT
REPLACE = _REPLACE


cdef extern from "<stdio.h>" nogil:
    int rename(const char *old, const char *new)


cdef struct _Op:
    int kind
    const char *path
    const char *tmp
    const char *data
    size_t size


cdef int _FLAGS = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC


cdef int _put(const char *path, const char *data, size_t size) noexcept nogil:
    """Write a file; 0, or the errno of what failed."""
    cdef int fd = open(path, _FLAGS, <mode_t>0o666)
    cdef ssize_t n
    cdef int err = 0
    if fd < 0:
        return errno
    while size:
        n = write(fd, data, size)
        if n < 0:
            if errno == EINTR:
                continue
            err = errno
            break
        data += n
        size -= <size_t>n
    if close(fd) != 0 and err == 0:
        err = errno
    return err


cdef Py_ssize_t _run(_Op *ops, Py_ssize_t count, int *err) noexcept nogil:
    """Do ``ops`` in order; the index of the first that failed (its errno in
    ``err``), or -1."""
    cdef Py_ssize_t i
    cdef _Op *op
    for i in range(count):
        op = &ops[i]
        if op.kind == _MKDIR:
            if mkdir(op.path, <mode_t>0o777) != 0 and errno != EEXIST:
                err[0] = errno
                return i
        elif op.kind == _PUT:
            err[0] = _put(op.path, op.data, op.size)
            if err[0]:
                return i
        else:
            err[0] = _put(op.tmp, op.data, op.size)
            if err[0]:
                return i
            if rename(op.tmp, op.path) != 0:
                err[0] = errno
                return i
    return -1


def write_batch(list ops):
    """Do every ``(kind, path, data)`` of ``ops`` in order (``kind``: ``MKDIR``,
    ``PUT`` or ``REPLACE``; ``path`` a ``str``; ``data`` bytes, empty for a
    directory), the GIL released; ``OSError`` naming the path for the first that
    fails (nothing after it is done)."""
    cdef Py_ssize_t count = len(ops), i, failed
    cdef int err = 0
    cdef _Op *cops = <_Op *>malloc(max(count, 1) * sizeof(_Op))
    cdef bytes data
    if cops == NULL:
        raise MemoryError()
    keep = []          # the encoded paths, alive while the calls run
    audit = sys.audit
    try:
        for i in range(count):
            kind, path, data = ops[i]
            bpath = os.fsencode(path)
            keep.append(bpath)
            cops[i].kind = kind
            cops[i].path = bpath
            cops[i].data = data
            cops[i].size = len(data)
            cops[i].tmp = NULL
            if kind == _PUT:
                audit("open", path, None, _FLAGS)
            elif kind == _MKDIR:
                audit("os.mkdir", path, 0o777, -1)
            elif kind == _REPLACE:
                tmp = path + ".tmp"
                btmp = bpath + b".tmp"
                keep.append(btmp)
                cops[i].tmp = btmp
                audit("open", tmp, None, _FLAGS)
                audit("os.rename", tmp, path, -1, -1)
            else:
                raise ValueError(f"Unknown write kind {kind!r}")
        with nogil:
            failed = _run(cops, count, &err)
        if failed >= 0:
            raise OSError(err, os.strerror(err), ops[failed][1])
    finally:
        free(cops)
