"""``lsup-admin sync sparql`` and ``sync status``: a real Oxigraph, the sync process
or the store killed mid-stream while the repository is written to, credentials
from the configuration, usage errors."""
from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from lakesuperior.cli import cli
from lakesuperior.replicas import state
from lakesuperior.repository import Repository
from tests.replicas.conftest import assert_same, put, repository_graphs

pytestmark = pytest.mark.slow

LSUP_ADMIN = os.path.join(os.path.dirname(sys.executable), "lsup-admin")


@pytest.fixture
def invoke(monkeypatch):
    for var in list(os.environ):
        if var.startswith("LSUP_"):
            monkeypatch.delenv(var)

    def run(*args: str, env: dict | None = None):
        return CliRunner().invoke(cli, [str(a) for a in args], env=env)
    return run


def sync_process(data_dir: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    full = {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}
    full.update(env or {})
    return subprocess.Popen([LSUP_ADMIN, "--data-dir", data_dir, "sync", "sparql", *args],
                            env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for(cond, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def checkpoint(data_dir: str, url: str) -> int:
    st = state.load(data_dir, url)
    return st.seq if st is not None and st.filled else -1


def test_once_then_status(config, oxigraph, invoke):
    with Repository(config=config) as repo:
        put(repo, "/a")
        put(repo, "/a/b")
    r = invoke("--data-dir", config.data_dir, "sync", "sparql", oxigraph.store, "--once")
    assert r.exit_code == 0, r.output
    assert f"{oxigraph.store}: reindexed 3 resources" in r.output
    with Repository(config=config) as repo:
        assert_same(oxigraph.graphs(), repository_graphs(repo))
        put(repo, "/c")                         # two events: /c created, / updated
    r = invoke("--data-dir", config.data_dir, "sync", "status")
    assert r.exit_code == 0 and "Lag           2 events" in r.output, r.output
    r = invoke("--data-dir", config.data_dir, "sync", "status", "--json")
    [row] = json.loads(r.output)
    assert row["lag_events"] == 2 and row["lag_seconds"] > 0 and row["running"] is False
    r = invoke("--data-dir", config.data_dir, "sync", "sparql", oxigraph.store)
    assert r.exit_code == 0 and "2 events applied" in r.output
    with Repository(config=config) as repo:
        assert_same(oxigraph.graphs(), repository_graphs(repo))


@pytest.mark.parametrize("how", [(), ("--quads-url",)])
def test_killing_the_sync_mid_stream_loses_nothing(config, oxigraph, how):
    """Also between a round's deletes and its load (--quads-url)."""
    with Repository(config=config) as repo:
        put(repo, "/first")
        proc = sync_process(config.data_dir, *how, oxigraph.store, "--once")
        assert proc.wait(60) == 0, proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        start = repo.feed_state()["seq"]
        for i in range(150):
            put(repo, f"/r{i}")
        proc = sync_process(config.data_dir, *how, oxigraph.store, "--follow",
                            env={"LSUP_REPLICAS_BATCH": "2"})
        try:
            wait_for(lambda: checkpoint(config.data_dir, oxigraph.store) > start + 20)
            for i in range(150, 200):          # writes go on while it copies
                put(repo, f"/r{i}")
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            proc.kill()
            proc.stdout.close()
            proc.stderr.close()
        killed_at = checkpoint(config.data_dir, oxigraph.store)
        assert start < killed_at < repo.feed_state()["seq"]
        for i in range(20):
            repo.delete(f"/r{i}")
        proc = sync_process(config.data_dir, *how, oxigraph.store, "--once")
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert b"reindexed" not in out                  # caught up from the checkpoint
        assert_same(oxigraph.graphs(), repository_graphs(repo))


def test_quads_url_then_status(config, oxigraph, invoke):
    with Repository(config=config) as repo:
        put(repo, "/a")
        put(repo, "/a/b")
    args = ("--data-dir", config.data_dir, "sync", "sparql")
    r = invoke(*args, oxigraph.store)                      # first by Graph Store PUTs
    assert r.exit_code == 0, r.output
    with Repository(config=config) as repo:
        put(repo, "/a/b", "changed")
        repo.delete("/a")
        put(repo, "/c")
    r = invoke(*args, "--quads-url", oxigraph.store, "--query-url", oxigraph.base + "/query",
               "--reindex")
    assert r.exit_code == 0, r.output
    assert f"{oxigraph.store}: reindexed 2 resources, deleted 2 stale graphs" in r.output
    with Repository(config=config) as repo:
        assert_same(oxigraph.graphs(), repository_graphs(repo))
    r = invoke("--data-dir", config.data_dir, "sync", "status", "--json")
    [row] = json.loads(r.output)
    assert row["protocol"] == "quads" and row["lag_events"] == 0


def test_killing_the_store_mid_stream_then_catching_up(config, oxigraph):
    with Repository(config=config) as repo:
        put(repo, "/first")
        proc = sync_process(config.data_dir, oxigraph.store, "--follow",
                            env={"LSUP_REPLICAS_BATCH": "3", "LSUP_REPLICAS_TIMEOUT": "2"})
        try:
            wait_for(lambda: checkpoint(config.data_dir, oxigraph.store) >= 0)
            for i in range(60):
                put(repo, f"/r{i}")
                if i == 20:
                    oxigraph.kill()                    # the store dies mid-stream
            wait_for(lambda: bool(state.load(config.data_dir, oxigraph.store).last_error))
            seq = repo.feed_state()["seq"]
            assert checkpoint(config.data_dir, oxigraph.store) < seq
            repo.update("/r3", 'INSERT DATA { <> <http://ex.org/p> "while down" }')
            repo.delete("/r4")
            oxigraph.start()                           # same data, same port
            wait_for(lambda: checkpoint(config.data_dir, oxigraph.store)
                     == repo.feed_state()["seq"])
            assert not state.load(config.data_dir, oxigraph.store).last_error
            assert_same(oxigraph.graphs(), repository_graphs(repo))
            proc.send_signal(signal.SIGTERM)          # systemd's stop: a clean exit
            assert proc.wait(30) == 0
        finally:
            proc.kill()
            proc.stdout.close()
            proc.stderr.close()


def test_credentials_come_from_the_configuration(config, error_server, invoke, tmp_path):
    with Repository(config=config):
        pass
    error_server.mode = "ok"
    url = f"http://127.0.0.1:{error_server.server_address[1]}/store"
    cfg = tmp_path / "lsup.yml"
    cfg.write_text("replicas:\n  user: syncer\n  password: pa55-w0rd\n")
    r = invoke("--config", cfg, "--data-dir", config.data_dir, "sync", "sparql", url)
    assert r.exit_code == 0, r.output
    expected = "Basic " + base64.b64encode(b"syncer:pa55-w0rd").decode()
    assert {auth for _, _, auth in error_server.seen} == {expected}
    error_server.seen.clear()
    r = invoke("--data-dir", config.data_dir, "sync", "sparql", url, "--reindex",
               env={"LSUP_REPLICAS_TOKEN": "t0ken-abc"})
    assert r.exit_code == 0, r.output
    assert {auth for _, _, auth in error_server.seen} == {"Bearer t0ken-abc"}
    error_server.mode = "500"
    r = invoke("--config", cfg, "--data-dir", config.data_dir, "sync", "sparql", url,
               "--reindex")
    assert r.exit_code == 1 and "FAILED" in r.output and "500" in r.output
    assert "pa55-w0rd" not in r.output
    r = invoke("--data-dir", config.data_dir, "sync", "status")
    assert r.exit_code == 1 and "Last error" in r.output and "pa55-w0rd" not in r.output
    for name in os.listdir(tmp_path / "data" / "replicas"):
        if name.endswith(".json"):
            assert "pa55-w0rd" not in (tmp_path / "data" / "replicas" / name).read_text()


@pytest.mark.parametrize("args, message", [
    ((), "at least one target"),
    (("http://h/a", "http://h/a"), "given twice"),
    (("http://h/a", "--quads-url", "http://h/a"), "given twice"),
    (("http://h/a", "http://h/b", "--query-url", "http://h/q"), "one target"),
    (("ftp://h/a",), "http(s) URL"),
    (("http://syncer:s3cret@h/a",), "holds no credentials"),
])
def test_usage_errors(config, invoke, args, message):
    with Repository(config=config):
        pass
    r = invoke("--data-dir", config.data_dir, "sync", "sparql", *args)
    assert r.exit_code == 2 and message in r.output, r.output
    assert "s3cret" not in r.output
    folder = os.path.join(config.data_dir, "replicas")
    assert not os.path.exists(folder) or not [n for n in os.listdir(folder)
                                              if n.endswith(".json")]


def test_status_without_targets(config, invoke):
    with Repository(config=config):
        pass
    r = invoke("--data-dir", config.data_dir, "sync", "status")
    assert r.exit_code == 0 and "No target" in r.output
