"""Destructive commands refuse while another process (a real ``lsup-server``)
has the repository open, unless ``--force``."""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakesuperior.cli.support import open_elsewhere
from lakesuperior.config import Config

from .conftest import LsupServer, populate, running_server, script, state

pytestmark = pytest.mark.slow


def admin(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}
    return subprocess.run([script("lsup-admin"), *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=120)


def worker_pids(server_pid: int) -> set[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(server_pid)],
                         capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Path, LsupServer]]:
    """A populated repository that a real ``lsup-server`` holds open, and that
    server: one for the commands it must refuse (they change nothing)."""
    tmp = tmp_path_factory.mktemp("in-use")
    populate(tmp / "data", versioning_auto=False)
    with running_server(tmp / "data", tmp / "server.log") as srv:
        yield tmp / "data", srv


@pytest.mark.parametrize("command", [
    ("bootstrap", "--yes"),
    ("cleanup", "--min-age", "0"),
    ("export-ocfl", "/nonexistent/ocfl-export"),
    ("import-ocfl", "/nonexistent/ocfl-root"),
])
def test_refused_while_a_server_has_it_open(served, command):
    data_dir, srv = served
    before = state(data_dir)
    r = admin(*command, "--data-dir", data_dir)
    workers = worker_pids(srv.proc.pid)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "open in another process" in lines[0] and "--force" in lines[0]
    named = re.search(r"\(pids? ([\d, ]+)\)", lines[0])   # "(pid 304, 32749)": any order
    assert named and workers & {int(p) for p in named.group(1).split(", ")}, (lines[0], workers)
    assert "Traceback" not in r.stderr
    assert state(data_dir) == before


def test_force_overrides(data_dir, start_server):
    srv = start_server(data_dir)
    r = admin("bootstrap", "--yes", "--force", "--data-dir", data_dir)
    srv.stop()
    assert r.returncode == 0, r.stderr
    assert "Wiped and re-created" in r.stdout


def test_allowed_once_the_server_stopped(data_dir, start_server):
    start_server(data_dir).stop()
    assert open_elsewhere(Config(data_dir=str(data_dir))) is None
    r = admin("bootstrap", "--yes", "--data-dir", data_dir)
    assert r.returncode == 0, r.stderr


def test_the_check_creates_nothing(tmp_path):
    assert open_elsewhere(Config(data_dir=str(tmp_path / "none"))) is None
    (tmp_path / "empty" / "ldprs").mkdir(parents=True)
    assert open_elsewhere(Config(data_dir=str(tmp_path / "empty"))) is None
    assert not (tmp_path / "none").exists()
    assert list((tmp_path / "empty" / "ldprs").iterdir()) == []


def test_restore_never_replaces_a_repository_in_use(data_dir, start_server, tmp_path):
    assert admin("backup", tmp_path / "bk", "--data-dir", data_dir).returncode == 0
    before = state(data_dir)
    srv = start_server(data_dir)
    r = admin("restore", tmp_path / "bk", "--data-dir", data_dir)
    srv.stop()
    assert r.returncode == 2 and "is not empty" in r.stderr, r.stderr
    assert state(data_dir) == before
