"""Durable staging of HTTP transactions (``fcr:tx``): what each one holds until
it is committed or rolled back.

A transaction is a directory under ``Config.staging_dir`` (``DATA_DIR/transactions``)::

    <id>/meta.json        owner, expiry, state, the state of each resource it first touched
    <id>/ops              the staged requests (``Operation``), one JSON line each, in
                          order; the record has each one's offset, length and uids
    <id>/<uuid>.body      the body of a staged request (its ``Operation`` names it)
    <id>/NNNNNN.triples   the Nth's body as parsed, if it is an RDF PUT (canonical
                          N-Triples, split, not parsed, when it runs again)

The record (``meta.json``) alone says which staged requests and bodies count;
it is rewritten in place (a worker killed while writing it loses that
transaction: it answers 409 "lost"). Nothing is synced to disk: the files must outlive a worker, not
the machine (a server that restarts drops every transaction anyway). Callers
serialize the changes of one transaction by holding the repository's write
transaction (the LMDB write lock is shared by every process
on the data directory); nothing here holds a lock between requests.

A transaction's staged requests are never in the quad store: a server killed
with transactions open restarts with none of their changes. The first process
to open the staging directory while no other one has it open (an exclusive
``flock`` on ``.alive``, then kept shared) removes every transaction left
behind.
"""
from __future__ import annotations

import fcntl
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

OPEN, COMMITTED, ROLLED_BACK, EXPIRED = "open", "committed", "rolled back", "expired"
#: Seconds a closed transaction is remembered (so that it answers 410, not 404).
CLOSED_MEMORY_S = 86400.0
_ID = re.compile(r"[0-9a-f]{32}")
#: Bodies up to this size are also kept in memory for the request that sent them.
KEEP_IN_MEMORY = 1 << 20
_META = "meta.json"
_OPS = "ops"


@dataclass
class TxInfo:
    """One transaction's record: ``touched`` maps each uid it read or wrote first to
    that resource's ETag then (None: absent)."""

    id: str
    owner: str
    expires: float
    state: str = OPEN
    closed_at: float = 0.0
    operations: int = 0
    size: int = 0
    touched: dict[str, str | None] = field(default_factory=dict)
    ops_bytes: int = 0       #: the length of ``ops`` that counts
    index: list[list[Any]] = field(default_factory=list)  #: [offset, length, uids] per op


@dataclass
class Operation:
    """One staged request: enough to run it again (``body``: a staged body file's path)."""

    method: str
    path: str                      #: raw path and query, as the client sent them
    root: str                      #: the public root the request used (scheme://host)
    headers: list[tuple[str, str]]
    uids: list[str]                #: the uids it changed (target; a POST's new child too)
    agent: str                     #: the user name it records
    at: str                        #: ISO 8601 time it was staged (the time it records)
    body: str | None = None
    parsed: str | None = None      #: a staged file of its body's parsed triples


@dataclass
class Received:
    """A request body copied into a transaction: its file, size and, when small,
    its bytes (the request runs from them, without reading the file again)."""

    path: str | None
    size: int
    data: bytes | None
    kept: bool = False   #: staged: its file stays


def valid_id(tx_id: str) -> bool:
    return bool(_ID.fullmatch(tx_id))


def related(a: str, b: str) -> bool:
    """Whether uid ``a`` is ``b``, one of its ancestors or one of its descendants."""
    if a == b or a == "/" or b == "/":
        return True
    return a.startswith(b + "/") or b.startswith(a + "/")


class Staging:
    """The staging directory: open, look up, extend, stage into, close transactions."""

    def __init__(self, root: str, *, lifetime: float, max_open: int, max_operations: int,
                 max_bytes: int, clock: Callable[[], float] = time.time):
        self.root = root
        self.lifetime = lifetime
        self.max_open = max_open
        self.max_operations = max_operations
        self.max_bytes = max_bytes
        self.clock = clock
        os.makedirs(root, exist_ok=True)
        self._alive = _claim(root)

    def close(self) -> None:
        os.close(self._alive)

    # -- records -----------------------------------------------------------------------

    def _dir(self, tx_id: str) -> str:
        return os.path.join(self.root, tx_id)

    def _read(self, tx_id: str) -> TxInfo:
        if not valid_id(tx_id):
            raise TransactionNotFoundError(f"No transaction has the id {tx_id!r}")
        try:
            with open(os.path.join(self._dir(tx_id), _META), encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            raise TransactionNotFoundError(f"No transaction has the id {tx_id}") from None
        except ValueError:   # a worker killed while it wrote the record
            raise TransactionNotFoundError(f"The record of transaction {tx_id} is damaged: "
                                           "it is lost") from None
        return TxInfo(**data)

    def _write(self, info: TxInfo) -> None:
        _overwrite(os.path.join(self._dir(info.id), _META), json.dumps(info.__dict__).encode())

    def lookup(self, tx_id: str) -> TxInfo:
        """The record of ``tx_id``, whatever its state (an open one past its expiry is
        closed as expired first)."""
        info = self._read(tx_id)
        if info.state == OPEN and info.expires <= self.clock():
            self._finish(info, EXPIRED)
        return info

    def get(self, tx_id: str, owner: str | None = None) -> TxInfo:
        """An open transaction; ``TransactionNotFoundError``, ``TransactionClosedError``,
        ``TransactionOwnerError`` if ``owner`` is given and not its owner."""
        info = self.lookup(tx_id)
        if info.state != OPEN:
            raise TransactionClosedError(tx_id, info.state)
        if owner is not None and owner != info.owner:
            raise TransactionOwnerError(f"Transaction {tx_id} belongs to another user")
        return info

    def open(self, owner: str) -> TxInfo:
        """A new transaction of ``owner``; ``TransactionLimitError`` past ``max_open``."""
        self.sweep()
        if self.count_open() >= self.max_open:
            raise TransactionLimitError(
                f"{self.max_open} transactions are open, the most this server allows "
                "(transactions.max_open): commit or roll one back, or wait for one to expire")
        info = TxInfo(uuid.uuid4().hex, owner, self.clock() + self.lifetime)
        os.makedirs(self._dir(info.id))
        self._write(info)
        return info

    def extend(self, info: TxInfo) -> TxInfo:
        info.expires = self.clock() + self.lifetime
        self._write(info)
        return info

    def touch(self, info: TxInfo, states: dict[str, str | None]) -> None:
        """Remember the state of the uids the transaction touches for the first time."""
        new = {uid: etag for uid, etag in states.items() if uid not in info.touched}
        if new:
            info.touched.update(new)
            self._write(info)

    def count_open(self) -> int:
        return sum(1 for info in self._all() if info.state == OPEN)

    def _all(self) -> Iterator[TxInfo]:
        for name in os.listdir(self.root):
            if valid_id(name):
                try:
                    yield self.lookup(name)
                except (TransactionNotFoundError, ValueError, TypeError):
                    continue

    def sweep(self) -> None:
        """Close expired transactions, forget closed ones after ``CLOSED_MEMORY_S``."""
        now = self.clock()
        for info in list(self._all()):
            if info.state != OPEN and info.closed_at + CLOSED_MEMORY_S <= now:
                shutil.rmtree(self._dir(info.id), ignore_errors=True)

    # -- operations --------------------------------------------------------------------

    @contextmanager
    def receive(self, info: TxInfo, stream: IO[bytes] | None, chunk: int = 1 << 16
                ) -> Iterator[Received]:
        """Copy a request body into the transaction (a file of its own, named apart
        from any other request's); removed at the end unless the caller marked it
        ``kept`` (staged). ``TransactionTooLargeError`` past ``max_bytes``."""
        if stream is None:
            yield Received(None, 0, None)
            return
        path = os.path.join(self._dir(info.id), f"{uuid.uuid4().hex}.body")
        size = 0
        received: Received | None = None
        kept: list[bytes] | None = []
        try:
            with open(path, "wb") as out:
                while data := stream.read(chunk):
                    size += len(data)
                    if info.size + size > self.max_bytes:
                        raise TransactionTooLargeError(
                            f"The request bodies of transaction {info.id} would exceed "
                            f"{self.max_bytes} bytes (transactions.max_bytes)")
                    out.write(data)
                    if kept is not None:
                        kept = kept + [data] if size <= KEEP_IN_MEMORY else None
            received = Received(path, size, None if kept is None else b"".join(kept))
            yield received
        finally:
            if (received is None or not received.kept) and os.path.exists(path):
                os.unlink(path)

    def check_room(self, info: TxInfo) -> None:
        if info.operations >= self.max_operations:
            raise TransactionLimitError(
                f"Transaction {info.id} holds {info.operations} requests, the most this "
                "server allows (transactions.max_operations): commit it")

    def stage(self, info: TxInfo, op: Operation, size: int,
              touched: dict[str, str | None],
              parsed: list[tuple[str, str, str]] | None = None) -> None:
        """Append ``op`` (its body is the file ``receive`` wrote; ``parsed``: that body's
        triples, kept beside it) and remember ``touched`` (as ``touch``): one append to
        ``ops``, one record write."""
        self.check_room(info)
        if parsed is not None:
            op.parsed = os.path.join(self._dir(info.id), f"{info.operations + 1:06d}.triples")
            _overwrite(op.parsed, "".join(f"{t[0]} {t[1]} {t[2]} .\n"
                                          for t in parsed).encode())
        line = (json.dumps(_op_dict(op)) + "\n").encode()
        with open(os.path.join(self._dir(info.id), _OPS), "ab") as fh:
            fh.truncate(info.ops_bytes)   # drop what a request killed mid-append left
            fh.write(line)
        info.index.append([info.ops_bytes, len(line), op.uids])
        info.ops_bytes += len(line)
        info.operations += 1
        info.size += size
        for uid, etag in touched.items():
            info.touched.setdefault(uid, etag)
        self._write(info)

    def operations(self, info: TxInfo, which: Callable[[list[str]], bool] | None = None
                   ) -> list[Operation]:
        """The staged requests, in order (``which``: those whose uids it accepts); the
        file of staged requests is read only if one is wanted."""
        wanted = [(offset, length) for offset, length, uids in info.index
                  if which is None or which(uids)]
        if not wanted:
            return []
        with open(os.path.join(self._dir(info.id), _OPS), "rb") as fh:
            data = fh.read(info.ops_bytes)
        out = []
        for offset, length in wanted:
            d: dict[str, Any] = json.loads(data[offset:offset + length])
            d["headers"] = [tuple(h) for h in d["headers"]]
            out.append(Operation(**d))
        return out

    def finish(self, info: TxInfo, state: str) -> None:
        """Close the transaction (committed or rolled back): its staged requests go."""
        self._finish(info, state)

    def _finish(self, info: TxInfo, state: str) -> None:
        info.state = state
        info.closed_at = self.clock()
        info.touched = {}
        info.index = []
        self._write(info)
        path = self._dir(info.id)
        for name in os.listdir(path):
            if name != _META:
                os.unlink(os.path.join(path, name))


def _op_dict(op: Operation) -> dict[str, Any]:
    return {"method": op.method, "path": op.path, "root": op.root, "headers": op.headers,
            "uids": op.uids, "agent": op.agent, "at": op.at, "body": op.body,
            "parsed": op.parsed}


def load_parsed(op: Operation) -> list[tuple[str, str, str]] | None:
    """The parsed triples staged with ``op``, if any (terms in canonical form: subject
    and predicate hold no space, a literal no line break, so splitting is enough)."""
    if op.parsed is None:
        return None
    with open(op.parsed, encoding="utf-8") as fh:
        text = fh.read()
    return [(s, p, o) for s, p, o in (line.split(" ", 2) for line in text.split(" .\n")
                                      if line)]


def _overwrite(path: str, data: bytes) -> None:
    """Write ``path`` in place (its readers hold the same lock as its writer)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _claim(root: str) -> int:
    """Hold ``.alive`` shared; if no other process holds it, first remove every
    transaction left by a server that is gone."""
    fd = os.open(os.path.join(root, ".alive"), os.O_RDWR | os.O_CREAT, 0o644)
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
