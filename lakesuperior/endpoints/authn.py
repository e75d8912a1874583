"""Who the current request speaks for: authentication.

Two mechanisms, checked once per request (``register`` installs the check
before every view; ``request_agent()`` returns its result):

* a trusted proxy header (``auth.proxy_header``, e.g. ``X-Remote-User``),
  believed only when the request comes from an address of
  ``auth.trusted_proxies`` and ignored from anyone else. Its value is the user:
  a user name (an administrator if the user database says so; a name not in it
  is an ordinary user), or an absolute ``http(s)`` URI, which is the WebID
  itself (as Fedora's ``UserUtil``);
* HTTP Basic (RFC 7617) against the user database of the data directory;
* with ``auth.jwt.key`` (or ``key_file``) set, ``Authorization: Bearer <JWT>``
  (``auth.bearer``: Islandora's Syn tokens);
* without ``Authorization``, the session cookie of the login page
  (``auth.sessions``; signing in and out in ``endpoints.session``). A cookie that
  names no live session (expired, ended, tampered with) counts as no credentials:
  the request is anonymous and ``session_stale()`` says so, so that a refusal can
  say the session ended.

No credentials: the anonymous agent. Credentials that are wrong or malformed
(any ``Authorization`` that is not a well-formed Basic pair of a known user
and its password, including other schemes, which this server cannot check):
``AuthenticationError``, a 401 with a Basic challenge whose body never repeats
them. With ``auth.enabled: false`` every request is the administrator ``admin``.

Verifying a password (argon2) is slow by design, so each process keeps a
bounded cache of the (user, password) pairs it has verified. It holds a keyed
hash (HMAC with a per-process random key) of the password, never the password,
and the user's stored hash at the time: a changed password (another hash) or a
removed user (no stored hash) misses the cache and fails.

Password guessing is slowed by the app's ``GuessingGuard`` (``auth.guessing``):
before any password is looked at, credentials from a client address, or for a
user name, in backoff get 429; verifications run a bounded number at once. The
client address is the connection's peer, or, from a trusted proxy
(``auth.trusted_proxies``), the last address of ``X-Forwarded-For`` that is not
one of the trusted proxies.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from urllib.parse import quote

from flask import Flask, current_app, request
from werkzeug.datastructures import Headers

from lakesuperior.auth.agents import ANONYMOUS, Agent
from lakesuperior.auth.authorizations import origin_of
from lakesuperior.auth.bearer import BearerAuth
from lakesuperior.auth.guessing import GuessingGuard
from lakesuperior.auth.sessions import COOKIE, Session, SessionStore
from lakesuperior.auth.users import NAME, User, UserDB
from lakesuperior.config import Config
from lakesuperior.exceptions import AccessDeniedError, AuthenticationError

__all__ = ["ANONYMOUS_NAME", "ADMIN", "Authenticator", "parse_basic", "register",
           "networks", "address_in",
           "request_agent", "request_session", "session_stale", "require_admin",
           "recorded_name"]

#: The user name recorded (``fcrepo:createdBy``) for the anonymous agent.
ANONYMOUS_NAME = "anonymous"
#: The agent of every request when authentication is off.
ADMIN = Agent(name="admin", admin=True)
EXTENSION = "lakesuperior.authn"
_ENVIRON_KEY = "lakesuperior.agent"
#: Where ``request_agent`` keeps the request's agent in the WSGI environ (a request
#: built by the server itself, such as a staged one, may carry its agent there).
AGENT_KEY = _ENVIRON_KEY
_SESSION_KEY = "lakesuperior.session"     #: environ: (the cookie's session, stale or not)
_CACHE_SIZE = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_URI = re.compile(r"https?://[^\s<>\"{}|\\^`]+")
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_basic(value: str) -> tuple[str, str]:
    """(user, password) of an ``Authorization: Basic`` header value (RFC 7617);
    ``AuthenticationError`` for anything else, saying what is wrong but never
    repeating the credentials."""
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "basic":
        raise AuthenticationError("Only the Basic authentication scheme is supported"
                                  if scheme else "Empty Authorization header")
    token = token.strip()
    if not token:
        raise AuthenticationError("Basic credentials are missing from the Authorization "
                                  "header")
    try:
        raw = base64.b64decode(token.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        raise AuthenticationError("Malformed Basic credentials: not base64") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise AuthenticationError("Malformed Basic credentials: not UTF-8") from None
    user, colon, password = text.partition(":")
    if not colon:
        raise AuthenticationError("Malformed Basic credentials: no ':' between the user "
                                  "name and the password")
    if not user or _CONTROL.search(text):
        raise AuthenticationError("Malformed Basic credentials: an empty user name or "
                                  "control characters")
    return user, password


class Authenticator:
    """The authentication of one app: its settings, the user database, and the
    cache of verified passwords (see the module doc)."""

    def __init__(self, config: Config, users: UserDB | None = None):
        self.enabled = config.auth_enabled
        self.webid_base = config.auth_webid_base
        self.proxy_header = config.auth_proxy_header
        self.trusted = networks(config.auth_trusted_proxies)
        self.users = users or UserDB(config.data_dir)
        self.bearer = BearerAuth(config)
        #: The login page's sessions (None with authentication off).
        self.sessions = (SessionStore(config.sessions_dir, config.auth_session_lifetime,
                                      self.users) if self.enabled else None)
        self._key = os.urandom(32)
        self._verified: OrderedDict[tuple[str, bytes], str] = OrderedDict()
        self._lock = threading.Lock()
        self.guard = GuessingGuard.of(config)

    def agent(self, headers: Mapping[str, str] | Headers, remote_addr: str | None,
              session: Session | None = None) -> Agent:
        """The agent of a request with these ``headers`` from ``remote_addr``, and
        the live ``session`` its cookie names (if any)."""
        if not self.enabled:
            return ADMIN
        if self.proxy_header and self.is_trusted(remote_addr):
            principal = (headers.get(self.proxy_header) or "").strip()
            if principal:
                return self._proxy_agent(principal)
        authorization = headers.get("Authorization")
        if authorization is None:
            return ANONYMOUS if session is None else self.user_agent(session.user,
                                                                     session.admin)
        scheme, _, token = authorization.strip().partition(" ")
        if self.bearer.enabled and scheme.lower() == "bearer":
            return self._token_agent(token)
        name, password = parse_basic(authorization)
        user = self.verify(name, password, self.client_address(headers, remote_addr))
        if user is None:
            raise AuthenticationError("Wrong user name or password")
        return self.user_agent(user.name, user.admin)

    def user_agent(self, name: str, admin: bool) -> Agent:
        return Agent(name=name, webid=self.webid_base + quote(name, safe="@"), admin=admin)

    def _token_agent(self, token: str) -> Agent:
        """The agent of a verified bearer token (``BearerTokenError`` otherwise)."""
        user = self.bearer.user(token)
        if user.is_webid:
            return Agent(name=user.name, webid=user.name, admin=user.admin)
        return self.user_agent(user.name, user.admin)

    def is_trusted(self, remote_addr: str | None) -> bool:
        """Whether ``remote_addr`` is one of the trusted proxies."""
        return address_in(remote_addr, self.trusted)

    def client_address(self, headers: Mapping[str, str] | Headers,
                       remote_addr: str | None) -> str:
        """The client's address: ``remote_addr``, or behind trusted proxies the last
        ``X-Forwarded-For`` address that is not one of them."""
        if self.is_trusted(remote_addr):
            for hop in reversed((headers.get("X-Forwarded-For") or "").split(",")):
                hop = hop.strip()
                if hop and not self.is_trusted(hop):
                    return hop[:64]
        return remote_addr or "-"

    def _proxy_agent(self, principal: str) -> Agent:
        if _URI.fullmatch(principal):
            return Agent(name=principal, webid=principal)
        if not NAME.fullmatch(principal):
            raise AuthenticationError(f"The {self.proxy_header} header of the proxy is not "
                                      "a user name")
        user = self.users.get(principal)
        return self.user_agent(principal, user is not None and user.admin)

    def verify(self, name: str, password: str, address: str = "-") -> User | None:
        """The user ``name`` if ``password`` is its password (cached), else None;
        ``TooManyFailuresError`` or ``VerificationBusyError`` from the guard (credentials
        from ``address``)."""
        self.guard.check(name, address)
        user = self.users.get(name)
        # A keyed BLAKE2 is a MAC in one call (the hmac module's is several).
        digest = hashlib.blake2b(name.encode() + b"\0" + password.encode(), key=self._key,
                                 digest_size=32).digest()
        key = (name, digest)
        if user is not None:
            with self._lock:
                if self._verified.get(key) == user.hash:
                    self._verified.move_to_end(key)
                    return user
        with self.guard.verifying():
            self.guard.check(name, address)   # a backoff may have begun while it waited
            checked = self.users.verify(name, password)
        if checked is None:
            self.guard.failed(name, address)
            return None
        self.guard.succeeded(name)
        with self._lock:
            self._verified[key] = checked.hash
            self._verified.move_to_end(key)
            while len(self._verified) > _CACHE_SIZE:
                self._verified.popitem(last=False)
        return checked


def networks(entries: Iterable[str]) -> tuple[IPNetwork, ...]:
    """The networks of configured addresses or CIDR networks (checked by ``Config``)."""
    return tuple(ipaddress.ip_network(p, strict=False) for p in entries)


def address_in(address: str | None, nets: tuple[IPNetwork, ...]) -> bool:
    """Whether ``address`` (an IP address, IPv4-mapped IPv6 included) is in one of ``nets``."""
    if not address or not nets:
        return False
    try:
        addr = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    return any(addr in net or (mapped is not None and mapped in net) for net in nets)


def register(app: Flask, authenticator: Authenticator) -> None:
    """Authenticate every request of ``app`` with ``authenticator`` before its view runs."""
    app.extensions[EXTENSION] = authenticator
    app.before_request(_authenticate)


def _authenticate() -> None:
    request_agent()


def request_agent() -> Agent:
    """The agent of the current request (authenticated once, then cached on it), with
    the web origin its ``Origin`` header names (``acl:origin`` rules grant by it)."""
    agent = request.environ.get(_ENVIRON_KEY)
    if agent is None:
        authn: Authenticator | None = current_app.extensions.get(EXTENSION)
        agent = ADMIN if authn is None else authn.agent(request.headers,
                                                        request.remote_addr,
                                                        request_session())
        origin = request.headers.get("Origin")
        if origin is not None and not agent.admin:
            agent = replace(agent, origin=origin_of(origin))
        request.environ[_ENVIRON_KEY] = agent
    return agent


def _cookie_session() -> tuple[Session | None, bool]:
    """(the live session of the request's cookie, whether the cookie names none)."""
    found = request.environ.get(_SESSION_KEY)
    if found is None:
        authn: Authenticator | None = current_app.extensions.get(EXTENSION)
        cookie = request.cookies.get(COOKIE)
        session = None
        if cookie is not None and authn is not None and authn.sessions is not None:
            session = authn.sessions.open(cookie)
        found = (session, cookie is not None and session is None
                 and authn is not None and authn.sessions is not None)
        request.environ[_SESSION_KEY] = found
    return found


def request_session() -> Session | None:
    """The live session the current request's cookie names (None: no cookie, or
    one that names no live session)."""
    return _cookie_session()[0]


def session_stale() -> bool:
    """Whether the current request carries a session cookie that names no live
    session (expired, ended by signing out, tampered with)."""
    return _cookie_session()[1]


def require_admin() -> None:
    """``AccessDeniedError`` (401 anonymous, 403 other users) unless the current
    request is an administrator's."""
    agent = request_agent()
    if not agent.admin:
        raise AccessDeniedError(None, "Control", agent.authenticated,
                                "This page is for administrators only")


def recorded_name(agent: Agent) -> str:
    """The user name ``fcrepo:createdBy`` / ``lastModifiedBy`` record for ``agent``."""
    return agent.name or ANONYMOUS_NAME
