"""Requests from browser pages of other sites: refused when they change state
(cross-site request forgery), answered with CORS headers when their origin is listed.

A browser sends the credentials it has cached for this server (HTTP Basic) with
any request a page of any site makes to it, including a form posted to it. So
a state-changing request (every method but GET, HEAD, OPTIONS and TRACE) that
a browser marks as coming from another site is refused with 403 before it is
authenticated, unless its origin is in ``http.allowed_origins``:

* ``Origin`` names another origin than the request's own (scheme, host and
  port of the URL it was sent to; ``null``, a sandboxed or ``data:`` page, is
  never the server's own), or
* ``Sec-Fetch-Site`` is ``cross-site`` or ``same-site`` (another site, or a
  sibling host of the same site), or
* with neither header (an older browser, or one whose extension strips them),
  ``Referer`` names a page of another origin.

``Sec-Fetch-Site: same-origin`` is the browser's word that the page is the
server's own, and is enough. A request with none of the three headers is not a
browser page's: programs, ``curl``, other servers are not affected. Form content types
(``application/x-www-form-urlencoded``, ``multipart/form-data``,
``text/plain``: what a page can send without a CORS preflight) always come with
``Origin`` from current browsers, so the rules above cover them.

No page of another site may frame ours: every page the server renders (the LDP
view, the staff forms, the login, search, query and error pages: a response
whose request rendered a template) is sent with ``X-Frame-Options: DENY`` and
``Content-Security-Policy: frame-ancestors 'none'``; binaries keep their own
protection (``http.binary_protection``).
Framed in an invisible ``iframe``, a form of this server posts as this server's
own page (its ``Origin`` is ours), with the credentials the browser holds for it:
a click on the other site's page would be the user's click on "Delete". And no
response is taken for another type than it says: every one is sent with
``X-Content-Type-Options: nosniff`` (an error body repeats the path it was asked
for, as plain text).

CORS, for the listed origins only: a preflight (``OPTIONS`` with
``Access-Control-Request-Method``) is answered 204 without credentials, naming
the methods, the requested headers, credentials allowed and its lifetime
(``PREFLIGHT_MAX_AGE``); other responses to a listed origin carry
``Access-Control-Allow-Origin`` (that origin), ``Access-Control-Allow-Credentials``
and ``Access-Control-Expose-Headers``. A preflight from any other origin is 403.
While origins are listed, every response says ``Vary: Origin``.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, Response, current_app, has_request_context, request, template_rendered

from lakesuperior.config import Config
from lakesuperior.endpoints.errors import BadRequest, Forbidden
from lakesuperior.http import grammar

SAFE_METHODS = frozenset(("GET", "HEAD", "OPTIONS", "TRACE"))
#: The methods a preflight allows (those the LDP and fcr:tx endpoints answer).
CORS_METHODS = "GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE"
#: Response headers a page of a listed origin may read (besides the CORS-safelisted ones).
EXPOSED = ("Location, ETag, Link, Allow, Accept-Post, Accept-Patch, Accept-Ranges, "
           "Content-Range, Content-Disposition, Content-Location, Digest, "
           "Preference-Applied, Memento-Datetime, Atomic-ID, Atomic-Expires, Retry-After, "
           "WWW-Authenticate, X-State-Token, Lakesuperior-Dropped-Triples")
#: Seconds a browser may keep a preflight's answer.
PREFLIGHT_MAX_AGE = 600
_CROSS = frozenset(("cross-site", "same-site"))
_DEFAULT_PORTS = {"http": 80, "https": 443}
EXTENSION = "lakesuperior.origins"


#: What an HTML response is sent with, so that no other site frames it.
NO_FRAMING = (("X-Frame-Options", "DENY"),
              ("Content-Security-Policy", "frame-ancestors 'none'"))


def register(app: Flask, config: Config) -> None:
    """Check the origin of every request of ``app`` before it is authenticated
    (register before ``authn``), add the CORS headers to its responses, keep its
    pages out of other sites' frames and every response from content sniffing."""
    app.extensions[EXTENSION] = frozenset(config.http_allowed_origins)
    app.before_request(_check)
    app.after_request(_cors)
    app.after_request(_for_browsers)
    template_rendered.connect(_rendered, app)


_PAGE_KEY = "lakesuperior.page"     #: environ: the request rendered a page


def _rendered(sender: Flask, **extra: object) -> None:
    if has_request_context():
        mark_page()


def mark_page() -> None:
    """The current request answers a page, rendered or not (a HEAD of the HTML view
    renders nothing and gets the headers of its GET)."""
    request.environ[_PAGE_KEY] = True


def _for_browsers(response: Response) -> Response:
    """``nosniff`` on every response, ``NO_FRAMING`` on every page."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    if request.environ.get(_PAGE_KEY) and response.mimetype == "text/html":
        for name, value in NO_FRAMING:
            response.headers.add(name, value)
    return response


def normalized(origin: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a serialized origin, the default port filled in;
    None for ``null`` or anything that is not an http(s) origin."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path or parts.query:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]


def _own() -> tuple[str, str, int] | None:
    return normalized(f"{request.scheme}://{request.host}")


def _listed(origin: str | None) -> bool:
    allowed: frozenset[str] = _allowed()
    if origin is None or not allowed:
        return False
    mine = normalized(origin)
    return mine is not None and any(normalized(o) == mine for o in allowed)


def _allowed() -> frozenset[str]:
    return current_app.extensions.get(EXTENSION, frozenset())


def _check() -> Response | None:
    origin = request.headers.get("Origin")
    if request.method == "OPTIONS" and origin is not None and (
            "Access-Control-Request-Method" in request.headers):
        return _preflight(origin)
    if request.method in SAFE_METHODS:
        return None
    site = (request.headers.get("Sec-Fetch-Site") or "").strip().lower()
    if site == "same-origin" or _listed(origin):
        return None
    if site in _CROSS:
        raise Forbidden(f"Cross-site request refused: a {request.method} from a page of "
                        f"another site (Sec-Fetch-Site: {site}"
                        + (f", Origin: {origin}" if origin else "")
                        + "); list its origin in http.allowed_origins to allow it")
    if origin is not None and normalized(origin) != _own():
        raise Forbidden(f"Cross-site request refused: a {request.method} from a page of "
                        f"the origin {origin[:200]}, not this server's; list it in "
                        "http.allowed_origins to allow it")
    page = _referer_origin() if origin is None and not site else None
    if page is not None and normalized(page) != _own() and not _listed(page):
        raise Forbidden(f"Cross-site request refused: a {request.method} from a page of "
                        f"{page[:200]} (its Referer), not this server's; list its origin "
                        "in http.allowed_origins to allow it")
    return None


def _referer_origin() -> str | None:
    """The origin (``scheme://host[:port]``) of the page the request's ``Referer``
    names; None without one, or for one that names no http(s) page."""
    referer = request.headers.get("Referer")
    if not referer:
        return None
    try:
        parts = urlsplit(referer.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def _preflight(origin: str) -> Response:
    if not _listed(origin):
        raise Forbidden(f"Cross-origin requests from {origin[:200]} are not allowed: "
                        "list the origin in http.allowed_origins to allow them")
    wanted = request.headers.get("Access-Control-Request-Headers", "")
    names = [n.strip() for n in wanted.split(",") if n.strip()]
    if any(not grammar.TOKEN.fullmatch(n) for n in names) or len(names) > 64:
        raise BadRequest("Access-Control-Request-Headers must be a list of header names")
    response = Response(status=204)
    response.headers["Access-Control-Allow-Methods"] = CORS_METHODS
    if names:
        response.headers["Access-Control-Allow-Headers"] = ", ".join(names)
    response.headers["Access-Control-Max-Age"] = str(PREFLIGHT_MAX_AGE)
    response.vary.update(("Access-Control-Request-Method", "Access-Control-Request-Headers"))
    return response


def _cors(response: Response) -> Response:
    if not _allowed():
        return response
    response.vary.add("Origin")
    origin = request.headers.get("Origin")
    if _listed(origin):
        assert origin is not None
        response.headers["Access-Control-Allow-Origin"] = origin.strip()
        response.headers["Access-Control-Allow-Credentials"] = "true"
        if "Access-Control-Allow-Methods" not in response.headers:
            response.headers["Access-Control-Expose-Headers"] = EXPOSED
    return response
