"""lakesuperior.bench.serving: the servers a benchmark starts, waited for and stopped."""
from __future__ import annotations

import http.client
import sys

import pytest

from lakesuperior.bench import serving
from lakesuperior.bench.ports import free_port

pytestmark = pytest.mark.slow


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


def test_the_cpu_of_a_process_tree_counts_its_children(tmp_path):
    import subprocess
    # a parent that starts a child burning CPU for a moment, then both wait
    code = ("import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-c', "
            "'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass\\n"
            "print(\"burnt\", flush=True)\\ntime.sleep(60)'], stdout=sys.stdout); "
            "print('child', c.pid, flush=True); time.sleep(60)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline().split()[1])
        assert child in serving.descendants(parent.pid)
        assert parent.stdout.readline() == "burnt\n"
        assert serving.tree_cpu_s(parent.pid) >= 0.3          # the child's burn counted
        assert serving.tree_cpu_s(child) >= 0.3
        assert serving.tree_cpu_s(parent.pid) > serving.tree_cpu_s(child)
    finally:
        for pid in serving.descendants(parent.pid):
            subprocess.run(["kill", str(pid)], check=False)
        serving.stop(parent, timeout=5)
        parent.stdout.close()
