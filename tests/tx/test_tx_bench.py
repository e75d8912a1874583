"""``lsup-benchmark --transaction N``: every N requests in one HTTP transaction."""
from __future__ import annotations

import json

from click.testing import CliRunner

from lakesuperior.bench.benchmark import command
from tests.servers import lsup_server


def bench(*args):
    return CliRunner().invoke(command, [str(a) for a in args], env={"LSUP_SYNC": "false"})


def test_bench_transaction_groups_and_times_commits(tmp_path):
    out = tmp_path / "r.json"
    with lsup_server(tmp_path) as (_proc, port, log):
        res = bench("--mode", "http", "--endpoint", f"http://127.0.0.1:{port}/rest/",
                    "--count", 12, "--transaction", 5, "--output", out, "-q",
                    "--no-sparql")
        assert res.exit_code == 0, res.output + log.read_text()
    assert "transactions of 5: commit median" in res.stdout
    d = json.loads(out.read_text())
    assert d["transaction"] == 5 and d["count"] == 12
    assert d["commit_ms"]["median"] is not None
    assert d["post_run"]["container_children"] == 12
    assert d["latency_ms"]["median"] is not None


def test_bench_transaction_needs_http():
    res = bench("--mode", "python", "--count", 2, "--transaction", 2)
    assert res.exit_code == 1
    assert "--transaction groups HTTP requests" in res.output
