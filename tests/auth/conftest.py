"""Fixtures for authentication: a user database, and the app (tests/conftest.py) with
authentication on, on a data folder with seeded users."""
from __future__ import annotations

import base64

import pytest

from lakesuperior.auth.users import UserDB

ALICE = ("alice", "wonder land:1")       # a user; the password has a blank and a colon
ROOT = ("root", "s3cret-r00t")           # an administrator
FCREPO = "http://fedora.info/definitions/v4/repository#"
TTL = "text/turtle"


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


@pytest.fixture(scope="session")
def seeded_users(tmp_path_factory) -> bytes:
    """The bytes of a user file with ALICE and ROOT (hashed once per session)."""
    db = UserDB(tmp_path_factory.mktemp("users"))
    db.add(*ALICE)
    db.add(*ROOT, admin=True)
    with open(db.path, "rb") as fh:
        return fh.read()


@pytest.fixture
def data_dir(tmp_path, seeded_users):
    path = tmp_path / "data"
    path.mkdir()
    (path / "users.json").write_bytes(seeded_users)
    (path / "users.json").chmod(0o600)
    return path


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
    root ACL ``OPEN_ACL`` unless ``auth_root_acl`` is given."""
    def make(**settings):
        settings.setdefault("auth_root_acl", open_acl)
        return make_app(data_dir=str(data_dir), **settings)
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
