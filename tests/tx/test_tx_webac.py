"""HTTP transactions and Web Access Control: access is checked per request, and a
transaction belongs to the user who opened it."""
from __future__ import annotations

import pytest

from lakesuperior.endpoints import authn
from tests.conftest import store_state
from tests.tx.test_tx_http import staged_files
from tests.webac.conftest import ADMIN, ALICE, BOB, ROOT, TTL, grant, put_acl


@pytest.fixture
def app_config(monkeypatch):
    """Authentication on; requests act as the administrator until ``act``."""
    monkeypatch.setattr(authn, "request_agent", lambda: ADMIN)
    return {}


@pytest.fixture
def act(monkeypatch):
    def use(agent):
        monkeypatch.setattr(authn, "request_agent", lambda: agent)
    return use


@pytest.fixture
def tree(app):
    client = app.test_client()
    repo = app.extensions["lakesuperior"].repository
    for path in ("/rest/open", "/rest/closed"):
        assert client.put(path, data=b"", content_type=TTL).status_code == 201
    put_acl(repo, "/open", grant("/open", "acl:Read, acl:Write",
                                 who=f"acl:agent <{ALICE.webid}>"))
    put_acl(repo, "/closed", grant("/closed", "acl:Read", who=f"acl:agent <{ALICE.webid}>"))
    return client, repo


def test_tx_webac_checked_per_request(tree, act):
    client, repo = tree
    act(ALICE)
    tx = client.post("/rest/fcr:tx").headers["Location"]
    r = client.put("/rest/open/x", data=b"", content_type=TTL, headers={"Atomic-ID": tx})
    assert r.status_code == 201
    before = store_state(repo)
    staged = staged_files(repo)
    r = client.put("/rest/closed/x", data=b"", content_type=TTL, headers={"Atomic-ID": tx})
    assert r.status_code == 403
    assert "Write access to /closed/x" in r.get_data(as_text=True)
    assert staged_files(repo) == staged
    assert store_state(repo) == before
    assert client.put(tx).status_code == 204
    act(ADMIN)
    assert client.get("/rest/open/x").status_code == 200
    assert client.get("/rest/closed/x").status_code == 404


def test_tx_belongs_to_its_user(tree, act):
    client, repo = tree
    act(ALICE)
    tx = client.post("/rest/fcr:tx").headers["Location"]
    act(BOB)
    r = client.put("/rest/open/y", data=b"", content_type=TTL, headers={"Atomic-ID": tx})
    assert r.status_code == 403
    assert "another user" in r.get_data(as_text=True)
    for method in ("get", "post", "put", "delete"):
        assert getattr(client, method)(tx).status_code == 403, method
    act(ALICE)
    assert client.get(tx).status_code == 204
    assert client.get(f"{ROOT}/open/y", headers={"Atomic-ID": tx}).status_code == 404
