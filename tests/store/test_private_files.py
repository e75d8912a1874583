"""The data directory and everything in it is its owner's alone (0700 folders,
0600 files) under a umask of 022: the store's LMDB files, binaries and their
temporary folder, staged transaction files, the users file, the first
administrator's password, the lock files; ``lsup-admin`` warns about a data
directory others can read."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakesuperior.auth.users import UserDB
from lakesuperior.config import Config
from tests.apps import build_app, close_app


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, str]:
    """Every path under ``root`` (itself included) that anyone but its owner may
    use, with its mode."""
    out = {}
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and mode & 0o077:
            out[str(path.relative_to(root.parent))] = stat.filemode(mode)
    return out


def test_everything_in_the_data_directory_is_private(tmp_path, umask_022):
    data = tmp_path / "srv" / "data"          # its parents are created too
    UserDB(str(data)).create_first_admin()
    app = build_app(Config(data_dir=str(data), sync=False, auth_enabled=False,
                           indexer_process=False))
    try:
        client = app.test_client()
        assert client.put("/rest/b", data=b"content", content_type="text/plain").status_code \
            == 201
        tx = client.post("/rest/fcr:tx")
        assert tx.status_code == 201
        tx_id = tx.headers["Location"].rsplit("/", 1)[1]
        r = client.put("/rest/staged", data=b"x" * 1_200_000, content_type="text/plain",
                       headers={"Atomic-ID": tx_id})
        assert r.status_code == 201, r.data
        names = {p.name for p in data.rglob("*")}
        assert {"data.mdb", "lock.mdb", "users.json", "initial-admin-password",
                "users.lock", "transactions", ".alive"} <= names
        assert any(p.suffix == ".body" for p in data.rglob("*"))     # a staged body
        assert _modes(tmp_path / "srv") == {}
    finally:
        close_app(app)
    assert _modes(tmp_path / "srv") == {}


def test_lsup_admin_warns_about_an_exposed_data_directory(tmp_path, umask_022):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}
    admin = os.path.join(os.path.dirname(sys.executable), "lsup-admin")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([admin, "--data-dir", str(data), *args], env=env,
                              capture_output=True, text=True, timeout=120)

    made = run("bootstrap")
    assert made.returncode == 0, made.stderr
    assert _modes(tmp_path) == {}
    first = run("stats")
    assert first.returncode == 0, first.stderr
    assert "Warning" not in first.stderr
    os.chmod(data, 0o755)
    second = run("stats")
    assert second.returncode == 0, second.stderr
    assert "other users of this machine can read the data directory" in second.stderr
    assert "drwxr-xr-x" in second.stderr and "chmod -R go=" in second.stderr
