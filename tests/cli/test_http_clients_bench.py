"""benchmarks/http_clients.py against a real server (one for the module: each run
makes what it reads if missing, and its writes go to new resources): every
operation, the JSON it writes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..servers import lsup_server

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "http_clients.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(port, data directory) of the module's server."""
    tmp = tmp_path_factory.mktemp("http-clients")
    with lsup_server(tmp, {"LSUP_SYNC": "false", "LSUP_SERVER_WORKERS": "2"}) as (_, port, _log):
        yield port, tmp / "data"


@pytest.mark.parametrize("op", ["get", "query", "put"])    # query: before the PUTs fill the store
def test_http_clients_reports_throughput(server, tmp_path, op):
    out = tmp_path / "r.json"
    port, data_dir = server
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--endpoint", f"http://127.0.0.1:{port}/rest/",
         "--clients", "2", "--seconds", "0.5", "--op", op, "--output", str(out),
         "--server-data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"{op} x2: ")
    data = json.loads(out.read_text())
    assert data["op"] == op and data["clients"] == 2 and data["errors"] == 0
    assert data["requests"] > 0 and data["throughput_per_s"] > 0
    assert 0 < data["latency_ms"]["median"] <= data["latency_ms"]["p99"]
    # CPU per request: the clients' own, the server's workers' and its indexer
    # process's (found by the store they map), and the share of the cores neither used
    cpu = data["cpu"]
    assert cpu["server_workers"] == 2 and cpu["server_indexer"] is True
    assert cpu["client_ms_per_request"] > 0 and cpu["server_ms_per_request"] > 0
    assert cpu["idle_share"] <= 1
    assert f"CPU ms/request client {cpu['client_ms_per_request']}, server " in res.stdout


def test_http_clients_stops_on_a_refused_query(server, tmp_path):
    out = tmp_path / "r.json"
    port, _data_dir = server
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--endpoint", f"http://127.0.0.1:{port}/rest/",
         "--clients", "2", "--count", "4", "--op", "query", "--query", "SELECT ?s {",
         "--output", str(out)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    assert "POST /query/sparql answered 400: 400 Bad Request: SPARQL syntax error" in res.stdout
    data = json.loads(out.read_text())
    assert data["errors"] == 1 and data["requests"] == 0
