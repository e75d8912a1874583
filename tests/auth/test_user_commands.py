"""lsup-admin user add / passwd / remove / list, and their bad input: a clear error,
exit code 2, nothing changed."""
from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from lakesuperior import Repository
from lakesuperior.auth.users import UserDB

pytestmark = pytest.mark.slow


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data"
    Repository(path, sync=False).close()
    return path


@pytest.fixture
def run(data, monkeypatch):
    from lakesuperior.cli import cli
    for var in ("LSUP_CONFIG", "LSUP_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)

    def invoke(*args: str, input: str | None = None):
        return CliRunner().invoke(cli, ["user", *args, "--data-dir", str(data)], input=input)
    return invoke


def snapshot(data) -> bytes | None:
    path = data / "users.json"
    return path.read_bytes() if path.exists() else None


def test_add_list_passwd_remove(run, data):
    r = run("add", "bob", "--password-stdin", input="pw one\n")
    assert r.exit_code == 0 and "Created the user bob" in r.output
    r = run("add", "root", "--admin", input="typed\ntyped\n")        # prompted twice
    assert r.exit_code == 0 and "Created the administrator root" in r.output
    assert "typed" not in r.output
    r = run("list")
    assert r.exit_code == 0 and r.output == "bob\nroot\tadmin\n"
    db = UserDB(data)
    assert db.verify("bob", "pw one") and db.verify("root", "typed").admin
    r = run("passwd", "bob", "--password-stdin", input="pw two\r\n")
    assert r.exit_code == 0 and db.verify("bob", "pw two") and not db.verify("bob", "pw one")
    r = run("remove", "bob")
    assert r.exit_code == 0 and "Removed the user bob" in r.output
    assert run("list").output == "root\tadmin\n"


BAD = {
    "empty name": (("add", "", "--password-stdin"), "pw\n", "cannot be empty"),
    "invalid name": (("add", "a b", "--password-stdin"), "pw\n", "Invalid user name"),
    "reserved name": (("add", "anonymous", "--password-stdin"), "pw\n", "reserved"),
    "empty password": (("add", "bob", "--password-stdin"), "\n", "cannot be empty"),
    "no input": (("add", "bob", "--password-stdin"), "", "cannot be empty"),
    "prompts differ": (("add", "bob"), "one\ntwo\n", "The two passwords differ"),
    "existing user": (("add", "carol", "--password-stdin"), "pw\n", "exists already"),
    "passwd unknown": (("passwd", "nobody", "--password-stdin"), "pw\n", "No user 'nobody'"),
    "passwd differ": (("passwd", "carol"), "one\ntwo\n", "The two passwords differ"),
    "passwd empty": (("passwd", "carol", "--password-stdin"), "\n", "cannot be empty"),
    "remove unknown": (("remove", "nobody"), None, "No user 'nobody'"),
}


@pytest.mark.parametrize("args,stdin,message", BAD.values(), ids=BAD.keys())
def test_bad_input_changes_nothing(run, data, args, stdin, message):
    assert run("add", "carol", "--password-stdin", input="carol pw\n").exit_code == 0
    before = snapshot(data)
    r = run(*args, input=stdin)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert snapshot(data) == before
    assert UserDB(data).verify("carol", "carol pw")


def test_no_repository_is_refused(tmp_path, monkeypatch):
    from lakesuperior.cli import cli
    monkeypatch.delenv("LSUP_DATA_DIR", raising=False)
    r = CliRunner().invoke(cli, ["user", "list", "--data-dir", str(tmp_path / "none")])
    assert r.exit_code == 2 and "No repository in" in r.output
    assert not os.path.exists(tmp_path / "none")


def test_list_without_users_is_empty(run):
    r = run("list")
    assert r.exit_code == 0 and r.output == ""
