"""Signing in and out with the login page, the session cookie, and the CSRF check.

``GET /login`` is the form (user name, password); ``POST /login`` checks the
password with the app's ``Authenticator`` (so a wrong one counts toward the
same guessing limits as HTTP Basic: 401, then 429 with ``Retry-After``), makes a
session (``auth.sessions``), sets its cookie (``HttpOnly``, ``SameSite=Lax``,
``Secure`` over https, for ``auth.session.lifetime`` seconds) and redirects (303)
to ``next``: a path of this server only, anything else (another host, a scheme,
``//host``, a backslash) goes to the repository root. ``POST /logout`` ends the
session everywhere, clears the cookie and redirects to the repository root (or
to ``next``, checked the same way).

CSRF: a state-changing request (not GET, HEAD, OPTIONS, TRACE) that carries the
session cookie must carry the session's token, in the form field ``csrf_token``
or the header ``X-CSRF-Token``, else 403 (checked before any view runs). One
whose cookie names no live session and that has no other credentials is
refused with 401 saying the session ended (nothing is done as the anonymous
agent), except signing in and out. Requests without the cookie (Basic, bearer,
anonymous) are not concerned: the cross-site check of ``endpoints.origins``
covers them. Templates get ``csrf_token()`` (the session's token, or "") and
``viewer`` (who is signed in, for the common header); every HTML page is sent
``Cache-Control: no-store``.
"""
from __future__ import annotations

import hmac
import math
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from flask import Blueprint, Flask, Response, current_app, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior.auth.agents import Agent
from lakesuperior.auth.sessions import COOKIE
from lakesuperior.auth.users import MAX_PASSWORD
from lakesuperior.endpoints import authn
from lakesuperior.endpoints.errors import Forbidden, NotFound, login_challenge, status_of
from lakesuperior.endpoints.origins import SAFE_METHODS
from lakesuperior.exceptions import AuthenticationError, TryLaterError

__all__ = ["bp", "register", "local_target", "CSRF_FIELD", "CSRF_HEADER"]

bp = Blueprint("session", __name__)

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
_FORMS = frozenset(("application/x-www-form-urlencoded", "multipart/form-data"))
_MAX_NAME = 256
_MAX_TARGET = 4096


def register(app: Flask) -> None:
    """The login blueprint, the CSRF check (register after ``authn``), and what the
    templates get."""
    app.register_blueprint(bp)
    app.before_request(_check_csrf)
    app.after_request(_clear_stale_cookie)
    app.after_request(_not_stored)
    app.jinja_env.globals["csrf_token"] = _csrf_token
    app.context_processor(lambda: {"viewer": _viewer()})


# --- the views -------------------------------------------------------------------------------

@bp.get("/login")
def login_form() -> Response:
    _authenticator()
    return _page(target=local_target(request.args.get("next")))


@bp.post("/login")
def login() -> BaseResponse:
    auth = _authenticator()
    form = request.form
    name = form.get("username", "").strip()
    password = form.get("password", "")
    target = local_target(form.get("next"))
    if not name or not password:
        return _page(name, target, 400, "Give a user name and a password")
    if len(name) > _MAX_NAME or len(password) > MAX_PASSWORD:
        return _page("", target, 400, "The user name or the password is too long")
    try:
        user = auth.verify(name, password, auth.client_address(request.headers,
                                                              request.remote_addr))
    except TryLaterError as e:
        response = _page(name, target, status_of(e), str(e))
        response.headers["Retry-After"] = str(max(1, math.ceil(e.retry_after)))
        return response
    if user is None:
        response = _page(name, target, 401, "Wrong user name or password")
        response.headers["WWW-Authenticate"] = login_challenge()
        return response
    assert auth.sessions is not None
    old = authn.request_session()
    if old is not None:
        auth.sessions.end(old)
    cookie, _ = auth.sessions.create(user)
    current_app.logger.info("%s signed in from %s", user.name,
                            auth.client_address(request.headers, request.remote_addr))
    done = redirect(target, code=303)
    done.set_cookie(COOKIE, cookie, max_age=int(auth.sessions.lifetime), path=_cookie_path(),
                    secure=request.is_secure, httponly=True, samesite="Lax")
    return done


@bp.post("/logout")
def logout() -> BaseResponse:
    auth = _authenticator()
    session = authn.request_session()
    if session is not None and auth.sessions is not None:
        auth.sessions.end(session)
    response = redirect(local_target(request.form.get("next")), code=303)
    _delete_cookie(response)
    return response


# --- helpers -------------------------------------------------------------------------------

def _authenticator() -> authn.Authenticator:
    auth: authn.Authenticator | None = current_app.extensions.get(authn.EXTENSION)
    if auth is None or auth.sessions is None:
        raise NotFound("Authentication is off on this server (auth.enabled: false): every "
                       "request acts as the administrator, there is nothing to sign in to")
    return auth


def _page(name: str = "", target: str = "", status: int = 200,
          error: str | None = None) -> Response:
    body = render_template("login.html", name=name, target=target, error=error)
    return Response(body, status=status, content_type="text/html; charset=utf-8",
                    headers={"Cache-Control": "no-store"})


def _root() -> str:
    return request.script_root + current_app.extensions["lakesuperior"].config.http_base_path \
        + "/"


def local_target(value: str | None) -> str:
    """``value`` if it is a path of this server (below the script root, no scheme,
    no host, no backslash or control character), else the repository root: where
    a sign-in or sign-out returns to, never another site."""
    if not value or len(value) > _MAX_TARGET or any(c < " " or c in "\\\x7f" for c in value):
        return _root()
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not value.startswith("/") or value.startswith("//"):
        return _root()
    script = request.script_root
    if script and not (parts.path == script or parts.path.startswith(script + "/")):
        return _root()
    if parts.path[len(script):] in ("/login", "/logout"):
        return _root()
    return value


def _cookie_path() -> str:
    return request.script_root or "/"


def _delete_cookie(response: BaseResponse) -> None:
    response.delete_cookie(COOKIE, path=_cookie_path(), secure=request.is_secure,
                           httponly=True, samesite="Lax")


def _csrf_token() -> str:
    """The current session's CSRF token ("" without a session): for every form."""
    session = authn.request_session()
    return "" if session is None else session.csrf


def _check_csrf() -> None:
    if request.method in SAFE_METHODS or COOKIE not in request.cookies:
        return
    session = authn.request_session()
    if session is None:
        if "Authorization" in request.headers or request.endpoint in ("session.login",
                                                                      "session.logout"):
            return
        raise AuthenticationError("Your session has expired or was ended: log in again "
                                  "(nothing was changed)")
    given = request.headers.get(CSRF_HEADER)
    if given is None and request.mimetype in _FORMS:
        given = request.form.get(CSRF_FIELD)
    if not given:
        raise Forbidden("The form has no CSRF token: reload the page and submit it again "
                        f"(a request with the session cookie must carry the {CSRF_FIELD} "
                        f"form field or the {CSRF_HEADER} header)")
    if not hmac.compare_digest(given.encode("utf-8", "replace"), session.csrf.encode()):
        raise Forbidden("The form's CSRF token is not this session's (the page is from an "
                        "earlier session, or from another site): reload the page and "
                        "submit it again")


def _clear_stale_cookie(response: BaseResponse) -> BaseResponse:
    setting = any(value.startswith(COOKIE + "=")
                  for value in response.headers.getlist("Set-Cookie"))
    if not setting and COOKIE in request.cookies and authn.session_stale():
        _delete_cookie(response)
    return response


def _not_stored(response: BaseResponse) -> BaseResponse:
    """A page is never kept by the browser: it names who is signed in and holds the
    session's CSRF token, so a page cached before signing in or out (and revalidated
    by its ETag, which does not change) would show the wrong one."""
    if response.mimetype == "text/html":
        response.headers["Cache-Control"] = "no-store"
    return response


@dataclass(frozen=True)
class Viewer:
    """Who the common header says is signed in."""

    name: str | None            #: None: nobody (or authentication failed)
    admin: bool
    session: bool               #: signed in with the login page (can sign out)
    session_ended: bool         #: the cookie names no live session any more
    login_url: str              #: the login page, returning here
    logout_url: str


def _viewer() -> Viewer:
    agent: Agent | None = request.environ.get(authn.AGENT_KEY)
    here = request.script_root + request.full_path.rstrip("?") if request.method == "GET" \
        else _root()
    script = request.script_root
    session = authn.request_session() if agent is not None else None
    return Viewer(
        name=agent.name if agent is not None and agent.authenticated else None,
        admin=agent is not None and agent.admin,
        session=session is not None and agent is not None and agent.name == session.user,
        session_ended=agent is not None and authn.session_stale(),
        login_url=f"{script}/login?next={quote(here, safe='/')}",
        logout_url=f"{script}/logout")

