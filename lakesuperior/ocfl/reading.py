"""Reading one Fedora 6 OCFL object: its inventory (the mutable head included),
every version's header files checked as Fedora checks them, and each file's
bytes checked against the inventory's digest.

``FedoraObject`` gives, per version, the resources it holds (``Entry``: headers,
content path, description and ACL). Anything it does not understand is an
``OcflError`` naming the object and the file; nothing is written here.

``FedoraObject.read_ahead`` parses its RDF files (the first half,
``fedora.fedora_ntriples``) and reads its small binaries in advance (in the
import's reader process, ``ocfl.readahead``): ``rdf`` and ``open`` then hand
over what was read, once each; what failed, or was not read ahead, they read
then, and fail as they would have.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, BinaryIO

from lakesuperior import rdfio
from lakesuperior.exceptions import LakesuperiorError, OcflError
from lakesuperior.model.uids import UriMap
from lakesuperior.ocfl import fedora
from lakesuperior.ocfl.objects import CURRENT_STATE
from lakesuperior.ocfl.storage import (
    MUTABLE_HEAD,
    Inventory,
    check_object_declaration,
    object_extensions,
    read_at_most,
    read_file,
    read_inventory,
)

__all__ = ["Entry", "VersionView", "FedoraObject"]

_HEAD_DIR = os.path.join("extensions", MUTABLE_HEAD, "head")
_MISSING = (FileNotFoundError, IsADirectoryError, NotADirectoryError)


@dataclass
class Entry:
    """A resource in one version: its headers and files (logical paths)."""

    headers: dict[str, Any]
    header_path: str
    description: dict[str, Any] | None = None
    acl: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return self.headers["id"]

    @property
    def deleted(self) -> bool:
        return self.headers.get("deleted") is True

    @property
    def binary(self) -> bool:
        return self.headers.get("interactionModel") == fedora.NON_RDF

    def fingerprint(self, state: dict[str, str]) -> tuple[Any, ...]:
        """What changes when the resource's own state changes (its ACL aside)."""
        desc = self.description or {}
        return (self.deleted, state.get(self.headers.get("contentPath") or ""),
                state.get(desc.get("contentPath") or ""), self.headers.get("mimeType"),
                self.headers.get("filename"), self.headers.get("externalUrl"))


@dataclass
class VersionView:
    """One version of the object: its date, whether it is a current state that is
    not a Memento (the mutable head, or a version marked ``CURRENT_STATE``), its
    files and the resources in it."""

    name: str
    created: datetime
    mutable: bool
    state: dict[str, str]
    entries: dict[str, Entry] = field(default_factory=dict)

    def when(self, entry: Entry) -> datetime:
        """The Memento-Datetime of ``entry`` in this version: the version's own date,
        as Fedora's TimeMap gives it (not the header's ``mementoCreatedDate``, which
        Fedora stamps a moment before it commits the version)."""
        return self.created


class FedoraObject:
    """A Fedora 6 OCFL object in ``object_dir``, read and checked."""

    def __init__(self, object_dir: str, where: str):
        self.dir = object_dir
        self.where = where
        entries = os.listdir(object_dir)
        check_object_declaration(object_dir, where, entries)
        extensions = object_extensions(object_dir, where, entries)
        self.inv = read_inventory(object_dir, where)
        self.committed = len(self.inv.versions)
        if MUTABLE_HEAD in extensions and os.path.isfile(
                os.path.join(object_dir, _HEAD_DIR, "inventory.json")):
            head = read_inventory(object_dir, f"{where} (mutable head)",
                                  os.path.join(object_dir, _HEAD_DIR))
            if head.id != self.inv.id or len(head.versions) <= self.committed:
                raise OcflError(f"{where}: the mutable head inventory "
                                f"{os.path.join(_HEAD_DIR, 'inventory.json')} does not "
                                "extend the object's inventory")
            self.inv = head
        self.id = self.inv.id
        self.root_headers: dict[str, Any] | None = None
        self._uids: dict[str, str] = {}      # the object's ids read, and their uids
        self._valid_ids: set[str] = set()    # ids (and parents) that passed Fedora's checks
        # What ``read_ahead`` read, by digest: RDF files parsed (canonical N-Triples
        # text), binaries' bytes.
        self._parsed: dict[str, bytes] = {}
        self._bytes: dict[str, bytes] = {}

    def uid_of(self, rid: Any, where: str) -> str:
        """``fedora.uid_of_id(rid, where)``, each id of the object worked out once."""
        uid = self._uids.get(rid) if isinstance(rid, str) else None
        if uid is None:
            uid = self._uids[rid] = fedora.uid_of_id(rid, where)
        return uid

    @property
    def inventory(self) -> Inventory:
        return self.inv

    # -- files ---------------------------------------------------------------------------

    def _missing(self, rel: str, logical: str, version: str) -> OcflError:
        return OcflError(f"{self.where}: the content file {rel} of {logical} ({version}) "
                         "is missing")

    def _open(self, digest: str, logical: str, version: str) -> BinaryIO:
        rel = self.inv.manifest[digest][0]
        try:
            return open(os.path.join(self.dir, rel), "rb")
        except _MISSING:
            raise self._missing(rel, logical, version) from None

    def read(self, state: dict[str, str], logical: str, version: str) -> bytes:
        """The bytes of a small file (RDF, headers), checked against its digest."""
        digest = state[logical]
        rel = self.inv.manifest[digest][0]
        try:
            data = read_file(os.path.join(self.dir, rel))
        except _MISSING:
            raise self._missing(rel, logical, version) from None
        if hashlib.new(self.inv.algorithm, data).hexdigest() != digest:
            raise OcflError(f"{self.where}: {self.inv.manifest[digest][0]} ({logical}, "
                            f"{version}) does not match its {self.inv.algorithm} digest in "
                            "the inventory")
        return data

    def open(self, state: dict[str, str], logical: str, version: str) -> BinaryIO:
        """A stream of a content file (the caller checks its digest as it reads)."""
        data = self._bytes.pop(state[logical], None)
        if data is not None:
            return io.BytesIO(data)
        return self._open(state[logical], logical, version)

    def rdf(self, view: VersionView, logical: str, urimap: UriMap) -> rdfio.Parsed:
        """The N-Triples file ``logical`` of ``view`` checked against its digest and
        parsed (``fedora.from_fedora``); ``OcflError`` naming the file if it is not
        N-Triples."""
        written = self._parsed.pop(view.state[logical], None)
        try:
            if written is None:
                written = fedora.fedora_ntriples(self.read(view.state, logical, view.name))
            return fedora.from_canonical(written, urimap)
        except LakesuperiorError as e:
            raise self._not_rdf(view, logical, e) from None

    def _not_rdf(self, view: VersionView, logical: str, e: Exception) -> OcflError:
        return OcflError(f"{self.where}: {self.file_name(view.state, logical)} "
                         f"({logical}, {view.name}) is not valid N-Triples: {e}")

    def read_ahead(self, versions: list[VersionView], *, budget: int, inline: int) -> None:
        """Parse the RDF files of ``versions`` (the first half,
        ``fedora.fedora_ntriples``) and read the binaries of at most ``inline``
        bytes, each content once, until ``budget`` bytes are read: what ``rdf`` and
        ``open`` hand over later, once each. A file that cannot be read or parsed
        is left for them (they fail as they would have)."""
        spent = 0
        for view in versions:
            for entry in view.entries.values():
                h = entry.headers
                if entry.deleted or h.get("externalHandling") is not None:
                    continue
                rdf = [] if entry.binary else [h.get("contentPath")]
                rdf += [part.get("contentPath") for part in (entry.description, entry.acl)
                        if part is not None]
                for path in rdf:
                    spent += self._parse_ahead(view, path)
                if entry.binary:
                    spent += self._read_ahead(view, h.get("contentPath"), inline)
                if spent >= budget:
                    return

    def _parse_ahead(self, view: VersionView, path: Any) -> int:
        """Parse the RDF file ``path`` of ``view`` into ``_parsed``; the bytes read."""
        digest = view.state.get(path) if isinstance(path, str) else None
        if digest is None or digest in self._parsed:
            return 0
        try:
            data = self.read(view.state, path, view.name)
            self._parsed[digest] = fedora.fedora_ntriples(data)
        except LakesuperiorError:       # OcflError, RdfParseError: left for ``rdf``
            return 0
        return len(data)

    def _read_ahead(self, view: VersionView, path: Any, inline: int) -> int:
        """Read the binary ``path`` of ``view`` into ``_bytes`` if it holds at most
        ``inline`` bytes; the bytes read."""
        digest = view.state.get(path) if isinstance(path, str) else None
        if digest is None or digest in self._bytes:
            return 0
        data = read_at_most(os.path.join(self.dir, self.inv.manifest[digest][0]), inline)
        if data is None:
            return 0
        self._bytes[digest] = data
        return len(data)

    def file_name(self, state: dict[str, str], logical: str) -> str:
        return self.inv.manifest[state[logical]][0]

    # -- versions ----------------------------------------------------------------------

    def versions(self) -> list[VersionView]:
        """Every version, oldest first, with its resources (headers checked)."""
        out = []
        for i, v in enumerate(self.inv.versions):
            name = f"v{i + 1}"
            view = VersionView(name, v.created,
                               i >= self.committed or v.message == CURRENT_STATE, v.state)
            self._entries(view)
            out.append(view)
        return out

    def _headers(self, view: VersionView, path: str) -> dict[str, Any]:
        data = self.read(view.state, path, view.name)
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise OcflError(f"{self.where}: header file {path} ({view.name}) is not valid "
                            f"JSON: {e}") from None
        if not isinstance(doc, dict):
            raise OcflError(f"{self.where}: header file {path} ({view.name}) is not a JSON "
                            "object")
        return doc

    def _entries(self, view: VersionView) -> None:
        state = view.state
        if fedora.ROOT_HEADER not in state:
            raise OcflError(f"{self.where}: {view.name} has no root header file "
                            f"{fedora.ROOT_HEADER}")
        root = self._headers(view, fedora.ROOT_HEADER)
        if root.get("id") != self.id:
            raise OcflError(f"{self.where}: {fedora.ROOT_HEADER} ({view.name}) names the id "
                            f"{root.get('id')!r:.200}, not the object's {self.id!r:.200}")
        self.uid_of(self.id, f"{self.where}: {fedora.ROOT_HEADER}")
        self.root_headers = root
        docs = [(path, root if path == fedora.ROOT_HEADER else self._headers(view, path))
                for path in sorted(p for p in state if p.startswith(fedora.HEADER_DIR))]
        binaries = {h.get("id") for _, h in docs if h.get("interactionModel") == fedora.NON_RDF}
        seen: set[str] = set()
        parts: list[tuple[str, dict[str, Any]]] = []
        for path, h in docs:
            rid = h.get("id")
            model = h.get("interactionModel")
            where = f"{self.where}: {path} ({view.name})"
            owner_id = rid.rsplit("/", 1)[0] if model in (fedora.ACL, fedora.DESCRIPTION) \
                and isinstance(rid, str) else rid
            self.uid_of(owner_id, where)
            expected = self._paths(rid, model, binaries)
            if expected is not None and expected[0] != path:
                raise OcflError(f"{self.where}: header file {path} ({view.name}) should be at "
                                f"{expected[0]} for {rid}")
            problems = fedora.validate_headers(h, root, expected[1] if expected else None,
                                               valid_ids=self._valid_ids)
            if problems:
                raise OcflError(f"{self.where}: header file {path} ({view.name}) fails "
                                f"Fedora's checks: {'; '.join(problems)}")
            content = h.get("contentPath")
            if not h.get("deleted") and h.get("externalHandling") is None:
                if content not in state:
                    raise OcflError(f"{self.where}: header file {path} ({view.name}) names "
                                    f"the content {content!r:.200}, which is not in the "
                                    "version")
                seen.add(content)
            seen.add(path)
            if model in (fedora.ACL, fedora.DESCRIPTION):
                parts.append((path, h))
            else:
                view.entries[str(rid)] = Entry(h, path)
        for path, h in parts:
            owner = view.entries.get(h.get("parent") or "")
            if owner is None:
                raise OcflError(f"{self.where}: header file {path} ({view.name}): "
                                f"{h.get('id')} has no parent resource in the object")
            if h["interactionModel"] == fedora.ACL:
                owner.acl = h
            else:
                owner.description = h
        for entry in view.entries.values():
            if entry.binary and not entry.deleted and entry.description is None:
                raise OcflError(f"{self.where}: {entry.header_path} ({view.name}): the binary "
                                f"{entry.id} has no description")
        extra = sorted(set(state) - seen)
        if extra:
            raise OcflError(f"{self.where}: {view.name} holds the file {extra[0]!r:.200}, "
                            "which no header names")

    def _paths(self, rid: Any, model: Any, binaries: set[Any]) -> tuple[str, str] | None:
        """(header path, content path) Fedora puts the resource ``rid`` at (a binary's
        ACL beside its bytes, a container's in its directory)."""
        if not isinstance(rid, str) or not rid.startswith(self.id):
            return None
        try:
            if model in (fedora.ACL, fedora.DESCRIPTION):
                owner, part = rid.rsplit("/", 1)[0], "acl" if model == fedora.ACL else "desc"
                return (fedora.header_path(self.id, owner, part),
                        fedora.content_file(self.id, owner, part,
                                            container=owner not in binaries))
            return (fedora.header_path(self.id, rid),
                    fedora.content_file(self.id, rid, container=model != fedora.NON_RDF))
        except ValueError:
            return None
