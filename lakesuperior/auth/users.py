"""The user database: who may log in, in ``DATA_DIR/users.json``.

The file (JSON, mode 0600, owner only)::

    {"format": 1, "users": {"alice": {"hash": "$argon2id$...", "admin": false}}}

Passwords are kept only as argon2id hashes (argon2-cffi, memory-hard, salted).
Every change is made under an exclusive lock on ``DATA_DIR/users.lock``, reads
the file afresh, and writes a complete new file that replaces the old one in
one rename, so concurrent ``lsup-admin`` runs never lose each other's changes
and readers never see half a file. A reader re-reads the file whenever its
identity (inode, size, modification time) changes, so every server worker sees
a change on its next request.

On the first start of a server the administrator ``admin`` is created with a
random password, written to ``DATA_DIR/initial-admin-password`` (mode 0600);
changing that user's password or removing it deletes the file.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from lakesuperior.exceptions import AdminError, StoreError
from lakesuperior.store import private

__all__ = ["USERS_FILE", "INITIAL_PASSWORD_FILE", "FIRST_ADMIN", "User", "UserDB",
           "check_name", "check_password", "write_private"]

USERS_FILE = "users.json"
LOCK_FILE = "users.lock"
INITIAL_PASSWORD_FILE = "initial-admin-password"
FIRST_ADMIN = "admin"
FORMAT = 1
MAX_PASSWORD = 1024     #: characters
#: 1 to 64 letters, digits, ``.``, ``_``, ``-`` or ``@``, starting with a letter or digit.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
#: Names that mean something else: ``anonymous`` is what a request without credentials records.
RESERVED = frozenset({"anonymous"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_T = TypeVar("_T")


@dataclass(frozen=True)
class User:
    """One user: its name, its password hash, whether it is an administrator."""

    name: str
    admin: bool = False
    hash: str = field(default="", repr=False)


def check_name(name: str) -> str:
    """``name`` if it can be a user name, else ``AdminError`` saying why."""
    if not isinstance(name, str) or not name:
        raise AdminError("A user name cannot be empty")
    if not NAME.fullmatch(name):
        raise AdminError(f"Invalid user name {name!r}: use 1 to 64 letters, digits, '.', "
                         "'_', '-' or '@', starting with a letter or digit")
    if name in RESERVED:
        raise AdminError(f"The user name {name!r} is reserved")
    return name


def check_password(password: str) -> str:
    """``password`` if it can be a password, else ``AdminError`` saying why (without it)."""
    if not password:
        raise AdminError("The password cannot be empty")
    if len(password) > MAX_PASSWORD:
        raise AdminError(f"The password is longer than {MAX_PASSWORD} characters")
    if _CONTROL.search(password):
        raise AdminError("The password cannot contain control characters (RFC 7617)")
    return password


class UserDB:
    """The users of the data directory ``data_dir`` (see the module doc).

    Thread-safe; one per process is enough (it caches the parsed file).
    """

    def __init__(self, data_dir: str | os.PathLike):
        self.data_dir = os.path.abspath(os.fspath(data_dir))
        self.path = os.path.join(self.data_dir, USERS_FILE)
        self.initial_password_path = os.path.join(self.data_dir, INITIAL_PASSWORD_FILE)
        self.hasher = PasswordHasher()
        self._dummy = ""
        self._lock = threading.Lock()
        self._cached: tuple[tuple[int, int, int], dict[str, User]] | None = None

    # -- reading ------------------------------------------------------------------------

    def users(self) -> dict[str, User]:
        """Name -> ``User``, as the file says now (an empty dict if there is none)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        sig = _signature(st)
        with self._lock:
            if self._cached is not None and self._cached[0] == sig:
                return self._cached[1]
        try:
            with open(self.path, "rb") as fh:
                sig = _signature(os.fstat(fh.fileno()))
                data = fh.read()
        except FileNotFoundError:
            return {}
        users = _parse(data, self.path)
        with self._lock:
            self._cached = (sig, users)
        return users

    def get(self, name: str) -> User | None:
        return self.users().get(name)

    def verify(self, name: str, password: str) -> User | None:
        """The user ``name`` if ``password`` is its password, else None (in about
        the same time for an unknown user as for a wrong password)."""
        user = self.get(name)
        try:
            self.hasher.verify(user.hash if user else self._dummy_hash(), password)
        except (VerificationError, InvalidHashError):
            return None
        return user

    def _dummy_hash(self) -> str:
        if not self._dummy:
            self._dummy = self.hasher.hash(secrets.token_urlsafe(16))
        return self._dummy

    # -- changing ---------------------------------------------------------------------------

    def add(self, name: str, password: str, *, admin: bool = False) -> User:
        """Create the user ``name``; ``AdminError`` if it exists or the input is bad."""
        check_name(name)
        user = User(name, admin, self.hasher.hash(check_password(password)))

        def change(users: dict[str, User]) -> User:
            if name in users:
                raise AdminError(f"The user {name!r} exists already")
            users[name] = user
            return user
        return self._change(change)

    def set_password(self, name: str, password: str) -> User:
        """Give the user ``name`` a new password; ``AdminError`` if there is no such user."""
        new_hash = self.hasher.hash(check_password(password))

        def change(users: dict[str, User]) -> User:
            old = _existing(users, name)
            users[name] = User(name, old.admin, new_hash)
            return users[name]
        user = self._change(change)
        self._forget_initial_password(name)
        return user

    def remove(self, name: str) -> None:
        """Remove the user ``name``; ``AdminError`` if there is no such user."""
        self._change(lambda users: users.pop(_existing(users, name).name))
        self._forget_initial_password(name)

    def create_first_admin(self) -> str | None:
        """If there is no user, create the administrator ``admin`` with a random
        password written to ``initial_password_path`` (mode 0600) and return that
        path; else None. Safe to call from several processes at once."""
        password = secrets.token_urlsafe(18)

        def change(users: dict[str, User]) -> bool:
            if users:
                return False
            users[FIRST_ADMIN] = User(FIRST_ADMIN, True, self.hasher.hash(password))
            write_private(self.initial_password_path, (password + "\n").encode())
            return True
        return self.initial_password_path if self._change(change) else None

    def copy_to(self, data_dir: str) -> int:
        """Copy the user file into the data directory ``data_dir`` (mode 0600), as it
        is now; the number of users (0 and nothing written if there is none)."""
        with self._locked():
            try:
                with open(self.path, "rb") as fh:
                    data = fh.read()
            except FileNotFoundError:
                return 0
        users = _parse(data, self.path)
        write_private(os.path.join(data_dir, USERS_FILE), data)
        return len(users)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        private.make_dirs(self.data_dir)
        fd = os.open(os.path.join(self.data_dir, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _change(self, change: Callable[[dict[str, User]], _T]) -> _T:
        """Apply ``change`` to the current users under the lock and write the result
        (nothing is written if ``change`` raises)."""
        with self._locked():
            try:
                with open(self.path, "rb") as fh:
                    users = dict(_parse(fh.read(), self.path))
            except FileNotFoundError:
                users = {}
            result = change(users)
            doc = {"format": FORMAT, "users": {
                u.name: {"hash": u.hash, "admin": u.admin} for u in users.values()}}
            write_private(self.path, (json.dumps(doc, indent=1, sort_keys=True)
                                       + "\n").encode())
        return result

    def _forget_initial_password(self, name: str) -> None:
        if name == FIRST_ADMIN:
            try:
                os.unlink(self.initial_password_path)
            except FileNotFoundError:
                pass


def _existing(users: dict[str, User], name: str) -> User:
    user = users.get(name)
    if user is None:
        raise AdminError(f"No user {name!r}")
    return user


def _signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _parse(data: bytes, path: str) -> dict[str, User]:
    """The users of a user file's bytes; ``StoreError`` naming ``path`` if it is not one."""
    def bad(why: str) -> StoreError:
        return StoreError(f"The user database {path} is unusable: {why}")
    try:
        doc: Any = json.loads(data)
    except (UnicodeDecodeError, ValueError) as e:
        raise bad(f"not JSON ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("users"), dict):
        raise bad("no 'users' mapping")
    if doc.get("format") != FORMAT:
        raise bad(f"format {doc.get('format')!r}, this Lakesuperior reads format {FORMAT}")
    users: dict[str, User] = {}
    for name, entry in doc["users"].items():
        if (not NAME.fullmatch(name) or not isinstance(entry, dict)
                or not isinstance(entry.get("hash"), str)
                or not isinstance(entry.get("admin"), bool)):
            raise bad(f"the entry of {name!r} is not a user")
        users[name] = User(name, entry["admin"], entry["hash"])
    return users


def write_private(path: str, data: bytes) -> None:
    """Write ``path`` atomically (a new file renamed over the old one), mode 0600."""
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
