"""HTTP transactions run as their owner: staged requests are checked again with the
owner's current rights at commit; anonymous agents cannot open transactions; each
agent may hold a bounded number open; a transaction cannot be extended past its
total lifetime. Authentication is real (HTTP Basic against a user database)."""
from __future__ import annotations

import os
from email.utils import parsedate_to_datetime

import pytest

from tests.auth.conftest import basic, user_file, write_users
from tests.conftest import store_state
from tests.tx.conftest import ROOT, TTL, tx_app
from tests.webac.conftest import grant

ALICE = ("alice", "alice-pw-1")
BOB = ("bob", "bob-pw-22")
ROOT_USER = ("root", "root-pw-333")
ALICE_WEBID = "info:fedora/local-user#alice"


@pytest.fixture(scope="module")
def users_file(tmp_path_factory) -> bytes:
    return user_file(tmp_path_factory.mktemp("users"), [ALICE, BOB], [ROOT_USER])


@pytest.fixture
def make(tmp_path, users_file, clock):
    apps = []

    def build(**settings):
        data = tmp_path / f"data{len(apps)}"
        write_users(data, users_file)
        app = tx_app(data, auth_enabled=True, **settings)
        app.extensions["lakesuperior"].staging.clock = clock
        apps.append(app)
        return app.test_client()

    yield build
    for app in apps:
        app.extensions["lakesuperior"].close()


@pytest.fixture
def client(make):
    return make()


def open_as(client, who) -> str:
    r = client.post("/rest/fcr:tx", headers=basic(*who))
    assert r.status_code == 201, r.get_data(as_text=True)
    return r.headers["Location"]


def put_acl(client, path: str, modes: str) -> None:
    r = client.put(f"{path}/fcr:acl", data=grant(path.removeprefix("/rest"), modes,
                                                  who=f"acl:agent <{ALICE_WEBID}>"),
                   content_type=TTL, headers=basic(*ROOT_USER))
    assert r.status_code in (201, 204), r.get_data(as_text=True)


# --- item 8: a revoked right is seen at commit -----------------------------------------------

def test_tx_commit_rechecks_revoked_write_409_nothing_applied(client, make):
    repo = client.application.extensions["lakesuperior"].repository
    assert client.put("/rest/open", headers=basic(*ROOT_USER)).status_code == 201
    put_acl(client, "/rest/open", "acl:Read, acl:Write")
    tx = open_as(client, ALICE)
    r = client.put("/rest/open/x", data=b"", content_type=TTL,
                   headers={"Atomic-ID": tx, **basic(*ALICE)})
    assert r.status_code == 201, r.get_data(as_text=True)
    put_acl(client, "/rest/open", "acl:Read")          # the administrator revokes Write
    direct = client.put("/rest/open/y", data=b"", content_type=TTL, headers=basic(*ALICE))
    assert direct.status_code == 403
    before = store_state(repo)
    assert client.post(tx, headers=basic(*ALICE)).status_code == 204   # extending works
    r = client.put(tx, headers=basic(*ALICE))
    text = r.get_data(as_text=True)
    assert r.status_code == 409, text
    assert "Write access to /open/x" in text and "nothing was committed" in text
    assert store_state(repo) == before
    assert client.get("/rest/open/x", headers=basic(*ROOT_USER)).status_code == 404
    assert client.get(tx, headers=basic(*ALICE)).status_code == 410


def test_tx_staged_request_replays_as_its_owner(client):
    """Within the transaction, the staged writes run again as the owner, not as an
    administrator: after the revocation the staged resource is not there any more
    for the owner's next request either."""
    assert client.put("/rest/open", headers=basic(*ROOT_USER)).status_code == 201
    put_acl(client, "/rest/open", "acl:Read, acl:Write")
    tx = open_as(client, ALICE)
    assert client.put("/rest/open/x", data=b"", content_type=TTL,
                      headers={"Atomic-ID": tx, **basic(*ALICE)}).status_code == 201
    assert client.get("/rest/open/x", headers={"Atomic-ID": tx, **basic(*ALICE)}
                      ).status_code == 200
    put_acl(client, "/rest/open", "acl:Read")
    assert client.get("/rest/open/x", headers={"Atomic-ID": tx, **basic(*ALICE)}
                      ).status_code == 404


def test_tx_commit_unchanged_rights_applies(client):
    assert client.put("/rest/open", headers=basic(*ROOT_USER)).status_code == 201
    put_acl(client, "/rest/open", "acl:Read, acl:Write")
    tx = open_as(client, ALICE)
    assert client.put("/rest/open/x", data=b"", content_type=TTL,
                      headers={"Atomic-ID": tx, **basic(*ALICE)}).status_code == 201
    assert client.put(tx, headers=basic(*ALICE)).status_code == 204
    assert client.get("/rest/open/x", headers=basic(*ALICE)).status_code == 200


# --- item 9: who may open, how many, for how long ---------------------------------------------

def test_tx_anonymous_cannot_open_401(client):
    staging = client.application.extensions["lakesuperior"].staging
    before = sorted(os.listdir(staging.root))
    r = client.post("/rest/fcr:tx")
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"].startswith("Basic")
    assert "authenticate" in r.get_data(as_text=True).lower()
    assert sorted(os.listdir(staging.root)) == before


def test_tx_anonymous_flood_leaves_room_for_users(make):
    client = make(transactions_max_open=5)
    for _ in range(10):
        assert client.post("/rest/fcr:tx").status_code == 401
    open_as(client, ROOT_USER)


def test_tx_per_agent_limit_409(make):
    client = make(transactions_max_per_agent=2)
    first = open_as(client, ALICE)
    open_as(client, ALICE)
    r = client.post("/rest/fcr:tx", headers=basic(*ALICE))
    assert r.status_code == 409
    assert "transactions.max_per_agent" in r.get_data(as_text=True)
    open_as(client, BOB)                                   # others are not affected
    assert client.delete(first, headers=basic(*ALICE)).status_code == 204
    open_as(client, ALICE)                                 # room again


def test_tx_total_lifetime_caps_extension(make, clock):
    client = make(transactions_lifetime=180, transactions_max_lifetime=300)
    start = clock.now
    tx = open_as(client, ALICE)
    clock.now = start + 150
    r = client.post(tx, headers=basic(*ALICE))
    assert r.status_code == 204
    assert parsedate_to_datetime(r.headers["Atomic-Expires"]).timestamp() == start + 300
    clock.now = start + 200
    r = client.post(tx, headers=basic(*ALICE))
    assert r.status_code == 409
    assert "transactions.max_lifetime" in r.get_data(as_text=True)
    assert client.get(tx, headers=basic(*ALICE)).status_code == 204   # still open until then
    clock.now = start + 301
    assert client.get(tx, headers=basic(*ALICE)).status_code == 410


def test_tx_first_expiry_within_total_lifetime(make, clock):
    client = make(transactions_lifetime=180, transactions_max_lifetime=60)
    r = client.post("/rest/fcr:tx", headers=basic(*ALICE))
    assert r.status_code == 201
    assert parsedate_to_datetime(r.headers["Atomic-Expires"]).timestamp() == clock.now + 60
    assert r.headers["Location"].startswith(ROOT + "/fcr:tx/")
