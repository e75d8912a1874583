"""Binaries (LDP-NRs): the description triples that point at stored content, and
the digest URNs they name it by.

A description write (PUT or PATCH on ``fcr:metadata``, ``Repository.update`` /
``update_delta`` on a binary) may set ``ebucore:hasMimeType`` (the media type
the content is served as) and ``ebucore:filename`` (its ``Content-Disposition``)
with one literal each; a write that gives neither keeps the current value, as
Fedora 6 does (``DescriptionEdit``).

The content lives in the content-addressed binary store, under its digest in
the store's algorithm. The resource's graph is its *description* (an RDF
source the client may patch) holding, besides the usual server-managed
triples::

    <res> premis:hasMessageDigest <urn:sha-512:...> ;   # one per known digest
          premis:hasSize "1234"^^xsd:long ;
          ebucore:hasMimeType "image/png" ;
          ebucore:filename "photo.png" .                # client-settable

Order of writes: the file is stored first, then the description in the LMDB
transaction. A transaction that aborts leaves at most an orphan file, which
``Repository.cleanup()`` removes later.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from lakesuperior.config import Config
from lakesuperior.exceptions import (
    ChecksumValidationError,
    ExternalContentError,
    InvalidDescriptionError,
    PayloadTooLargeError,
)
from lakesuperior.http import digests, mediatypes
from lakesuperior.model.context import Context
from lakesuperior.model.external import (
    EXTERNAL_HANDLING,
    EXTERNAL_URL,
    ExternalRef,
    check_handling,
)
from lakesuperior.model.inputs import DEFAULT_MIMETYPE, BinaryInput
from lakesuperior.model.literals import lexical, literal_term
from lakesuperior.model.namespaces import (
    EBUCORE_FILENAME,
    EBUCORE_HAS_MIME_TYPE,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    XSD,
    XSD_LONG,
    bare_iri,
)
from lakesuperior.model.uids import res_uri
from lakesuperior.rdfio import Triple
from lakesuperior.store.binaries import CHUNK_SIZE, normalize_algorithm, normalize_digest
from lakesuperior.store.external import AllowList, Counted, Source, open_source

_XSD_LONG_IRI = bare_iri(XSD_LONG)
_URN_ALGOS = MappingProxyType({v: k for k, v in digests.URN_NAMES.items()})


def digest_urn(algorithm: str, hexdigest: str) -> str:
    """``<urn:sha-512:...>`` (the form Fedora writes)."""
    return f"<urn:{digests.URN_NAMES[algorithm]}:{hexdigest}>"


def parse_digest_urn(term: str) -> tuple[str | None, str]:
    """``(hashlib algorithm name, hex)`` of a digest URN term; ``(None, "")`` for
    anything else."""
    if term.startswith("<urn:") and term.endswith(">"):
        name, _, value = term[5:-1].partition(":")
        algo = _URN_ALGOS.get(name.lower())
        if algo:
            return algo, value
    return None, ""


def content_triples(uid: str, inp: BinaryInput) -> list[Triple]:
    """Server-managed triples describing the content: digests, size, mimetype;
    for a redirect or proxy binary, its URL and handling (and no digest)."""
    res = res_uri(uid)
    info = inp.info
    out: list[Triple] = []
    size = inp.size
    if info is not None:
        digests = dict(info.digests or {})
        digests[info.algorithm] = info.digest
        out += [(res, PREMIS_HAS_MESSAGE_DIGEST, digest_urn(a, v))
                for a, v in sorted(digests.items())]
        size = info.size
    if size is not None:
        out.append((res, PREMIS_HAS_SIZE, literal_term(str(size), _XSD_LONG_IRI)))
    out.append((res, EBUCORE_HAS_MIME_TYPE, literal_term(inp.mimetype)))
    if inp.external is not None:
        out.append((res, EXTERNAL_URL, literal_term(inp.external.url)))
        out.append((res, EXTERNAL_HANDLING, literal_term(inp.external.handling)))
    return out


def external_input(sources: ExternalSources, ref: ExternalRef, *, media_type: str | None,
                   binaries: Any, digests: Mapping[str, str] | None = None,
                   filename: str | None = None, uid: str | None = None) -> BinaryInput:
    """The ``BinaryInput`` of external content: for ``copy`` the content fetched
    once into the binary store (hashed on the way, ``digests`` verified, at most
    ``sources.max_size`` bytes: a failure stores nothing); for ``redirect`` and
    ``proxy`` the source checked to answer (HEAD) and nothing stored. The media
    type is ``media_type`` (the Link's ``type``), else the source's, else
    ``application/octet-stream``."""
    if media_type is not None and not mediatypes.is_media_type(media_type):
        raise ExternalContentError(f"The external content type {media_type[:100]!r} is not a "
                                   "media type (type/subtype)")
    handling = check_handling(ref.handling)
    method = "GET" if handling == "copy" else "HEAD"
    with sources.open(ref.url, method=method) as src:
        mtype = (media_type or src.content_type or DEFAULT_MIMETYPE).strip()
        if not mediatypes.is_media_type(mtype):
            mtype = DEFAULT_MIMETYPE
        if handling != "copy":
            if digests:
                _verify(sources, src.url, digests, uid)
            return BinaryInput(None, mtype, filename, external=ExternalRef(src.url, handling),
                               size=src.length)
        if src.length is not None and src.length > sources.max_size:
            raise PayloadTooLargeError(f"{src.url[:200]} is {src.length} bytes, more than "
                                       f"the {sources.max_size} bytes allowed")
        try:
            info = binaries.put(Counted(src), expected=digests or None,
                                max_size=sources.max_size)
        except ChecksumValidationError as e:
            e.uid = uid
            raise
    return BinaryInput(info, mtype, filename)


def _verify(sources: ExternalSources, url: str, digests: Mapping[str, str],
            uid: str | None) -> None:
    """Check a redirect or proxy source against the digests a client gave (one
    read of it; nothing is kept): ``ChecksumValidationError`` on a mismatch."""
    checks = [(normalize_algorithm(a), normalize_digest(a, v), a) for a, v in digests.items()]
    hashers = {algo: hashlib.new(algo, usedforsecurity=False) for algo, _, _ in checks}
    size = 0
    with sources.open(url) as src:
        body = Counted(src)
        while chunk := body.read(CHUNK_SIZE):
            size += len(chunk)
            if size > sources.max_size:
                raise PayloadTooLargeError(f"{url[:200]} is larger than the "
                                           f"{sources.max_size} bytes a digest is checked on")
            for h in hashers.values():
                h.update(chunk)
    for algo, want, name in checks:
        got = hashers[algo].hexdigest()
        if got != want:
            raise ChecksumValidationError(uid, f"{name} digest mismatch: expected {want}, "
                                               f"got {got}")


@dataclass(frozen=True)
class ExternalSources:
    """What external content may be taken from: the allow-list, the time limits
    (between bytes, and in all) and the largest copy (``max_body_size``)."""

    allow: AllowList
    timeout: float
    total_timeout: float
    max_size: int

    @classmethod
    def from_config(cls, cfg: Config) -> ExternalSources:
        """``external_content.*`` and ``max_body_size`` of a configuration."""
        return cls(AllowList.from_config(cfg.external_content_allowed,
                                         cfg.external_content_allowed_file),
                   cfg.external_content_timeout, cfg.external_content_total_timeout,
                   cfg.max_body_size)

    def open(self, url: str, *, method: str = "GET", range_header: str | None = None
             ) -> Source:
        """``open_source`` of ``url`` with these limits."""
        return open_source(self.allow, url, timeout=self.timeout,
                           total_timeout=self.total_timeout, method=method,
                           range_header=range_header)


def user_triples(ctx: Context, uid: str, inp: BinaryInput,
                 old_user: list[Triple] | None = None) -> list[Triple]:
    """The description's client triples: the old ones (on replace), with the
    filename set when the input gives one."""
    res = res_uri(uid)
    user = list(old_user or [])
    if inp.filename is not None:
        user = [t for t in user if not (t[0] == res and t[1] == EBUCORE_FILENAME)]
        user.append((res, EBUCORE_FILENAME, literal_term(inp.filename)))
    return user


#: The description values a client may set, each to one literal.
DESCRIPTION_PREDICATES = frozenset((EBUCORE_HAS_MIME_TYPE, EBUCORE_FILENAME))
_STRING_TYPE = "^^" + str(XSD.string)


class DescriptionEdit:
    """The ``ebucore:hasMimeType`` / ``ebucore:filename`` a description write gives.

    ``split`` takes them (about the binary, internal URIs) out of the triples
    the write removes and adds: they are not ordinary triples. A value the write
    adds replaces the current one; removing one without adding another changes
    nothing (Fedora 6 keeps what a description write does not give).
    """

    __slots__ = ("uid", "res", "mimetype", "filename")

    def __init__(self, uid: str):
        self.uid = uid
        self.res = res_uri(uid)
        self.mimetype: str | None = None   #: the new ``hasMimeType`` literal term
        self.filename: str | None = None   #: the new ``filename`` literal term

    def split(self, removed: Iterable[Triple], added: Iterable[Triple]
              ) -> tuple[list[Triple], list[Triple]]:
        """``removed`` and ``added`` without the binary's description values; the
        added ones are checked and kept (``InvalidDescriptionError``)."""
        res = self.res

        def ours(t: Triple) -> bool:
            return t[0] == res and t[1] in DESCRIPTION_PREDICATES

        given: dict[str, list[str]] = {EBUCORE_HAS_MIME_TYPE: [], EBUCORE_FILENAME: []}
        rest: list[Triple] = []
        for t in added:
            if ours(t):
                if t[2] not in given[t[1]]:
                    given[t[1]].append(t[2])
            else:
                rest.append(t)
        for predicate, values in given.items():
            if values:
                self._set(predicate, values)
        return [t for t in removed if not ours(t)], rest

    def _set(self, predicate: str, values: list[str]) -> None:
        name = "ebucore:hasMimeType" if predicate == EBUCORE_HAS_MIME_TYPE else "ebucore:filename"
        if len(values) > 1:
            raise InvalidDescriptionError(
                self.uid, f"A binary has one {name}, not {len(values)}: "
                          + ", ".join(v[:100] for v in values[:5]))
        term = values[0]
        if term[:1] != '"' or not (term.endswith('"') or term.endswith(_STRING_TYPE)):
            raise InvalidDescriptionError(
                self.uid, f"{name} is a plain string literal, not {term[:200]}")
        value = lexical(term)
        if predicate == EBUCORE_HAS_MIME_TYPE:
            if not (value.isascii() and value.isprintable() and mediatypes.is_media_type(value)):
                raise InvalidDescriptionError(
                    self.uid, f"Invalid ebucore:hasMimeType {value[:200]!r}: a media type "
                              "is type/subtype, optionally with ; name=value parameters")
            self.mimetype = literal_term(value.strip())
        else:
            self.filename = literal_term(value)

    def apply(self, binary_sm: list[Triple], user: list[Triple]) -> tuple[list[Triple],
                                                                           list[Triple]]:
        """The binary's server-managed content triples and the client triples with
        the new values in place of the old ones."""
        res = self.res
        if self.mimetype is not None:
            binary_sm = [t for t in binary_sm
                         if not (t[0] == res and t[1] == EBUCORE_HAS_MIME_TYPE)]
            binary_sm.append((res, EBUCORE_HAS_MIME_TYPE, self.mimetype))
        if self.filename is not None:
            user = [t for t in user if not (t[0] == res and t[1] == EBUCORE_FILENAME)]
            user.append((res, EBUCORE_FILENAME, self.filename))
        return binary_sm, user
