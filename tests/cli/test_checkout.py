"""The checkout itself: importable from its root after ``make install``, and
``make run`` takes PORT= and DATA_DIR=."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_source_tree_is_importable_from_the_checkout_root(tmp_path):
    code = ("import lakesuperior, lakesuperior.store.quadstore as q\n"
            "print(q.__file__)\n"
            f"with lakesuperior.Repository({str(tmp_path / 'd')!r}, sync=False) as r:\n"
            "    print(r.stats()['resources'])\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    module_file, resources = r.stdout.split()
    assert Path(module_file).is_relative_to(ROOT / "lakesuperior")
    assert resources == "1"


def test_make_run_takes_port_and_data_dir():
    r = subprocess.run(["make", "-n", "run", "PORT=8123", "DATA_DIR=/tmp/lsup-x"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    run_line = [line for line in r.stdout.splitlines() if "lsup-server" in line][-1]
    assert "--bind 127.0.0.1:8123" in run_line and "--data-dir /tmp/lsup-x" in run_line
