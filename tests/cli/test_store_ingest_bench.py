"""benchmarks/store_ingest.py: a small run, with and without the indexer process."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "store_ingest.py"


@pytest.mark.parametrize("indexer", ["none", "process"])
def test_store_ingest_reports_its_figures(tmp_path, indexer):
    out = tmp_path / "r.json"
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--count", "40", "--no-sync", "--indexer", indexer,
         "--path", str(tmp_path / "store"), "--json", str(out)],
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"N=40 sync=False indexer={indexer} write median ")
    data = json.loads(out.read_text())
    assert data["count"] == 40 and data["indexer"] == indexer
    assert 0 < data["write_ms"]["median"] <= data["write_ms"]["p95"]
    # the log's entries (6 graphs set up, then a graph and a containment quad per
    # resource) are applied once: by the indexer process during the ingest, the
    # rest by the final index()
    during = data["index_entries_applied_during_ingest"]
    assert during + data["index_entries_applied"] == 40 * 2 + 6
    if indexer == "none":
        assert during == 0
