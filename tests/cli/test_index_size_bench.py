"""benchmarks/index_size.py: a small run, with and without the parent's date set anew."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "index_size.py"


@pytest.mark.parametrize("touch", [False, True])
def test_index_size_reports_its_figures(tmp_path, touch):
    out = tmp_path / "r.json"
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--count", "30", "--json", str(out)]
        + (["--touch-parent"] if touch else []),
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    assert data == json.loads(res.stdout)
    assert data["count"] == 30 and data["touch_parent"] is touch
    # 5 graphs set up; per resource its graph, its containment quad, a snapshot
    # graph every other one, and with --touch-parent the parent's new date
    assert data["log_entries"] == 5 + 30 * 2 + 15 + (30 if touch else 0)
    assert 0 < data["index_catch_up_cpu_s"] and 0 < data["index_catch_up_s"]
    assert data["index_pages"]["tables"]["pos"] > 0
    assert 0 < data["count_median_ms"]
