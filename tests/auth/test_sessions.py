"""Signing in and out with the login page: the session cookie (its attributes, its
lifetime, signing out everywhere), the same guessing limits as HTTP Basic, the
return to a page of this server only, an expired or tampered cookie treated as
signed out with a page that says so, and the CSRF check of every state-changing
request that carries the cookie."""
from __future__ import annotations

import os
import re
import stat

import pytest

from lakesuperior.auth.sessions import COOKIE, KEY_FILE
from lakesuperior.config import Config
from lakesuperior.endpoints import authn
from tests.auth.conftest import ALICE, ROOT, TTL, basic, created_by

HTML = {"Accept": "text/html"}
TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]*)"')


def login(client, who=ALICE, next_: str | None = "/rest/", address: str = "127.0.0.1",
          token: str | None = None):
    data = {"username": who[0], "password": who[1]}
    if next_ is not None:
        data["next"] = next_
    if token is not None:
        data["csrf_token"] = token
    return client.post("/login", data=data, environ_base={"REMOTE_ADDR": address})


def token_of(client) -> str:
    """The CSRF token the pages give the client's session."""
    page = client.get("/query/sparql", headers=HTML).get_data(as_text=True)
    return TOKEN.search(page).group(1)


def cookie_value(client) -> str | None:
    cookie = client.get_cookie(COOKIE)
    return None if cookie is None else cookie.value


def sessions(app):
    return app.extensions[authn.EXTENSION].sessions


def header(page: str) -> str:
    return page[page.index("<header"):page.index("</header>")]


# --- the form ------------------------------------------------------------------------------

def test_login_page_labels_every_field(client):
    r = client.get("/login?next=/rest/")
    assert r.status_code == 200
    assert r.headers["Cache-Control"] == "no-store"
    page = r.get_data(as_text=True)
    assert '<label for="login-name">User name</label>' in page
    assert '<label for="login-password">Password</label>' in page
    assert '<button type="submit">Log in</button>' in page
    labelled = set(re.findall(r'<label[^>]* for="([^"]+)"', page))
    fields = re.findall(r'<(?:input|textarea)(?![^>]*type="hidden")[^>]*>', page)
    ids = {re.search(r'id="([^"]+)"', f).group(1) for f in fields}
    assert ids and ids <= labelled
    levels = [int(n) for n in re.findall(r"<h([1-6])", page)]
    assert levels[0] == 1 and all(b - a <= 1 for a, b in zip(levels, levels[1:], strict=False))


def test_login_sets_the_session_cookie_and_returns_to_the_page(client):
    r = login(client, next_="/rest/some/page?x=1")
    assert r.status_code == 303
    assert r.headers["Location"] == "/rest/some/page?x=1"
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith(COOKIE + "=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Max-Age=28800" in cookie and "Secure" not in cookie
    page = client.get("/rest/", headers=HTML).get_data(as_text=True)
    top = header(page)
    assert "Signed in as <strong>alice</strong>" in top
    assert '<button type="submit">Log out</button>' in top
    assert ">Log in<" not in top
    assert ">Statistics<" not in top and ">SPARQL<" in top       # alice is no admin


def test_login_over_https_sets_a_secure_cookie(client):
    r = client.post("/login", data={"username": ALICE[0], "password": ALICE[1]},
                    base_url="https://localhost")
    assert r.status_code == 303
    assert "Secure" in r.headers["Set-Cookie"]


def test_session_lifetime_is_configured(make_app):
    client = make_app(auth_session_lifetime=120).test_client()
    r = login(client)
    assert "Max-Age=120" in r.headers["Set-Cookie"]


def test_the_key_file_is_owner_only_and_kept(app, data_dir):
    path = data_dir / "sessions" / KEY_FILE
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(data_dir / "sessions").st_mode) == 0o700
    client = app.test_client()
    login(client)
    value = cookie_value(client)
    # another process on the same data folder (another worker, a restart) takes it
    other = authn.Authenticator(Config(data_dir=str(data_dir)))
    found = other.sessions.open(value)
    assert found is not None and found.user == "alice"
    assert other.sessions.open(_tamper_signature(value)) is None


def test_login_without_a_name_or_password_is_400(client):
    r = client.post("/login", data={"username": "alice", "password": ""})
    assert r.status_code == 400
    assert "Give a user name and a password" in r.get_data(as_text=True)
    assert cookie_value(client) is None


def test_wrong_password_is_401_keeps_the_name_never_the_password(client):
    r = login(client, ("alice", "guess-1234"))
    assert r.status_code == 401
    page = r.get_data(as_text=True)
    assert "Wrong user name or password" in page
    assert 'value="alice"' in page and "guess-1234" not in page
    challenge = r.headers["WWW-Authenticate"]
    assert challenge.startswith("Cookie ") and 'form-action="/login"' in challenge
    assert cookie_value(client) is None


def test_failed_sign_ins_count_toward_the_basic_guessing_limits(make_app):
    client = make_app(auth_guessing_free_failures=3, auth_guessing_backoff=30).test_client()
    for _ in range(3):
        assert login(client, ("alice", "wrong"), address="10.0.0.1").status_code == 401
    r = login(client, ALICE, address="10.0.0.1")        # even the right password waits
    assert r.status_code == 429
    assert 1 <= int(r.headers["Retry-After"]) <= 30
    assert "Too many wrong passwords" in r.get_data(as_text=True)
    assert cookie_value(client) is None
    # the same counts as Basic: Basic from that address waits too
    r = client.get("/rest/", headers=basic(*ALICE), environ_base={"REMOTE_ADDR": "10.0.0.1"})
    assert r.status_code == 429


def test_failed_basic_counts_toward_the_sign_in_limits(make_app):
    client = make_app(auth_guessing_free_failures=2, auth_guessing_backoff=30).test_client()
    for _ in range(2):
        assert client.get("/rest/", headers=basic("alice", "no"),
                          environ_base={"REMOTE_ADDR": "10.0.0.2"}).status_code == 401
    assert login(client, ALICE, address="10.0.0.2").status_code == 429
    assert login(client, ALICE, address="10.0.0.3").status_code == 303


def test_login_is_404_with_authentication_off(make_app):
    client = make_app(auth_enabled=False).test_client()
    assert client.get("/login").status_code == 404
    assert login(client).status_code == 404


# --- the cookie as credentials -------------------------------------------------------------

def test_the_cookie_authenticates_and_basic_keeps_working(app, client, repo):
    login(client)
    r = client.post("/rest/", data=b"", content_type=TTL,
                    headers={"X-CSRF-Token": token_of(client)})
    assert r.status_code == 201
    uid = r.headers["Location"].split("/rest", 1)[1]
    assert created_by(repo, uid) == ("alice", "alice")
    other = app.test_client()
    r = other.post("/rest/", data=b"", content_type=TTL, headers=basic(*ROOT))
    assert r.status_code == 201
    assert created_by(repo, r.headers["Location"].split("/rest", 1)[1])[0] == "root"


def test_authorization_header_wins_over_the_cookie(client):
    login(client)
    r = client.get("/rest/", headers=basic("alice", "wrong"))
    assert r.status_code == 401
    r = client.get("/rest/", headers={**basic(*ROOT), **HTML})
    top = header(r.get_data(as_text=True))
    assert "Signed in as <strong>root</strong>" in top
    assert '<a href="/admin/stats">Statistics</a>' in top
    assert "Log out" not in top          # HTTP Basic: the browser, not a session, holds it


def test_logout_ends_the_session_everywhere(app, client):
    login(client)
    value = cookie_value(client)
    token = token_of(client)
    assert sessions(app).count() == 1
    r = client.post("/logout", data={"csrf_token": token, "next": "/rest/x"})
    assert r.status_code == 303 and r.headers["Location"] == "/rest/x"
    assert f"{COOKIE}=;" in r.headers["Set-Cookie"] and "Max-Age=0" in r.headers["Set-Cookie"]
    assert cookie_value(client) is None
    assert sessions(app).count() == 0
    # the old cookie, replayed, signs nobody in
    thief = app.test_client()
    thief.set_cookie(COOKIE, value)
    top = header(thief.get("/rest/", headers=HTML).get_data(as_text=True))
    assert "Signed in" not in top and ">Log in<" in top


def test_pages_are_never_stored(client):
    """A page cached before signing out would show the user still signed in (its ETag
    does not change, so a revalidation answers 304)."""
    login(client)
    r = client.get("/rest/", headers=HTML)
    assert r.headers["Cache-Control"] == "no-store"
    r = client.get("/rest/", headers={"Accept": "text/turtle"})
    assert "no-store" not in r.headers.get("Cache-Control", "")


def test_logout_needs_the_token(client):
    login(client)
    assert client.post("/logout").status_code == 403
    assert "Signed in as" in client.get("/rest/", headers=HTML).get_data(as_text=True)


def test_a_changed_password_ends_the_sessions(client, users):
    login(client)
    users.set_password("alice", "a new password 1")
    assert "Signed in" not in header(client.get("/rest/", headers=HTML).get_data(as_text=True))


def test_a_new_sign_in_ends_the_previous_session(app, client):
    login(client)
    first = cookie_value(client)
    assert login(client, ROOT).status_code == 403        # signed in: the form's token
    assert login(client, ROOT, token=token_of(client)).status_code == 303
    assert cookie_value(client) != first
    assert sessions(app).count() == 1
    assert "Signed in as <strong>root" in client.get("/rest/", headers=HTML).text


# --- expired and tampered cookies ----------------------------------------------------------

def _expire(app) -> None:
    store = sessions(app)
    now = store.clock()
    store.clock = lambda: now + store.lifetime + 1


def _tamper_signature(value: str) -> str:
    return value[:-1] + ("A" if value[-1] != "A" else "B")


def _tamper_sid(value: str) -> str:
    return ("0" if value[0] != "0" else "1") + value[1:]


@pytest.mark.parametrize("spoil", ["expired", "signature", "sid", "garbage"])
def test_a_stale_cookie_is_signed_out_and_says_so(app, client, repo, spoil):
    login(client)
    token = token_of(client)
    if spoil == "expired":
        _expire(app)
    else:
        value = cookie_value(client)
        client.set_cookie(COOKIE, {"signature": _tamper_signature, "sid": _tamper_sid,
                                   "garbage": lambda v: "<script>"}[spoil](value))
    before = repo.get("/").triples
    # reading: the page as signed out, a notice, the cookie cleared
    r = client.get("/rest/", headers=HTML)
    assert r.status_code == 200
    top = header(r.get_data(as_text=True))
    assert "Signed in" not in top and "Your session has expired" in top
    assert "Max-Age=0" in r.headers["Set-Cookie"]
    # changing: refused with a page saying the session ended, nothing done
    client.set_cookie(COOKIE, "0" * 32 + ".1.x")     # a stale cookie again
    r = client.post("/rest/", data=b"", content_type=TTL, headers={"X-CSRF-Token": token,
                                                                     **HTML})
    assert r.status_code == 401
    assert "Your session has expired or was ended" in r.get_data(as_text=True)
    challenges = r.headers.getlist("WWW-Authenticate")
    assert len(challenges) == 1 and challenges[0].startswith("Cookie ")
    assert repo.get("/").triples == before


def test_an_expired_session_on_a_page_that_needs_it_says_so(make_app, open_acl, tmp_path):
    acl = tmp_path / "private.ttl"
    acl.write_text("@prefix acl: <http://www.w3.org/ns/auth/acl#> .\n"
                   "@prefix foaf: <http://xmlns.com/foaf/0.1/> .\n"
                   "<#r> a acl:Authorization ; acl:agentClass acl:AuthenticatedAgent ;\n"
                   "  acl:mode acl:Read ; acl:accessTo <./> ; acl:default <./> .\n")
    app = make_app(auth_root_acl=str(acl))
    client = app.test_client()
    assert client.get("/rest/", headers=HTML).status_code == 401
    login(client)
    assert client.get("/rest/", headers=HTML).status_code == 200
    _expire(app)
    r = client.get("/rest/", headers=HTML)
    assert r.status_code == 401
    assert "Your session has expired or was ended: log in again" in r.get_data(as_text=True)
    assert r.headers["WWW-Authenticate"].startswith("Cookie ")
    # without any cookie, a program is challenged for Basic as before
    r = app.test_client().get("/rest/")
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Basic ")


def test_signing_in_again_after_expiry(app, client):
    login(client)
    _expire(app)
    assert login(client, next_="/rest/").status_code == 303      # no token needed
    assert "Signed in as <strong>alice" in client.get("/rest/", headers=HTML).text


# --- CSRF ------------------------------------------------------------------------------------

def test_csrf_missing_token_is_403_and_changes_nothing(client, repo):
    login(client)
    before = repo.get("/").triples
    r = client.post("/rest/", data=b"", content_type=TTL, headers=HTML)
    assert r.status_code == 403
    assert "has no CSRF token" in r.get_data(as_text=True)
    r = client.post("/rest/", data={"title": "x"})          # a form without the field
    assert r.status_code == 403
    assert repo.get("/").triples == before


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_csrf_wrong_token_is_403(client, repo, method):
    login(client)
    token = token_of(client)
    wrong = ("0" if token[0] != "0" else "1") + token[1:]
    r = client.open("/rest/x", method=method, data=b"", content_type=TTL,
                    headers={"X-CSRF-Token": wrong})
    assert r.status_code == 403
    assert "CSRF token is not this session's" in r.get_data(as_text=True)
    assert client.get("/rest/x").status_code == 404


def test_csrf_token_in_the_form_field_or_the_header(client):
    login(client)
    token = token_of(client)
    r = client.post("/query/sparql", data={"query": "ASK {}", "csrf_token": token},
                    headers={"Accept": "application/sparql-results+json"})
    assert r.status_code == 200
    r = client.put("/rest/y", data=b"", content_type=TTL, headers={"X-CSRF-Token": token})
    assert r.status_code == 201


def test_csrf_token_of_another_session_is_refused(app, client):
    login(client)
    other = app.test_client()
    login(other)
    r = client.put("/rest/z", data=b"", content_type=TTL,
                   headers={"X-CSRF-Token": token_of(other)})
    assert r.status_code == 403


def test_requests_without_the_cookie_need_no_token(app):
    client = app.test_client()
    assert client.put("/rest/b", data=b"", content_type=TTL,
                      headers=basic(*ALICE)).status_code == 201
    assert client.put("/rest/anon", data=b"", content_type=TTL).status_code == 201


def test_safe_methods_need_no_token(client):
    login(client)
    assert client.get("/rest/").status_code == 200
    assert client.head("/rest/").status_code == 200
    assert client.options("/rest/").status_code == 200


def test_templates_get_the_token(client):
    assert token_of(client) == ""          # no session: an empty token
    login(client)
    assert re.fullmatch(r"[0-9a-f]{64}", token_of(client))


# --- where a sign-in returns -----------------------------------------------------------------

@pytest.mark.parametrize("target", [
    "https://evil.example/", "http://localhost/rest/", "//evil.example/rest/",
    "/\\evil.example", "\\\\evil.example", "javascript:alert(1)", "rest/relative",
    "/rest/\r\nSet-Cookie: x=1", "/login", "/logout", "", "x" * 5000])
def test_open_redirects_are_refused(client, target):
    r = login(client, next_=target)
    assert r.status_code == 303
    assert r.headers["Location"] == "/rest/"
    page = client.get("/login", query_string={"next": target}).get_data(as_text=True)
    assert 'name="next" value="/rest/"' in page


def test_login_without_next_returns_to_the_root(client):
    assert login(client, next_=None).headers["Location"] == "/rest/"


def test_the_log_in_link_returns_to_the_page(client):
    page = client.get("/rest/?page=2", headers=HTML).get_data(as_text=True)
    assert 'href="/login?next=/rest/%3Fpage%3D2"' in page


# --- names with HTML ---------------------------------------------------------------------------

def test_html_in_a_user_name_is_escaped(client):
    r = login(client, ('"><script>alert(1)</script>', "x"))
    assert r.status_code == 401
    page = r.get_data(as_text=True)
    assert "<script>alert" not in page
    assert "&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_under_a_script_root(client):
    """Mounted below a path (WSGI ``SCRIPT_NAME``): the cookie, the targets and the
    links stay below it."""
    mounted = "http://localhost/repo"
    r = client.get("/rest/", headers=HTML, base_url=mounted)
    assert 'href="/repo/login?next=/repo/rest/"' in r.get_data(as_text=True)
    r = client.post("/login", data={"username": ALICE[0], "password": ALICE[1],
                                    "next": "/rest/elsewhere"}, base_url=mounted)
    assert r.headers["Location"] == "/repo/rest/"          # not below the mount: refused
    assert "Path=/repo" in r.headers["Set-Cookie"]
    r = client.post("/login", data={"username": ALICE[0], "password": ALICE[1],
                                    "next": "/repo/rest/x?y=1",
                                    "csrf_token": token_of_at(client, mounted)},
                    base_url=mounted)
    assert r.headers["Location"] == "/repo/rest/x?y=1"


def token_of_at(client, base_url: str) -> str:
    page = client.get("/query/sparql", headers=HTML, base_url=base_url).get_data(as_text=True)
    return TOKEN.search(page).group(1)
