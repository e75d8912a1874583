"""benchmarks/s3_binaries.py: a small run against the session's SeaweedFS reports
every kind at every size, and writes its JSON."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lakesuperior.bench.seaweedfs import SeaweedFS

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "s3_binaries.py"
KINDS = {"boto3_put", "boto3_upload", "s3_store", "s3_store_stream", "s3_store_digest",
         "file_store"}


def test_s3_binaries_benchmark_reports_each_kind(tmp_path, seaweedfs):
    out = tmp_path / "r.json"
    cfg = seaweedfs.config()
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "4K,6M", "--rounds", "1", "--part-size",
         "5M", "--endpoint", seaweedfs.endpoint, "--bucket", seaweedfs.bucket,
         "--access-key-id", cfg["binaries_s3_access_key_id"],
         "--secret-access-key", cfg["binaries_s3_secret_access_key"], "--json", str(out)],
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    assert set(data["sizes"]) == {str(4 << 10), str(6 << 20)} and data["rounds"] == 1
    for figures in data["sizes"].values():
        assert set(figures["median_ms"]) == KINDS
        assert all(v > 0 for v in figures["median_ms"].values())
        assert figures["s3_store_over_raw"] > 0 and figures["s3_store_stream_over_raw"] > 0
    assert "S3 store / best raw boto3" in res.stdout
    assert cfg["binaries_s3_secret_access_key"] not in res.stdout + out.read_text()


def test_s3_binaries_benchmark_refuses_bad_options():
    res = subprocess.run([sys.executable, str(SCRIPT), "--rounds", "0"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "--rounds must be positive" in res.stderr


def test_seaweedfs_holds_as_many_volumes_as_asked(tmp_path):
    assert "-volume.max=16" in SeaweedFS(tmp_path / "a").arguments()
    assert "-volume.max=40" in SeaweedFS(tmp_path / "b", volumes=40).arguments()


def test_seaweedfs_started_again_is_the_same_server(seaweedfs):
    proc = seaweedfs.proc
    assert seaweedfs.start() is seaweedfs and seaweedfs.proc is proc
    # ``with SeaweedFS(...).start()`` enters a started server: no second one
    assert seaweedfs.__enter__() is seaweedfs and seaweedfs.proc is proc
    assert proc.poll() is None
