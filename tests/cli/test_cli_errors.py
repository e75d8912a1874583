"""``lsup-admin`` output closed early (``| head``) and system errors (a full disk):
quiet exit 141, or one ``Error:`` line and exit 2, never a traceback."""
from __future__ import annotations

import os
import resource
import subprocess

import pytest

from .conftest import script

pytestmark = pytest.mark.slow


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}


def admin(*args, stdout=subprocess.PIPE, limit: int | None = None) -> subprocess.CompletedProcess:
    def small_files() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run([script("lsup-admin"), *map(str, args)], env=clean_env(),
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                          preexec_fn=small_files)


def one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [line for line in r.stderr.splitlines() if line.strip()
             and not line.endswith("...")]          # progress labels
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr
    return lines[0]


@pytest.mark.parametrize("args", [("stats",), ("stats", "--json"), ("check-refint",)])
def test_closed_pipe_is_a_quiet_exit(data_dir, args):
    proc = subprocess.Popen([script("lsup-admin"), *args, "--data-dir", str(data_dir)],
                            env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()                 # the reader is gone before the first write
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Checking" in err if args == ("check-refint",) else err == ""


def test_head_gets_its_line_and_nothing_is_said(data_dir):
    r = subprocess.run(["bash", "-c", f'"{script("lsup-admin")}" stats --data-dir '
                        f'"{data_dir}" | head -1; echo "status=${{PIPESTATUS[0]}}"'],
                       env=clean_env(), capture_output=True, text=True, timeout=120)
    out = r.stdout.splitlines()
    assert out[0].startswith("Data directory")
    assert out[1] in ("status=0", "status=141")
    assert r.stderr == ""


@pytest.mark.parametrize("args", [("stats",), ("stats", "--json"), ("--help",),
                                  ("stats", "--help"), ("--version",)])
def test_full_disk_on_standard_output(data_dir, args):
    with open("/dev/full", "w") as full:
        r = admin(*args, "--data-dir", data_dir, stdout=full)
    assert "No space left on device" in one_error_line(r)


def test_full_disk_on_report_file(data_dir):
    r = admin("check-refint", "--output", "/dev/full", "--data-dir", data_dir)
    assert one_error_line(r) == "Error: No space left on device"


def test_file_size_limit_in_backup_and_bootstrap(data_dir, tmp_path):
    line = one_error_line(admin("backup", tmp_path / "bk", "--data-dir", data_dir,
                                limit=16_384))
    assert "File too large" in line
    line = one_error_line(admin("bootstrap", "--data-dir", tmp_path / "new", limit=16_384))
    assert "File too large" in line
