"""The serialized RDF bodies a worker answered GETs with, kept for the next GET
of the same representation of an unchanged store.

A body is kept under the read snapshot it was read from (``RdfSource.snapshot``,
the LMDB transaction id: any write to the store gives later reads a new one),
the resource, the request's public base, the media type and the ``Prefer``
options: an entry found is the body that reading and serializing again would
give. Only views read outside a write transaction and the same for every agent
who may read the resource are kept (not embedded children nor inbound
references, which ``AgentView`` filters per agent); the access check and every
header are worked out for each request. At most ``http.body_cache`` bytes per
worker (0: none kept), the least recently used dropped first; a body larger than
an eighth of that is not kept.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping

from lakesuperior.endpoints.paths import Target

#: What identifies one body: snapshot, uid, target, base, media type, options.
Key = tuple[Hashable, ...]


class BodyCache:
    """Bodies by ``key``, bounded in bytes (thread-safe)."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._bodies: OrderedDict[Key, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(res: object, target: Target, base: str, media_type: str,
            options: Mapping[str, bool] | None) -> Key | None:
        """The key of this representation; None if it may not be kept (read in a
        write transaction, or shown differently to different agents)."""
        snapshot = getattr(res, "snapshot", None)
        if snapshot is None or (options and (options.get("incl_inbound")
                                             or options.get("embed_children"))):
            return None
        return (snapshot, target, base, media_type,
                tuple(sorted(options.items())) if options else ())

    def body(self, key: Key | None, make: Callable[[], bytes]) -> bytes:
        """The body under ``key``, made by ``make()`` (and kept) if there is none."""
        if key is None or not self.max_bytes:
            return make()
        with self._lock:
            body = self._bodies.get(key)
            if body is not None:
                self._bodies.move_to_end(key)
                return body
        body = make()
        if len(body) <= self.max_bytes // 8:
            with self._lock:
                if key not in self._bodies:
                    self._bodies[key] = body
                    self._size += len(body)
                while self._size > self.max_bytes:
                    _, old = self._bodies.popitem(last=False)
                    self._size -= len(old)
        return body

    def __len__(self) -> int:
        return len(self._bodies)

    @property
    def size(self) -> int:
        """Bytes kept."""
        return self._size
