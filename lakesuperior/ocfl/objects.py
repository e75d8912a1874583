"""Writing one OCFL object: its versions one after the other, each file's digest
computed as it is written, content stored once (the manifest deduplicates it).

``ObjectWriter`` knows OCFL, not Fedora: ``ocfl.export`` hands it logical paths
with bytes (RDF, headers) or binary content from the repository's binary store.
Memory holds one file's bytes at a time and the object's inventory.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from datetime import datetime
from typing import Any, BinaryIO
from urllib.parse import quote

from lakesuperior.exceptions import OcflError
from lakesuperior.ocfl.filesink import FileSink, new_file, write_all
from lakesuperior.ocfl.storage import MUTABLE_HEAD, Inventory, Version, content_path

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
    """Adds versions to an OCFL object in ``object_dir`` (``new``: just made, empty;
    else an existing one whose ``inventory`` is given): ``add_bytes`` / ``add_stream``
    the files of the next version, then ``commit``; ``finish`` at the end. The
    object's root inventory is written last: an existing object's replaced
    (atomically) at each commit, so an interrupted write leaves it at its previous
    head; a new object's once, by ``finish`` (without it the directory is no
    object). Each directory is made once, each file written with one open, all
    through ``sink`` (in order, behind the caller)."""

    def __init__(self, object_dir: str, inventory: Inventory, sink: FileSink, *, new: bool):
        self.dir = object_dir
        self.inv = inventory
        self.sink = sink
        self.new = new
        self.state: dict[str, str] = {}
        self.bytes_written = 0
        self.files_written = 0
        self.mutable = False
        self._dirs = {""}           # directories known to exist, relative to the object
        #: A new object's root inventory and sidecar, written by ``finish``.
        self._pending: tuple[bytes, bytes] | None = None
        #: The root inventory's sidecar, once written or read.
        self._root_sidecar: bytes | None = None
        if new:
            sink.put(os.path.join(object_dir, f"0=ocfl_object_{inventory.ocfl_version}"),
                     f"ocfl_object_{inventory.ocfl_version}\n".encode())
        else:
            # what an interrupted export may have left beyond the head
            shutil.rmtree(os.path.join(object_dir, f"v{self._next}"), ignore_errors=True)

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

    def _dir(self, rel: str) -> None:
        """Make the directory ``rel`` (relative to the object) and those above it,
        unless known to exist; one ``mkdir`` each (an existing object's may be there)."""
        if rel in self._dirs:
            return
        self._dir(rel.rpartition("/")[0])
        self.sink.mkdir(os.path.join(self.dir, rel))
        self._dirs.add(rel)

    def _target(self, rel: str) -> str:
        self._dir(rel.rpartition("/")[0])
        return os.path.join(self.dir, rel)

    def add_bytes(self, logical: str, data: bytes) -> str:
        """Add a file of the next version; return its digest."""
        digest = hashlib.new(self.inv.algorithm, data).hexdigest()
        rel = self._store(digest, logical)
        if rel is not None:
            self.sink.put(self._target(rel), data)
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
            with opener() as src:
                first = src.read(_CHUNK)
                h.update(first)
                rest = src.read(_CHUNK)
                if not rest:        # a file of one chunk (most): written behind
                    self.sink.put(self._target(rel), first)
                    self.bytes_written += len(first)
                else:               # streamed here, once what is before it is written
                    target = self._target(rel)
                    self.sink.wait()
                    self._copy(target, src, h, first, rest)
            self.files_written += 1
            if h.hexdigest() != known:
                raise OcflError(f"{what}: the stored content does not match its recorded "
                                f"{algo} digest {known} (check-fixity names the damage)")
        self.state[logical] = known
        return known

    def _copy(self, target: str, src: BinaryIO, h: Any, first: bytes, chunk: bytes) -> None:
        fd = new_file(target)
        try:
            write_all(fd, first)
            self.bytes_written += len(first)
            while chunk:
                h.update(chunk)
                write_all(fd, chunk)
                self.bytes_written += len(chunk)
                chunk = src.read(_CHUNK)
        finally:
            os.close(fd)

    def _write_inventory(self, where: str, files: tuple[bytes, bytes], *,
                         replace: bool) -> None:
        """An inventory and its sidecar (``Inventory.encode``) into the directory
        ``where``; ``replace``: files that readers may see (an existing object's root
        inventory), each replaced whole by a rename: the two renames are the only
        window in which an interruption leaves an inventory that disagrees with its
        sidecar."""
        write = self.sink.replace if replace else self.sink.put
        write(os.path.join(where, "inventory.json"), files[0])
        write(os.path.join(where, f"inventory.json.{self.inv.algorithm}"), files[1])

    def commit(self, created: datetime, user: str | None, message: str) -> None:
        """Make the files added since the last commit the next version. The object
        root's inventory follows: at once for an existing object, at ``finish`` for
        a new one (written once, whatever its number of versions)."""
        n = self._next
        self.inv.versions.append(Version(created, self.state, message, _user(user)))
        self.state = {}
        files = self.inv.encode(n)
        self._dir(f"v{n}")
        self._write_inventory(os.path.join(self.dir, f"v{n}"), files, replace=False)
        self._root_sidecar = files[1]
        if self.new:
            self._pending = files
        else:
            self._write_inventory(self.dir, files, replace=True)

    def finish(self) -> None:
        """Write what is left of the object: a new object's root inventory."""
        if self._pending is not None:
            self._write_inventory(self.dir, self._pending, replace=False)
            self._pending = None

    def commit_head(self, created: datetime, user: str | None, message: str) -> None:
        """Write the files added since ``start_head`` as the mutable head: revision
        r1 in ``extensions/0005-mutable-head``, its inventory (the committed versions
        and the head) beside it; the object's own inventory is left as it is."""
        self.finish()
        head = Inventory(self.inv.id, self.inv.algorithm, self.inv.ocfl_version,
                         self.inv.manifest, [*self.inv.versions,
                                             Version(created, self.state, message,
                                                     _user(user))],
                         self.inv.content_directory)
        self._dir(HEAD_DIR)
        self._dir(REVISIONS_DIR)
        replace = not self.new
        self._write_inventory(os.path.join(self.dir, HEAD_DIR),
                              head.encode(also=HEAD_DIR + "/"), replace=replace)
        write = self.sink.replace if replace else self.sink.put
        write(os.path.join(self.dir, REVISIONS_DIR, "r1"), b"r1")
        # The root inventory's sidecar when the head was made (ocfl-java checks that
        # the object was not changed under its mutable head).
        sidecar = f"inventory.json.{self.inv.algorithm}"
        if self._root_sidecar is None:
            with open(os.path.join(self.dir, sidecar), "rb") as fh:
                self._root_sidecar = fh.read()
        write(os.path.join(self.dir, "extensions", MUTABLE_HEAD, "root-" + sidecar),
              self._root_sidecar)
        self.state = {}

    def discard(self) -> None:
        """Remove the version directories written but not committed (an error),
        once what was asked of the sink before is written (or failed)."""
        try:
            self.sink.wait()
        except Exception:       # the error being handled, or one that stopped the sink
            pass
        n = self._next
        shutil.rmtree(os.path.join(self.dir, f"v{n}"), ignore_errors=True)
        if self.mutable:
            shutil.rmtree(os.path.join(self.dir, "extensions", MUTABLE_HEAD),
                          ignore_errors=True)
        self.inv.manifest = {d: p for d, p in self.inv.manifest.items()
                             if not p[0].startswith((f"v{n}/", HEAD_DIR))}
        self.state = {}
        self._dirs = {""}


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
