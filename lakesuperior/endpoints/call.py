"""The Flask side of an LDP request: the ``Call`` (repository, public URLs,
target, preferences, conditions), content negotiation, tombstone links, and
``checked_write``, the one way a write checks its preconditions.

Public URIs are the request's own host URL root plus the prefix (``http.base_path``,
``/rest`` by default, or ``/ldp``) plus the uid; the repository gets them as ``base_uri``. What the
headers say is decided in ``representation`` and ``preconditions`` (pure).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import wraps
from typing import Any, Concatenate, ParamSpec, TypeVar

from flask import Response, current_app, request, url_for

from lakesuperior.endpoints.access import request_repository
from lakesuperior.endpoints.errors import (
    BadRequest,
    Gone,
    NotAcceptable,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
)
from lakesuperior.endpoints.paths import Kind, Urls, parse_target, to_bytes
from lakesuperior.endpoints.preconditions import Conditions
from lakesuperior.endpoints.representation import constrained_by, link_value
from lakesuperior.exceptions import ResourceNotExistsError, TombstoneError
from lakesuperior.http import headers as hdr
from lakesuperior.http import mediatypes

#: The second mount of the LDP endpoint (blueprint ``ldp``); the first (``rest``) is
#: at ``http.base_path`` (see ``app.create_app``).
LDP_ALIAS = "/ldp"
CHUNK = 1 << 16  #: bytes per read of a streamed body

_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
                   r"(?::[0-9]{1,5})?")
_P = ParamSpec("_P")
_R = TypeVar("_R")


# --- the request -------------------------------------------------------------------------

def public_root() -> str:
    """The request's public root (``http://host`` plus the script root); ``BadRequest``
    for a ``Host`` header that is not a host name or address."""
    host = request.host
    if not _HOST.fullmatch(host):
        raise BadRequest(f"Invalid Host header: {host!r}")
    return f"{request.scheme}://{host}{request.script_root}"


def base_path() -> str:
    """The configured path of the LDP root (``http.base_path``)."""
    return str(current_app.extensions["lakesuperior"].config.http_base_path)


def _prefix() -> str:
    """The URL prefix of the request's LDP endpoint."""
    blueprint = request.blueprint or "rest"
    return LDP_ALIAS if blueprint.startswith("ldp") else base_path()


def _raw_path() -> bytes:
    """The request path below the prefix, percent-encoded as the client sent it."""
    environ = request.environ
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    prefix = (request.script_root + _prefix()).encode()
    if raw:
        data = to_bytes(raw).split(b"?", 1)[0]
        if data[:1] != b"/":  # absolute-form request target
            scheme_end = data.find(b"://")
            data = data[data.find(b"/", scheme_end + 3):] if scheme_end >= 0 else b""
        if data.startswith(prefix):
            return data[len(prefix):]
    # No raw URI from the server: re-encode the decoded path (a %2F cannot be told apart).
    path = to_bytes(request.environ.get("PATH_INFO", ""))
    full = to_bytes(request.script_root) + path
    rest = full[len(prefix):] if full.startswith(prefix) else path
    return re.sub(rb"[^A-Za-z0-9\-._~!$&'()*+,;=:@/\x80-\xff]",
                  lambda m: b"%%%02X" % m.group()[0], rest)


def request_path() -> str:
    """The request's path from its prefix on (``/rest/a/b``) and its query, as sent."""
    raw = (_prefix().encode() + _raw_path()).decode("latin-1")
    query = request.query_string.decode("latin-1")
    return f"{raw}?{query}" if query else raw


def header_values(name: str) -> list[str]:
    """The values of the request's header ``name``, as ``request.headers.getlist``
    gives them, read from the WSGI environ directly (``getlist`` walks the whole
    environ): WSGI servers join a repeated field into one value (RFC 7230
    section 3.2.2), so there is one value or none. Not for ``Content-Type`` or
    ``Content-Length``, which WSGI keeps without the ``HTTP_`` prefix."""
    value = request.environ.get("HTTP_" + name.upper().replace("-", "_"))
    return [] if value is None else [value]


_LINKS_KEY = "lakesuperior.links"


def request_links() -> list[hdr.Link]:
    """The request's ``Link`` header, parsed once per request (``headers.parse_link``,
    which skips malformed links)."""
    links = request.environ.get(_LINKS_KEY)
    if links is None:
        links = request.environ[_LINKS_KEY] = hdr.parse_link(header_values("Link"))
    return links


def request_uid() -> str:
    """The uid of the resource the request's path names."""
    return parse_target(_raw_path()).uid


class Call:
    """What one LDP request is about: the repository, the public URLs, the target,
    the preferences and the conditional headers."""

    __slots__ = ("repo", "urls", "target", "prefer", "conditions", "constrained_by",
                 "require_if_match")

    def __init__(self) -> None:
        state = current_app.extensions["lakesuperior"]
        #: The repository as the request's agent may use it (WebAC enforced).
        self.repo = request_repository()
        #: ``http.require_if_match``: PUT, PATCH, DELETE of what exists need ``If-Match``.
        self.require_if_match: bool = state.config.http_require_if_match
        self.urls = Urls(public_root(), _prefix())
        self.target = parse_target(_raw_path())
        self.prefer = hdr.parse_prefer(header_values("Prefer"))
        self.conditions = Conditions.of(request.headers)
        #: ``Link`` to the constraints document (LDP 4.2.1.6), on every response.
        self.constrained_by = constrained_by(self.urls)

    @property
    def base(self) -> str:
        """The base of public resource URIs (the repository's ``base_uri``)."""
        return self.urls.base

    @property
    def uid(self) -> str:
        return self.target.uid

    @property
    def handling(self) -> str | None:
        return self.prefer.handling

    def url(self, uid: str | None = None, kind: Kind = "resource", version: str | None = None,
            description: bool = False) -> str:
        """Public URL of a target (default: a target of the request's resource)."""
        return self.urls.url(self.uid if uid is None else uid, kind, version, description)

    def here(self) -> str:
        """Public URL of the request's target."""
        t = self.target
        return self.url(t.uid, t.kind, t.version, t.description)

    def check_described(self, res: Any) -> None:
        """404 if the request names a description (``fcr:metadata``) and ``res``,
        the resource read for it, is not a binary."""
        t = self.target
        if (t.kind == "metadata" or t.description) and not res.is_binary:
            raise NotFound(f"{self.url()} is not a binary: it has no fcr:metadata")

    def not_modified(self, method: str, etag: str | None, last_modified: Any) -> bool:
        """Evaluate the request's preconditions against a representation: True for
        304, ``PreconditionFailed`` for 412."""
        return _outcome(self.conditions.evaluate(method, etag=etag,
                                                 last_modified=last_modified))


def _outcome(status: int | None) -> bool:
    if status == 412:
        raise PreconditionFailed("A precondition of the request (If-Match, If-None-Match or "
                                 "If-Unmodified-Since) does not hold for the current state")
    return status == 304


# --- writes --------------------------------------------------------------------------------

#: The methods ``http.require_if_match`` makes conditional on an existing target.
MUST_MATCH = frozenset(("PUT", "PATCH", "DELETE"))


def checked_write(call: Call, method: str | None, write: Callable[[Any], _R], *,
                  read: bool = True, missing_ok: bool = False,
                  check: Callable[[Any], None] | None = None, own_triples: bool = False) -> _R:
    """Check preconditions, then write: ``write(current)`` is the write.

    In one write of the repository (``Repository.transact``: its commit may be
    shared with other requests' writes, and ``write`` may run in another
    thread, under this request's context), reads the target's current state
    once (``Repository.info``), refuses a description of what is not a binary
    (404) and whatever ``check`` refuses, evaluates the request's preconditions
    (RFC 7232; ``method`` None: none apply) against that state, and calls
    ``write`` with it. ``read``: read the state even without conditional
    headers (``write`` needs it); ``missing_ok``: give None for a missing
    resource (PUT) instead of 404. With nothing to read, ``write(None)`` is
    called directly: its one repository call is its own write. Under
    ``http.require_if_match``, a PUT, PATCH or DELETE of an existing target
    without ``If-Match`` is refused (428, RFC 6585 section 3). ``own_triples``: the
    state read holds the resource's own triples (``Repository.info``), for a write
    that replaces them.
    """
    conditions = call.conditions if method is not None else Conditions()
    must_match = (method in MUST_MATCH and call.require_if_match
                  and conditions.if_match is None)
    if not read and not conditions and not must_match:
        return write(None)

    def checked() -> _R:
        repo = call.repo
        try:
            current = repo.info(call.uid, base_uri=call.base, own_triples=own_triples)
        except ResourceNotExistsError:
            if not missing_ok:
                raise
            current = None
        if current is not None:
            call.check_described(current)
            if check is not None:
                check(current)
            if must_match:
                raise PreconditionRequired(
                    f"This server requires {method} of an existing resource to be "
                    f"conditional: send If-Match with the ETag of {call.here()} (from a GET "
                    "or HEAD), so that a change made since then is not overwritten")
        if method is not None:
            _outcome(conditions.evaluate_state(method, current, call.target))
        return write(current)
    return call.repo.transact(checked)


# --- responses -----------------------------------------------------------------------------

def no_content(headers: dict[str, str] | None = None) -> Response:
    """A 204 response: no body, no Content-Type."""
    response = Response(status=204, headers=headers)
    del response.headers["Content-Type"]
    return response


def negotiate(offered: Sequence[str]) -> str:
    """The media type to serve for the request's ``Accept`` (``offered``: best
    first; an ``Offers`` is parsed once); ``NotAcceptable`` if none."""
    chosen = mediatypes.negotiate(request.headers.get("Accept"), offered, strict=True)
    if chosen is None:
        raise NotAcceptable(f"None of the media types in Accept can be served; available: "
                            f"{', '.join(offered)}")
    return chosen


# --- tombstones ----------------------------------------------------------------------------

def tombstone_links(func: Callable[Concatenate[Call, _P], _R]
                    ) -> Callable[Concatenate[Call, _P], _R]:
    """Answer a ``TombstoneError`` of a view on a ``Call`` with 410 and
    ``Link: <top>/fcr:tombstone; rel="hasTombstone"`` (``top``: the uid whose
    tombstone can be purged or resurrected)."""
    @wraps(func)
    def wrapper(call: Call, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return func(call, *args, **kwargs)
        except TombstoneError as e:
            top = e.top or call.uid
            link = link_value(call.url(top, "tombstone"), "hasTombstone")
            raise Gone(str(e), [("Link", link)],
                       links=[("Restore or purge it", url_for("ui.tombstone", path=top))]
                       ) from e
    return wrapper


def require_tombstone(call: Call) -> None:
    """Raise unless ``call.uid`` is deleted (then ``fcr:tombstone`` exists)."""
    try:
        live = call.repo.exists(call.uid)
    except TombstoneError:
        return
    raise NotFound(f"{call.url()} {'is not deleted' if live else 'does not exist'}: "
                   "it has no tombstone")
