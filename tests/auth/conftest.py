"""Fixtures for authentication: a user database, and the app (tests/conftest.py) with
authentication on, on a data folder with seeded users."""
from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from lakesuperior.auth.users import UserDB
from lakesuperior.endpoints import authn

ALICE = ("alice", "wonder land:1")       # a user; the password has a blank and a colon
ROOT = ("root", "s3cret-r00t")           # an administrator
FCREPO = "http://fedora.info/definitions/v4/repository#"
TTL = "text/turtle"
#: argon2id at its lowest cost (1 pass over 1 MiB, one lane): a verification takes
#: about a millisecond instead of about 0.2 s of CPU. The tests here are about who
#: the agent is and how guessing is slowed, not about the cost of the hash
#: (tests/auth/test_users.py checks the hashes ``UserDB`` makes), and argon2 reads
#: the parameters of each verification from the hash it verifies against.
CHEAP_HASHER = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


def user_file(folder: Path, users: Iterable[tuple[str, str]],
              admins: Iterable[tuple[str, str]] = ()) -> bytes:
    """The bytes of a user file (made in ``folder``) with the ``(name, password)``
    pairs of ``users``, and of ``admins`` as administrators, hashed by ``CHEAP_HASHER``."""
    db = UserDB(folder)
    db.hasher = CHEAP_HASHER
    for user in users:
        db.add(*user)
    for user in admins:
        db.add(*user, admin=True)
    with open(db.path, "rb") as fh:
        return fh.read()


def write_users(data_dir: Path, content: bytes) -> None:
    """Put the user file ``content`` into the data folder ``data_dir`` (made if missing)."""
    data_dir.mkdir(exist_ok=True)
    (data_dir / "users.json").write_bytes(content)
    (data_dir / "users.json").chmod(0o600)


@pytest.fixture(scope="session")
def seeded_users(tmp_path_factory) -> bytes:
    """The bytes of a user file with ALICE and ROOT (made once per session)."""
    return user_file(tmp_path_factory.mktemp("users"), [ALICE], [ROOT])


@pytest.fixture
def data_dir(tmp_path, seeded_users):
    write_users(tmp_path / "data", seeded_users)
    return tmp_path / "data"


@pytest.fixture
def users(data_dir) -> UserDB:
    return UserDB(data_dir)


#: A root ACL that lets every agent read and write everything: these tests are
#: about who the agent is, not what it may do (tests/webac).
OPEN_ACL = b"""@prefix acl: <http://www.w3.org/ns/auth/acl#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
<#open> a acl:Authorization ; acl:agentClass foaf:Agent ; acl:mode acl:Read, acl:Write ;
    acl:accessTo <./> ; acl:default <./> .
"""


@pytest.fixture
def open_acl(tmp_path) -> str:
    """The path of a Turtle file holding ``OPEN_ACL`` (for ``auth.root_acl``)."""
    path = tmp_path / "open-acl.ttl"
    path.write_bytes(OPEN_ACL)
    return str(path)


@pytest.fixture
def make_app(make_app, data_dir, open_acl):
    """``make_app(**config)``: the app on ``data_dir`` (its users seeded), with the
    root ACL ``OPEN_ACL`` unless ``auth_root_acl`` is given; its user database
    hashes with ``CHEAP_HASHER`` (the stand-in hash of an unknown user included)."""
    def make(**settings):
        settings.setdefault("auth_root_acl", open_acl)
        app = make_app(data_dir=str(data_dir), **settings)
        app.extensions[authn.EXTENSION].users.hasher = CHEAP_HASHER
        return app
    return make


@pytest.fixture
def app_config():
    """Authentication on (the default configuration)."""
    return {}


@pytest.fixture
def repo(app):
    return app.extensions["lakesuperior"].repository


def created_by(repo, uid: str) -> tuple[str, str]:
    """(fcrepo:createdBy, fcrepo:lastModifiedBy) of ``uid``, as plain strings."""
    res = repo.get(uid)
    values = {p: o for _s, p, o in res.triples
              if p in (f"<{FCREPO}createdBy>", f"<{FCREPO}lastModifiedBy>")}
    return (values[f"<{FCREPO}createdBy>"].strip('"'),
            values[f"<{FCREPO}lastModifiedBy>"].strip('"'))
