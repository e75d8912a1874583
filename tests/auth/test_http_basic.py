"""HTTP Basic (RFC 7617) against the user database: good and bad credentials,
malformed headers (401 with a challenge, never 500), anonymous requests, the
user recorded in fcrepo:createdBy / lastModifiedBy, and /admin/* for
administrators only."""
from __future__ import annotations

import base64

import pytest

from .conftest import ALICE, ROOT, TTL, basic, created_by

BODY = b"<> <http://purl.org/dc/terms/title> \"t\" ."


def assert_challenge(r, *secrets: str) -> None:
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"] == 'Basic realm="Lakesuperior"'
    text = r.get_data(as_text=True)
    for secret in secrets:
        assert secret not in text


def test_basic_user_put_records_the_user(client, repo):
    r = client.put("/rest/a", data=BODY, content_type=TTL, headers=basic(*ALICE))
    assert r.status_code == 201
    assert created_by(repo, "/a") == ("alice", "alice")
    r = client.put("/rest/a", data=BODY, content_type=TTL, headers=basic(*ROOT))
    assert r.status_code == 204
    assert created_by(repo, "/a") == ("alice", "root")


def test_anonymous_put_records_anonymous(client, repo):
    assert client.put("/rest/b", data=BODY, content_type=TTL).status_code == 201
    assert created_by(repo, "/b") == ("anonymous", "anonymous")


def test_scheme_name_is_case_insensitive(client):
    token = basic(*ALICE)["Authorization"].split()[1]
    assert client.get("/rest/", headers={"Authorization": f"bAsIc  {token} "}).status_code == 200


@pytest.mark.parametrize("who", [(ALICE[0], "wrong"), ("nobody", "x"), (ALICE[0], ""),
                                 (ALICE[0], ALICE[1] + " "), ("ALICE", ALICE[1])])
def test_wrong_credentials_are_401_and_write_nothing(client, repo, state, who):
    before = state(repo)
    r = client.put("/rest/c", data=BODY, content_type=TTL, headers=basic(*who))
    assert_challenge(r, who[1] or "\0")
    assert "Wrong user name or password" in r.get_data(as_text=True)
    assert state(repo) == before


MALFORMED = {
    "empty": "",
    "blank": "   ",
    "scheme only": "Basic",
    "scheme and blank": "Basic   ",
    "not base64": "Basic !!!notbase64!!!",
    "bad padding": "Basic YWxpY2U6eA",
    "no colon": "Basic " + base64.b64encode(b"alicepassword").decode(),
    "empty user": "Basic " + base64.b64encode(b":pw").decode(),
    "not utf-8": "Basic " + base64.b64encode(b"alice:\xff\xfe").decode(),
    "control character": "Basic " + base64.b64encode(b"alice:pa\x01ss").decode(),
    "non-ascii token": "Basic YWxpY2U6eA\u00e9=",
    "bearer": "Bearer abc.def.ghi",
    "digest": 'Digest username="alice", realm="x"',
    "two credentials": basic(*ALICE)["Authorization"] + ", " + basic(*ROOT)["Authorization"],
}


@pytest.mark.parametrize("value", MALFORMED.values(), ids=MALFORMED.keys())
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_malformed_authorization_is_401_never_500(client, repo, state, value, method):
    before = state(repo)
    r = client.open("/rest/", method=method, data=BODY if method == "PUT" else None,
                    content_type=TTL, headers={"Authorization": value})
    assert_challenge(r, *([value[7:]] if len(value) > 12 else []), "pa\x01ss", "alicepassword")
    assert state(repo) == before


def test_malformed_authorization_on_other_routes(client):
    for path in ("/", "/constraints", "/query/sparql?query=ASK%7B%7D", "/admin/stats"):
        assert_challenge(client.get(path, headers={"Authorization": "Basic %%%"}))


def test_401_body_never_echoes_the_password(client):
    secret = "my-very-own-secret"
    for accept in ("text/plain", "application/json", "text/html", "text/turtle"):
        r = client.get("/rest/", headers={**basic("alice", secret), "Accept": accept})
        assert_challenge(r, secret)


def test_changed_password_and_removed_user_take_effect_at_once(client, users):
    ok = basic(*ALICE)
    assert client.get("/rest/", headers=ok).status_code == 200   # now verified and cached
    users.set_password("alice", "new password")
    assert_challenge(client.get("/rest/", headers=ok))
    assert client.get("/rest/", headers=basic("alice", "new password")).status_code == 200
    users.remove("alice")
    assert_challenge(client.get("/rest/", headers=basic("alice", "new password")))


def test_admin_pages_are_for_administrators(client):
    r = client.get("/admin/stats", headers={"Accept": "application/json"})
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Basic ")
    assert "administrators only" in r.get_data(as_text=True)
    r = client.get("/admin/stats", headers={**basic(*ALICE), "Accept": "application/json"})
    assert r.status_code == 403 and "WWW-Authenticate" not in r.headers
    assert "administrators only" in r.get_data(as_text=True)
    assert client.get("/admin/fixity/x", headers=basic(*ALICE)).status_code == 403
    r = client.get("/admin/stats", headers={**basic(*ROOT), "Accept": "application/json"})
    assert r.status_code == 200 and r.get_json()["resources"] >= 1


def test_auth_disabled_acts_as_admin(make_app):
    app = make_app(auth_enabled=False)
    client = app.test_client()
    repo = app.extensions["lakesuperior"].repository
    assert client.put("/rest/d", data=BODY, content_type=TTL).status_code == 201
    assert created_by(repo, "/d") == ("admin", "admin")
    assert client.get("/admin/stats", headers={"Accept": "application/json"}).status_code == 200
    # credentials are not even looked at
    assert client.get("/rest/", headers={"Authorization": "Basic %%%"}).status_code == 200


def test_request_agent_of_each_kind(app):
    from lakesuperior.auth.agents import ANONYMOUS
    from lakesuperior.endpoints import authn
    with app.test_request_context("/rest/", headers=basic(*ROOT)):
        agent = authn.request_agent()
        assert (agent.name, agent.admin) == ("root", True)
        assert agent.webid == "info:fedora/local-user#root"
        assert authn.request_agent() is agent                 # once per request
    with app.test_request_context("/rest/", headers=basic(*ALICE)):
        assert authn.request_agent().admin is False
    with app.test_request_context("/rest/"):
        assert authn.request_agent() == ANONYMOUS


def test_webid_base_is_configurable(make_app):
    app = make_app(auth_webid_base="https://example.org/people/")
    from lakesuperior.endpoints import authn
    with app.test_request_context("/rest/", headers=basic(*ALICE)):
        assert authn.request_agent().webid == "https://example.org/people/alice"
