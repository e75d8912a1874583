"""Durable staging of HTTP transactions (``fcr:tx``): what each one holds until
it is committed or rolled back.

A transaction is a directory under ``Config.staging_dir`` (``DATA_DIR/transactions``)::

    <id>/meta.json    owner, expiry, state, counts, and how much of ``journal`` and
                      ``data`` counts (a small record of constant size)
    <id>/journal      append-only, one JSON line per record: the staged requests
                      (``Operation``) and the state of each resource the
                      transaction first read or wrote
    <id>/data         append-only: the staged request bodies (up to
                      ``KEEP_IN_MEMORY`` bytes each) and the triples of each RDF
                      PUT as parsed (canonical N-Triples, split, not parsed, when
                      it runs again)
    <id>/<uuid>.body  a larger body, streamed to a file of its own

The three files are made when the transaction opens: a staged request appends
to ``data`` and ``journal`` and rewrites ``meta.json`` in place, and creates
no file (creating one costs more than the rest of the staging together on
some file systems). ``meta.json`` alone says how much of the other two counts:
bytes past it (a worker killed mid-append) are cut at the next append. A
worker killed while writing ``meta.json`` loses that transaction (it answers
409 "lost"). Nothing is synced to disk: the files must outlive a worker, not
the machine (a server that restarts drops every transaction anyway).

Each process keeps what it has read of a journal (each staged request's uids
and place, the first state of each resource touched) and reads only what was
appended since, so a request costs the same whatever the transaction holds.

Callers serialize the changes of one transaction by holding the repository's
write transaction (the LMDB write lock is shared by every process on the data
directory) around every call; nothing here holds a lock between requests.

A transaction's staged requests are never in the quad store: a server killed
with transactions open restarts with none of their changes. The first process
to open the staging directory while no other one has it open (an exclusive
``flock`` on ``.alive``, then kept shared) removes every transaction left
behind. An open transaction past its expiry is closed (its files removed) by
the next look at it or the next sweep; every process sweeps at most every
``SWEEP_EVERY_S`` seconds, from its next look-up.
"""
from __future__ import annotations

import fcntl
import io
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from lakesuperior.exceptions import (
    TransactionClosedError,
    TransactionLimitError,
    TransactionNotFoundError,
    TransactionOwnerError,
    TransactionTooLargeError,
)
from lakesuperior.store import private

OPEN, COMMITTED, ROLLED_BACK, EXPIRED = "open", "committed", "rolled back", "expired"
#: Seconds a closed transaction is remembered (so that it answers 410, not 404).
CLOSED_MEMORY_S = 86400.0
#: Most seconds between two sweeps of one process (closing expired transactions).
SWEEP_EVERY_S = 60.0
_ID = re.compile(r"[0-9a-f]{32}")
#: Bodies up to this size are kept in memory and staged in ``data``; larger ones
#: are streamed to a file of their own.
KEEP_IN_MEMORY = 1 << 20
_META, _JOURNAL, _DATA = "meta.json", "journal", "data"
_PAD = 256   #: ``meta.json`` is padded to a multiple of this (JSON allows the spaces)
_PERSISTED = ("id", "owner", "expires", "state", "closed_at", "operations", "size",
              "journal_bytes", "data_bytes", "opened")


@dataclass
class TxInfo:
    """One transaction's record (``meta.json``), and what its journal says:
    ``touched`` maps each uid it read or wrote first to that resource's ETag then
    (None: absent)."""

    id: str
    owner: str
    expires: float
    state: str = OPEN
    closed_at: float = 0.0
    operations: int = 0
    size: int = 0
    journal_bytes: int = 0   #: the length of ``journal`` that counts
    data_bytes: int = 0      #: the length of ``data`` that counts
    opened: float = 0.0      #: when it was opened (its total lifetime counts from here)
    touched: dict[str, str | None] = field(default_factory=dict)


@dataclass
class Operation:
    """One staged request: enough to run it again. ``body`` and ``parsed`` are
    (file, offset, length) of its body and of its body's parsed triples."""

    method: str
    path: str                      #: raw path and query, as the client sent them
    root: str                      #: the public root the request used (scheme://host)
    headers: list[tuple[str, str]]
    uids: list[str]                #: the uids it changed (target; a POST's new child too)
    agent: str                     #: the user name it records
    at: str                        #: ISO 8601 time it was staged (the time it records)
    body: tuple[str, int, int] | None = None
    parsed: tuple[str, int, int] | None = None


@dataclass
class Received:
    """A request body read for a transaction: its bytes (``data``) up to
    ``KEEP_IN_MEMORY``, else the file it was streamed to (``path``); its size."""

    path: str | None
    size: int
    data: bytes | None
    kept: bool = False   #: staged: its file stays


@dataclass
class _Journal:
    """What a process has read of one transaction's journal, up to ``upto``."""

    upto: int = 0
    touched: dict[str, str | None] = field(default_factory=dict)
    index: list[tuple[int, int]] = field(default_factory=list)  #: each op's offset, length
    at: dict[str, list[int]] = field(default_factory=dict)      #: uid -> ops that changed it
    under: dict[str, list[int]] = field(default_factory=dict)   #: uid -> ops below it

    def add(self, offset: int, length: int, record: dict[str, Any]) -> None:
        for uid, etag in record["touched"].items():
            self.touched.setdefault(uid, etag)
        if "op" in record:
            n = len(self.index)
            self.index.append((offset, length))
            for uid in record["op"]["uids"]:
                self.at.setdefault(uid, []).append(n)
                for parent in _ancestors(uid):
                    self.under.setdefault(parent, []).append(n)
        self.upto = offset + length

    def near(self, uid: str) -> list[int]:
        """The ops that changed ``uid``, one of its ancestors or one of its
        descendants, in order (without looking at the others)."""
        found = set(self.at.get(uid, ())) | set(self.under.get(uid, ()))
        for parent in _ancestors(uid):
            found.update(self.at.get(parent, ()))
        return sorted(found)


def valid_id(tx_id: str) -> bool:
    return bool(_ID.fullmatch(tx_id))


def _ancestors(uid: str) -> Iterator[str]:
    """The uids above ``uid``, nearest first, ``/`` last."""
    while uid != "/":
        uid = uid.rpartition("/")[0] or "/"
        yield uid


class Staging:
    """The staging directory: open, look up, extend, stage into, close transactions.

    Every call is made holding the repository's write transaction. ``max_per_agent``
    (open transactions of one owner) and ``max_lifetime`` (seconds from opening past
    which no extension is granted): None, no such limit."""

    def __init__(self, root: str, *, lifetime: float, max_open: int, max_operations: int,
                 max_bytes: int, max_per_agent: int | None = None,
                 max_lifetime: float | None = None, clock: Callable[[], float] = time.time):
        self.root = root
        self.lifetime = lifetime
        self.max_open = max_open
        self.max_per_agent = max_per_agent
        self.max_lifetime = max_lifetime
        self.max_operations = max_operations
        self.max_bytes = max_bytes
        self.clock = clock
        private.make_dirs(root)
        self._alive = _claim(root)
        self._journals: dict[str, _Journal] = {}
        self._next_sweep = 0.0

    def close(self) -> None:
        os.close(self._alive)
        self._journals.clear()

    # -- records -----------------------------------------------------------------------

    def _dir(self, tx_id: str) -> str:
        return os.path.join(self.root, tx_id)

    def _read(self, tx_id: str) -> TxInfo:
        if not valid_id(tx_id):
            raise TransactionNotFoundError(f"No transaction has the id {tx_id!r}")
        try:
            with open(os.path.join(self._dir(tx_id), _META), encoding="utf-8") as fh:
                data = json.load(fh)
            return TxInfo(**{k: data[k] for k in _PERSISTED if k in data})
        except FileNotFoundError:
            raise TransactionNotFoundError(f"No transaction has the id {tx_id}") from None
        except (ValueError, KeyError, TypeError):   # a worker killed while it wrote it
            raise TransactionNotFoundError(f"The record of transaction {tx_id} is damaged: "
                                           "it is lost") from None

    def _write(self, info: TxInfo) -> None:
        _overwrite(os.path.join(self._dir(info.id), _META),
                   json.dumps({k: getattr(info, k) for k in _PERSISTED}).encode())

    def _journal(self, info: TxInfo) -> _Journal:
        """This process's reading of ``info``'s journal, brought up to date (only
        what was appended since the last reading is read)."""
        journal = self._journals.get(info.id)
        if journal is None or journal.upto > info.journal_bytes:
            journal = self._journals[info.id] = _Journal()
        if journal.upto < info.journal_bytes:
            with open(os.path.join(self._dir(info.id), _JOURNAL), "rb") as fh:
                fh.seek(journal.upto)
                tail = fh.read(info.journal_bytes - journal.upto)
            for line in tail.splitlines(keepends=True):
                journal.add(journal.upto, len(line), json.loads(line))
        return journal

    def lookup(self, tx_id: str) -> TxInfo:
        """The record of ``tx_id``, whatever its state (an open one past its expiry is
        closed as expired first)."""
        info = self._read(tx_id)
        if info.state == OPEN and info.expires <= self.clock():
            self._finish(info, EXPIRED)
        return info

    def get(self, tx_id: str, owner: str | None = None) -> TxInfo:
        """An open transaction, with what it touched; ``TransactionNotFoundError``,
        ``TransactionClosedError``, ``TransactionOwnerError`` if ``owner`` is given and
        not its owner. Sweeps first if this process has not for ``SWEEP_EVERY_S``."""
        if self.clock() >= self._next_sweep:
            self.sweep()
        info = self.lookup(tx_id)
        if info.state != OPEN:
            raise TransactionClosedError(tx_id, info.state)
        if owner is not None and owner != info.owner:
            raise TransactionOwnerError(f"Transaction {tx_id} belongs to another user")
        info.touched = self._journal(info).touched
        return info

    def open(self, owner: str) -> TxInfo:
        """A new transaction of ``owner``; ``TransactionLimitError`` past ``max_open``
        or ``max_per_agent``."""
        still_open = self._sweep()
        if len(still_open) >= self.max_open:
            raise TransactionLimitError(
                f"{self.max_open} transactions are open, the most this server allows "
                "(transactions.max_open): commit or roll one back, or wait for one to expire")
        if self.max_per_agent is not None and sum(
                1 for info in still_open if info.owner == owner) >= self.max_per_agent:
            raise TransactionLimitError(
                f"This agent holds {self.max_per_agent} open transactions, the most this "
                "server allows one agent (transactions.max_per_agent): commit or roll one "
                "back, or wait for one to expire")
        now = self.clock()
        info = TxInfo(uuid.uuid4().hex, owner, self._expiry(now, now), opened=now)
        path = self._dir(info.id)
        os.mkdir(path, private.DIR_MODE)
        for name in (_JOURNAL, _DATA):
            os.close(private.open_file(os.path.join(path, name), os.O_WRONLY))
        self._write(info)
        return info

    def extend(self, info: TxInfo) -> TxInfo:
        """Push the expiry ``lifetime`` seconds from now, at most to ``max_lifetime``
        after the opening: ``TransactionLimitError`` once it is there."""
        expires = self._expiry(info.opened, self.clock())
        if expires <= info.expires and expires < self.clock() + self.lifetime:
            raise TransactionLimitError(
                f"Transaction {info.id} has been extended to its total lifetime of "
                f"{self.max_lifetime:g} seconds (transactions.max_lifetime) and expires "
                "then: commit it or roll it back")
        info.expires = max(expires, info.expires)
        self._write(info)
        return info

    def _expiry(self, opened: float, now: float) -> float:
        expires = now + self.lifetime
        if self.max_lifetime is not None:
            expires = min(expires, opened + self.max_lifetime)
        return expires

    def touch(self, info: TxInfo, states: dict[str, str | None]) -> None:
        """Remember the state of the uids the transaction touches for the first time."""
        new = {uid: etag for uid, etag in states.items() if uid not in info.touched}
        if new:
            self._append(info, {"touched": new})

    def count_open(self) -> int:
        return sum(1 for info in self._all() if info.state == OPEN)

    def _all(self) -> Iterator[TxInfo]:
        for name in os.listdir(self.root):
            if valid_id(name):
                try:
                    yield self.lookup(name)
                except TransactionNotFoundError:
                    continue

    def sweep(self) -> int:
        """Close expired transactions, forget closed ones after ``CLOSED_MEMORY_S``;
        how many are open."""
        return len(self._sweep())

    def _sweep(self) -> list[TxInfo]:
        """``sweep``, returning the open transactions."""
        now = self.clock()
        self._next_sweep = now + min(SWEEP_EVERY_S, self.lifetime)
        still_open = []
        for info in list(self._all()):
            if info.state == OPEN:
                still_open.append(info)
            elif info.closed_at + CLOSED_MEMORY_S <= now:
                shutil.rmtree(self._dir(info.id), ignore_errors=True)
        for tx_id in set(self._journals) - {info.id for info in still_open}:
            del self._journals[tx_id]
        return still_open

    # -- operations --------------------------------------------------------------------

    @contextmanager
    def receive(self, info: TxInfo, stream: IO[bytes] | None, chunk: int = 1 << 16
                ) -> Iterator[Received]:
        """Read a request body for the transaction: in memory up to
        ``KEEP_IN_MEMORY`` bytes, else streamed to a file of its own (removed at the
        end unless the caller marked it ``kept``: staged).
        ``TransactionTooLargeError`` past ``max_bytes``."""
        if stream is None:
            yield Received(None, 0, None)
            return
        path: str | None = None
        out: IO[bytes] | None = None
        kept: list[bytes] = []
        size = 0
        received: Received | None = None
        try:
            while data := stream.read(chunk):
                size += len(data)
                if info.size + size > self.max_bytes:
                    raise TransactionTooLargeError(
                        f"The request bodies of transaction {info.id} would exceed "
                        f"{self.max_bytes} bytes (transactions.max_bytes)")
                if out is None and size > KEEP_IN_MEMORY:
                    path = os.path.join(self._dir(info.id), f"{uuid.uuid4().hex}.body")
                    out = os.fdopen(private.open_file(path, os.O_WRONLY | os.O_TRUNC), "wb")
                    out.writelines(kept)
                    kept = []
                if out is None:
                    kept.append(data)
                else:
                    out.write(data)
            if out is not None:
                out.close()
            received = Received(path, size, None if path else b"".join(kept))
            yield received
        finally:
            if out is not None:
                out.close()
            if path is not None and (received is None or not received.kept):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def check_room(self, info: TxInfo) -> None:
        if info.operations >= self.max_operations:
            raise TransactionLimitError(
                f"Transaction {info.id} holds {info.operations} requests, the most this "
                "server allows (transactions.max_operations): commit it")

    def stage(self, info: TxInfo, op: Operation, body: Received,
              touched: dict[str, str | None],
              parsed: list[tuple[str, str, str]] | None = None) -> None:
        """Stage ``op`` with its body (appended to ``data`` if in memory; its file kept
        otherwise) and ``parsed``, that body's triples; remember ``touched`` (as
        ``touch``): appends to ``data`` and ``journal``, one record write."""
        self.check_room(info)
        chunks = []
        at = info.data_bytes
        if body.data is not None:
            chunks.append(body.data)
            op.body = (_DATA, at, body.size)
            at += body.size
        elif body.path is not None:
            op.body = (os.path.basename(body.path), 0, body.size)
            body.kept = True
        if parsed is not None:
            text = (" .\n".join(map(" ".join, parsed)) + " .\n").encode() if parsed else b""
            chunks.append(text)
            op.parsed = (_DATA, at, len(text))
            at += len(text)
        if chunks:
            _append_at(os.path.join(self._dir(info.id), _DATA), info.data_bytes,
                       b"".join(chunks) if len(chunks) > 1 else chunks[0])
        info.data_bytes = at
        info.operations += 1
        info.size += body.size
        new = {uid: etag for uid, etag in touched.items() if uid not in info.touched}
        self._append(info, {"touched": new, "op": _op_dict(op)})

    def _append(self, info: TxInfo, record: dict[str, Any]) -> None:
        """Append ``record`` to the journal, then make it count (``meta.json``)."""
        line = (json.dumps(record) + "\n").encode()
        _append_at(os.path.join(self._dir(info.id), _JOURNAL), info.journal_bytes, line)
        journal = self._journal(info)
        info.journal_bytes += len(line)
        self._write(info)
        journal.add(journal.upto, len(line), record)
        info.touched = journal.touched

    def operations(self, info: TxInfo, near: str | None = None) -> list[Operation]:
        """The staged requests, in order (``near``: only those that changed that uid,
        an ancestor or a descendant of it); the journal is read only if one is
        wanted."""
        journal = self._journal(info)
        wanted = (journal.index if near is None
                  else [journal.index[n] for n in journal.near(near)])
        if not wanted:
            return []
        path = self._dir(info.id)
        with open(os.path.join(path, _JOURNAL), "rb") as fh:
            data = fh.read(info.journal_bytes)
        out = []
        for offset, length in wanted:
            d: dict[str, Any] = json.loads(data[offset:offset + length])["op"]
            d["headers"] = [tuple(h) for h in d["headers"]]
            for key in ("body", "parsed"):
                if d[key] is not None:
                    name, start, size = d[key]
                    d[key] = (os.path.join(path, name), start, size)
            out.append(Operation(**d))
        return out

    def finish(self, info: TxInfo, state: str) -> None:
        """Close the transaction (committed or rolled back): its staged requests go."""
        self._finish(info, state)

    def _finish(self, info: TxInfo, state: str) -> None:
        info.state = state
        info.closed_at = self.clock()
        info.touched = {}
        self._write(info)
        self._journals.pop(info.id, None)
        path = self._dir(info.id)
        for name in os.listdir(path):
            if name != _META:
                os.unlink(os.path.join(path, name))


def _op_dict(op: Operation) -> dict[str, Any]:
    return {"method": op.method, "path": op.path, "root": op.root, "headers": op.headers,
            "uids": op.uids, "agent": op.agent, "at": op.at, "body": op.body,
            "parsed": op.parsed}


def read_part(part: tuple[str, int, int]) -> bytes:
    """The bytes of a staged body or parsed body, (file, offset, length)."""
    path, offset, length = part
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(length)


def open_part(part: tuple[str, int, int]) -> IO[bytes]:
    """A staged body, (file, offset, length), to read: in memory if it was kept in
    ``data``, else its own file."""
    path, offset, length = part
    if os.path.basename(path) == _DATA:
        return io.BytesIO(read_part(part))
    fh = open(path, "rb")
    fh.seek(offset)
    return fh


def load_parsed(op: Operation) -> list[tuple[str, str, str]] | None:
    """The parsed triples staged with ``op``, if any (terms in canonical form: subject
    and predicate hold no space, a literal no line break, so splitting is enough)."""
    if op.parsed is None:
        return None
    text = read_part(op.parsed).decode("utf-8")
    return [(s, p, o) for s, p, o in (line.split(" ", 2) for line in text.split(" .\n")
                                      if line)]


def _overwrite(path: str, data: bytes) -> None:
    """Write ``path`` in place (its readers hold the same lock as its writer), padded
    with spaces to a multiple of ``_PAD`` bytes: it is cut only when it shrinks."""
    data = data.ljust(-(-len(data) // _PAD) * _PAD)
    fd = private.open_file(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, 0)
        if os.fstat(fd).st_size > len(data):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _append_at(path: str, at: int, data: bytes) -> None:
    """Write ``data`` at ``at``, the length of ``path`` that counts: what a worker
    killed mid-append left past it is cut first."""
    fd = os.open(path, os.O_WRONLY)
    try:
        if os.fstat(fd).st_size != at:
            os.ftruncate(fd, at)
        view = memoryview(data)
        while view:
            written = os.pwrite(fd, view, at)
            view, at = view[written:], at + written
    finally:
        os.close(fd)


def _claim(root: str) -> int:
    """Hold ``.alive`` shared; if no other process holds it, first remove every
    transaction left by a server that is gone."""
    fd = private.open_file(os.path.join(root, ".alive"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pass
    else:
        for name in os.listdir(root):
            if name != ".alive":
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd
