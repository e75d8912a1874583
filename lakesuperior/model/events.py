"""Change events: what a write changed, as Fedora 6 announces it (Fedora API 1.0 §6).

Model functions call ``record_change(ctx, uid, kind)`` where they change a
resource; the write's ``ChangeSet`` keeps one change per resource (a resource
created and then touched in the same write is one ``create``). Just before the
write transaction commits, ``write_outbox`` appends one entry per change to the
store's outbox table, in that same LMDB transaction: no change without its
event, no event without its change; a failed or rolled-back write leaves none.

An outbox entry is 8 bytes of big-endian epoch milliseconds (retention reads
only those) then compact JSON: ``id`` (``urn:uuid:...``, minted once, so stable
across redeliveries), ``uid``, ``kind``, ``types``, ``user``, ``base``.
``Change`` is a decoded entry; ``messaging/fedora.py`` turns it into Fedora 6's
JMS/STOMP message.
"""
from __future__ import annotations

import json
import struct
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lakesuperior.model.namespaces import RDF_TYPE
from lakesuperior.model.uids import graph, res_uri
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader
from lakesuperior.store.writes import WriteTxn

#: What a write can do to a resource.
KINDS = ("create", "update", "delete", "purge", "resurrect", "version")
_WEAK = ("update", "version")     # kinds that do not override an earlier change
_TS = struct.Struct(">Q")
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)   # compact, UTF-8 as is
# Old entries dropped per write (a bounded share of work for each commit).
PRUNE_BATCH = 256


@dataclass
class Pending:
    """One change recorded in a write, before it is encoded into the outbox."""

    kind: str
    types: list[str]
    user: str
    base: str
    ms: int


class ChangeSet:
    """The changes of one write transaction, one per resource, in first-change order."""

    __slots__ = ("changes",)

    def __init__(self) -> None:
        self.changes: dict[str, Pending] = {}

    def __len__(self) -> int:
        return len(self.changes)

    def clear(self) -> None:
        self.changes.clear()

    def add(self, ctx: Any, uid: str, kind: str, types: list[str] | None = None) -> None:
        """Record that ``kind`` happened to ``uid`` in the write of ``ctx``
        (``types``: its rdf:types now, if the caller knows them)."""
        if kind not in KINDS:
            raise ValueError(f"Unknown change kind {kind!r}")
        prev = self.changes.get(uid)
        if prev is not None:
            if kind in _WEAK:
                if prev.kind == "version" and kind == "update":
                    prev.kind = kind
                return
            prev.kind = kind
            prev.types = (types_at(ctx.txn, uid) if types is None else types) or prev.types
            return
        self.changes[uid] = Pending(kind, types_at(ctx.txn, uid) if types is None else types,
                                    ctx.agent,
                                     ctx.urimap.base, _ms(ctx.now))


def record_change(ctx: Any, uid: str, kind: str, triples: list[Triple] | None = None) -> None:
    """Record that ``kind`` (one of ``KINDS``) happened to ``uid`` in this write
    (``triples``: its own triples now, if the caller has them: its types are not
    read again)."""
    ctx.events.add(ctx, uid, kind, None if triples is None else types_in(triples, uid))


def types_in(triples: list[Triple], uid: str) -> list[str]:
    """rdf:types (bare IRIs) of ``uid`` among its ``triples``."""
    res = res_uri(uid)
    return [o[1:-1] for s, p, o in triples if p == RDF_TYPE and s == res and o.startswith("<")]


def types_at(txn: Reader, uid: str) -> list[str]:
    """rdf:types (bare IRIs) of ``uid``, live or buried (empty if there is none)."""
    res = res_uri(uid)
    found = [q[2] for q in txn.match(res, RDF_TYPE, None, res)]
    if not found:
        found = [q[2] for q in txn.match(res, RDF_TYPE, None, graph("bury", uid))]
    return [t[1:-1] for t in found if t.startswith("<")]


# -- the outbox ---------------------------------------------------------------------

def encode(pending: Pending, uid: str) -> bytes:
    body = {"id": "urn:uuid:" + str(uuid.uuid4()), "uid": uid, "kind": pending.kind,
            "types": pending.types, "user": pending.user, "base": pending.base}
    return _TS.pack(pending.ms) + _JSON.encode(body).encode("utf-8")


def write_outbox(txn: WriteTxn, changes: ChangeSet, *, retention_s: float, publishing: bool,
                 now: datetime | None = None) -> int:
    """Append the changes to the outbox of write transaction ``txn`` (call just before
    commit) and drop a bounded batch of expired entries; returns the last seq.
    ``publishing``: a broker takes the feed (entries stay until it acknowledged them)."""
    last = 0
    if changes.changes:
        last = txn.outbox_append([encode(p, uid) for uid, p in changes.changes.items()])
        changes.clear()
        if not publishing:
            # No broker: nothing is pending. Turning messaging on later publishes
            # from then on (``events replay`` sends what came before).
            txn.outbox_mark(last)
    prune(txn, retention_s=retention_s, publishing=publishing, now=now)
    return last


def prune(txn: WriteTxn, *, retention_s: float, publishing: bool,
          now: datetime | None = None, limit: int = PRUNE_BATCH) -> int:
    """Drop up to ``limit`` entries older than the retention (and, when ``publishing``,
    acknowledged by the broker), oldest first; returns how many."""
    head = txn.outbox(0, 1)
    if not head:
        return 0
    cutoff = _ms(now or datetime.now(UTC)) - int(retention_s * 1000)
    if _TS.unpack_from(head[0][1])[0] >= cutoff:
        return 0
    bound = txn.outbox_state()["published"] if publishing else None
    if bound is not None and head[0][0] > bound:
        return 0                     # the oldest entry still waits for the broker
    upto = 0
    for seq, raw in txn.outbox(head[0][0] - 1, limit):
        if _TS.unpack_from(raw)[0] >= cutoff or (bound is not None and seq > bound):
            break
        upto = seq
    return txn.outbox_drop(upto, limit) if upto else 0


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


# -- reading the feed ---------------------------------------------------------------

@dataclass(frozen=True)
class Change:
    """One event of the change feed (a decoded outbox entry)."""

    seq: int
    id: str
    uid: str
    kind: str
    types: tuple[str, ...]
    user: str
    base: str
    timestamp: datetime

    @classmethod
    def decode(cls, seq: int, raw: bytes) -> Change:
        ms = _TS.unpack_from(raw)[0]
        d = json.loads(raw[_TS.size:].decode("utf-8"))
        return cls(seq, d["id"], d["uid"], d["kind"], tuple(d["types"]), d["user"],
                   d["base"], datetime.fromtimestamp(ms / 1000, UTC))

    @property
    def uri(self) -> str:
        """The resource's public URI."""
        return self.base + self.uid

    @property
    def millis(self) -> int:
        return _ms(self.timestamp)


def changes_after(txn: Reader, seq: int, limit: int = -1) -> list[Change]:
    """The feed's retained events after ``seq`` (in commit order)."""
    return [Change.decode(s, raw) for s, raw in txn.outbox(seq, limit)]


def first_after(txn: Reader, when: datetime) -> int:
    """The seq just before the first retained event at or after ``when`` (for
    ``changes(since=datetime)``)."""
    target = _ms(when)
    after = 0
    while True:
        batch = txn.outbox(after, 1000)
        if not batch:
            return after
        for seq, raw in batch:
            if _TS.unpack_from(raw)[0] >= target:
                return seq - 1
        after = batch[-1][0]

