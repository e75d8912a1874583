"""Sessions of the login page: the signed cookie, the records that make it valid,
and the token that guards its forms.

A sign-in (``SessionStore.create``) makes a session: a random id (128 bits), a
record ``DATA_DIR/sessions/<id>`` naming the user and a fingerprint of the
user's password hash, and a cookie value ``<id>.<issued>.<signature>``:
HMAC-SHA256, under the key in ``DATA_DIR/sessions/signing.key``, of the id and
the time of the sign-in. The key (32 random bytes) is made by the first process
that needs it, written owner-only (``store.private``) and linked into place in
one step, so every worker of a server, and every restart, signs with the same
key; removing it ends every session.

``SessionStore.open`` takes a cookie value back to its ``Session``, or None
(signed out) when any of these fails: the signature, the lifetime
(``auth.session.lifetime`` seconds from the sign-in), the record (removed by
``end``: signing out), the user (still in the user database, with the same
password hash: a changed password or a removed user ends every session of the
user). The administrator flag is the user database's at each request.

A session's CSRF token is an HMAC of its id under the same key: the forms of
the pages carry it, and a state-changing request with the cookie must too
(``endpoints.session``). Records past their lifetime are removed by the next
sign-in (at most one sweep a minute per store).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from lakesuperior.auth.users import User, UserDB
from lakesuperior.exceptions import StoreError
from lakesuperior.store import private

__all__ = ["COOKIE", "KEY_FILE", "Session", "SessionStore"]

#: The name of the session cookie.
COOKIE = "lsup_session"
KEY_FILE = "signing.key"
KEY_BYTES = 32
#: Seconds between two sweeps of the expired records.
SWEEP_EVERY = 60.0
_SID = re.compile(r"[0-9a-f]{32}")
_COOKIE = re.compile(r"([0-9a-f]{32})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})")


@dataclass(frozen=True)
class Session:
    """One signed-in session: its id, its user, when it ends, its CSRF token."""

    sid: str
    user: str
    admin: bool
    expires: float     #: seconds since the epoch
    csrf: str


class SessionStore:
    """The sessions of one data directory (see the module doc). Thread-safe; the
    state is on disk, so every process of a server sees the same sessions."""

    def __init__(self, directory: str, lifetime: float, users: UserDB, *,
                 clock: Callable[[], float] = time.time):
        self.directory = directory
        self.lifetime = lifetime
        self.users = users
        self.clock = clock
        private.make_dirs(directory)
        self._key = _load_key(os.path.join(directory, KEY_FILE))
        self._lock = threading.Lock()
        self._swept = 0.0

    # -- sessions ----------------------------------------------------------------------

    def create(self, user: User) -> tuple[str, Session]:
        """A new session of ``user``: (cookie value, session)."""
        self._sweep()
        sid = secrets.token_hex(16)
        issued = int(self.clock())
        record = json.dumps({"user": user.name, "issued": issued,
                             "password": self._fingerprint(user)}).encode()
        fd = private.open_file(self._path(sid), os.O_WRONLY | os.O_EXCL)
        with os.fdopen(fd, "wb") as fh:
            fh.write(record)
        payload = f"{sid}.{issued}"
        return f"{payload}.{self._sign(payload)}", self._session(sid, user, issued)

    def open(self, cookie: str) -> Session | None:
        """The live session of a cookie value; None if it is not one (module doc)."""
        found = _COOKIE.fullmatch(cookie.strip())
        if found is None:
            return None
        sid, issued_text, signature = found.groups()
        payload = f"{sid}.{issued_text}"
        if not hmac.compare_digest(signature, self._sign(payload)):
            return None
        issued = int(issued_text)
        if not issued <= self.clock() < issued + self.lifetime:
            return None
        try:
            with open(self._path(sid), "rb") as fh:
                record = json.loads(fh.read(4096))
        except (OSError, ValueError):
            return None
        user = self.users.get(str(record.get("user")))
        if (user is None or record.get("issued") != issued
                or not hmac.compare_digest(str(record.get("password")),
                                           self._fingerprint(user))):
            return None
        return self._session(sid, user, issued)

    def end(self, session: Session) -> None:
        """Sign out: the session's record goes, so its cookie is refused everywhere."""
        try:
            os.unlink(self._path(session.sid))
        except FileNotFoundError:
            pass

    def csrf_token(self, sid: str) -> str:
        """The CSRF token of session ``sid``."""
        return hmac.new(self._key, b"csrf\0" + sid.encode(), hashlib.sha256).hexdigest()

    def count(self) -> int:
        """Session records on disk (live or not yet swept)."""
        return sum(1 for name in os.listdir(self.directory) if _SID.fullmatch(name))

    # -- inside ------------------------------------------------------------------------

    def _session(self, sid: str, user: User, issued: int) -> Session:
        return Session(sid, user.name, user.admin, issued + self.lifetime,
                       self.csrf_token(sid))

    def _path(self, sid: str) -> str:
        return os.path.join(self.directory, sid)

    def _sign(self, payload: str) -> str:
        mac = hmac.new(self._key, b"session\0" + payload.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).decode().rstrip("=")

    def _fingerprint(self, user: User) -> str:
        """What the record keeps of the password hash: a keyed digest, never the hash."""
        return hmac.new(self._key, b"password\0" + user.hash.encode(),
                        hashlib.sha256).hexdigest()[:32]

    def _sweep(self) -> None:
        """Remove the records past their lifetime (at most once per ``SWEEP_EVERY``)."""
        now = self.clock()
        with self._lock:
            if now - self._swept < SWEEP_EVERY:
                return
            self._swept = now
        for name in os.listdir(self.directory):
            if not _SID.fullmatch(name):
                continue
            path = self._path(name)
            try:
                if os.stat(path).st_mtime + self.lifetime < now:
                    os.unlink(path)
            except FileNotFoundError:
                continue


def _load_key(path: str) -> bytes:
    """The signing key at ``path``, made (owner-only, linked into place at once) if
    there is none."""
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    temp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = private.open_file(temp, os.O_WRONLY | os.O_EXCL)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_BYTES))
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(temp, path)
        except FileExistsError:
            pass                      # another process made it first: use that one
    finally:
        os.unlink(temp)
    return _read_key(path)


def _read_key(path: str) -> bytes:
    with open(path, "rb") as fh:
        key = fh.read(KEY_BYTES + 1)
    if len(key) != KEY_BYTES:
        raise StoreError(f"The session key {path} is not a key this server wrote: remove "
                         "it (every session ends) and start the server again")
    return key
