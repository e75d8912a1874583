"""``lsup-benchmark --clients N`` and ``benchmarks/http_clients.py``: concurrent
clients (``lakesuperior.bench.clients``), each with its own connection, sharing
the ingest; their figures, their errors, and the thin script."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lakesuperior.bench import clients

from .conftest import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(runner, monkeypatch):
    from lakesuperior.bench.benchmark import command
    monkeypatch.delenv("LSUP_CONFIG", raising=False)

    def run(*args: object, env: dict | None = None):
        return runner.invoke(command, [str(a) for a in args],
                             env={"LSUP_SYNC": "false", **(env or {})})

    return run


def test_shares_split_the_count():
    assert clients.shares(20, 3) == [7, 7, 6]
    assert clients.shares(2, 3) == [1, 1, 0]
    assert sum(clients.shares(10_001, 8)) == 10_001


def test_bodies_differ_per_client_and_alternate():
    job = clients.Job(op="put", path="/b", internal=("http://r/a",), resource_type="both",
                      binary_size=10)
    pool = clients.bodies(job, 0, 5)
    assert [ctype for _, ctype in pool] == ["text/turtle", "application/octet-stream"] * 2
    assert clients.bodies(job, 1, 4)[0][0] != pool[0][0]
    assert len(clients.bodies(job, 0, 10_000)) == clients.POOL


def test_run_refuses_nonsense():
    from lakesuperior.exceptions import BenchmarkError
    job = clients.Job(op="put", path="/b")
    with pytest.raises(BenchmarkError):
        clients.run(job, 0, count=1)
    with pytest.raises(BenchmarkError):       # Python clients need a target
        clients.run(job, 2, count=2)
    with pytest.raises(ValueError):
        clients.run(job, 2)


class _Target:
    def put(self, path, body, ctype):
        pass


@pytest.mark.parametrize("endpoint", [None, "http://127.0.0.1:9/rest/"])
def test_a_client_failing_before_the_start_is_the_error_reported(endpoint):
    # an unknown resource type fails in every client while it makes its bodies;
    # the report names that, not the start the others saw aborted
    job = clients.Job(op="put", path="/b", endpoint=endpoint, resource_type="nonsense")
    out = clients.run(job, 2, count=4, target=_Target() if endpoint is None else None)
    assert out.count == 0 and out.error is not None
    assert "KeyError" in out.error and "aborted" not in out.error


def test_python_mode_clients_share_the_ingest(bench, tmp_path):
    out = tmp_path / "r.json"
    res = bench("--count", 20, "--clients", 3, "--data-dir", tmp_path / "d", "--output", out,
                "-q", "--no-sparql")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("lsup-benchmark python put rdf n=20 clients=3 | median ")
    data = json.loads(out.read_text())
    assert data["clients"] == 3 and data["count"] == 20 and len(data["latencies_ms"]) == 20
    assert data["post_run"]["container_children"] == 20
    assert data["triples"] == 20 * 200
    assert data["requests_per_s"] == pytest.approx(20 / data["wall_s"], rel=0.05)
    assert set(data["latency_ms"]) >= {"median", "p95", "p99"}


def test_python_mode_clients_post(bench, tmp_path):
    out = tmp_path / "r.json"
    res = bench("--count", 7, "--clients", 2, "--method", "post", "--resource-type", "both",
                "--data-dir", tmp_path / "d", "--output", out, "-q", "--no-sparql")
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["count"] == 7 and data["post_run"]["container_children"] == 7
    assert data["triples"] == 4 * 200           # 2 clients: rdf, bin, rdf, bin / rdf, bin, rdf


def test_a_failing_python_client_stops_with_the_error(bench, tmp_path):
    from lakesuperior import Repository
    data_dir = tmp_path / "d"
    with Repository(data_dir, sync=False) as repo:     # a binary cannot contain anything
        repo.create_or_replace("/bench", data=b"x", media_type="application/octet-stream")
    res = bench("--count", 6, "--clients", 2, "--data-dir", data_dir, "-q")
    assert res.exit_code == 1
    assert "Stopped: PUT /bench" in res.output and "IncompatibleLdpTypeError" in res.output
    assert "n=0" in res.stdout


def test_transaction_and_clients_do_not_mix(bench):
    res = bench("--mode", "http", "--endpoint", "http://127.0.0.1:1/rest/", "--clients", 2,
                "--transaction", 5)
    assert res.exit_code == 1 and "--transaction is for one client" in res.output


def test_http_clients_stop_at_a_failed_request(bench, stub_server):
    url = stub_server({"/rest/bench": (200, {}, b""),
                       "/rest/bench-refs": (200, {}, b""),
                       **{f"/rest/bench-refs/r{i}": (200, {}, b"") for i in range(5)}})
    res = bench("--mode", "http", "--endpoint", url + "/rest/", "--count", 6, "--clients", 2)
    assert res.exit_code == 1
    assert "Stopped: PUT /rest/bench/" in res.output and "501" in res.output
    assert "n=0" in res.stdout


@pytest.mark.slow
def test_http_mode_clients_against_our_server(bench, tmp_path, start_server):
    data = tmp_path / "srv"
    srv = start_server(data)
    out = tmp_path / "h.json"
    res = bench("--mode", "http", "--endpoint", srv.url + "/", "--count", 20, "--clients", 3,
                "--gets", 9, "--data-dir", data, "--output", out, "--no-sparql")
    assert res.exit_code == 0, res.output + srv.log_text()
    assert res.stdout.startswith("lsup-benchmark http put rdf n=20 clients=3")
    d = json.loads(out.read_text())
    assert d["clients"] == 3 and d["count"] == 20
    assert d["post_run"]["container_children"] == 20
    assert d["reads"]["clients"] == 3 and d["reads"]["count"] == 9   # --get-clients: --clients
    assert d["requests_per_s"] == pytest.approx(20 / d["wall_s"], rel=0.05)
    # the thin script: PUT for a count, GET for a time, POST; figures as JSON
    for op, extra in (("put", ["--count", "6"]), ("get", ["--seconds", "0.5"]),
                      ("post", ["--count", "4"])):
        js = tmp_path / f"{op}.json"
        done = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "http_clients.py"),
                               "--endpoint", srv.url + "/", "--clients", "2", "--op", op,
                               "--output", str(js), *extra],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr + srv.log_text()
        assert done.stdout.startswith(f"{op} x2: ")
        r = json.loads(js.read_text())
        assert r["errors"] == 0 and r["requests"] >= (1 if op == "get" else int(extra[1]))
        assert r["throughput_per_s"] > 0 and len(r["per_client"]) == 2
    from lakesuperior import Repository
    with Repository(data, sync=False) as repo:
        kids = repo.get("/bench-clients").children
    assert len(kids) == 6 + 1 + 4 and "/bench-clients/one" in kids   # PUT, GET target, POST


def test_http_clients_script_reports_a_refused_request(tmp_path):
    done = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "http_clients.py"),
                           "--endpoint", f"http://127.0.0.1:{free_port()}/rest/",
                           "--count", "2", "--op", "put"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode != 0 and "Connection refused" in done.stdout + done.stderr


def test_python_clients_report_their_cpu():
    class Busy:
        def put(self, path, body, ctype):
            sum(range(20_000))          # CPU the client thread spends on each request
    job = clients.Job(op="put", path="/b", internal=("http://r/a",))
    out = clients.run(job, 2, count=40, target=Busy())
    assert out.error is None and out.count == 40
    assert out.client_cpu_s > 0
    assert out.client_cpu_ms == pytest.approx(out.client_cpu_s * 1000 / 40, rel=1e-3)


def test_process_cpu_reads_proc():
    import os
    sum(range(200_000))
    assert clients.process_cpu_s(os.getpid()) > 0
    assert clients.process_cpu_s(2 ** 22 + 12345) is None     # above pid_max: no such process
