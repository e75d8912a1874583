"""benchmarks/replica_sync.py on a tiny repository: a real Oxigraph and lsup-server,
the reindex and follow-lag figures it prints and the JSON it writes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "replica_sync.py"


def test_replica_sync_bench_reports_reindex_and_lag(tmp_path):
    out = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--count", "20", "--ingest", "15", "--keep",
         str(tmp_path / "work"), "--json", str(out)],
        capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("follow lag during a 1-client HTTP ingest of 15 resources (")
    assert lines[3].startswith("replica at the end: 49 graphs in Oxigraph (49 resources")
    assert lines[0].startswith("repository: 20 resources of 200 triples built in ")
    assert lines[1].startswith("reindex (quads): 27 resources in ")
    assert "resources/s" in lines[1] and "graphs in Oxigraph" in lines[1]
    assert "Oxigraph CPU" in lines[1]
    assert "median " in lines[2] and "caught up " in lines[2] and "Oxigraph " in lines[2]

    data = json.loads(out.read_text())
    assert {"count", "graph_size", "build", "reindex", "follow", "replica_graphs_at_end",
            "replica_graphs_expected_at_end", "targets", "machine"} <= set(data)
    assert data["count"] == 20 and data["graph_size"] == 200 and data["protocol"] == "quads"
    rx = data["reindex"]
    # the 20 resources, their container, the 5 they link to, the root
    assert rx["resources"] == 27 and rx["replica_graphs"] == 27
    # no order between the two: 27 resources are written about as fast as nothing
    assert rx["resources_per_s"] > 0 and rx["wall_s"] > 0 and rx["command_noop_s"] > 0
    assert rx["store_cpu_s"] is not None and rx["store_cpu_ms_per_resource"] >= 0
    fl = data["follow"]
    assert fl["resources"] == 15 and fl["events"] >= 15 and fl["puts_per_s"] > 0
    lag = fl["lag"]
    assert lag["samples"] >= 1 and lag["interval_s"] == 0.2
    assert 0 <= lag["median_s"] <= lag["max_s"]
    assert 0 <= lag["median_entries"] <= lag["max_entries"]
    assert fl["catch_up_after_last_put_s"] >= 0
    assert fl["store_cpu_s"] is not None and fl["store_cpu_ms_per_event"] >= 0
    # caught up: Oxigraph holds a graph for every resource
    assert data["replica_graphs_at_end"] == data["replica_graphs_expected_at_end"] == 27 + 15 + 7
    assert set(data["targets"]) == {"reindex_10k_s", "lag_s", "reindex_10k_s_projected",
                                    "reindex_met", "lag_met"}
    assert (tmp_path / "work" / "sync.log").exists()
