"""lsup-benchmark's memory figures (issue 15, deliverable 6): the peak resident set
of the process holding the repository, in python mode this one, over HTTP the
server's workers (found by the store file they map, with ``--data-dir``)."""
from __future__ import annotations

import json
import os
import sys

import pytest

from lakesuperior.bench import targets
from lakesuperior.bench.memory import (
    is_indexer_process,
    memory_figures,
    process_memory,
    store_processes,
    wait_for_indexer,
)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]


@pytest.fixture
def bench(runner, monkeypatch):
    from lakesuperior.bench.benchmark import command
    monkeypatch.delenv("LSUP_CONFIG", raising=False)

    def run(*args: object):
        return runner.invoke(command, [str(a) for a in args], env={"LSUP_SYNC": "false"})

    return run


def test_process_memory_of_this_process():
    mine = process_memory()
    assert mine is not None
    assert mine["peak_rss_bytes"] >= mine["rss_bytes"] > 0
    assert mine["rss_anon_bytes"] + mine["rss_file_bytes"] <= mine["rss_bytes"] + 4096
    assert process_memory(2 ** 22 + 12345) is None


def test_python_mode_reports_this_process(bench, tmp_path):
    out = tmp_path / "r.json"
    res = bench("--count", 5, "--data-dir", tmp_path / "d", "--output", out, "--no-sparql")
    assert res.exit_code == 0, res.output
    result = json.loads(out.read_text())
    mem, ingest = result["memory"], result["memory_after_ingest"]
    assert mem["peak_rss_bytes"] > 0 and mem["rss_anon_bytes"] > 0
    assert 0 < ingest["peak_rss_bytes"] <= mem["peak_rss_bytes"]   # before the reads
    # the store's indexer process (the default), reported apart
    assert mem["indexer"]["pid"] != os.getpid() and mem["indexer"]["peak_rss_bytes"] > 0
    assert "peak RSS" in res.stdout and "(indexer process " in res.stdout
    assert " MB by the end of the ingest" in res.stdout


def test_http_mode_reports_the_server_workers(bench, tmp_path, start_server):
    data = tmp_path / "srv"
    srv = start_server(data)
    assert wait_for_indexer(str(data)) is not None       # started by one of the workers
    out = tmp_path / "h.json"
    res = bench("--mode", "http", "--endpoint", srv.url + "/", "--count", 5, "--data-dir",
                data, "--output", out, "--no-sparql")
    assert res.exit_code == 0, res.output + srv.log_text()
    result = json.loads(out.read_text())
    mem, ingest = result["memory"], result["memory_after_ingest"]
    assert set(ingest["processes"]) == set(mem["processes"])
    assert ingest["peak_rss_bytes"] <= mem["peak_rss_bytes"]
    pids = store_processes(str(data))
    assert pids and os.getpid() not in pids
    assert set(mem["processes"]) <= {str(p) for p in pids} and mem["processes"]
    assert str(mem["indexer"]["pid"]) not in mem["processes"]      # workers only
    assert mem["indexer"]["pid"] in pids and is_indexer_process(mem["indexer"]["pid"])
    assert mem["peak_rss_bytes"] == max(p["peak_rss_bytes"] for p in mem["processes"].values())
    # without a data directory nothing tells which processes are the server's
    assert memory_figures("http", None) is None
    assert memory_figures("http", str(tmp_path / "nothing-here")) is None
    assert wait_for_indexer(str(tmp_path / "nothing-here"), timeout=0.1) is None


def test_python_mode_does_not_time_without_its_indexer_process(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(targets, "wait_for_indexer", lambda data_dir: None)
    res = bench("--count", 5, "--data-dir", tmp_path / "d", "--no-sparql")
    assert res.exit_code != 0
    assert "indexer process did not start in 10 s" in res.output
