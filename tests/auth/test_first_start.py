"""First start of lsup-server: with authentication on and no user, the administrator
``admin`` is made with a random password in a 0600 file, one log line says where
(never the password), and a second start makes nothing; with authentication off,
a warning. Over a real gunicorn with two workers."""
from __future__ import annotations

import base64
import http.client
import os
import stat

import pytest

from lakesuperior.auth.users import UserDB

from ..servers import lsup_server

pytestmark = pytest.mark.slow


def status(port: int, path: str, password: str | None = None, user: str = "admin") -> int:
    headers = {}
    if password is not None:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()


def test_first_start_creates_admin_once(tmp_path):
    # (more wrong passwords than the guessing backoff lets through: tests/auth/test_guessing*)
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_SERVER_WORKERS": "2",
           "LSUP_AUTH_GUESSING_FREE_FAILURES": "100"}
    secret = tmp_path / "data" / "initial-admin-password"
    with lsup_server(tmp_path, env) as (_proc, port, log):
        assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(tmp_path / "data" / "users.json").st_mode) == 0o600
        password = secret.read_text().strip()
        text = log.read_text()
        lines = [line for line in text.splitlines() if "created the administrator" in line]
        assert len(lines) == 1 and str(secret) in lines[0]
        assert password not in text
        assert status(port, "/admin/stats") == 401
        assert status(port, "/admin/stats", password) == 200
        assert status(port, "/admin/stats", password + "x") == 401
        # every worker sees a user added (and then removed) while it runs
        users = UserDB(tmp_path / "data")
        users.add("bob", "bob pw", admin=True)
        assert {status(port, "/admin/stats", "bob pw", "bob") for _ in range(8)} == {200}
        users.remove("bob")
        assert {status(port, "/admin/stats", "bob pw", "bob") for _ in range(8)} == {401}
    users_before = (tmp_path / "data" / "users.json").read_bytes()
    with lsup_server(tmp_path, env) as (_proc, port, log):
        assert "created the administrator" not in log.read_text()
        assert secret.read_text().strip() == password
        assert (tmp_path / "data" / "users.json").read_bytes() == users_before
        assert status(port, "/admin/stats", password) == 200


def test_disabled_auth_warns_and_makes_no_user(tmp_path):
    with lsup_server(tmp_path, {"LSUP_AUTH_ENABLED": "false"}) as (_proc, port, log):
        assert "Authentication is off (auth.enabled: false)" in log.read_text()
        assert status(port, "/admin/stats") == 200
    assert not (tmp_path / "data" / "users.json").exists()
    assert not (tmp_path / "data" / "initial-admin-password").exists()


def test_proxy_header_without_trusted_proxies_warns(tmp_path):
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_AUTH_PROXY_HEADER": "X-Remote-User"}
    with lsup_server(tmp_path, env) as (_proc, _port, log):
        assert "auth.proxy_header X-Remote-User is ignored" in log.read_text()


def test_unusable_user_file_stops_the_start(tmp_path):
    import subprocess
    import sys
    data = tmp_path / "data"
    data.mkdir()
    (data / "users.json").write_text("{broken")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}
    env.update(LSUP_DATA_DIR=str(data), LSUP_AUTH_ENABLED="true",
               LSUP_SERVER_BIND="127.0.0.1:0")
    r = subprocess.run([sys.executable, "-m", "lakesuperior.server"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.startswith("Error: The user database ") and "is unusable" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert (data / "users.json").read_text() == "{broken"
