"""Operating the event stream: lsup-admin events status / replay, the backlog in
the stats (CLI and /admin/stats), and the server: one publisher among its
workers, at-least-once delivery when the server is SIGKILLed mid-ingest."""
from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lakesuperior import Repository
from lakesuperior.cli import cli
from lakesuperior.config import Config
from tests.apps import build_app

from ..servers import child_pids, lsup_server
from .conftest import WAIT, messaging


@pytest.fixture
def invoke(monkeypatch):
    for var in [v for v in os.environ if v.startswith("LSUP_")]:
        monkeypatch.delenv(var)

    def run(*args: str, env: dict | None = None):
        return CliRunner().invoke(cli, [str(a) for a in args], env=env)
    return run


def make_repo(path: Path, **overrides) -> dict:
    repo = Repository(path, sync=False, base_uri="http://test.example/rest", **overrides)
    try:
        for i in range(3):
            repo.create_or_replace(f"/r{i}")
        return {c.id: c.uid for c in repo.changes()}
    finally:
        repo.close()


def test_events_status_with_the_broker_up_and_down(invoke, tmp_path, running_broker, topic):
    make_repo(tmp_path / "d", **messaging(running_broker, topic))
    env = {"LSUP_MESSAGING_BROKER_URL": running_broker.stomp_url,
           "LSUP_MESSAGING_DESTINATION": topic}
    r = invoke("events", "status", "--json", "--data-dir", tmp_path / "d", env=env)
    assert r.exit_code == 0, r.output
    st = json.loads(r.output)
    assert st["broker"] == "up" and st["messaging"] == "on" and st["destination"] == topic
    assert (st["backlog"], st["last_seq"], st["published"], st["events"]) == (6, 6, 0, 6)
    r = invoke("events", "status", "--data-dir", tmp_path / "d",
               env={"LSUP_MESSAGING_BROKER_URL": "stomp://127.0.0.1:9"})
    assert r.exit_code == 0
    assert "Broker" in r.output and "down: Cannot connect to the broker at 127.0.0.1:9" \
        in r.output and "Backlog" in r.output
    r = invoke("events", "status", "--json", "--data-dir", tmp_path / "d")
    assert json.loads(r.output)["broker"] == "off" and json.loads(r.output)["backlog"] == 0


def test_stats_show_the_backlog(invoke, tmp_path):
    make_repo(tmp_path / "d", messaging_broker_url="stomp://127.0.0.1:9")
    env = {"LSUP_MESSAGING_BROKER_URL": "stomp://127.0.0.1:9"}
    r = invoke("stats", "--json", "--data-dir", tmp_path / "d", env=env)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["events"] == {"messaging": "on", "events": 6, "first_seq": 1,
                                              "last_seq": 6, "published": 0, "backlog": 6}
    r = invoke("stats", "--data-dir", tmp_path / "d", env=env)
    assert "Events waiting for the broker  6" in r.output.replace("   ", "  ")


def test_admin_stats_page_shows_the_backlog(tmp_path):
    app = build_app(Config(data_dir=str(tmp_path / "data"), sync=False, auth_enabled=False,
                            messaging_broker_url="stomp://127.0.0.1:9"))
    try:
        repo = app.extensions["lakesuperior"].repository
        repo.create_or_replace("/a")
        r = app.test_client().get("/admin/stats", headers={"Accept": "application/json"})
        assert r.status_code == 200
        assert r.get_json()["events"]["backlog"] == 2
    finally:
        app.extensions["lakesuperior"].close()


def test_events_replay_since_seq_and_time(invoke, tmp_path, running_broker, topic, subscribe):
    ids = make_repo(tmp_path / "d")
    env = {"LSUP_MESSAGING_BROKER_URL": running_broker.stomp_url,
           "LSUP_MESSAGING_DESTINATION": topic}
    sub = subscribe(topic)
    r = invoke("events", "replay", "--since", "0", "--data-dir", tmp_path / "d", env=env)
    assert r.exit_code == 0, r.output
    assert "Replayed 6 events" in r.output
    msgs = sub.wait_for(lambda m: len(m) >= 6)
    assert [h["org.fcrepo.jms.eventID"] for h, _ in msgs] == list(ids)   # same ids, in order
    r = invoke("events", "replay", "--since", "4", "--data-dir", tmp_path / "d", env=env)
    assert "Replayed 2 events" in r.output
    r = invoke("events", "replay", "--since", "2999-01-01T00:00:00Z", "--data-dir",
               tmp_path / "d", env=env)
    assert r.exit_code == 0 and "Replayed 0 events" in r.output
    r = invoke("events", "replay", "--since", "2000-01-01", "--data-dir", tmp_path / "d",
               env=env)
    assert "Replayed 6 events" in r.output


def test_events_replay_refuses_bad_input(invoke, tmp_path, running_broker):
    make_repo(tmp_path / "d")
    env = {"LSUP_MESSAGING_BROKER_URL": running_broker.stomp_url}
    r = invoke("events", "replay", "--since", "yesterday", "--data-dir", tmp_path / "d",
               env=env)
    assert r.exit_code == 2 and "neither a seq nor an ISO 8601 time" in r.output
    r = invoke("events", "replay", "--since", "0", "--data-dir", tmp_path / "d")
    assert r.exit_code == 2 and "No broker is configured" in r.output
    r = invoke("events", "replay", "--since", "0", "--data-dir", tmp_path / "d",
               env={"LSUP_MESSAGING_BROKER_URL": "stomp://127.0.0.1:9"})
    assert r.exit_code == 2 and "Cannot connect to the broker" in r.output
    r = invoke("events", "replay", "--since", "0", "--data-dir", tmp_path / "none", env=env)
    assert r.exit_code == 2 and "No repository" in r.output


# --- the server -------------------------------------------------------------------------

def _put(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("PUT", path, body=b"", headers={"Content-Type": "text/turtle"})
        return conn.getresponse().status
    finally:
        conn.close()


def _wait_published(data: Path) -> dict:
    repo = Repository(data, sync=False)
    try:
        deadline = time.monotonic() + WAIT
        while True:
            st = repo.feed_state()
            if st["published"] >= st["seq"] or time.monotonic() > deadline:
                return {"state": st, "feed": {c.id: (c.uid, c.kind) for c in repo.changes()}}
            time.sleep(0.2)
    finally:
        repo.close()


@pytest.mark.slow
def test_server_sigkilled_mid_ingest_every_acknowledged_change_has_its_event(
        tmp_path, running_broker, queue, subscribe):
    env = {"LSUP_MESSAGING_BROKER_URL": running_broker.stomp_url,
           "LSUP_MESSAGING_DESTINATION": queue, "LSUP_SERVER_WORKERS": "2"}
    acknowledged: list[str] = []
    with lsup_server(tmp_path, env) as (proc, port, _log):
        assert _put(port, "/rest/k") == 201

        def ingest() -> None:
            for i in range(100_000):
                try:
                    if _put(port, f"/rest/k/r{i}") == 201:
                        acknowledged.append(f"/k/r{i}")
                except OSError:
                    return
        writer = threading.Thread(target=ingest)
        writer.start()
        deadline = time.monotonic() + WAIT
        while len(acknowledged) < 150 and time.monotonic() < deadline:
            time.sleep(0.01)
        for pid in [proc.pid, *child_pids(proc.pid)]:
            os.kill(pid, signal.SIGKILL)
        writer.join(WAIT)
    assert len(acknowledged) >= 150 and not writer.is_alive()
    with lsup_server(tmp_path, env):
        done = _wait_published(tmp_path / "data")
    st, feed = done["state"], done["feed"]
    assert st["published"] == st["seq"]
    sub = subscribe(queue)
    msgs = sub.wait_for(lambda m: {h["org.fcrepo.jms.eventID"] for h, _ in m} >= set(feed))
    got = {h["org.fcrepo.jms.eventID"] for h, _ in msgs}
    assert got == set(feed)                                    # every event, none invented
    created = {feed[i][0] for i in got if feed[i][1] == "create"}
    assert set(acknowledged) <= created                        # every acknowledged change
    assert created <= {"/k"} | {f"/k/r{i}" for i in range(len(acknowledged) + 8)}


def test_server_runs_one_publisher_among_its_workers_and_survives_their_death(
        tmp_path, running_broker, topic, subscribe):
    """Three workers, one publisher (each event once); all workers SIGKILLed: the
    lock they held is released and a new worker publishes."""
    env = {"LSUP_MESSAGING_BROKER_URL": running_broker.stomp_url,
           "LSUP_MESSAGING_DESTINATION": topic, "LSUP_SERVER_WORKERS": "3"}
    sub = subscribe(topic)
    with lsup_server(tmp_path, env) as (proc, port, _log):
        for i in range(20):
            assert _put(port, f"/rest/w{i}") == 201
        msgs = sub.wait_for(lambda m: len(m) >= 40)
        assert sub.wait_for(lambda m: len(m) > 40, timeout=1) == msgs
        workers = child_pids(proc.pid)
        assert len(workers) == 3
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                if _put(port, "/rest/after") == 201:
                    break
            except OSError:
                time.sleep(0.1)
        msgs = sub.wait_for(lambda m: len(m) >= 42)
    ids = [h["org.fcrepo.jms.eventID"] for h, _ in msgs]
    assert len(ids) == 42 == len(set(ids))                     # each once: one publisher
    assert msgs[-2][0]["org.fcrepo.jms.identifier"] in ("/after", "/")
