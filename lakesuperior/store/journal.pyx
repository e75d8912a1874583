"""The write transaction's life: its journal, savepoints, growth and commit.

``JournaledTxn`` is the base of ``WriteTxn`` (``writes.pyx``, the writes
themselves). Every write is applied through ``_run`` and recorded in the
journal as ``(op, args)``: when LMDB reports its map full (on a put or on
commit), the LMDB transaction is begun again on a grown map, the journal is
replayed (the open savepoints opened again where they were) and the failed
write is retried once; a second failure is ``StoreFullError``. Growing needs
every other transaction of this process ended (LMDB remaps the file).

A **savepoint** (``savepoint()``) is a nested LMDB transaction. The writes made
after it are kept by ``release()``, into the enclosing transaction (they commit
or roll back with it), or undone by ``rollback()``, which also restores what the
transaction keeps on the Python side: the journal, the IRIs it created, the
graphs it touched, the bytes it wrote; its cached records are dropped (read
again). An error inside a savepoint leaves the enclosing transaction usable
once the savepoint is rolled back: a write that does not fit even after
growing, or that cannot grow because other transactions of this process are
open, raises ``StoreFullError`` and ends only the savepoint's LMDB transaction.
LMDB's write transaction belongs to the thread that began it (its write
mutex does): savepoints, like every call on the transaction, are made by that
thread.
"""
import os

import lmdb

cimport cython

from lakesuperior.exceptions import StoreBackendError, StoreError, StoreFullError

_TOO_LARGE = ("Insufficient storage: the write does not fit in the store's map even "
              "after growing it")


@cython.no_gc_clear   # __dealloc__ needs ``saves`` (and Txn's ``txn``) intact
cdef class JournaledTxn(Reader):
    """A write transaction's journal, savepoints, growth and commit (module docstring)."""

    def __cinit__(self, *args):
        self.journal = []
        self.saves = []
        self.written = 0
        self.store.write_ahead()

    def __dealloc__(self):
        # Dropped with savepoints open: end the nested LMDB transactions, innermost
        # first, so that Txn's deallocation ends the top one (``self.txn`` again).
        if self.done or self.store is None or not self.saves:
            return
        if self.store.closed or os.getpid() != self.store.pid:
            return
        try:
            self._abort_nested()
        except BaseException:
            pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.abort()
        return False

    @property
    def depth(self):
        """How many savepoints are open (0: none, or the transaction has ended)."""
        return len(self.saves)

    def commit(self):
        """Commit every write (the open savepoints released first; growing the map
        and replaying them if it is full); then, unless ``deferred``, make it
        durable (``StoreEnv.make_durable``)."""
        if self.done:
            return
        if self.saves:
            try:
                self.release(1)
            except BaseException:
                self.abort()
                raise
        try:
            try:
                self.txn.commit()
            except lmdb.MapFullError:
                self._restart()
                self.txn.commit()
        except lmdb.MapFullError as e:
            self._end()
            raise StoreFullError(_TOO_LARGE) from e
        except lmdb.Error as e:
            self._end()
            raise self.store.write_failure(e, self.written) from e
        except BaseException:
            if not self.done:
                self.abort()
            raise
        self._end()
        if self.new_iris:
            self.store.remember(self.new_iris)
        if not self.deferred:
            self.store.make_durable()

    def abort(self):
        """End the transaction (its savepoints first); nothing it wrote is kept."""
        if self.done:
            return
        self._abort_nested()
        Reader.abort(self)

    # -- savepoints --------------------------------------------------------------

    def savepoint(self):
        """Begin a savepoint (a nested LMDB transaction); returns its depth, 1 for
        the outermost: savepoints nest. The writes made from now on are kept by
        ``release(depth)`` or undone by ``rollback(depth)``."""
        self._check()
        self._open_savepoint(len(self.journal))
        return len(self.saves)

    def release(self, Py_ssize_t depth):
        """Keep the writes made since savepoint ``depth`` (and end the savepoints
        inside it): they become the enclosing transaction's. If LMDB cannot merge
        them, they are undone as by ``rollback`` and the error is raised."""
        self._check_depth(depth)
        self._close(depth, True)

    def rollback(self, Py_ssize_t depth):
        """Undo every write made since savepoint ``depth`` and end it (and the
        savepoints inside it); the transaction goes on as it was when it began."""
        self._check_depth(depth)
        self._close(depth, False)

    cdef int _close(self, Py_ssize_t depth, bint keep) except -1:
        """End the savepoints from ``depth`` in, innermost first, keeping their
        writes (the nested transaction committed into its parent) or not."""
        cdef tuple save
        while len(self.saves) >= depth:
            save = self.saves.pop()
            try:
                if keep:
                    self.txn.commit()
                else:
                    self.txn.abort()
            except lmdb.Error as e:
                # LMDB ended the nested transaction: undo it on this side too.
                self.txn = save[1]
                self._restore(save)
                if keep:
                    self._close(depth, False)
                    raise self.store.write_failure(e, self.written) from e
                continue
            self.txn = save[1]
            if not keep:
                self._restore(save)
        return 0

    cdef int _open_savepoint(self, Py_ssize_t mark) except -1:
        """Begin a nested transaction; remember what to restore at ``mark``."""
        try:
            child = self.store.env.begin(write=True, parent=self.txn)
        except lmdb.Error as e:
            raise StoreBackendError(f"Cannot begin a savepoint: {e}") from e
        self.saves.append((mark, self.txn, dict(self.new_iris), set(self.touched),
                           self.written))
        self.txn = child
        return 0

    cdef int _check_depth(self, Py_ssize_t depth) except -1:
        self._check()
        if not 1 <= depth <= len(self.saves):
            raise StoreError(f"No open savepoint at depth {depth}: "
                             f"{len(self.saves)} open")
        return 0

    cdef int _restore(self, tuple save) except -1:
        """The Python side of the transaction as it was when ``save`` began."""
        del self.journal[save[0]:]
        self.new_iris = save[2]
        self.touched = save[3]
        self.written = save[4]
        self.records = {}
        return 0

    cdef int _abort_nested(self) except -1:
        """End the open savepoints' LMDB transactions, innermost first; ``txn`` is
        the top one again (the savepoints are forgotten, the journal kept)."""
        while self.saves:
            save = self.saves.pop()
            try:
                self.txn.abort()
            except lmdb.Error:
                pass
            self.txn = save[1]
        return 0

    # -- growth and replay -------------------------------------------------------

    cdef object _run(self, int op, tuple args):
        """Apply one write; on a full map, grow, replay the journal and retry once."""
        self._check()
        try:
            try:
                out = self._apply(op, args)
            except lmdb.MapFullError:
                self._restart()
                out = self._apply(op, args)
        except lmdb.MapFullError as e:
            if not self.saves:
                self.abort()
            raise StoreFullError(_TOO_LARGE) from e
        except lmdb.Error as e:
            raise self.store.write_failure(e, self.written) from e
        self.journal.append((op, args))
        return out

    cdef object _apply(self, int op, tuple args):
        raise NotImplementedError("JournaledTxn._apply: the subclass applies its writes")

    cdef int _restart(self) except -1:
        """Abort the LMDB transaction, grow the map, begin again and replay the
        journal, the savepoints opened again where they were. With other
        transactions of this process open the map cannot grow: ``StoreFullError``,
        and inside a savepoint the transaction is left as it was (the caller
        rolls the savepoint back)."""
        if self.store.open_txns > 1:
            if not self.saves:
                self.abort()
            raise StoreFullError(
                "Insufficient storage: the store's map is full and cannot grow while other "
                f"transactions of this process are open ({self.store.open_txns - 1}): end "
                "them and retry")
        cdef Py_ssize_t need = self.written
        cdef list marks = [save[0] for save in self.saves]
        self._abort_nested()
        try:
            self.txn.abort()
        except lmdb.Error:
            pass
        self._end()
        self.store.grow(self.store.env, need)
        self.txn = self.store.begin(self.store.env, True)
        self.store.open_txns += 1
        self.done = False
        self.records = {}
        self.new_iris = {}
        self.touched = set()
        self.written = 0
        cdef Py_ssize_t at = 0
        for mark in marks:
            self._replay(at, mark)
            self._open_savepoint(mark)
            at = mark
        self._replay(at, len(self.journal))
        return 0

    cdef int _replay(self, Py_ssize_t start, Py_ssize_t stop) except -1:
        """Apply the journal's writes ``start`` to ``stop`` again."""
        cdef Py_ssize_t i
        for i in range(start, stop):
            op, args = self.journal[i]
            self._apply(op, args)
        return 0
