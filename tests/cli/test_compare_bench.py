"""benchmarks/compare.py: the floor and a real lsup-server alternated, ratios, --check."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "compare.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, timeout=300)


def test_compare_prints_ratios_writes_json_and_checks_a_baseline(tmp_path):
    out = tmp_path / "c.json"
    res = run("--rounds", "1", "--count", "6", "--many", "2", "--json", str(out),
              "--set", "LSUP_HTTP_BODY_CACHE=0")
    assert res.returncode == 0, res.stdout + res.stderr
    data = json.loads(out.read_text())
    assert len(data["rounds"]) == 1 and data["count"] == 6 and data["many"] == 2
    assert data["settings"] == {"LSUP_HTTP_BODY_CACHE": "0"}
    fig, ratios = data["figures"], data["ratios"]
    for op in ("put", "get"):
        assert fig[f"floor_{op}_1"] > 0 and fig[f"ours_{op}_1"] > 0
        assert ratios[f"{op}_1_latency_ratio"] == round(fig[f"ours_{op}_1"]
                                                        / fig[f"floor_{op}_1"], 2)
        assert ratios[f"{op}_many_throughput_ratio"] > 0
        assert fig[f"floor_{op}_cpu_ms"] > 0 and fig[f"ours_{op}_cpu_ms"] > 0
        assert ratios[f"{op}_cpu_ratio"] == round(fig[f"ours_{op}_cpu_ms"]
                                                  / fig[f"floor_{op}_cpu_ms"], 2)
    assert "PUT 1 client, median ms: floor " in res.stdout
    assert "server CPU per request, ms: PUT floor " in res.stdout
    # --check holds the CPU ratios: a recorded run far better than this one fails,
    # a far worse one passes
    better = {"ratios": {**ratios, "put_cpu_ratio": ratios["put_cpu_ratio"] / 3}}
    worse = {"ratios": {**ratios, "put_cpu_ratio": ratios["put_cpu_ratio"] * 3,
                        "get_cpu_ratio": ratios["get_cpu_ratio"] * 3}}
    (tmp_path / "better.json").write_text(json.dumps(better))
    (tmp_path / "worse.json").write_text(json.dumps(worse))
    from importlib import util
    spec = util.spec_from_file_location("compare", SCRIPT)
    assert spec and spec.loader
    compare = util.module_from_spec(spec)
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        spec.loader.exec_module(compare)
    finally:
        sys.path.remove(str(SCRIPT.parent))
    found = compare.check(ratios, str(tmp_path / "better.json"), 0.3)
    assert len(found) == 1 and found[0].startswith("put_cpu_ratio")
    assert compare.check(ratios, str(tmp_path / "worse.json"), 0.3) == []


@pytest.mark.parametrize("setting", ["HTTP_BODY_CACHE=0", "LSUP_HTTP_BODY_CACHE"])
def test_a_setting_that_is_not_lsup_name_value_is_refused(setting):
    res = run("--set", setting)
    assert res.returncode == 2 and "not LSUP_NAME=VALUE" in res.stderr
