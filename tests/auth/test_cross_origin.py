"""Cross-site request forgery and CORS: a state-changing request from another
site's page is refused (403) even with an administrator's cached Basic
credentials, unless its origin is listed in ``http.allowed_origins``; listed
origins get CORS answers (preflight included); the server's own origin and
clients that are not browsers are not affected."""
from __future__ import annotations

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError
from tests.auth.conftest import ALICE, ROOT, TTL, basic
from tests.conftest import store_state

EVIL = "https://evil.example"
APP = "https://app.example.org"
BODY = b'<> <http://purl.org/dc/terms/title> "x" .'


def state(client):
    return store_state(client.application.extensions["lakesuperior"].repository)


@pytest.fixture
def admin():
    return basic(*ROOT)


@pytest.fixture
def listed(make_app):
    return make_app(http_allowed_origins=(APP, "http://localhost:3000")).test_client()


def refused(r, what: str = EVIL) -> str:
    text = r.get_data(as_text=True)
    assert r.status_code == 403, text
    assert "Access-Control-Allow-Origin" not in r.headers
    assert "http.allowed_origins" in text and what in text
    return text


# --- refused --------------------------------------------------------------------------------

def test_csrf_form_post_with_admin_credentials_403_nothing_written(client, admin):
    before = state(client)
    r = client.post("/rest/", data=BODY, content_type="text/plain",
                    headers={"Origin": EVIL, **admin})
    text = refused(r)
    assert "Cross-site" in text
    assert state(client) == before


@pytest.mark.parametrize("method, path", [
    ("put", "/rest/a"), ("patch", "/rest/a"), ("delete", "/rest/a"), ("post", "/rest/a"),
    ("post", "/rest/fcr:tx"), ("post", "/rest/a/fcr:versions"), ("put", "/rest/a/fcr:acl"),
    ("delete", "/rest/fcr:acl"), ("purge", "/rest/a"),
])
def test_csrf_every_unsafe_method_403(client, admin, method, path):
    assert client.put("/rest/a", data=BODY, content_type=TTL, headers=admin).status_code == 201
    before = state(client)
    r = client.open(path, method=method.upper(), data=BODY, content_type=TTL,
                    headers={"Origin": EVIL, **admin})
    refused(r)
    assert state(client) == before


def test_csrf_transaction_commit_403(client, admin):
    tx = client.post("/rest/fcr:tx", headers=admin).headers["Location"]
    assert client.put("/rest/b", data=BODY, content_type=TTL,
                      headers={"Atomic-ID": tx, **admin}).status_code == 201
    refused(client.put(tx, headers={"Origin": EVIL, **admin}))
    refused(client.delete(tx, headers={"Origin": EVIL, **admin}))
    assert client.get("/rest/b", headers=admin).status_code == 404
    assert client.put(tx, headers=admin).status_code == 204


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_csrf_sec_fetch_site_403(client, admin, site):
    before = state(client)
    r = client.post("/rest/", data=BODY, content_type=TTL,
                    headers={"Sec-Fetch-Site": site, **admin})
    refused(r, site)
    assert state(client) == before


@pytest.mark.parametrize("ctype", ["application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", "text/plain"])
def test_csrf_form_from_opaque_origin_403(client, admin, ctype):
    """A form posted from a sandboxed frame or a data: page says ``Origin: null``."""
    refused(client.post("/rest/", data=b"a=b", content_type=ctype,
                        headers={"Origin": "null", **admin}), "null")


def test_csrf_other_port_or_scheme_is_another_origin(client, admin):
    for origin in ("http://localhost:8080", "https://localhost", "http://localhost.evil"):
        refused(client.post("/rest/", data=BODY, content_type=TTL,
                            headers={"Origin": origin, **admin}), origin)


@pytest.mark.parametrize("ctype", ["application/x-www-form-urlencoded", "text/plain", TTL])
def test_csrf_foreign_referer_without_origin_403(client, admin, ctype):
    """A browser that sends no ``Origin`` and no ``Sec-Fetch-Site`` (an older one, or
    one whose extension strips them) still names the page in ``Referer``: a write
    whose ``Referer`` is another site's page was accepted."""
    before = state(client)
    r = client.post("/rest/", data=BODY, content_type=ctype,
                    headers={"Referer": EVIL + "/page.html?x=1", **admin})
    assert "Referer" in refused(r)
    r = client.post("/ui/create", data={"path": "/", "name": "x"},
                    headers={"Referer": EVIL + "/", **admin})
    refused(r)
    assert state(client) == before


def test_own_referer_allowed(client, admin):
    for referer in ("http://localhost/rest/", "http://localhost:80/ui/edit?path=/",
                    "about:client"):        # the last names no site: nothing to judge
        r = client.post("/rest/", data=BODY, content_type=TTL,
                        headers={"Referer": referer, **admin})
        assert r.status_code == 201, (referer, r.data)


def test_listed_referer_allowed(listed, admin):
    r = listed.post("/rest/", data=BODY, content_type=TTL,
                    headers={"Referer": APP + "/app/", **admin})
    assert r.status_code == 201, r.data


def test_csrf_unlisted_preflight_403(listed):
    r = listed.options("/rest/", headers={"Origin": EVIL,
                                          "Access-Control-Request-Method": "PUT"})
    refused(r)


# --- allowed --------------------------------------------------------------------------------

def test_same_origin_browser_write_allowed(client, admin):
    r = client.post("/rest/", data=BODY, content_type=TTL,
                    headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin",
                             **admin})
    assert r.status_code == 201
    r = client.put("/rest/c", data=BODY, content_type=TTL,
                   headers={"Origin": "http://localhost:80", **admin})  # the default port
    assert r.status_code == 201
    r = client.put("/rest/d", data=BODY, content_type=TTL,
                   headers={"Sec-Fetch-Site": "same-origin", **admin})
    assert r.status_code == 201
    assert "Access-Control-Allow-Origin" not in r.headers


def test_non_browser_clients_unaffected(client, admin):
    r = client.post("/rest/", data=BODY, content_type="text/plain", headers=admin)
    assert r.status_code == 201


def test_safe_methods_are_not_refused(client, admin):
    for method in ("GET", "HEAD", "OPTIONS"):
        r = client.open("/rest/", method=method, headers={"Origin": EVIL, **admin})
        assert r.status_code == 200, method
        assert "Access-Control-Allow-Origin" not in r.headers


def test_listed_origin_writes_with_cors_headers(listed, admin):
    r = listed.post("/rest/", data=BODY, content_type=TTL, headers={"Origin": APP, **admin})
    assert r.status_code == 201
    assert r.headers["Access-Control-Allow-Origin"] == APP
    assert r.headers["Access-Control-Allow-Credentials"] == "true"
    assert "Origin" in r.headers.get_all("Vary") or "Origin" in r.headers["Vary"]
    exposed = {h.strip().lower() for h in r.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"location", "etag", "link"} <= exposed
    r = listed.open("/rest/", method="PURGE", headers={"Origin": "http://localhost:3000",
                                                        **admin})
    assert r.status_code != 403


def test_listed_origin_reads_and_errors_carry_cors(listed):
    r = listed.get("/rest/", headers={"Origin": APP})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == APP
    r = listed.put("/rest/z", data=b"<> <p> .", content_type=TTL, headers={"Origin": APP})
    assert r.status_code == 400                   # an error: the page may read why
    assert r.headers["Access-Control-Allow-Origin"] == APP
    r = listed.put("/rest/z", data=BODY, content_type=TTL,
                   headers={"Origin": APP, "Authorization": "Basic d3Jvbmc6cHc="})
    assert r.status_code == 401
    assert r.headers["Access-Control-Allow-Origin"] == APP


def test_every_response_varies_on_origin_when_origins_are_listed(listed):
    assert "Origin" in listed.get("/rest/").headers["Vary"]


def test_preflight_answers_without_credentials(listed):
    r = listed.options("/rest/a/b", headers={
        "Origin": APP, "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": "content-type, authorization, atomic-id"})
    assert r.status_code == 204, r.get_data(as_text=True)
    h = r.headers
    assert h["Access-Control-Allow-Origin"] == APP
    assert h["Access-Control-Allow-Credentials"] == "true"
    methods = {m.strip() for m in h["Access-Control-Allow-Methods"].split(",")}
    assert {"GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"} <= methods
    allowed = {m.strip().lower() for m in h["Access-Control-Allow-Headers"].split(",")}
    assert {"content-type", "authorization", "atomic-id"} <= allowed
    assert int(h["Access-Control-Max-Age"]) > 0
    vary = h["Vary"]
    assert "Origin" in vary and "Access-Control-Request-Method" in vary


def test_preflight_bad_request_headers_400(listed):
    r = listed.options("/rest/", headers={"Origin": APP, "Access-Control-Request-Method": "PUT",
                                          "Access-Control-Request-Headers": "a b, (c)"})
    assert r.status_code == 400
    assert "Access-Control-Request-Headers" in r.get_data(as_text=True)


def test_plain_options_from_another_origin_is_an_ordinary_options(client):
    r = client.options("/rest/", headers={"Origin": EVIL})
    assert r.status_code == 200 and "Allow" in r.headers


# --- configuration --------------------------------------------------------------------------

def test_allowed_origins_from_the_environment():
    cfg = Config.load(environ={"LSUP_HTTP_ALLOWED_ORIGINS": f"{APP}, http://[::1]:8080"})
    assert cfg.http_allowed_origins == (APP, "http://[::1]:8080")
    assert Config().http_allowed_origins == ()


@pytest.mark.parametrize("bad", ["*", "https://app.example.org/", "https://a.org/path",
                                 "ftp://a.org", "HTTPS://A.ORG", "null", "app.example.org"])
def test_allowed_origins_refuses_what_is_not_an_origin(bad):
    with pytest.raises(ConfigError, match="http.allowed_origins"):
        Config.load(environ={"LSUP_HTTP_ALLOWED_ORIGINS": bad})


def test_an_acl_origin_rule_follows_the_request_origin(make_app):
    """A rule with ``acl:origin`` grants to a user's requests from the pages of that
    origin only: its GET from another site's page (a script reading with the
    user's cached credentials), or from no page at all, is refused."""
    app = make_app(http_allowed_origins=(APP,))
    client = app.test_client()
    repo = app.extensions["lakesuperior"].repository
    repo.create_or_replace("/app-data", data=BODY, media_type=TTL)
    repo.set_acl("/app-data", data=f"""@prefix acl: <http://www.w3.org/ns/auth/acl#> .
<#app> a acl:Authorization ; acl:agentClass acl:AuthenticatedAgent ;
    acl:mode acl:Read, acl:Write ; acl:accessTo </rest/app-data> ;
    acl:origin <{APP}> .
""".encode(), media_type=TTL, base_uri="http://localhost/rest")
    alice = basic(*ALICE)
    r = client.get("/rest/app-data", headers={"Origin": APP, **alice})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == APP
    r = client.put("/rest/app-data", data=BODY, content_type=TTL,
                   headers={"Origin": APP, **alice})
    assert r.status_code == 204, r.data
    for headers in ({"Origin": EVIL}, {}):
        r = client.get("/rest/app-data", headers={**headers, **alice})
        assert r.status_code == 403, (headers, r.data)
        assert b"Read access to /app-data" in r.data
    assert client.get("/rest/app-data", headers=basic(*ROOT)).status_code == 200


@pytest.mark.parametrize("path", ["/rest/", "/login", "/ui/edit?path=/", "/ui/delete?path=/x",
                                  "/search?q=x", "/query/sparql", "/rest/missing"])
def test_pages_are_not_framed_by_other_sites(client, admin, path):
    """Framed in another site's invisible iframe, a form of the staff pages posts as
    this server's own page (Origin ours, the browser's cached Basic credentials
    with it): a click there was a click on "Delete". Every page now forbids it."""
    client.put("/rest/x", data=BODY, content_type=TTL, headers=admin)
    r = client.get(path, headers={"Accept": "text/html", **admin})
    assert r.mimetype == "text/html", (path, r.status_code)
    assert r.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers.getlist("Content-Security-Policy")


@pytest.mark.parametrize("path", ["/rest/", "/rest/x", "/rest/x/fcr:versions"])
def test_the_head_of_a_page_has_the_headers_of_its_get(client, admin, path):
    """A HEAD of the HTML view renders nothing; it answered without them."""
    client.put("/rest/x", data=BODY, content_type=TTL, headers=admin)
    get = client.get(path, headers={"Accept": "text/html", **admin})
    head = client.head(path, headers={"Accept": "text/html", **admin})
    assert head.status_code == get.status_code == 200 and head.data == b""
    for name in ("X-Frame-Options", "Content-Security-Policy", "Cache-Control"):
        assert head.headers.getlist(name) == get.headers.getlist(name), name


def test_other_answers_are_not_given_frame_headers(client, admin):
    r = client.get("/rest/", headers={"Accept": "text/turtle", **admin})
    assert "X-Frame-Options" not in r.headers
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    r = client.get("/rest/<script>alert(1)</script>", headers=admin)
    assert r.status_code == 404 and r.mimetype == "text/plain"
    assert r.headers["X-Content-Type-Options"] == "nosniff"    # the body repeats the path
    client.put("/rest/page.html", data=b"<p>hi</p>", content_type="text/html", headers=admin)
    r = client.get("/rest/page.html", headers=admin)    # a binary keeps its own protection
    assert r.headers.getlist("Content-Security-Policy")[0] == "sandbox"
