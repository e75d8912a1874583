"""``fcr:fixity`` needs acl:Read on the binary: 401 for the anonymous agent, 403
for a user without it, 200 with it."""
from __future__ import annotations

from .conftest import ALICE, ANONYMOUS, BOB, grant, put_acl


def test_fixity_needs_read(client, repo, act):
    assert client.put("/rest/b", data=b"abc", content_type="text/plain").status_code == 201
    put_acl(repo, "/b", grant("/b", "acl:Read", who=f"acl:agent <{ALICE.webid}>"))
    act(ALICE)
    r = client.get("/rest/b/fcr:fixity")
    assert r.status_code == 200
    assert b"SUCCESS" in r.data
    act(BOB)
    assert client.get("/rest/b/fcr:fixity").status_code == 403
    act(ANONYMOUS)
    r = client.get("/rest/b/fcr:fixity")
    assert r.status_code == 401
    assert b"SUCCESS" not in r.data


def test_fixity_options_has_the_checks_of_a_get(client, repo, act):
    """OPTIONS answered without them told anyone that a closed binary exists."""
    assert client.put("/rest/b", data=b"abc", content_type="text/plain").status_code == 201
    put_acl(repo, "/b", grant("/b", "acl:Read", who=f"acl:agent <{ALICE.webid}>"))
    act(ALICE)
    assert client.options("/rest/b/fcr:fixity").status_code == 200
    assert client.options("/rest/nothing/fcr:fixity").status_code == 404
    act(BOB)
    r = client.options("/rest/b/fcr:fixity")
    assert r.status_code == 403 and "Allow" not in r.headers
    act(ANONYMOUS)
    assert client.options("/rest/b/fcr:fixity").status_code == 401
