"""``Authorization: Bearer <JWT>`` (Islandora's Syn): HS256 and RS256 tokens verified
with the configured key, ``exp`` enforced, the user from ``sub`` (or the configured
claim), administrators from the role claim; every token that cannot be believed
(malformed, unsigned, another key or algorithm, expired, wrong claims) is 401
with a Bearer challenge, never 500, and its body never repeats the token."""
from __future__ import annotations

import base64
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError
from tests.apps import build_app

from .conftest import TTL, basic, created_by

SECRET = "a shared secret of Syn, long enough for HS256"
BODY = b"<> <http://purl.org/dc/terms/title> \"t\" ."
#: The built-in root ACL: everyone reads, only administrators write.
BUILTIN = ""


def token(claims: dict | None = None, key: str | bytes = SECRET, alg: str = "HS256",
          **extra) -> str:
    payload = {"sub": "islandora", "exp": int(time.time()) + 300, **(claims or {})}
    payload.update(extra)
    return jwt.encode(payload, key, algorithm=alg)


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def assert_refused(r, secret: str = "") -> None:
    assert r.status_code == 401, r.data
    challenges = r.headers.getlist("WWW-Authenticate")
    assert 'Bearer realm="Lakesuperior", error="invalid_token"' in challenges
    if secret:
        assert secret not in r.get_data(as_text=True)


@pytest.fixture
def hs_client(make_app):
    return make_app(auth_jwt_key=SECRET, auth_root_acl=BUILTIN).test_client()


def test_hs256_token_is_the_user(make_app):
    app = make_app(auth_jwt_key=SECRET)          # open ACL: anyone may write
    c = app.test_client()
    r = c.put("/rest/a", data=BODY, content_type=TTL, headers=bearer(token()))
    assert r.status_code == 201, r.data
    assert created_by(app.extensions["lakesuperior"].repository, "/a") == (
        "islandora", "islandora")


def test_admin_role_claim(hs_client):
    user = token({"roles": ["editor"]})
    assert hs_client.get("/rest/", headers=bearer(user)).status_code == 200
    r = hs_client.put("/rest/x", data=BODY, content_type=TTL, headers=bearer(user))
    assert r.status_code == 403
    admin = token({"roles": ["fedoraAdmin"]})
    r = hs_client.put("/rest/x", data=BODY, content_type=TTL, headers=bearer(admin))
    assert r.status_code == 201, r.data
    assert hs_client.get("/admin/stats", headers=bearer(admin)).status_code == 200
    assert hs_client.get("/admin/stats", headers=bearer(user)).status_code == 403


def test_configured_claims(make_app):
    c = make_app(auth_jwt_key=SECRET, auth_jwt_user_claim="webid", auth_jwt_role_claim="grp",
                 auth_jwt_admin_role="boss", auth_root_acl=BUILTIN).test_client()
    t = token({"webid": "https://example.org/people/ann", "grp": "boss"})
    assert c.put("/rest/w", data=BODY, content_type=TTL, headers=bearer(t)).status_code == 201
    assert_refused(c.get("/rest/", headers=bearer(token())))      # no "webid" claim


def test_webid_user_claim(make_app):
    app = make_app(auth_jwt_key=SECRET)
    c = app.test_client()
    t = token(sub="https://example.org/people/ann")
    assert c.put("/rest/u", data=BODY, content_type=TTL, headers=bearer(t)).status_code == 201
    assert created_by(app.extensions["lakesuperior"].repository, "/u")[0] == (
        "https://example.org/people/ann")


def _unsigned() -> str:
    def part(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    return (part({"alg": "none", "typ": "JWT"}) + "."
            + part({"sub": "root", "exp": int(time.time()) + 300, "roles": ["fedoraAdmin"]})
            + ".")


@pytest.mark.parametrize("name, value", [
    ("expired", lambda: token(exp=int(time.time()) - 10)),
    ("no exp", lambda: jwt.encode({"sub": "islandora"}, SECRET, algorithm="HS256")),
    ("unsigned", _unsigned),
    ("another key", lambda: token(key="not the secret, but as long as the real one")),
    ("another algorithm", lambda: token(key=SECRET * 2, alg="HS512")),
    ("no sub", lambda: token(sub=None)),
    ("sub not a name", lambda: token(sub="a b<script>")),
    ("sub a number", lambda: token(sub=42)),
    ("garbage", lambda: "not-a-jwt"),
    ("two parts", lambda: "abc.def"),
    ("bad base64", lambda: "@@@.@@@.@@@"),
    ("empty", lambda: ""),
    ("huge", lambda: "a" * 20000),
    ("tampered", lambda: token()[:-3] + "AAA"),
])
def test_unbelievable_tokens_are_401(hs_client, name, value):
    t = value()
    r = hs_client.get("/rest/", headers=bearer(t))
    assert_refused(r, t if len(t) > 8 else "")
    r = hs_client.put("/rest/z", data=BODY, content_type=TTL, headers=bearer(t))
    assert_refused(r)


def test_issuer_and_audience(make_app):
    c = make_app(auth_jwt_key=SECRET, auth_jwt_issuer="https://islandora.example",
                 auth_jwt_audience="fedora").test_client()
    good = token(iss="https://islandora.example", aud=["fedora", "other"])
    assert c.get("/rest/", headers=bearer(good)).status_code == 200
    assert_refused(c.get("/rest/", headers=bearer(token(iss="https://evil", aud="fedora"))))
    assert_refused(c.get("/rest/", headers=bearer(token(iss="https://islandora.example",
                                                        aud="else"))))


def test_off_without_a_key(client):
    """No key configured: a Bearer header is an unsupported scheme (401), as before."""
    r = client.get("/rest/", headers=bearer(token()))
    assert r.status_code == 401
    assert r.headers.getlist("WWW-Authenticate") == ['Basic realm="Lakesuperior"']


def test_basic_still_works_with_jwt_on(hs_client):
    assert hs_client.get("/rest/", headers=basic("root", "s3cret-r00t")).status_code == 200


# --- RS256 ----------------------------------------------------------------------------------

def _rsa() -> tuple[bytes, str]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return pem, public


def test_rs256_with_a_key_file(make_app, tmp_path):
    private, public = _rsa()
    key_file = tmp_path / "syn.pub"
    key_file.write_text(public)
    c = make_app(auth_jwt_key_file=str(key_file), auth_jwt_algorithm="RS256",
                 auth_root_acl=BUILTIN).test_client()
    admin = token({"roles": ["fedoraAdmin"]}, key=private, alg="RS256")
    r = c.put("/rest/r", data=BODY, content_type=TTL, headers=bearer(admin))
    assert r.status_code == 201, r.data
    other, _ = _rsa()
    assert_refused(c.get("/rest/", headers=bearer(token(key=other, alg="RS256"))))
    # the public key used as an HMAC secret (algorithm confusion) is refused
    assert_refused(c.get("/rest/", headers=bearer(_hs_with(public))))
    assert_refused(c.get("/rest/", headers=bearer(_unsigned())))


def _hs_with(secret: str) -> str:
    import hashlib
    import hmac

    def part(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    head = part({"alg": "HS256", "typ": "JWT"}) + "." + part(
        {"sub": "root", "exp": int(time.time()) + 300, "roles": ["fedoraAdmin"]})
    sig = hmac.new(secret.encode(), head.encode(), hashlib.sha256).digest()
    return head + "." + base64.urlsafe_b64encode(sig).rstrip(b"=").decode()


# --- configuration ----------------------------------------------------------------------------

def test_bad_configuration_is_refused(tmp_path):
    _, public = _rsa()
    with pytest.raises(ConfigError, match="auth.jwt.algorithm"):
        Config(auth_jwt_algorithm="none").check()
    with pytest.raises(ConfigError, match="not both"):
        Config(auth_jwt_key="k", auth_jwt_key_file="/x").check()
    for settings, match in ((dict(auth_jwt_key="not a pem", auth_jwt_algorithm="RS256"),
                             "PEM public key"),
                            (dict(auth_jwt_key=public), "shared secret"),
                            (dict(auth_jwt_key="short"), "too short"),
                            (dict(auth_jwt_key_file=str(tmp_path / "missing")),
                             "Cannot read auth.jwt.key_file")):
        with pytest.raises(ConfigError, match=match):
            build_app(Config(data_dir=str(tmp_path / "d"), sync=False, **settings))


def test_key_is_not_in_the_config_repr():
    assert SECRET not in repr(Config(auth_jwt_key=SECRET))


def test_server_start_stops_on_a_bad_key(tmp_path):
    from lakesuperior.server import StartupError, prepare_auth
    cfg = Config(data_dir=str(tmp_path / "d"), auth_jwt_key="short")
    with pytest.raises(StartupError, match="too short"):
        prepare_auth(cfg)
    assert not (tmp_path / "d" / "users.json").exists()
