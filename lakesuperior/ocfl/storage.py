"""OCFL itself (https://ocfl.io, versions 1.0 and 1.1): the storage root, the
0004 hashed n-tuple layout, object inventories and their sidecars, and the
logical-path-to-content-path mapping Fedora 6 uses on Linux.

Nothing here knows about Fedora's resources (``ocfl.fedora``) or this
repository (``ocfl.export``, ``ocfl.imports``). Bad input is an ``OcflError``
naming the object and the file.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from json.encoder import encode_basestring as _json_string
from typing import Any, BinaryIO

from lakesuperior.exceptions import OcflError
from lakesuperior.http.digests import ALGORITHMS
from lakesuperior.ocfl.filesink import FileSink, put_file

__all__ = ["OCFL_VERSIONS", "DIGESTS", "LAYOUT", "MUTABLE_HEAD", "StorageRoot",
           "Inventory", "Version", "object_path", "content_path", "create_root",
           "open_root", "json_bytes", "read_inventory", "read_file", "read_at_most",
           "hash_file", "iso_instant"]

OCFL_VERSIONS = ("1.1", "1.0")
#: Inventory digest algorithms this code writes and reads (hashlib names): the two
#: strongest of ``http.digests.ALGORITHMS``, the two OCFL allows (sha512 first).
DIGESTS = ALGORITHMS[:2]
LAYOUT = "0004-hashed-n-tuple-storage-layout"
MUTABLE_HEAD = "0005-mutable-head"
#: Object extensions an object may carry that the import understands.
OBJECT_EXTENSIONS = frozenset((MUTABLE_HEAD,))
_LAYOUT_CONFIG = {"extensionName": LAYOUT, "digestAlgorithm": "sha256", "tupleSize": 3,
                  "numberOfTuples": 3, "shortObjectRoot": False}
_VERSION_DIR = re.compile(r"v([1-9][0-9]*)")
_CHUNK = 1 << 20
_BAD_SEGMENTS = frozenset(("", ".", ".."))   # segments a logical path may not hold
_READ = os.O_RDONLY | os.O_CLOEXEC


def inventory_type(version: str) -> str:
    return f"https://ocfl.io/{version}/spec/#inventory"


def iso_instant(when: datetime) -> str:
    """``2024-01-31T12:00:00Z`` (fraction only when there is one, in 3 or 6 digits), as
    Java's ``DateTimeFormatter.ISO_INSTANT`` writes an ``Instant``."""
    when = when.astimezone(UTC)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if when.microsecond:
        frac = f"{when.microsecond:06d}"
        text += "." + (frac[:3] if frac.endswith("000") else frac)
    return text + "Z"


def parse_instant(text: Any, where: str) -> datetime:
    """An RFC 3339 / ISO 8601 date-time with an offset; ``OcflError`` naming ``where``."""
    if not isinstance(text, str):
        raise OcflError(f"{where}: a date-time must be a string, not {text!r:.60}")
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise OcflError(f"{where}: {text!r:.60} is not an ISO 8601 date-time") from None
    if when.tzinfo is None:
        raise OcflError(f"{where}: the date-time {text!r:.60} has no time zone")
    return when.astimezone(UTC)


# --- paths ---------------------------------------------------------------------------

def object_path(object_id: str) -> str:
    """The object's directory under the storage root (0004: sha256, 3 tuples of 3)."""
    h = hashlib.sha256(object_id.encode("utf-8")).hexdigest()
    return f"{h[0:3]}/{h[3:6]}/{h[6:9]}/{h}"


def _escape_byte(b: int) -> str:
    return f"%{b:02x}"


def content_path(logical: str) -> str:
    """The content path of a logical path, as ocfl-java's Linux percent-encoding
    mapper (Fedora 6's default on Linux) makes it: control characters (U+0000-U+001F,
    U+007F-U+00A0), the space and ``%`` are percent-encoded (UTF-8, lower-case hex)."""
    out = []
    for ch in logical:
        code = ord(ch)
        if code <= 0x20 or 0x7F <= code <= 0xA0 or ch == "%":
            out.append("".join(_escape_byte(b) for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def check_logical_path(path: Any, where: str) -> str:
    """A logical path as OCFL allows it (relative, no empty, ``.`` or ``..`` segments)."""
    if not isinstance(path, str) or not path:
        raise OcflError(f"{where}: a path must be a non-empty string, not {path!r:.60}")
    if path[0] == "/" or path[-1] == "/" or not _BAD_SEGMENTS.isdisjoint(path.split("/")):
        raise OcflError(f"{where}: invalid path {path!r:.200}")
    return path


# --- JSON ------------------------------------------------------------------------------

def json_bytes(data: Any) -> bytes:
    """``data`` as JSON with a 2-space indent, UTF-8, and a final newline: the bytes
    of ``json.dumps(data, indent=2, ensure_ascii=False) + "\n"``, made without the
    json module's pure-Python indenting encoder (an inventory per object)."""
    parts: list[str] = []
    _indented(data, "\n", parts)
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def _indented(data: Any, pad: str, parts: list[str]) -> None:
    if isinstance(data, str):
        parts.append(_json_string(data))
    elif isinstance(data, dict):
        if not data:
            parts.append("{}")
            return
        inner = pad + "  "
        sep = "{" + inner
        for key, value in data.items():
            if not isinstance(key, str):
                raise TypeError(f"JSON keys here are strings, not {key!r:.40}")
            if isinstance(value, str):     # most values: no call for them
                parts.append(sep + _json_string(key) + ": " + _json_string(value))
            else:
                parts.append(sep + _json_string(key) + ": ")
                _indented(value, inner, parts)
            sep = "," + inner
        parts.append(pad + "}")
    elif isinstance(data, list | tuple):
        if not data:
            parts.append("[]")
            return
        inner = pad + "  "
        sep = "[" + inner
        for value in data:
            if isinstance(value, str):
                parts.append(sep + _json_string(value))
            else:
                parts.append(sep)
                _indented(value, inner, parts)
            sep = "," + inner
        parts.append(pad + "]")
    else:
        parts.append(json.dumps(data))


def hash_file(fh: BinaryIO, algorithm: str) -> tuple[str, int]:
    """(hex digest, size) of what is left to read in ``fh``."""
    h = hashlib.new(algorithm)
    size = 0
    while chunk := fh.read(_CHUNK):
        h.update(chunk)
        size += len(chunk)
    return h.hexdigest(), size


def read_file(path: str) -> bytes:
    """The bytes of the file ``path``, read with the system calls alone (an import
    reads several small files per object: no file object, buffer or ``fstat``);
    ``OSError`` as ``open`` raises it (``FileNotFoundError``, ``IsADirectoryError``)."""
    fd = os.open(path, _READ)
    try:
        chunks = []
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_at_most(path: str, limit: int) -> bytes | None:
    """The bytes of the file ``path`` if it holds at most ``limit`` bytes (None if
    it holds more, or cannot be read): at most ``limit + 1`` bytes are read."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return None
    try:
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if size > limit else b"".join(chunks)


# --- the storage root -----------------------------------------------------------------

@dataclass
class StorageRoot:
    """An OCFL storage root on disk with the 0004 layout."""

    path: str
    version: str
    #: The 0004 layout's first-level directories known to exist (at most 4,096,
    #: shared by many objects): made once each. Those below are as many as the
    #: objects, nearly all new: made with a ``mkdir`` each, not remembered.
    _made: set[str] = field(default_factory=set, repr=False, compare=False)

    def object_dir(self, object_id: str) -> str:
        return os.path.join(self.path, object_path(object_id))

    def make_object_dir(self, object_id: str, sink: FileSink) -> str:
        """Have ``sink`` make the object's directory (it may exist) and the n-tuple
        directories above it, with one ``mkdir`` for each (none for a known first
        level); its path."""
        rel = object_path(object_id)
        end = rel.find("/")
        top = rel[:end]
        if top not in self._made:
            sink.mkdir(os.path.join(self.path, top))
            self._made.add(top)
        while (end := rel.find("/", end + 1)) != -1:
            sink.mkdir(os.path.join(self.path, rel[:end]))
        path = os.path.join(self.path, rel)
        sink.mkdir(path)
        return path

    def objects(self) -> Iterator[str]:
        """The directories of the objects in the root (those with an object
        declaration), in a stable order (as ``os.walk`` with its directories
        sorted: symbolic links to directories are not followed); the root's
        ``extensions`` are skipped."""
        yield from _object_dirs(self.path, skip="extensions")


def _object_dirs(path: str, skip: str | None = None) -> Iterator[str]:
    """``path`` if it holds an object declaration, else the object directories
    below it, depth first in name order (``skip``: a directory name not entered)."""
    dirs = []
    declared = False
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if not is_dir:
                    declared = declared or entry.name.startswith("0=ocfl_object_")
                elif entry.name != skip and not entry.is_symlink():
                    dirs.append(entry.name)
    except OSError:
        return              # as os.walk: a directory that cannot be listed is passed over
    if declared:
        yield path
        return
    dirs.sort()
    for name in dirs:
        yield from _object_dirs(os.path.join(path, name))


def create_root(path: str, version: str) -> StorageRoot:
    """Declare a new OCFL storage root in the empty directory ``path``."""
    if version not in OCFL_VERSIONS:
        raise OcflError(f"Unknown OCFL version {version!r}: give one of "
                        f"{', '.join(OCFL_VERSIONS)}")
    put_file(os.path.join(path, f"0=ocfl_{version}"), f"ocfl_{version}\n".encode())
    put_file(os.path.join(path, "ocfl_layout.json"), json_bytes({
        "extension": LAYOUT,
        "description": "OCFL object identifiers are hashed and encoded as lowercase hex "
                       "strings. These digests are then divided into N n-tuple segments, "
                       "which are used to create nested paths under the OCFL storage root."}))
    os.mkdir(os.path.join(path, "extensions"))
    os.mkdir(os.path.join(path, "extensions", LAYOUT))
    put_file(os.path.join(path, "extensions", LAYOUT, "config.json"), json_bytes(_LAYOUT_CONFIG))
    return StorageRoot(path, version)


def open_root(path: str) -> StorageRoot:
    """An existing storage root this code can read: OCFL 1.0 or 1.1, the 0004 layout
    in Fedora's configuration; ``OcflError`` saying what is not understood."""
    if not os.path.isdir(path):
        raise OcflError(f"{path} is not a directory")
    names = os.listdir(path)
    decl = [n for n in names if n.startswith("0=")]
    if len(decl) != 1:
        raise OcflError(f"{path} is not an OCFL storage root (no single 0=ocfl_x.y file)")
    version = decl[0][len("0=ocfl_"):]
    if not decl[0].startswith("0=ocfl_") or version not in OCFL_VERSIONS:
        raise OcflError(f"{os.path.join(path, decl[0])}: unsupported storage root declaration "
                        f"(this reads OCFL {' and '.join(OCFL_VERSIONS)})")
    config_file = os.path.join(path, "extensions", LAYOUT, "config.json")
    layout_file = os.path.join(path, "ocfl_layout.json")
    if os.path.exists(layout_file):
        layout = _load_json(layout_file, layout_file)
        if not isinstance(layout, dict) or layout.get("extension") != LAYOUT:
            raise OcflError(f"{layout_file}: unsupported storage layout "
                            f"{layout.get('extension') if isinstance(layout, dict) else layout!r}"
                            f" (this reads {LAYOUT})")
    if os.path.isdir(os.path.join(path, "extensions")):
        for ext in sorted(os.listdir(os.path.join(path, "extensions"))):
            if ext != LAYOUT:
                raise OcflError(f"{os.path.join(path, 'extensions', ext)}: unknown storage "
                                f"root extension {ext!r}")
    if os.path.exists(config_file):
        config = _load_json(config_file, config_file)
        wanted = {k: v for k, v in _LAYOUT_CONFIG.items() if k != "extensionName"}
        if not isinstance(config, dict) or any(config.get(k, v) != v
                                               for k, v in wanted.items()):
            raise OcflError(f"{config_file}: this reads the 0004 layout with sha256, 3 tuples "
                            f"of 3 and full object roots, not {config!r:.200}")
    return StorageRoot(path, version)


def _load_json(path: str, where: str) -> Any:
    try:
        return json.loads(read_file(path).decode("utf-8"))
    except FileNotFoundError:
        raise OcflError(f"{where}: missing") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise OcflError(f"{where}: not valid JSON ({e})") from None


# --- inventories -------------------------------------------------------------------------

@dataclass
class Version:
    """One version of an inventory: when, and its state (logical path -> digest)."""

    created: datetime
    state: dict[str, str] = field(default_factory=dict)
    message: str | None = None
    user: dict[str, str] | None = None

    def as_json(self) -> dict[str, Any]:
        by_digest: dict[str, list[str]] = {}
        for path, digest in sorted(self.state.items()):
            by_digest.setdefault(digest, []).append(path)
        out: dict[str, Any] = {"created": iso_instant(self.created), "state": by_digest}
        if self.message is not None:
            out["message"] = self.message
        if self.user is not None:
            out["user"] = self.user
        return out


@dataclass
class Inventory:
    """An object's inventory: id, digest algorithm, manifest (digest -> content
    paths) and versions (oldest first)."""

    id: str
    algorithm: str
    ocfl_version: str
    manifest: dict[str, list[str]] = field(default_factory=dict)
    versions: list[Version] = field(default_factory=list)
    content_directory: str = "content"

    @property
    def head(self) -> str:
        return f"v{len(self.versions)}"

    def as_json(self, upto: int | None = None, also: str | None = None) -> dict[str, Any]:
        """The inventory as it was at version ``upto`` (1-based; default the head);
        ``also``: a prefix of content paths outside version directories (a mutable
        head's) that it lists too."""
        n = len(self.versions) if upto is None else upto
        prefixes = tuple(f"v{i}/" for i in range(1, n + 1)) + ((also,) if also else ())
        manifest = {d: sorted(p for p in paths if p.startswith(prefixes))
                    for d, paths in self.manifest.items()}
        out: dict[str, Any] = {
            "id": self.id, "type": inventory_type(self.ocfl_version),
            "digestAlgorithm": self.algorithm, "head": f"v{n}"}
        if self.content_directory != "content":
            out["contentDirectory"] = self.content_directory
        out["manifest"] = {d: p for d, p in sorted(manifest.items()) if p}
        out["versions"] = {f"v{i + 1}": v.as_json() for i, v in enumerate(self.versions[:n])}
        return out

    def encode(self, upto: int | None = None, also: str | None = None) -> tuple[bytes, bytes]:
        """The inventory file (``as_json``'s arguments) and its sidecar, as bytes."""
        body = json_bytes(self.as_json(upto, also))
        return body, f"{hashlib.new(self.algorithm, body).hexdigest()}  inventory.json\n".encode()

    def file_of(self, digest: str) -> str:
        """The first content path of ``digest`` (a path relative to the object)."""
        return self.manifest[digest][0]


def read_inventory(object_dir: str, where: str | None = None,
                   inventory_dir: str | None = None) -> Inventory:
    """Read and check the inventory in ``inventory_dir`` (default: the object root)
    against its sidecar; ``OcflError`` for anything broken."""
    base = inventory_dir or object_dir
    inv_file = os.path.join(base, "inventory.json")
    name = where or object_dir
    try:
        body = read_file(inv_file)
    except FileNotFoundError:
        raise OcflError(f"{name}: missing inventory {inv_file}") from None
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise OcflError(f"{name}: {inv_file} is not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise OcflError(f"{name}: {inv_file} is not a JSON object")
    algorithm = doc.get("digestAlgorithm")
    if algorithm not in DIGESTS:
        raise OcflError(f"{name}: {inv_file}: unsupported digestAlgorithm {algorithm!r:.40} "
                        f"(this reads {' and '.join(DIGESTS)})")
    sidecar = os.path.join(base, f"inventory.json.{algorithm}")
    try:
        expected = read_file(sidecar).decode("utf-8").split()
    except (FileNotFoundError, UnicodeDecodeError):
        raise OcflError(f"{name}: missing or unreadable inventory sidecar {sidecar}") from None
    actual = hashlib.new(algorithm, body).hexdigest()
    if not expected or expected[0].lower() != actual:
        raise OcflError(f"{name}: {inv_file} does not match its sidecar {sidecar} "
                        "(the inventory was changed or damaged)")
    return _inventory_of(doc, f"{name}: {inv_file}")


def _inventory_of(doc: dict[str, Any], where: str) -> Inventory:
    type_ = doc.get("type")
    version = next((v for v in OCFL_VERSIONS if type_ == inventory_type(v)), None)
    if version is None:
        raise OcflError(f"{where}: unsupported inventory type {type_!r:.80}")
    oid = doc.get("id")
    if not isinstance(oid, str) or not oid:
        raise OcflError(f"{where}: the inventory has no id")
    algorithm = doc["digestAlgorithm"]
    content_dir = doc.get("contentDirectory", "content")
    if not isinstance(content_dir, str) or not content_dir or "/" in content_dir \
            or content_dir in (".", ".."):
        raise OcflError(f"{where}: invalid contentDirectory {content_dir!r:.60}")
    manifest_doc = doc.get("manifest")
    versions_doc = doc.get("versions")
    if not isinstance(manifest_doc, dict) or not isinstance(versions_doc, dict):
        raise OcflError(f"{where}: the inventory needs a manifest and versions (objects)")
    manifest: dict[str, list[str]] = {}
    for digest, paths in manifest_doc.items():
        if not isinstance(paths, list) or not paths:
            raise OcflError(f"{where}: manifest entry {digest!r:.140} has no paths")
        manifest[digest.lower()] = [check_logical_path(p, where) for p in paths]
    nums = []
    for key in versions_doc:
        m = _VERSION_DIR.fullmatch(key)
        if m is None:
            raise OcflError(f"{where}: invalid version name {key!r:.40} (zero-padded version "
                            "names are not read)")
        nums.append(int(m.group(1)))
    if sorted(nums) != list(range(1, len(nums) + 1)) or not nums:
        raise OcflError(f"{where}: versions must be v1..vN without gaps")
    if doc.get("head") != f"v{len(nums)}":
        raise OcflError(f"{where}: head {doc.get('head')!r:.20} is not the last version "
                        f"v{len(nums)}")
    inv = Inventory(oid, algorithm, version, manifest, content_directory=content_dir)
    for n in range(1, len(nums) + 1):
        vdoc = versions_doc[f"v{n}"]
        vwhere = f"{where} version v{n}"
        if not isinstance(vdoc, dict) or not isinstance(vdoc.get("state"), dict):
            raise OcflError(f"{vwhere}: no state")
        state: dict[str, str] = {}
        for digest, paths in vdoc["state"].items():
            d = digest.lower()
            if d not in manifest:
                raise OcflError(f"{vwhere}: digest {digest:.140} of the state is not in "
                                "the manifest")
            if not isinstance(paths, list):
                raise OcflError(f"{vwhere}: state entry {digest:.140} is not a list")
            for p in paths:
                state[check_logical_path(p, vwhere)] = d
        user = vdoc.get("user") if isinstance(vdoc.get("user"), dict) else None
        message = vdoc.get("message") if isinstance(vdoc.get("message"), str) else None
        inv.versions.append(Version(parse_instant(vdoc.get("created"), vwhere), state,
                                    message, user))
    return inv


def object_extensions(object_dir: str, where: str, entries: list[str] | None = None
                      ) -> list[str]:
    """The object's extensions (``extensions/<name>``); ``OcflError`` for one the
    import does not understand. ``entries``: the names in ``object_dir``, if read."""
    ext_dir = os.path.join(object_dir, "extensions")
    there = os.path.isdir(ext_dir) if entries is None or "extensions" in entries else False
    names = sorted(os.listdir(ext_dir)) if there else []
    for name in names:
        if name not in OBJECT_EXTENSIONS:
            raise OcflError(f"{where}: unknown object extension {name!r} "
                            f"({os.path.join(ext_dir, name)})")
    return names


def check_object_declaration(object_dir: str, where: str,
                             entries: list[str] | None = None) -> str:
    """The OCFL version the object declares (``0=ocfl_object_1.x``); ``entries``:
    the names in ``object_dir``, if read."""
    names = os.listdir(object_dir) if entries is None else entries
    decl = [n for n in names if n.startswith("0=")]
    versions = [n[len("0=ocfl_object_"):] for n in decl if n.startswith("0=ocfl_object_")]
    if len(decl) != 1 or len(versions) != 1 or versions[0] not in OCFL_VERSIONS:
        raise OcflError(f"{where}: unsupported object declaration {decl!r:.80} in "
                        f"{object_dir}")
    return versions[0]
