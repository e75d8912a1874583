"""The RDF answers a worker gave to GETs, kept for the next GET of the same
representation of an unchanged store.

An answer is kept under the read snapshot it was read in
(``Repository.snapshot_id``, the LMDB transaction id: any write to the store
gives later reads a new one), the resource, the request's public base, the
media type and the ``Prefer`` options: an entry found is what reading,
serializing and working out the headers again would give. A GET opens its
snapshot, looks the key up and, when an answer is kept, reads nothing of the
resource: its headers (``resource_headers``), its last modification and its
body come from the entry. Only views read outside a write transaction and the
same for every agent who may read the resource are kept (not embedded children
nor inbound references, which ``AgentView`` filters per agent); an answer with
membership triples, which it filters too, is kept from, and given to, only
agents who may read everything (``Kept.shared``); the access
check, the preconditions and the per-request headers (``Content-Type``,
``Preference-Applied``) are worked out for each request. At most
``http.body_cache`` bytes per worker (0: none kept), the least recently used
dropped first; an answer larger than an eighth of that is not kept.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from datetime import datetime

from lakesuperior.endpoints.paths import Target

#: What identifies one answer: snapshot, target, base, media type, options.
Key = tuple[Hashable, ...]


@dataclass(frozen=True)
class Kept:
    """One answer: its body, the representation's headers, its last modification."""

    body: bytes
    headers: Mapping[str, str]
    modified: datetime | None
    #: the same for every agent who may read the resource: no membership triples,
    #: which an agent who may not read everything sees only from the containers it
    #: may read (``RdfSource.per_agent``, ``has_membership``)
    shared: bool = True

    @property
    def size(self) -> int:
        """Bytes it is counted for: the body and the headers."""
        return len(self.body) + sum(len(k) + len(v) for k, v in self.headers.items())


class BodyCache:
    """Answers by ``key``, bounded in bytes (thread-safe)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._kept: OrderedDict[Key, Kept] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(snapshot: int | None, target: Target, base: str, media_type: str,
            options: Mapping[str, bool] | None) -> Key | None:
        """The key of this representation; None if it may not be kept (read in a
        write transaction, or shown differently to different agents)."""
        if snapshot is None or (options and (options.get("incl_inbound")
                                             or options.get("embed_children"))):
            return None
        return (snapshot, target, base, media_type,
                tuple(sorted(options.items())) if options else ())

    def get(self, key: Key | None) -> Kept | None:
        """The answer kept under ``key``, if any."""
        if key is None or not self.max_bytes:
            return None
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
            return kept

    def keep(self, key: Key | None, kept: Kept) -> None:
        """Keep ``kept`` under ``key`` (not with no key, no room, or too large)."""
        size = kept.size
        if key is None or not self.max_bytes or size > self.max_bytes // 8:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = kept
            self._size += size
            while self._size > self.max_bytes:
                _, old = self._kept.popitem(last=False)
                self._size -= old.size

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def size(self) -> int:
        """Bytes kept."""
        return self._size
