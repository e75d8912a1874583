"""Reading a write's request: its body, media type, size, digests and
interaction-model links, all before the write lock is taken.

A binary's content is spooled to a temporary file (no write lock waits on the
network); an RDF body is parsed (``RdfBody``) against the URI of the resource
it will describe, so only the model's checks and the store's writes run
inside the write transaction.
"""
from __future__ import annotations

import shutil
import tempfile
from typing import IO, TypeGuard

from flask import current_app, request

from lakesuperior import headers as hdr
from lakesuperior import rdfio
from lakesuperior.endpoints.call import CHUNK
from lakesuperior.exceptions import (
    ChecksumValidationError,
    InvalidDigestError,
    LakesuperiorError,
    PayloadTooLargeError,
    UnsupportedDigestError,
    UnsupportedMediaTypeError,
)
from lakesuperior.model import interaction
from lakesuperior.store.binaries import is_supported, normalize_digest

Triple = tuple[str, str, str]

_SPOOL_MEMORY = 1 << 20


class RdfBody:
    """An RDF request body, parsed when it is read (before the write lock).

    A body that does not parse keeps its error, raised by ``triples()`` where the
    write uses the body as RDF: a precondition that fails first still answers
    412, and a PUT on a binary stores the same bytes as content instead."""

    __slots__ = ("data", "_triples", "_error")

    def __init__(self, data: bytes, media_type: str, base: str):
        self.data = data
        self._triples: list[Triple] = []
        self._error: LakesuperiorError | None = None
        try:
            self._triples = rdfio.parse(data, media_type, base)
        except LakesuperiorError as e:
            self._error = e

    def triples(self) -> list[Triple]:
        """The parsed triples (relative IRIs resolved); the parse error if any."""
        if self._error is not None:
            raise self._error
        return self._triples


def requested_model() -> str | None:
    """The interaction model asked for with ``Link: <...>; rel="type"`` (a term), or None."""
    return interaction.requested_model(
        link.uri for link in hdr.parse_link(request.headers.getlist("Link"))
        if link.has_rel("type"))


def media_type() -> str | None:
    """The request's ``Content-Type`` (None if absent or blank); 415 for external content."""
    ctype = request.headers.get("Content-Type")
    if not ctype or not ctype.strip():
        return None
    if rdfio.normalize_media_type(ctype) == "message/external-body":
        raise UnsupportedMediaTypeError("External content (message/external-body) is not "
                                        "supported: send the content in the request body")
    return ctype.strip()


def is_rdf(media_type: str | None) -> TypeGuard[str]:
    """Whether a media type is one RDF is read from."""
    return media_type is not None and rdfio.normalize_media_type(media_type) in rdfio.PARSEABLE


def check_size() -> None:
    """413 for a declared body larger than the configured limit."""
    length = request.content_length
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if length is not None and limit is not None and length > limit:
        raise PayloadTooLargeError(f"The request body ({length} bytes) is larger than the "
                                   f"limit of {limit} bytes")


def has_body() -> bool:
    """Whether the request has a body (a length, or chunked transfer coding)."""
    if request.content_length:
        return True
    return request.content_length is None and "chunked" in request.headers.get(
        "Transfer-Encoding", "").lower()


def upload_digests() -> dict[str, str] | None:
    """The ``Digest`` of an upload (RFC 3230): unsupported algorithms are a 400, a value
    that cannot be a digest of the algorithm a 409 (it cannot match; Fedora API 3.5.1)."""
    header = request.headers.get("Digest")
    if not header:
        return None
    out = {}
    for algo, value in hdr.parse_digest(header).items():
        if not is_supported(algo):
            raise UnsupportedDigestError(f"Unsupported digest algorithm in Digest: {algo!r}; "
                                         "supported: md5, sha, sha-256, sha-512")
        try:
            normalize_digest(algo, value)
        except InvalidDigestError:
            raise ChecksumValidationError(
                msg=f"The {algo} digest {value!r} in the Digest header does not match the "
                    "content (it is not a valid digest of that algorithm)") from None
        out[algo] = value
    return out or None


def filename() -> str | None:
    """The file name of ``Content-Disposition``, if any."""
    return hdr.parse_content_disposition(request.headers.get("Content-Disposition"))


def spool() -> IO[bytes]:
    """The request body in a temporary file, so that no write lock waits on the network."""
    out = tempfile.SpooledTemporaryFile(max_size=_SPOOL_MEMORY)
    shutil.copyfileobj(request.stream, out, CHUNK)
    out.seek(0)
    return out
