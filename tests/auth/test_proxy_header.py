"""The trusted proxy header (auth.proxy_header): believed from auth.trusted_proxies
only, ignored from anyone else; in the test client and over a real gunicorn."""
from __future__ import annotations

import http.client
import json

import pytest

from ..servers import lsup_server
from .conftest import ALICE, ROOT, TTL, basic, created_by

BODY = b"<> <http://purl.org/dc/terms/title> \"t\" ."
HEADER = "X-Remote-User"


@pytest.fixture
def proxied(make_app):
    return make_app(auth_proxy_header=HEADER, auth_trusted_proxies=("10.0.0.0/8", "::1"))


def agent_of(app, headers, remote_addr):
    from lakesuperior.endpoints import authn
    with app.test_request_context("/rest/", headers=headers,
                                  environ_base={"REMOTE_ADDR": remote_addr}):
        return authn.request_agent()


def test_trusted_proxy_header_names_the_user(proxied):
    agent = agent_of(proxied, {HEADER: "jdoe@example.org"}, "10.1.2.3")
    assert (agent.name, agent.admin) == ("jdoe@example.org", False)
    assert agent.webid == "info:fedora/local-user#jdoe@example.org"
    assert agent_of(proxied, {HEADER: "root"}, "::1").admin is True     # admin in users.json
    assert agent_of(proxied, {HEADER: "alice"}, "::ffff:10.9.9.9").name == "alice"


def test_trusted_proxy_uri_principal_is_the_webid(proxied):
    agent = agent_of(proxied, {HEADER: "https://idp.example.org/u/jdoe"}, "10.0.0.1")
    assert agent.webid == agent.name == "https://idp.example.org/u/jdoe"


def test_trusted_proxy_header_wins_over_basic(proxied):
    headers = {HEADER: "carol", **basic("nobody", "wrong")}
    assert agent_of(proxied, headers, "10.0.0.1").name == "carol"


def test_untrusted_addresses_are_ignored(proxied):
    for addr in ("127.0.0.1", "11.0.0.1", "::2", "", "not-an-address"):
        assert agent_of(proxied, {HEADER: "root"}, addr).name is None
        assert agent_of(proxied, {HEADER: "root", **basic(*ALICE)}, addr).name == "alice"


def test_empty_header_falls_back_to_basic_and_anonymous(proxied):
    assert agent_of(proxied, {HEADER: "  "}, "10.0.0.1").name is None
    assert agent_of(proxied, {HEADER: "", **basic(*ROOT)}, "10.0.0.1").name == "root"


def test_trusted_proxy_with_a_bad_name_is_401(proxied, state):
    client = proxied.test_client()
    repo = proxied.extensions["lakesuperior"].repository
    before = state(repo)
    for bad in ("anonymous user", "<script>", "a" * 65, "-x"):
        r = client.put("/rest/p", data=BODY, content_type=TTL, headers={HEADER: bad},
                       environ_base={"REMOTE_ADDR": "10.0.0.1"})
        assert r.status_code == 401, bad
        assert f"The {HEADER} header of the proxy is not a user name" in r.get_data(as_text=True)
    assert state(repo) == before


def test_proxy_user_recorded_and_admin_pages(proxied):
    client = proxied.test_client()
    repo = proxied.extensions["lakesuperior"].repository
    env = {"REMOTE_ADDR": "10.0.0.1"}
    r = client.put("/rest/p", data=BODY, content_type=TTL, headers={HEADER: "carol"},
                   environ_base=env)
    assert r.status_code == 201 and created_by(repo, "/p") == ("carol", "carol")
    assert client.get("/admin/stats", headers={HEADER: "carol"},
                      environ_base=env).status_code == 403
    assert client.get("/admin/stats", headers={HEADER: "root", "Accept": "application/json"},
                      environ_base=env).status_code == 200


def _put(port: int, path: str, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("PUT", path, body=BODY, headers={"Content-Type": TTL, **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def _created_by(port: int, path: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={"Accept": "application/ld+json"})
        doc = json.loads(conn.getresponse().read())
    finally:
        conn.close()
    node = doc[0] if isinstance(doc, list) else doc
    node = node.get("@graph", [node])[0] if "@graph" in node else node
    key = [k for k in node if k.endswith("createdBy")][0]
    value = node[key]
    value = value[0] if isinstance(value, list) else value
    return value["@value"] if isinstance(value, dict) else value


@pytest.mark.slow
@pytest.mark.parametrize("trusted,expected", [("127.0.0.1", "carol"),
                                              ("10.0.0.0/8", "anonymous")])
def test_proxy_header_over_gunicorn(tmp_path, open_acl, trusted, expected):
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_AUTH_PROXY_HEADER": HEADER,
           "LSUP_AUTH_TRUSTED_PROXIES": trusted, "LSUP_SERVER_WORKERS": "1",
           "LSUP_AUTH_ROOT_ACL": open_acl}
    with lsup_server(tmp_path, env) as (_proc, port, _log):
        assert _put(port, "/rest/p", {HEADER: "carol"}) == 201
        assert _created_by(port, "/rest/p") == expected
