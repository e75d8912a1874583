"""Request paths -> resource uids and Fedora ``fcr:`` endpoints. Pure functions, no Flask.

A uid is the path of a resource in normalized URI form (RFC 3986 section
6.2.2): percent-encodings of unreserved ASCII characters are decoded, every
other character that may not appear as such in a path segment (non-ASCII
characters included, as UTF-8) stays or is made percent-encoded with
upper-case hex. So ``/rest/caf%c3%a9`` and ``/rest/café`` name the same
resource, ``/rest/caf%C3%A9``, and the public URI of a resource is always
``base + uid``, the same in headers (``Location``, ``Link``) and in RDF.

The raw request path is split into segments *before* decoding, so an encoded
``/`` (``%2F``) cannot create a segment boundary; it is refused, like ``.`` and
``..`` segments (also when encoded), control characters, invalid UTF-8 and
overlong segments: nothing can name a path outside the repository.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from lakesuperior.model.uids import MAX_SEGMENT_LENGTH as MAX_SEGMENT

#: longest request path below the prefix (a uid of ``MAX_UID_LENGTH`` plus Fedora suffixes)
MAX_PATH = 4096

VERSION_ID = re.compile(r"[0-9]{14}")
CONSTRAINTS_PATH = "/constraints"  #: the constraints document, below the application root

# pchar = unreserved / pct-encoded / sub-delims / ":" / "@" (RFC 3986 section 3.3)
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PCHAR_SAFE = "-._~!$&'()*+,;=:@"
_PCT = re.compile(rb"%([0-9A-Fa-f]{2})")
#: a segment already in normalized form (only unreserved and safe characters): as it is
_PLAIN_SEGMENT = re.compile(rb"[A-Za-z0-9\-._~!$&'()*+,;=:@]+")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_EMPTY_SEGMENT = "Empty path segments ('//') are not allowed"

Kind = Literal["resource", "metadata", "timemap", "memento", "tombstone", "acl", "fixity"]


class PathError(ValueError):
    """A request path that cannot name a resource; ``status`` is 400 or 404."""

    def __init__(self, msg: str, status: int = 400):
        self.status = status
        super().__init__(msg)


@dataclass(frozen=True)
class Target:
    """What a request path names.

    ``uid``: the resource; ``kind``: the resource itself, its description
    (``fcr:metadata``), its TimeMap (``fcr:versions``), one memento
    (``fcr:versions/<id>``, ``version`` set), its tombstone
    (``fcr:tombstone``), its access control list (``fcr:acl``) or a fixity check of
    a binary (``fcr:fixity``). ``description``
    is True for the TimeMap and mementos of a binary's description
    (``fcr:metadata/fcr:versions[/<id>]``).
    """

    uid: str
    kind: Kind = "resource"
    version: str | None = None
    description: bool = False


def _iri_segment(raw: bytes) -> str:
    """One raw (percent-encoded) path segment in normalized form; ``PathError`` if invalid."""
    if _PLAIN_SEGMENT.fullmatch(raw):           # nothing to decode or quote (most paths)
        return _checked_segment(raw.decode("ascii"))
    decoded = _PCT.sub(lambda m: bytes((int(m.group(1), 16),)), raw)
    try:
        text = decoded.decode("utf-8")
    except UnicodeDecodeError:
        raise PathError("The request path is not valid UTF-8 once percent-decoded") from None
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code <= 0x9F:
            raise PathError(f"Control character U+{code:04X} in the request path")
        if ch == "/":
            raise PathError("An encoded '/' (%2F) is not allowed in a path segment")
        if ch == "\\":
            raise PathError("A backslash is not allowed in a path segment")
        if ch in _UNRESERVED or ch in _PCHAR_SAFE:
            out.append(ch)
        else:
            out.append(quote(ch, safe=""))
    return _checked_segment("".join(out))


def _checked_segment(segment: str) -> str:
    if segment in (".", ".."):
        raise PathError(f"'{segment}' path segments are not allowed")
    if len(segment) > MAX_SEGMENT:
        raise PathError(f"A path segment is longer than {MAX_SEGMENT} characters")
    return segment


def check_controls(raw: str | bytes) -> None:
    """``PathError`` (400) for a control character (C0, DEL or C1) anywhere in a
    request path, raw or percent-encoded: checked for every path and method,
    before routing (which would answer 404 for some)."""
    data = raw if isinstance(raw, bytes) else to_bytes(raw)
    decoded = _PCT.sub(lambda m: bytes((int(m.group(1), 16),)), data)
    bad = _CONTROL.search(decoded.decode("utf-8", "replace"))
    if bad is not None:
        raise PathError(f"Control character U+{ord(bad.group()):04X} in the request path")


def check_empty_segments(raw: str | bytes) -> None:
    """``PathError`` (400) for an empty segment (``//``) anywhere in a request path,
    leading ones included (routing would answer 404): checked for every path and
    method, before routing. ``raw`` is a path, or an absolute-form target
    (``http://host/path``, RFC 7230 section 5.3.2) whose authority is skipped."""
    data = raw if isinstance(raw, bytes) else to_bytes(raw)
    if not data.startswith(b"/"):
        scheme_end = data.find(b"://")
        if scheme_end < 0:
            return
        slash = data.find(b"/", scheme_end + 3)
        data = data[slash:] if slash >= 0 else b""
    if b"//" in data:
        raise PathError(_EMPTY_SEGMENT)


def to_bytes(raw: str) -> bytes:
    """A WSGI path string as bytes: WSGI strings carry bytes as latin-1 (PEP 3333);
    a string with wider characters came from elsewhere and is taken as UTF-8."""
    try:
        return raw.encode("latin-1")
    except UnicodeEncodeError:
        return raw.encode("utf-8")


def normalize_path(raw: str | bytes) -> list[str]:
    """The normalized segments of a raw request path below the endpoint prefix
    (``''`` or ``'/a/b'``; one trailing slash is ignored)."""
    data = raw if isinstance(raw, bytes) else to_bytes(raw)
    if not data or data == b"/":
        return []
    if not data.startswith(b"/"):
        raise PathError("The request path must start with '/'")
    parts = data[1:].split(b"/")
    if parts[-1] == b"":
        parts.pop()
    segments = []
    for part in parts:
        if not part:
            raise PathError(_EMPTY_SEGMENT)
        segments.append(_iri_segment(part))
    if sum(len(s) + 1 for s in segments) > MAX_PATH:
        raise PathError(f"The request path is longer than {MAX_PATH} characters")
    return segments


def parse_target(raw: str | bytes) -> Target:
    """The ``Target`` of a raw request path below the endpoint prefix.

    ``fcr:`` segments are Fedora endpoints: ``fcr:metadata``, ``fcr:versions``,
    ``fcr:versions/<yyyyMMddHHmmss>``, ``fcr:metadata/fcr:versions[/<id>]``,
    ``fcr:tombstone``, ``fcr:acl`` and ``fcr:fixity``. Any other use of an ``fcr:``
    segment is a 404.
    """
    segments = normalize_path(raw)
    cut = next((i for i, s in enumerate(segments) if s[:4].lower() == "fcr:"), len(segments))
    uid = "/" + "/".join(segments[:cut])
    rest = segments[cut:]
    if not rest:
        return Target(uid)
    description = False
    if rest[0] == "fcr:metadata":
        rest = rest[1:]
        if not rest:
            return Target(uid, "metadata")
        description = True
    if rest[0] == "fcr:versions":
        if len(rest) == 1:
            return Target(uid, "timemap", description=description)
        if len(rest) == 2 and VERSION_ID.fullmatch(rest[1]):
            return Target(uid, "memento", rest[1], description)
    elif rest == ["fcr:tombstone"] and not description:
        return Target(uid, "tombstone")
    elif rest == ["fcr:acl"] and not description:
        return Target(uid, "acl")
    elif rest == ["fcr:fixity"] and not description:
        return Target(uid, "fixity")
    raise PathError(f"Not found: {'/'.join(segments[cut:])} is not a Fedora endpoint of {uid}",
                    404)


def target_path(target: Target) -> str:
    """The path (below the endpoint prefix) of a target: the inverse of ``parse_target``."""
    base = "" if target.uid == "/" else target.uid
    if target.kind == "resource":
        return target.uid
    if target.kind == "metadata":
        return base + "/fcr:metadata"
    if target.kind == "tombstone":
        return base + "/fcr:tombstone"
    if target.kind == "acl":
        return base + "/fcr:acl"
    if target.kind == "fixity":
        return base + "/fcr:fixity"
    head = base + ("/fcr:metadata" if target.description else "") + "/fcr:versions"
    return head if target.kind == "timemap" else f"{head}/{target.version}"


@dataclass(frozen=True)
class Urls:
    """The public URLs of one request: ``root`` is its scheme, host and script root
    (``http://host``), ``prefix`` the endpoint's (``/rest``)."""

    root: str
    prefix: str

    @property
    def base(self) -> str:
        """The base of resource URIs: a resource's URI is ``base + uid``."""
        return self.root + self.prefix

    @property
    def constraints(self) -> str:
        """The constraints document (LDP 4.2.1.6)."""
        return self.root + CONSTRAINTS_PATH

    def url(self, uid: str, kind: Kind = "resource", version: str | None = None,
            description: bool = False) -> str:
        """The public URL of a target (the root's ends with ``/``)."""
        return self.base + target_path(Target(uid, kind, version, description))


def slug_segment(slug: str) -> str:
    """A decoded slug (``headers.parse_slug``) as one normalized path segment.

    Raises ``PathError`` for what no segment may be (control characters,
    ``.``/``..``, reserved ``fcr:`` names, overlong).
    """
    segment = _iri_segment(quote(slug, safe="").encode("ascii"))
    if segment[:4].lower() == "fcr:":
        raise PathError(f"The slug {slug!r} uses the reserved 'fcr:' prefix")
    return segment


# --- HTTP transactions (fcr:tx) ---------------------------------------------------------

#: The transactions endpoint below the ``/rest`` prefix (Fedora 6).
TX_SEGMENT = "fcr:tx"
_TX_ID = re.compile(r"[0-9a-f]{32}")


def parse_atomic_id(value: str) -> str:
    """The transaction id an ``Atomic-ID`` header names: the transaction's URI
    (``.../fcr:tx/<id>``) or, as Fedora 6 also takes, the bare id. ``PathError``
    (400) for anything else."""
    text = value.strip()
    tail = text.rstrip("/").rpartition("/")
    if _TX_ID.fullmatch(text):
        return text
    if tail[2] and _TX_ID.fullmatch(tail[2]) and tail[0].endswith("/" + TX_SEGMENT):
        return tail[2]
    raise PathError(f"Atomic-ID must be a transaction URI (.../{TX_SEGMENT}/<id>) or id, "
                    f"not {value[:200]!r}")
