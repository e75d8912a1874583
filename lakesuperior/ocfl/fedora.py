"""Fedora 6's conventions inside OCFL objects (fcrepo-storage-ocfl): resource ids,
where each resource's content and header files go (``PersistencePaths``), the
header JSON (``ResourceHeaders``, written as Fedora's Jackson mapper writes it:
null fields left out, dates as ISO instants) and the checks Fedora runs on it
(``DefaultHeadersValidator``, ``ValidationUtil``).

Ids: a uid here is a path in normalized URL form (``/caf%C3%A9``); Fedora's id
is the decoded path under ``info:fedora`` (``info:fedora/café``), the root
``info:fedora``. In the RDF Fedora stores, resources are named by the encoded
form (``<info:fedora/caf%C3%A9>``), which is this repository's internal
``<info:fcres/caf%C3%A9>`` under another prefix.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote

from lakesuperior import rdfio
from lakesuperior.exceptions import InvalidResourceError, OcflError
from lakesuperior.model.uids import RES_PREFIX, ROOT_UID, UriMap, normalize_uid
from lakesuperior.ocfl.storage import iso_instant, parse_instant
from lakesuperior.rdfio import Triple

__all__ = ["INFO_FEDORA", "NON_RDF", "DESCRIPTION", "ACL", "CONTAINERS", "MODELS",
           "fedora_id", "uid_of_id", "to_fedora", "from_fedora", "rdf_content", "header_path",
           "content_file", "headers", "validate_headers", "FCR_METADATA", "FCR_ACL",
           "ROOT_HEADER"]

INFO_FEDORA = "info:fedora"
_FEDORA_TERM = "<" + INFO_FEDORA
_RES_LEN = len(RES_PREFIX)
FCR_METADATA = "fcr:metadata"
FCR_ACL = "fcr:acl"
HEADER_DIR = ".fcrepo/"
ROOT_HEADER = HEADER_DIR + "fcr-root.json"
_CONTAINER = "fcr-container"
_ACL_SUFFIX = "~fcr-acl"
_DESC_SUFFIX = "~fcr-desc"
HEADERS_VERSION = "1.0"

NON_RDF = "http://www.w3.org/ns/ldp#NonRDFSource"
DESCRIPTION = "http://fedora.info/definitions/v4/repository#NonRdfSourceDescription"
ACL = "http://fedora.info/definitions/v4/webac#Acl"
CONTAINERS = frozenset(("http://www.w3.org/ns/ldp#BasicContainer",
                        "http://www.w3.org/ns/ldp#DirectContainer",
                        "http://www.w3.org/ns/ldp#IndirectContainer"))
MODELS = frozenset((NON_RDF, DESCRIPTION, ACL, *CONTAINERS))

#: What a decoded id keeps as it is when it is put back in URL form (RFC 3986 pchar
#: and the path's slashes); ``normalize_uid`` then makes it canonical.
_PATH_SAFE = "/-._~!$&'()*+,;=:@"
_FORBIDDEN_PARTS = frozenset(("fcr-root", ".fcrepo", "fcr-container.nt", "fcr:tombstone",
                              "fcr:versions"))
_FORBIDDEN_SUFFIXES = ("~fcr-desc", "~fcr-acl", "~fcr-desc.nt", "~fcr-acl.nt")
_DIGEST_ALGORITHMS = frozenset(("sha-1", "sha1", "sha-256", "sha256", "sha-512", "sha512",
                                "sha-512/256", "sha512/256", "md5"))
_EXTERNAL_HANDLING = frozenset(("proxy", "redirect"))

#: The order in which Fedora's headers list their fields.
_FIELDS = ("id", "parent", "archivalGroupId", "stateToken", "interactionModel", "mimeType",
           "filename", "contentSize", "digests", "externalHandling", "externalUrl",
           "createdDate", "createdBy", "lastModifiedDate", "lastModifiedBy",
           "mementoCreatedDate", "archivalGroup", "objectRoot", "deleted", "contentPath",
           "headersVersion")


# --- ids ------------------------------------------------------------------------------

def fedora_id(uid: str) -> str:
    """Fedora's id of a uid (decoded path under ``info:fedora``)."""
    return INFO_FEDORA if uid == ROOT_UID else INFO_FEDORA + unquote(uid)


def uid_of_id(fid: Any, where: str) -> str:
    """The uid of a Fedora id; ``OcflError`` for an id outside ``info:fedora`` or
    one that is not a valid uid here."""
    if not isinstance(fid, str) or not (fid == INFO_FEDORA
                                        or fid.startswith(INFO_FEDORA + "/")):
        raise OcflError(f"{where}: the id {fid!r:.200} is not under {INFO_FEDORA}/")
    path = fid[len(INFO_FEDORA):]
    if not path:
        return ROOT_UID
    try:
        return normalize_uid(quote(path, safe=_PATH_SAFE))
    except InvalidResourceError as e:
        raise OcflError(f"{where}: the id {fid!r:.200} is not usable here: {e}") from None


def to_fedora(triples: Iterable[Triple]) -> list[Triple]:
    """Internal triples with this repository's IRIs (hash IRIs included) as
    Fedora's ``info:fedora`` ones."""
    subjects: dict[str, str] = {}      # a resource's triples share a few subjects
    out = []
    for s, p, o in triples:
        fs = subjects.get(s)
        if fs is None:
            fs = subjects[s] = _to_fedora_term(s)
        out.append((fs, p, _to_fedora_term(o) if o.startswith(RES_PREFIX) else o))
    return out


def rdf_content(triples: Iterable[Triple]) -> bytes:
    """The content file of an RDF resource (a container, a description, an ACL):
    the triples with Fedora's IRIs (as ``to_fedora``) as N-Triples, one line per
    triple, sorted. Sorting the lines orders them as sorting the triples would,
    for less: where a canonical term is a proper prefix of another, the longer
    goes on with a character above the space that ends the shorter in its line
    (a literal's ``@`` or ``^``, a blank node label's name character; an IRI ends
    at its only ``>``), so no line is a prefix of another; and strings sort by
    code point, as their UTF-8 bytes do."""
    lines = [f"{s} {p} {o} .\n" for s, p, o in to_fedora(triples)]
    lines.sort()
    return "".join(lines).encode()


def _to_fedora_term(t: str) -> str:
    if not t.startswith(RES_PREFIX):
        return t
    rest = t[_RES_LEN:]
    if rest == "/>" or rest.startswith("/#"):
        rest = rest[1:]
    return _FEDORA_TERM + rest


def from_fedora(data: bytes, urimap: UriMap) -> rdfio.Parsed:
    """Fedora's N-Triples ``data`` parsed, its ``info:fedora`` IRIs (hash IRIs too)
    as this repository's public ones (``info:fedora`` the root, ``base_uri/``) as
    they are read: canonical terms, each triple once. ``RdfParseError`` if it is
    not N-Triples. In two halves: ``fedora_ntriples``, then ``from_canonical``."""
    return from_canonical(fedora_ntriples(data), urimap)


def fedora_ntriples(data: bytes) -> bytes:
    """Fedora's N-Triples ``data`` checked and parsed, as canonical N-Triples text
    (``rdfio.canonical_ntriples``); ``RdfParseError`` if it is not N-Triples."""
    return rdfio.canonical_ntriples(data, rdfio.N_TRIPLES, INFO_FEDORA + "/")


def from_canonical(written: bytes, urimap: UriMap) -> rdfio.Parsed:
    """The triples of ``fedora_ntriples``'s text, mapped as ``from_fedora`` maps them."""
    return rdfio.split_canonical(written, rebase=(_FEDORA_TERM, urimap.pub_prefix))


# --- paths (PersistencePaths) --------------------------------------------------------

def _relative(root_id: str, res_id: str) -> str | None:
    """The path of ``res_id`` below ``root_id`` (None: it is the root)."""
    if res_id == root_id:
        return None
    if not res_id.startswith(root_id + "/"):
        raise ValueError(f"{res_id} is not inside {root_id}")
    return res_id[len(root_id) + 1:]


def header_path(root_id: str, res_id: str, part: str = "") -> str:
    """The header file of ``res_id`` (``part``: ``"desc"`` or ``"acl"`` of it)."""
    rel = _relative(root_id, res_id)
    base = "fcr-root" if rel is None else rel
    suffix = {"": "", "desc": _DESC_SUFFIX, "acl": _ACL_SUFFIX}[part]
    return HEADER_DIR + base + suffix + ".json"


def content_file(root_id: str, res_id: str, part: str = "", *, container: bool) -> str:
    """The content file of ``res_id`` (``part`` ``"desc"``/``"acl"``): a container's
    RDF, a binary's bytes, a description's or an ACL's RDF."""
    rel = _relative(root_id, res_id)
    last = res_id.rsplit("/", 1)[-1]
    if part == "desc":
        return (last if rel is None else rel) + _DESC_SUFFIX + ".nt"
    if container:
        name = _CONTAINER + (_ACL_SUFFIX if part == "acl" else "") + ".nt"
        return name if rel is None else f"{rel}/{name}"
    base = last if rel is None else rel
    return base + (_ACL_SUFFIX + ".nt" if part == "acl" else "")


# --- headers --------------------------------------------------------------------------

def state_token(*parts: str) -> str:
    return hashlib.md5("|".join(parts).encode(), usedforsecurity=False).hexdigest().upper()


def headers(**fields: Any) -> dict[str, Any]:
    """A header document: Fedora's field order, nulls left out, dates as instants."""
    out: dict[str, Any] = {}
    for name in _FIELDS:
        value = fields.pop(name, None)
        if isinstance(value, datetime):
            value = iso_instant(value)
        if value is not None:
            out[name] = value
    if fields:
        raise TypeError(f"Unknown header fields: {sorted(fields)}")
    out.setdefault("headersVersion", HEADERS_VERSION)
    return out


def _problems_of_id(name: str, value: Any, out: list[str], valid: set[str] | None) -> None:
    """What is wrong with the id ``value`` of the field ``name`` (``valid``: ids
    known to pass, a passing one added)."""
    if value is None:
        out.append(f"Must define property '{name}'")
        return
    if not isinstance(value, str):
        out.append(f"Invalid '{name}' value {value!r:.80}")
        return
    if valid is not None and value in valid:
        return
    before = len(out)
    if not (value == INFO_FEDORA or value.startswith(INFO_FEDORA + "/")):
        out.append(f"Invalid '{name}' value '{value}'. IDs must be prefixed with "
                   f"'{INFO_FEDORA}/'")
    for part in value.split("/"):
        if not part.strip():
            out.append(f"Invalid '{name}' value '{value}'. IDs may not contain blank parts")
        elif part in _FORBIDDEN_PARTS:
            out.append(f"Invalid '{name}' value '{value}'. IDs may not contain parts equal "
                       f"to '{part}'")
        elif part.endswith(_FORBIDDEN_SUFFIXES):
            out.append(f"Invalid '{name}' value '{value}'. IDs may not contain parts that "
                       "end with a reserved suffix")
    if valid is not None and len(out) == before:
        valid.add(value)


def _related(parent: Any, child: Any) -> bool:
    if not isinstance(parent, str) or not isinstance(child, str):
        return True
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def validate_headers(h: dict[str, Any], root: dict[str, Any],
                     expected_content: str | None, *,
                     valid_ids: set[str] | None = None) -> list[str]:
    """The problems Fedora's ``DefaultHeadersValidator`` finds in the headers ``h``
    of a resource of the object whose root resource has headers ``root``
    (``expected_content``: the content path the resource must declare). The
    repository root ``info:fedora`` (its own parent in what Fedora writes) may also
    have none. ``valid_ids``: ids already found valid (not checked again), to
    which the valid ids of ``h`` are added (one object's headers repeat them)."""
    out: list[str] = []
    rid, model = h.get("id"), h.get("interactionModel")
    if h.get("headersVersion") != HEADERS_VERSION:
        out.append(f"Must define property 'headersVersion' as '{HEADERS_VERSION}' but was "
                   f"'{h.get('headersVersion')}'")
    _problems_of_id("id", rid, out, valid_ids)
    if not (rid == INFO_FEDORA and h.get("parent") is None):
        _problems_of_id("parent", h.get("parent"), out, valid_ids)
    if not _related(h.get("parent"), rid) or not _related(root.get("id"), rid):
        out.append(f"IDs must be related: parent={h.get('parent')}; root={root.get('id')}; "
                   f"id={rid}")
    for name in ("stateToken", "interactionModel", "createdDate", "lastModifiedDate"):
        if h.get(name) is None:
            out.append(f"Must define property '{name}'")
    for name in ("createdDate", "lastModifiedDate", "mementoCreatedDate"):
        if h.get(name) is not None:
            try:
                parse_instant(h[name], name)
            except OcflError:
                out.append(f"Invalid date in '{name}': {h[name]!r:.60}")
    if model is not None and model not in MODELS:
        out.append(f"Invalid interaction model value: {model}.")
    deleted = h.get("deleted") is True
    content_expected = not deleted and h.get("externalHandling") is None
    if expected_content is not None and content_expected and \
            h.get("contentPath") != expected_content:
        out.append(f"Must define property 'contentPath' as '{expected_content}' but was "
                   f"'{h.get('contentPath')}'")
    if root.get("deleted") is True and not deleted:
        out.append("Must define property 'deleted' as 'true' but was 'false'")
    digests = h.get("digests")
    if content_expected and not digests:
        out.append("Must contain a 'digests' property with at least one entry.")
    for digest in digests or ():
        parts = str(digest).split(":")
        if len(parts) != 3 or parts[0] != "urn" or parts[1].lower() not in _DIGEST_ALGORITHMS \
                or not parts[2].strip():
            out.append(f"Digests must be formatted as 'urn:ALGORITHM:DIGEST'. Found: {digest}.")
    if not deleted and model == NON_RDF and h.get("mimeType") is None:
        out.append("Must define property 'mimeType'")
    if h.get("externalHandling") is not None or h.get("externalUrl") is not None:
        if h.get("externalUrl") is None:
            out.append("Must define property 'externalUrl'")
        if h.get("externalHandling") not in _EXTERNAL_HANDLING:
            out.append(f"Must define property 'externalHandling' as one of "
                       f"{sorted(_EXTERNAL_HANDLING)}")
        if model != NON_RDF:
            out.append(f"Must define property 'interactionModel' as '{NON_RDF}'")
    if rid != root.get("id"):
        for name in ("objectRoot", "archivalGroup"):
            if h.get(name) is True:
                out.append(f"Must define property '{name}' as 'false' but was 'true'")
        if root.get("archivalGroup") is True:
            if h.get("archivalGroupId") != root.get("id"):
                out.append(f"Must define property 'archivalGroupId' as '{root.get('id')}' "
                           f"but was '{h.get('archivalGroupId')}'")
        else:
            if model not in (ACL, DESCRIPTION):
                out.append(f"Invalid interaction model {model}. Atomic resources may only "
                           "contain ACLs and non-RDF descriptions.")
            elif h.get("parent") is not None:
                suffix = FCR_ACL if model == ACL else FCR_METADATA
                if rid != f"{h['parent']}/{suffix}":
                    out.append(f"Must define property 'id' as '{h['parent']}/{suffix}' but "
                               f"was '{rid}'")
            if h.get("archivalGroupId") is not None:
                out.append("Must define property 'archivalGroupId' as 'null'")
    else:
        if model in (ACL, DESCRIPTION):
            out.append(f"Invalid interaction model value: {model}.")
        if h.get("objectRoot") is not True and h.get("archivalGroup") is not True:
            out.append("Must define property 'objectRoot' as 'true' but was 'false'")
        if h.get("archivalGroupId") is not None:
            out.append("Must define property 'archivalGroupId' as 'null'")
        if h.get("archivalGroup") is True and model not in CONTAINERS:
            out.append(f"Archival Group has an invalid interaction model: {model}")
    return out
