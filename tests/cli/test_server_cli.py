"""``lsup-server``: its command line, and start-up errors as one line and exit 2."""
from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import lmdb
import pytest

from lakesuperior import Repository

from .conftest import LsupServer, free_port, script

pytestmark = pytest.mark.slow


def run_server(*args: str, cwd: Path, env: dict | None = None, timeout: float = 60):
    base = {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}
    return subprocess.run([script("lsup-server"), *args], cwd=cwd, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def test_help_and_version_do_not_start_a_server(tmp_path):
    r = run_server("--help", cwd=tmp_path)
    assert r.returncode == 0
    assert "Usage: lsup-server" in r.stdout
    for option in ("--bind", "--workers", "--threads", "--data-dir", "--config", "--version"):
        assert option in r.stdout
    r = run_server("--version", cwd=tmp_path)
    assert r.returncode == 0 and "lsup-server, version" in r.stdout
    assert list(tmp_path.iterdir()) == []          # no ./data made


def test_unknown_option_is_a_usage_error(tmp_path):
    r = run_server("--bogus", cwd=tmp_path)
    assert r.returncode == 2
    assert "Usage: lsup-server" in r.stderr and "No such option '--bogus'" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_options_win_over_configuration(tmp_path):
    config_port, port = free_port(), free_port()
    conf = tmp_path / "lsup.yml"
    conf.write_text(f"data_dir: {tmp_path / 'from-config'}\nserver:\n"
                    f"  bind: 127.0.0.1:{config_port}\n  workers: 3\n")
    srv = LsupServer(tmp_path / "data", tmp_path / "server.log",
                     args=["--config", str(conf), "--bind", f"127.0.0.1:{port}",
                           "--workers", "1", "--threads", "2",
                           "--data-dir", str(tmp_path / "data")])
    try:
        srv.port = port
        srv.wait_ready()
        log = srv.log_text()
    finally:
        srv.stop()
    assert log.count("Booting worker") == 1, log
    assert "Using worker: lakesuperior.worker.HeaderReadingWorker" in log
    assert (tmp_path / "data" / "ldprs" / "data.mdb").is_file()
    assert not (tmp_path / "from-config").exists()


def one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


def test_port_taken_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run_server("--bind", f"127.0.0.1:{port}", "--data-dir", str(tmp_path / "d"),
                       cwd=tmp_path)
    line = one_error_line(r)
    assert f"127.0.0.1:{port}" in line and "in use" in line


def test_store_of_another_format_is_one_line(tmp_path):
    data = tmp_path / "data"
    Repository(data, sync=False).close()
    with lmdb.open(str(data / "ldprs"), max_dbs=16) as env:
        meta = env.open_db(b"meta")
        with env.begin(write=True) as txn:
            txn.put(b"format", b"999", db=meta)
    r = run_server("--bind", f"127.0.0.1:{free_port()}", "--data-dir", str(data),
                   cwd=tmp_path)
    line = one_error_line(r)
    assert "format 999" in line and "Upgrade Lakesuperior" in line


@pytest.mark.parametrize("text, says", [
    ("digest_algorithm: crc32\n", "digest_algorithm must be one of"),
    ("data_dir: [unclosed\n", "is not valid YAML"),
    ("server:\n  workers: many\n", "Invalid value for server_workers"),
])
def test_bad_configuration_is_one_line(tmp_path, text, says):
    conf = tmp_path / "bad.yml"
    conf.write_text(text)
    r = run_server("--bind", f"127.0.0.1:{free_port()}", cwd=tmp_path,
                   env={"LSUP_CONFIG": str(conf), "LSUP_DATA_DIR": str(tmp_path / "d")})
    assert says in one_error_line(r)
    assert not (tmp_path / "d").exists()


def test_unknown_variable_is_a_warning_at_start(tmp_path):
    r = run_server("--bind", "not-an-address:x", cwd=tmp_path,
                   env={"LSUP_STORE_SYNK": "false", "LSUP_DATA_DIR": str(tmp_path / "d")})
    assert r.returncode == 2
    assert "Unknown environment variable LSUP_STORE_SYNK" in r.stderr


def test_two_instances_share_no_file_outside_their_data_directories(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    servers = [LsupServer(tmp_path / f"data{i}", tmp_path / f"server{i}.log", env=env)
               for i in range(2)]
    try:
        for srv in servers:
            srv.wait_ready()
        outside = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
                         if not p.name.endswith(".log")
                         and not any(p.is_relative_to(s.data_dir) for s in servers))
    finally:
        for srv in servers:
            srv.stop()
    assert outside == ["home", "tmp"]
