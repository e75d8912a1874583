"""Reading a write's request: its body, media type, size, digests and
interaction-model links, all before the write lock is taken.

A binary's content is received into the binary store's temporary folder,
hashed as it arrives (no write lock waits on the network, and storing it is a
rename); an RDF body is parsed (``RdfBody``) against the URI of the resource
it will describe, so only the model's checks and the store's writes run
inside the write transaction.
"""
from __future__ import annotations

from typing import TypeGuard

from flask import current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from lakesuperior import rdfio
from lakesuperior.endpoints.call import CHUNK, request_links
from lakesuperior.endpoints.errors import BadRequest
from lakesuperior.exceptions import (
    ChecksumValidationError,
    InvalidDigestError,
    LakesuperiorError,
    PayloadTooLargeError,
    UnsupportedDigestError,
    UnsupportedMediaTypeError,
)
from lakesuperior.http import headers as hdr
from lakesuperior.http import mediatypes
from lakesuperior.model import interaction
from lakesuperior.rdfio import Triple
from lakesuperior.store.backends import BinaryBackend
from lakesuperior.store.binaries import Upload, is_supported, normalize_digest


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

    @classmethod
    def parsed(cls, data: bytes, triples: list[Triple]) -> RdfBody:
        """A body parsed before (``triples``: its canonical triples)."""
        body = cls.__new__(cls)
        body.data, body._triples, body._error = data, rdfio.Parsed(triples), None
        return body


#: The WSGI environ key of a PUT body's canonical triples: set by ``put_body`` when it
#: parses the body (an HTTP transaction stages them), read when a staged PUT runs again.
PARSED_KEY = "lakesuperior.parsed"


def put_body(data: bytes, media_type: str, base: str) -> RdfBody:
    """The RDF body of a PUT: the triples the request carries (a staged PUT of an
    HTTP transaction, parsed when it was staged), else ``data`` parsed; a body that
    parses is recorded under ``PARSED_KEY``."""
    staged = request.environ.get(PARSED_KEY)
    if staged is not None:
        return RdfBody.parsed(data, staged)
    body = RdfBody(data, media_type, base)
    if body._error is None:
        request.environ[PARSED_KEY] = body._triples
    return body


def requested_model() -> str | None:
    """The interaction model asked for with ``Link: <...>; rel="type"`` (a term), or None."""
    return interaction.requested_model(
        link.uri for link in request_links() if link.has_rel("type"))


def media_type() -> str | None:
    """The request's ``Content-Type`` (None if absent or blank): 400 if it is not a
    media type; 415 for external content, and for a ``Content-Encoding`` other than
    ``identity`` (the body would be stored or parsed still encoded)."""
    codings = [c.strip() for c in request.headers.get("Content-Encoding", "").split(",")]
    if any(c and c.lower() != "identity" for c in codings):
        raise UnsupportedMediaTypeError(
            f"Content-Encoding {request.headers['Content-Encoding']!r} is not supported: "
            "send the body without a content coding")
    ctype = request.headers.get("Content-Type")
    if not ctype or not ctype.strip():
        return None
    if not mediatypes.is_media_type(ctype):
        raise BadRequest(f"Malformed Content-Type {ctype!r}: a media type is "
                         "type/subtype, optionally with ; name=value parameters")
    if rdfio.normalize_media_type(ctype) == "message/external-body":
        raise UnsupportedMediaTypeError("External content (message/external-body) is not "
                                        "supported: send the content in the request body")
    return ctype.strip()


def is_rdf(media_type: str | None) -> TypeGuard[str]:
    """Whether a media type is one RDF is read from."""
    return media_type is not None and rdfio.normalize_media_type(media_type) in rdfio.PARSEABLE


def _limit() -> int | None:
    return current_app.config["MAX_CONTENT_LENGTH"]


def _whole_limit() -> tuple[int, str]:
    """The most bytes of a body read whole into memory (RDF, SPARQL Update), and
    the setting that says so: ``max_rdf_body_size``, or ``max_body_size`` if smaller."""
    rdf = int(current_app.extensions["lakesuperior"].config.max_rdf_body_size)
    limit = _limit()
    return (limit, "max_body_size") if limit is not None and limit < rdf else \
        (rdf, "max_rdf_body_size")


def _too_large(limit: int | None, length: int | None = None,
               setting: str = "max_body_size") -> PayloadTooLargeError:
    size = f" ({length} bytes)" if length is not None else ""
    if setting == "max_rdf_body_size":
        return PayloadTooLargeError(
            f"The request body{size} is larger than the limit of {limit} bytes for RDF and "
            f"SPARQL Update ({setting}), which are read whole: a binary's content may be "
            "larger (send it as a binary)")
    return PayloadTooLargeError(f"The request body{size} is larger than the limit of "
                                f"{limit} bytes ({setting})")


def whole_too_large() -> PayloadTooLargeError | None:
    """The 413 of a body whose ``Content-Length`` passes the limit of bodies read
    whole (``read``), or None."""
    length = request.content_length
    limit, setting = _whole_limit()
    return _too_large(limit, length, setting) if length is not None and length > limit \
        else None


def check_size() -> None:
    """413 for a declared body larger than the configured limit."""
    length = request.content_length
    limit = _limit()
    if length is not None and limit is not None and length > limit:
        raise _too_large(limit, length)


#: Where the exceptions of a WSGI server's HTTP parser live (gunicorn raises them from
#: ``wsgi.input`` for a malformed chunked body, or one that ends early). They are
#: recognized by module, so that this module does not depend on the server.
_SERVER_PARSE_ERRORS = ("gunicorn.http.errors",)


def _malformed(error: Exception) -> BadRequest:
    return BadRequest(f"The request body is malformed or incomplete ({type(error).__name__}: "
                      f"{error}): check its chunked transfer coding (RFC 7230 section 4.1)")


class LimitedBody:
    """The request body as a stream that raises ``PayloadTooLargeError`` (413) past
    ``max_body_size``, however the body is sent: with a ``Content-Length`` or chunked.

    The body is read from the server's own input (``wsgi.input``), up to its
    ``Content-Length``, or, chunked, to the end the server sets (PEP 3333
    ``wsgi.input_terminated``; gunicorn does), and counted here: Werkzeug's capped
    stream would return a chunked body cut short at the limit from ``read()``, and
    refuse a body of exactly the limit. Under a server that does not end the input, a chunked
    body is a 400 (Werkzeug would read it as empty), or a 413 if the server says it
    is longer than the limit.

    The body is the client's message: one that ends before its ``Content-Length``
    (the client closed the connection) is incomplete (RFC 7230 section 3.3.3), and
    one whose chunked coding the server cannot parse is malformed; both are a 400
    ``BadRequest`` when they are read, so nothing is written from them."""

    __slots__ = ("_stream", "_limit", "_setting", "_count", "_length")

    def __init__(self, whole: bool = False) -> None:
        """``whole``: the body is read whole into memory, up to ``_whole_limit``."""
        self._limit, self._setting = _whole_limit() if whole else (_limit(), "max_body_size")
        chunked = request.content_length is None and has_body()
        if chunked and not request.environ.get("wsgi.input_terminated"):
            declared = _server_length()
            if declared is not None and self._limit is not None and declared > self._limit:
                raise _too_large(self._limit, declared, self._setting)
            # Werkzeug would give an empty body: the write would lose its content.
            raise BadRequest("This server cannot read a chunked request body (its WSGI "
                             "server does not end the input): send a Content-Length")
        self._length = request.content_length
        if self._length is not None and self._limit is not None and self._length > self._limit:
            raise _too_large(self._limit, self._length, self._setting)
        # The server's own input, never read past the Content-Length (or, chunked, to
        # the end the server sets): Werkzeug's stream over it copies each byte twice more.
        self._stream = (request.input_stream if chunked or self._length is not None
                        else request.stream)
        self._count = 0

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all with ``size < 0``); ``b""`` at the end."""
        if size < 0:
            return b"".join(iter(lambda: self.read(CHUNK), b""))
        if self._length is not None and size > self._length - self._count:
            size = self._length - self._count      # never past the Content-Length
            if not size:
                return b""
        try:
            chunk = self._stream.read(size)
        except RequestEntityTooLarge:
            raise _too_large(self._limit, setting=self._setting) from None
        except Exception as e:
            if not any(c.__module__ in _SERVER_PARSE_ERRORS for c in type(e).__mro__):
                raise
            raise _malformed(e) from None
        self._count += len(chunk)
        if self._limit is not None and self._count > self._limit:
            raise _too_large(self._limit, setting=self._setting)
        if not chunk and size and self._length is not None and self._count < self._length:
            raise BadRequest(f"The request body is incomplete: {self._count} of its "
                             f"{self._length} bytes (Content-Length) were received")
        return chunk


def _server_length() -> int | None:
    """The ``CONTENT_LENGTH`` a WSGI server gives with a chunked body (Werkzeug ignores
    it); None if absent or not a number."""
    value = request.environ.get("CONTENT_LENGTH", "")
    value = value.strip()
    return int(value) if value.isascii() and value.isdigit() else None


#: The WSGI environ key of the request body once ``read`` has read it.
_BODY_KEY = "lakesuperior.body"


def read() -> bytes:
    """The whole request body, an RDF or SPARQL Update body held in memory
    (``LimitedBody``: 413 past ``max_rdf_body_size``), read once: a second call
    gives the same bytes (the permission check of a PATCH reads it first)."""
    data = request.environ.get(_BODY_KEY)
    if data is None:
        data = request.environ[_BODY_KEY] = LimitedBody(whole=True).read()
    return data


def has_body() -> bool:
    """Whether the request has a body (a length, or chunked transfer coding)."""
    if request.content_length:
        return True
    return request.content_length is None and "chunked" in request.headers.get(
        "Transfer-Encoding", "").lower()


def upload_digests() -> dict[str, str] | None:
    """The ``Digest`` of an upload (RFC 3230): a malformed header and unsupported
    algorithms are a 400, a value that cannot be a digest of the algorithm a 409 (it
    cannot match; Fedora API 3.5.1 and 3.6.1)."""
    header = request.headers.get("Digest")
    if not header:
        return None
    out = {}
    for algo, value in hdr.parse_digest(header, strict=True).items():
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


def receive() -> Upload:
    """The request body received into the repository's binary store before any
    write lock is taken (``BinaryStore.receive``: read, hashed in the store's
    algorithm and in those of the ``Digest`` header, and written, at once); the
    write, which checks access, stores it with a rename, and closing it removes
    it if the write did not."""
    binaries: BinaryBackend = current_app.extensions["lakesuperior"].repository.binaries
    return binaries.receive(LimitedBody(), algorithms=_digest_algorithms())


def _digest_algorithms() -> list[str]:
    """The supported algorithms named in the ``Digest`` header (the header is
    judged by ``upload_digests``, where the write checks it)."""
    return [a for a in hdr.parse_digest(request.headers.get("Digest", "")) if is_supported(a)]
