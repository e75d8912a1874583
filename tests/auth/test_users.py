"""The user database (users.json): argon2id hashes, mode 0600, atomic writes, changes
seen by other processes' readers, and its bad input refused with nothing changed."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from lakesuperior.auth.users import UserDB
from lakesuperior.exceptions import AdminError, StoreError

from .conftest import ALICE, ROOT

pytestmark = pytest.mark.slow


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_file_holds_hashes_only_mode_0600(tmp_path):
    db = UserDB(tmp_path)
    db.add("bob", "hunter2 hunter2", admin=True)
    assert mode(db.path) == 0o600
    text = Path(db.path).read_text()
    assert "hunter2" not in text
    entry = json.loads(text)["users"]["bob"]
    assert entry["admin"] is True and entry["hash"].startswith("$argon2id$")
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []


def test_verify(users):
    assert users.verify(*ALICE).name == "alice"
    assert users.verify(*ROOT).admin is True
    assert users.verify("alice", "nope") is None
    assert users.verify("nobody", "x") is None


def test_changes_are_seen_by_another_reader(data_dir):
    reader, writer = UserDB(data_dir), UserDB(data_dir)
    assert set(reader.users()) == {"alice", "root"}
    writer.add("bob", "pw")
    assert set(reader.users()) == {"alice", "root", "bob"}
    writer.set_password("bob", "pw2")
    assert reader.verify("bob", "pw2") is not None and reader.verify("bob", "pw") is None
    writer.remove("bob")
    assert "bob" not in reader.users()


@pytest.mark.parametrize("name", ["", " ", "a b", "-a", ".a", "a:b", "é", "a" * 65,
                                  "anonymous", "a/b", "a\n"])
def test_bad_names_are_refused(users, name):
    before = Path(users.path).read_bytes()
    with pytest.raises(AdminError):
        users.add(name, "pw")
    assert Path(users.path).read_bytes() == before


@pytest.mark.parametrize("password", ["", "a\x00b", "tab\there", "x" * 1025])
def test_bad_passwords_are_refused(users, password):
    before = Path(users.path).read_bytes()
    with pytest.raises(AdminError) as e:
        users.add("bob", password)
    assert password not in str(e.value) or not password
    with pytest.raises(AdminError):
        users.set_password("alice", password)
    assert Path(users.path).read_bytes() == before


def test_existing_and_unknown_users(users):
    before = Path(users.path).read_bytes()
    with pytest.raises(AdminError, match="exists already"):
        users.add("alice", "x")
    with pytest.raises(AdminError, match="No user 'nobody'"):
        users.set_password("nobody", "x")
    with pytest.raises(AdminError, match="No user 'nobody'"):
        users.remove("nobody")
    assert Path(users.path).read_bytes() == before


def test_corrupt_file_is_a_clear_error(tmp_path):
    db = UserDB(tmp_path)
    for text in ("{", "[]", '{"format": 9, "users": {}}',
                 '{"format": 1, "users": {"a": {"hash": 1, "admin": false}}}'):
        Path(db.path).write_text(text)
        with pytest.raises(StoreError, match="user database .* is unusable"):
            db.users()
        with pytest.raises(StoreError):
            db.add("bob", "pw")
        assert Path(db.path).read_text() == text


def test_first_admin_once(tmp_path):
    db = UserDB(tmp_path)
    path = db.create_first_admin()
    assert path == db.initial_password_path and mode(path) == 0o600
    password = Path(path).read_text().strip()
    assert len(password) >= 20 and db.verify("admin", password).admin is True
    assert db.create_first_admin() is None
    assert Path(path).read_text().strip() == password
    db.set_password("admin", "changed")
    assert not os.path.exists(path)          # the written password no longer works: gone


def test_no_first_admin_when_users_exist(users):
    assert users.create_first_admin() is None
    assert not os.path.exists(users.initial_password_path)
