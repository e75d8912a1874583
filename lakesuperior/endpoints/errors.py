"""Errors -> HTTP responses, in one place.

``STATUS`` maps every exception class the application raises (the domain
errors of ``lakesuperior.exceptions``, the HTTP-only errors below, path errors)
to a status code; the most specific class in an exception's MRO wins. The
handlers registered by ``register(app)`` turn any exception into a response
whose body says what was wrong: plain text by default, or HTML, JSON or RDF
when the client's ``Accept`` asks for them. Every 4xx response links the
constraints document with ``rel="http://www.w3.org/ns/ldp#constrainedBy"``
(LDP 4.2.1.6, Fedora API 3.5 / 3.6.1 / 3.7 / 4.3.3). A 401 challenges for Basic,
except for a browser whose session cookie names no live session (and that sent no
``Authorization``): its challenge names the login page (``Cookie``, which no
browser answers with a password dialog) and its message says the session ended.
A 500 is a bug: it is logged with its traceback and its body names only the
exception type. A 507 (the store's map or the disk is full) is not a bug: it is
logged as a warning and its body says what is full.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from http import HTTPStatus

from flask import Flask, Response, current_app, render_template, request
from werkzeug.exceptions import HTTPException

from lakesuperior import exceptions as exc
from lakesuperior.auth.sessions import COOKIE
from lakesuperior.endpoints import authn
from lakesuperior.endpoints.paths import CONSTRAINTS_PATH, PathError
from lakesuperior.endpoints.representation import CONSTRAINED_BY
from lakesuperior.http import headers as hdr
from lakesuperior.http import mediatypes
from lakesuperior.model.context import literal_term
from lakesuperior.model.namespaces import HTTP, LDP, RDF_TYPE, RDFS, XSD
from lakesuperior.rdfio import serialize

# --- HTTP-only errors -------------------------------------------------------------------

class HttpError(Exception):
    """An error of the HTTP layer itself (no domain meaning); ``STATUS`` gives its code.

    ``headers``: extra response headers as (name, value) pairs; ``links``: (label,
    URL) pairs the HTML error page offers.
    """

    def __init__(self, msg: str, headers: Iterable[tuple[str, str]] = (), *,
                 links: Iterable[tuple[str, str]] = ()):
        self.headers = list(headers)
        self.links = list(links)
        super().__init__(msg)


class BadRequest(HttpError):
    """The request is malformed (a header, a parameter)."""


class AclLinkRefused(BadRequest):
    """A write that names the resource's ACL with ``Link: <...>; rel="acl"``: the ACL
    of a resource is always at ``<resource>/fcr:acl`` (400 as Fedora 6's
    ``RequestWithAclLinkHeaderException``)."""


class Forbidden(HttpError):
    """Refused whoever the agent is (a cross-site request: ``endpoints.origins``)."""


class NotFound(HttpError):
    """Nothing is at this URL."""


class MethodNotAllowed(HttpError):
    """The method is not supported by this resource; ``allow`` lists those that are."""

    def __init__(self, msg: str, allow: Iterable[str]):
        self.allow = list(allow)
        super().__init__(msg, [("Allow", ", ".join(self.allow))])


class NotAcceptable(HttpError):
    """No representation matches ``Accept`` (or no memento matches ``Accept-Datetime``)."""


class Gone(HttpError):
    """A deleted resource, or one under a deleted ancestor (its tombstone is linked
    in ``headers``)."""


class TransactionGone(Gone):
    """A committed, rolled-back or expired HTTP transaction (``fcr:tx``)."""


class ConstraintViolation(HttpError):
    """A valid request that this server's constraints refuse (see the constraints document)."""


class PreconditionFailed(HttpError):
    """A conditional header (``If-Match``, ``If-Unmodified-Since``...) did not hold."""


class BadGateway(HttpError):
    """The source of a proxied external binary failed (RFC 9110 section 15.6.3)."""


class PreconditionRequired(HttpError):
    """A write the server requires to be conditional came without ``If-Match``
    (RFC 6585 section 3, ``http.require_if_match``)."""


# --- the table -----------------------------------------------------------------------------

#: The realm of ``WWW-Authenticate`` challenges.
AUTH_REALM = "Lakesuperior"
#: What a 401 says to a browser whose session ended.
SESSION_ENDED = "Your session has expired or was ended: log in again"


def login_challenge() -> str:
    """The ``WWW-Authenticate`` challenge naming the login page (no browser answers
    it with a password dialog)."""
    return (f'Cookie realm="{AUTH_REALM}", form-action="{request.script_root}/login", '
            f'cookie-name="{COOKIE}"')


def session_ended() -> bool:
    """Whether the current request comes from a browser whose session ended: its
    cookie names no live session and it sent no other credentials."""
    return "Authorization" not in request.headers and authn.session_stale()

#: Exception class -> HTTP status. Looked up along the exception's MRO.
STATUS: dict[type[BaseException], int] = {
    # HTTP layer
    BadRequest: 400,
    Forbidden: 403,
    NotFound: 404,
    MethodNotAllowed: 405,
    NotAcceptable: 406,
    ConstraintViolation: 409,
    Gone: 410,
    PreconditionFailed: 412,
    PreconditionRequired: 428,
    BadGateway: 502,
    # resources
    exc.ResourceNotExistsError: 404,
    exc.TombstoneError: 410,
    exc.FeedGapError: 410,
    exc.ResourceExistsError: 409,
    exc.ArchivalGroupError: 409,
    exc.InvalidResourceError: 400,
    exc.InvalidTypeLinkError: 400,
    exc.IncompatibleLdpTypeError: 409,
    exc.ServerManagedTermError: 409,
    exc.SingleSubjectError: 409,
    exc.InvalidTripleError: 409,
    exc.RefIntViolationError: 409,
    exc.ChecksumValidationError: 409,
    exc.InvalidDescriptionError: 400,
    exc.ExternalContentError: 400,
    exc.ResourceError: 400,
    # input
    exc.UnsupportedDigestError: 400,
    exc.InvalidHeaderError: 400,
    exc.AuthenticationError: 401,
    exc.ClientTimeoutError: 408,
    exc.TooManyFailuresError: 429,
    exc.VerificationBusyError: 503,
    exc.InvalidDigestError: 400,
    exc.UnwritableError: 406,
    exc.UnsupportedMediaTypeError: 415,
    exc.RdfParseError: 400,
    exc.QueryTimeoutError: 503,
    exc.TooManyQueriesError: 429,
    exc.StoreBusyError: 503,
    exc.BinaryStoreUnavailableError: 503,
    exc.SparqlError: 400,
    exc.TermError: 400,
    exc.PayloadTooLargeError: 413,
    exc.RangeNotSatisfiableError: 416,
    # HTTP transactions: a request naming a transaction in Atomic-ID gets 409 when
    # it is unknown or closed, as in Fedora 6 (the fcr:tx endpoints answer 404 and
    # 410 themselves)
    exc.TransactionTooLargeError: 413,
    exc.TransactionOwnerError: 403,
    exc.TransactionError: 409,
    # no room: the store's map or the disk is full (RFC 4918 section 11.5)
    exc.InsufficientStorageError: 507,
    # bugs or broken installations
    exc.BinaryNotFoundError: 500,
    exc.StoreFormatError: 500,
    exc.StoreError: 500,
    exc.ConfigError: 500,
    exc.LakesuperiorError: 500,
}

#: Fragment of the constraints document that explains an error class (MRO lookup).
CONSTRAINT_ANCHORS: dict[type[BaseException], str] = {
    exc.AclError: "access-control",
    AclLinkRefused: "access-control",
    exc.ServerManagedTermError: "server-managed",
    exc.IncompatibleLdpTypeError: "interaction-models",
    exc.SingleSubjectError: "single-subject",
    exc.InvalidTripleError: "triples",
    exc.RefIntViolationError: "referential-integrity",
    exc.ChecksumValidationError: "digests",
    exc.UnsupportedDigestError: "digests",
    exc.InvalidDigestError: "digests",
    exc.UnsupportedMediaTypeError: "media-types",
    exc.InvalidDescriptionError: "media-types",
    exc.RdfParseError: "media-types",
    exc.SparqlError: "patch",
    exc.PayloadTooLargeError: "size",
    exc.ExternalContentError: "external-content",
    BadGateway: "external-content",
    exc.TransactionError: "transactions",
    exc.TombstoneError: "tombstones",
    exc.InvalidVersionError: "versions",
    exc.VersionExistsError: "versions",
    exc.ArchivalGroupError: "versions",
    TransactionGone: "transactions",
    Gone: "tombstones",
    exc.InvalidResourceError: "paths",
    PathError: "paths",
    ConstraintViolation: "versions",
}


def _lookup(table: dict, error: BaseException):
    for cls in type(error).__mro__:
        if cls in table:
            return table[cls]
    return None


def status_of(error: BaseException) -> int:
    """The HTTP status of an exception (500 for anything unknown: a bug)."""
    if isinstance(error, PathError):
        return error.status
    if isinstance(error, HTTPException):
        return error.code or 500
    if isinstance(error, exc.AccessDeniedError):
        return 403 if error.authenticated else 401
    return _lookup(STATUS, error) or 500


def constraints_url(anchor: str | None = None) -> str:
    """Absolute URL of the constraints document (of one section with ``anchor``)."""
    url = request.host_url.rstrip("/") + request.script_root + CONSTRAINTS_PATH
    return f"{url}#{anchor}" if anchor else url


def constrained_by_link(error: BaseException | None = None) -> str:
    anchor = _lookup(CONSTRAINT_ANCHORS, error) if error is not None else None
    return hdr.format_link(constraints_url(anchor), CONSTRAINED_BY)


# --- responses ------------------------------------------------------------------------------

_ERROR_TYPES = mediatypes.Offers(("text/plain", "text/html", "application/json", "text/turtle",
                           "application/ld+json", "application/n-triples"))


def _headers_of(error: BaseException, status: int) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    if isinstance(error, HTTPException):
        headers.extend((k, v) for k, v in error.get_headers()
                       if k.lower() not in ("content-type", "content-length"))
    headers.extend(getattr(error, "headers", None) or [])
    if isinstance(error, exc.TooManyQueriesError):
        headers.append(("Retry-After", str(math.ceil(error.retry_after))))
    if isinstance(error, exc.RangeNotSatisfiableError):
        headers.append(("Content-Range", hdr.unsatisfied_content_range(error.size)))
    if isinstance(error, exc.TryLaterError):
        headers.append(("Retry-After", str(max(1, math.ceil(error.retry_after)))))
    if status == 401 and session_ended():
        headers.append(("WWW-Authenticate", login_challenge()))
    elif status == 401:
        headers.append(("WWW-Authenticate", f'Basic realm="{AUTH_REALM}"'))
        if isinstance(error, exc.BearerTokenError):   # RFC 6750 section 3.1
            headers.append(("WWW-Authenticate",
                            f'Bearer realm="{AUTH_REALM}", error="invalid_token"'))
    if 400 <= status < 500:
        headers.append(("Link", constrained_by_link(error)))
    return headers


#: Server-side errors that are not bugs: their message is the response body.
_EXPECTED = (HTTPException, exc.QueryTimeoutError, exc.InsufficientStorageError,
             exc.StoreBusyError, BadGateway, exc.TryLaterError,
             exc.BinaryStoreUnavailableError)


def _is_bug(error: BaseException, status: int) -> bool:
    return status >= 500 and not isinstance(error, _EXPECTED)


def _message(error: BaseException, status: int) -> str:
    if _is_bug(error, status):
        return (f"Internal server error ({type(error).__name__}); this is a bug, "
                "see the server log")
    if isinstance(error, HTTPException):
        return error.description or HTTPStatus(status).phrase
    if status == 401 and session_ended():
        return f"{SESSION_ENDED} ({error})" if str(error) != SESSION_ENDED else SESSION_ENDED
    return str(error) or type(error).__name__


def _rdf_body(status: int, phrase: str, message: str, media_type: str) -> bytes:
    b = "_:error"
    triples = [
        (b, RDF_TYPE, HTTP.Response),
        (b, HTTP.statusCodeValue, f'"{status}"^^{XSD.int}'),
        (b, HTTP.reasonPhrase, literal_term(phrase)),
        (b, RDFS.comment, literal_term(message)),
    ]
    if 400 <= status < 500:
        triples.append((b, LDP.constrainedBy, f"<{constraints_url()}>"))
    return serialize(triples, media_type, namespaces={"http": HTTP.iri})


def error_response(error: BaseException) -> Response:
    """The response for any exception."""
    status = status_of(error)
    if _is_bug(error, status):
        current_app.logger.error("Unhandled error on %s %s", request.method, request.path,
                                 exc_info=error)
    elif isinstance(error, (exc.InsufficientStorageError, exc.BinaryStoreUnavailableError)):
        current_app.logger.warning("%s %s: %s", request.method, request.path, error)
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    message = _message(error, status)
    media_type = mediatypes.negotiate(request.headers.get("Accept"), _ERROR_TYPES) or "text/plain"
    if media_type == "text/html":
        body: str | bytes = render_template("error.html", status=status, phrase=phrase,
                                            message=message,
                                            links=getattr(error, "links", ()))
        ctype = "text/html; charset=utf-8"
    elif media_type == "application/json":
        body = json.dumps({"status": status, "error": phrase, "message": message},
                          ensure_ascii=False) + "\n"
        ctype = "application/json"
    elif media_type in ("text/turtle", "application/ld+json", "application/n-triples"):
        body = _rdf_body(status, phrase, message, media_type)
        ctype = media_type + ("" if media_type == "application/ld+json" else "; charset=utf-8")
    else:
        body = f"{status} {phrase}: {message}\n"
        ctype = "text/plain; charset=utf-8"
    response = Response(body, status=status, content_type=ctype)
    for name, value in _headers_of(error, status):
        response.headers.add(name, value)
    return response


def register(app: Flask) -> None:
    """Install the error handlers on ``app``."""
    app.register_error_handler(Exception, error_response)
    app.register_error_handler(HTTPException, error_response)
