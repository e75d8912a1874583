"""benchmarks/commit_floor.py: a small run reports every kind, and bad options are refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import lmdb

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "commit_floor.py"
KINDS = ("fdatasync", "commit", "record", "shape", "store")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args],
                          capture_output=True, text=True, timeout=120)


def test_commit_floor_reports_each_kind(tmp_path):
    out = tmp_path / "r.json"
    res = _run("--entries", "30", "--rounds", "2", "--commits", "4", "--record-bytes", "9000",
               "--path", str(tmp_path / "w"), "--json", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    sizes = (data["entries"], data["rounds"], data["commits"], data["record_bytes"])
    assert sizes == (30, 2, 4, 9000)
    assert set(data["median_ms"]) == set(KINDS)
    for kind in KINDS:
        assert data["median_ms"][kind] > 0
        assert len(data["round_medians_ms"][kind]) == 2
    assert data["store_over_shape_ms"] == round(
        data["median_ms"]["store"] - data["median_ms"]["shape"], 4)
    # the store got its fill and every timed write: 30 + 2 rounds x 4
    assert data["store_resources"] == 38
    assert res.stdout.startswith("fdatasync ") and "store over its floor" in res.stdout
    # the raw environment holds its fill and the timed writes of each raw kind
    env = lmdb.open(str(tmp_path / "w" / "raw"), max_dbs=8, readonly=True, lock=False)
    with env.begin() as txn:
        log = txn.stat(env.open_db(b"log", txn=txn, create=False))["entries"]
        rec = txn.stat(env.open_db(b"rec", txn=txn, create=False))["entries"]
    env.close()
    shapes = 30 + 2 * 4
    assert log == 2 * shapes
    assert rec == 2 * shapes + 2 * 4 + 2 * 4     # shapes' two puts, then commit and record


def test_commit_floor_refuses_bad_options(tmp_path):
    res = _run("--rounds", "0", "--path", str(tmp_path / "w"))
    assert res.returncode == 2 and "must be positive" in res.stderr
    assert not (tmp_path / "w").exists()
