"""Writing one OCFL object: its versions one after the other, each file's digest
computed as it is written, content stored once (the manifest deduplicates it).

``ObjectWriter`` knows OCFL, not Fedora: ``ocfl.export`` hands it logical paths
with bytes (RDF, headers) or binary content from the repository's binary store.
Memory holds one file's bytes at a time and the object's inventory.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from datetime import datetime
from typing import Any, BinaryIO
from urllib.parse import quote

from lakesuperior.exceptions import OcflError
from lakesuperior.ocfl.storage import (
    MUTABLE_HEAD,
    Inventory,
    Version,
    content_path,
    write_file,
)

__all__ = ["ObjectWriter", "HEAD_DIR", "CURRENT_STATE", "drop_head"]

HEAD_DIR = f"extensions/{MUTABLE_HEAD}/head"
#: The message of a version that holds a current state which was not a version
#: (Memento) here: the first version of an object without any (OCFL needs one).
#: The import makes no Memento of it; Fedora lists it as one.
CURRENT_STATE = "The current state exported by Lakesuperior (not a version)"
REVISIONS_DIR = f"extensions/{MUTABLE_HEAD}/revisions"


def drop_head(object_dir: str) -> None:
    """Remove an object's mutable head (an incremental export writes it anew)."""
    shutil.rmtree(os.path.join(object_dir, "extensions", MUTABLE_HEAD), ignore_errors=True)
    ext = os.path.join(object_dir, "extensions")
    if os.path.isdir(ext) and not os.listdir(ext):
        os.rmdir(ext)

_CHUNK = 1 << 20


class ObjectWriter:
    """Adds versions to an OCFL object in ``object_dir`` (new, or an existing one
    whose ``inventory`` is given): ``add_bytes`` / ``add_stream`` the files of the
    next version, then ``commit``. The object's root inventory is replaced last
    (atomically), so an interrupted write leaves the object at its previous head."""

    def __init__(self, object_dir: str, inventory: Inventory):
        self.dir = object_dir
        self.inv = inventory
        self.state: dict[str, str] = {}
        self.bytes_written = 0
        self.files_written = 0
        self.mutable = False

    def start_head(self) -> None:
        """The files added next are the object's mutable head (extension 0005: the
        current state, which is not a version), written by ``commit_head``."""
        self.mutable = True

    @property
    def _next(self) -> int:
        return len(self.inv.versions) + 1

    def _store(self, digest: str, logical: str) -> str | None:
        """The content path (relative to the object) a new file of ``digest`` gets,
        or None if the manifest already holds that content."""
        if digest in self.inv.manifest:
            return None
        prefix = f"{HEAD_DIR}/content/r1" if self.mutable else \
            f"v{self._next}/{self.inv.content_directory}"
        rel = f"{prefix}/{content_path(logical)}"
        self.inv.manifest[digest] = [rel]
        return rel

    def _target(self, rel: str) -> str:
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return path

    def add_bytes(self, logical: str, data: bytes) -> str:
        """Add a file of the next version; return its digest."""
        digest = hashlib.new(self.inv.algorithm, data).hexdigest()
        rel = self._store(digest, logical)
        if rel is not None:
            with open(self._target(rel), "wb") as fh:
                fh.write(data)
            self.bytes_written += len(data)
            self.files_written += 1
        self.state[logical] = digest
        return digest

    def add_stream(self, logical: str, opener: Any, known: str | None, what: str) -> str:
        """Add a file whose bytes ``opener()`` streams; ``known``: its digest in the
        inventory's algorithm if recorded (the copy is checked against it, and content
        already in the object is not read again). ``what`` names it in errors."""
        algo = self.inv.algorithm
        if known is None:
            with opener() as fh:
                known = _hash(fh, algo)
        rel = self._store(known, logical)
        if rel is not None:
            h = hashlib.new(algo)
            with opener() as src, open(self._target(rel), "wb") as dst:
                while chunk := src.read(_CHUNK):
                    h.update(chunk)
                    dst.write(chunk)
                    self.bytes_written += len(chunk)
            self.files_written += 1
            if h.hexdigest() != known:
                raise OcflError(f"{what}: the stored content does not match its recorded "
                                f"{algo} digest {known} (check-fixity names the damage)")
        self.state[logical] = known
        return known

    def commit(self, created: datetime, user: str | None, message: str) -> None:
        """Make the files added since the last commit the next version."""
        n = self._next
        self.inv.versions.append(Version(created, self.state, message, _user(user)))
        self.state = {}
        self.inv.write(self.dir, n)

    def commit_head(self, created: datetime, user: str | None, message: str) -> None:
        """Write the files added since ``start_head`` as the mutable head: revision
        r1 in ``extensions/0005-mutable-head``, its inventory (the committed versions
        and the head) beside it; the object's own inventory is left as it is."""
        head = Inventory(self.inv.id, self.inv.algorithm, self.inv.ocfl_version,
                         self.inv.manifest, [*self.inv.versions,
                                             Version(created, self.state, message,
                                                     _user(user))],
                         self.inv.content_directory)
        head_dir = os.path.join(self.dir, HEAD_DIR)
        doc = head.as_json(also=HEAD_DIR + "/")
        body = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        write_file(os.path.join(head_dir, "inventory.json"), body)
        write_file(os.path.join(head_dir, f"inventory.json.{self.inv.algorithm}"),
                   f"{hashlib.new(self.inv.algorithm, body).hexdigest()}  inventory.json\n"
                   .encode())
        write_file(os.path.join(self.dir, REVISIONS_DIR, "r1"), b"r1")
        # The root inventory's sidecar when the head was made (ocfl-java checks that
        # the object was not changed under its mutable head).
        sidecar = f"inventory.json.{self.inv.algorithm}"
        with open(os.path.join(self.dir, sidecar), "rb") as fh:
            write_file(os.path.join(self.dir, "extensions", MUTABLE_HEAD, "root-" + sidecar),
                       fh.read())
        self.state = {}

    def discard(self) -> None:
        """Remove the version directories written but not committed (an error)."""
        n = self._next
        shutil.rmtree(os.path.join(self.dir, f"v{n}"), ignore_errors=True)
        if self.mutable:
            shutil.rmtree(os.path.join(self.dir, "extensions", MUTABLE_HEAD),
                          ignore_errors=True)
        self.inv.manifest = {d: p for d, p in self.inv.manifest.items()
                             if not p[0].startswith((f"v{n}/", HEAD_DIR))}
        self.state = {}


def _user(name: str | None) -> dict[str, str] | None:
    """An inventory's user: the agent's name, and as its address the agent's IRI
    (a WebID) or a URN made of its name."""
    if not name:
        return None
    address = name if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", name) else \
        "urn:lakesuperior:agent:" + quote(name, safe="")
    return {"name": name, "address": address}


def _hash(fh: BinaryIO, algo: str) -> str:
    h = hashlib.new(algo)
    while chunk := fh.read(_CHUNK):
        h.update(chunk)
    return h.hexdigest()
