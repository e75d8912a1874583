"""benchmarks/ocfl_transfer.py on a small repository: its line and the JSON it writes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "ocfl_transfer.py"


@pytest.mark.parametrize("count,binaries", [(20, False), (10, True)])
def test_ocfl_bench_reports_export_and_import(tmp_path, count, binaries):
    out = tmp_path / "r.json"
    args = [sys.executable, str(SCRIPT), "--count", str(count), "--json", str(out)]
    if binaries:
        args.append("--binaries")
    res = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    line = res.stdout.strip()
    assert line.startswith(f"ocfl export n={count}"), line
    assert " resources/s, CPU " in line and " ms/resource, peak RSS " in line, line
    assert "; import: " in line, line
    assert ("(+binaries, 3 versions each)" in line) == binaries
    data = json.loads(out.read_text())
    assert data["count"] == count and data["binaries"] is binaries
    assert data["graph_size"] == 200 and data["sync"] is False
    assert data["versions_per_resource"] == (3 if binaries else 1)
    assert data["build"]["build_s"] > 0 and data["machine"]["cores"]
    # the root, the container, 5 linked resources and the children (and their binaries)
    resources = 7 + count * (2 if binaries else 1)
    for phase in ("export", "import"):
        fig = data[phase]
        assert fig["report"]["resources"] == resources, phase
        assert fig["report"]["binaries"] == (count if binaries else 0), phase
        assert fig["wall_s"] > 0 and fig["resources_per_s"] > 0 and fig["workload_per_s"] > 0
        assert fig["peak_rss_bytes"] > 0 and fig["peak_rss_anon_bytes"] > 0
        assert fig["peak_rss_anon_bytes"] <= fig["peak_rss_bytes"]
        assert len(fig["memory_samples"]) >= 2
        assert f"{fig['resources_per_s']:.0f} resources/s" in line
        assert fig["cpu_user_s"] > 0 and fig["cpu_system_s"] >= 0
        cpu = fig["cpu_ms_per_resource"]
        assert cpu["user"] == round(fig["cpu_user_s"] * 1000 / resources, 3)
        assert f"CPU {cpu['user']:.2f} + {cpu['system']:.2f} ms/resource" in line
    assert data["import"]["report"]["failed"] == []
    if binaries:
        # 3 versions of each child and of each binary, at least
        assert data["export"]["report"]["versions"] >= 6 * count
    assert data["export"]["ocfl_bytes"] > 0 and data["import"]["store_bytes"] > 0
    assert not list(tmp_path.glob("lsup-ocfl-bench-*"))      # the work directory is gone
