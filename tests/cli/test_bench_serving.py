"""lakesuperior.bench.serving: the servers a benchmark starts, waited for and stopped."""
from __future__ import annotations

import http.client
import sys

import pytest

from lakesuperior.bench import serving
from lakesuperior.bench.ports import free_port


def test_clean_env_drops_lsup_settings_and_adds_the_given_ones(monkeypatch):
    monkeypatch.setenv("LSUP_DATA_DIR", "/elsewhere")
    env = serving.clean_env(LSUP_AUTH_ENABLED="true")
    assert "LSUP_DATA_DIR" not in env and env["LSUP_AUTH_ENABLED"] == "true"
    assert env["PATH"]


def test_a_command_that_exits_is_reported_with_its_log(tmp_path):
    log = tmp_path / "log"
    with pytest.raises(RuntimeError, match="exited:\nbroken on purpose"):
        with serving.running([sys.executable, "-c", "print('broken on purpose')"], log,
                             lambda: False):
            pass


def test_running_waits_until_ready_and_stops_the_process(tmp_path):
    port = free_port()
    assert not serving.accepts(port)
    command = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    with serving.running(command, tmp_path / "log", lambda: serving.accepts(port),
                         cwd=tmp_path) as proc:
        assert serving.accepts(port) and proc.poll() is None
    assert proc.poll() is not None and not serving.accepts(port)


def test_stop_kills_a_process_that_ignores_terminate(tmp_path):
    import subprocess
    proc = subprocess.Popen([sys.executable, "-c", "import signal, time; "
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                             "print('up', flush=True); time.sleep(60)"],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    serving.stop(proc, timeout=0.5)
    proc.stdout.close()
    assert proc.returncode == -9


def test_lsup_server_serves_its_data_folder_with_authentication_on(tmp_path):
    port = free_port()
    with serving.lsup_server(tmp_path / "data", port, tmp_path / "server.log"):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("PUT", "/rest/x", body=b"", headers={"Content-Type": "text/turtle"})
        assert conn.getresponse().status == 401          # no write without a user
        conn.close()
    assert (tmp_path / "data" / "initial-admin-password").exists()
    assert not serving.accepts(port)
