"""Backup and restore carry the users (mode 0600); a backup's unusable user file
stops the restore with nothing written."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lakesuperior import Repository
from lakesuperior.admin.backup import backup, read_manifest, restore
from lakesuperior.auth.users import UserDB
from lakesuperior.config import Config
from lakesuperior.exceptions import StoreError

from .conftest import ALICE, ROOT


def test_backup_and_restore_carry_users(data_dir, tmp_path):
    with Repository(data_dir, sync=False) as repo:
        report = backup(repo, tmp_path / "bak")
    copy = Path(report.path) / "users.json"
    assert stat.S_IMODE(os.stat(copy).st_mode) == 0o600
    assert read_manifest(tmp_path / "bak")["users"] == 2
    assert not (Path(report.path) / "initial-admin-password").exists()
    restore(tmp_path / "bak", Config(data_dir=str(tmp_path / "restored"), sync=False))
    restored = UserDB(tmp_path / "restored")
    assert stat.S_IMODE(os.stat(restored.path).st_mode) == 0o600
    assert restored.verify(*ALICE) and restored.verify(*ROOT).admin


def test_backup_without_users(tmp_path):
    with Repository(tmp_path / "d", sync=False) as repo:
        backup(repo, tmp_path / "bak")
    assert read_manifest(tmp_path / "bak")["users"] == 0
    assert not (tmp_path / "bak" / "users.json").exists()
    restore(tmp_path / "bak", Config(data_dir=str(tmp_path / "r"), sync=False))
    assert UserDB(tmp_path / "r").users() == {}


def test_restore_refuses_an_unusable_user_file(data_dir, tmp_path):
    with Repository(data_dir, sync=False) as repo:
        backup(repo, tmp_path / "bak")
    (tmp_path / "bak" / "users.json").write_text("{not json")
    with pytest.raises(StoreError, match="user database .* is unusable"):
        restore(tmp_path / "bak", Config(data_dir=str(tmp_path / "r"), sync=False))
    assert not (tmp_path / "r").exists() or not os.listdir(tmp_path / "r")
