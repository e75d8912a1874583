"""What the admin operations report: binaries counted from their descriptions,
files a clean-up skipped for their age, corrupt content named by the resources
that use it, and stale staging directories of killed backups removed."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from lakesuperior.admin import backup, cleanup, files, stats
from lakesuperior.config import Config
from lakesuperior.exceptions import AdminError
from tests.binaries import cli_env, leftover, remove, rewrite

pytestmark = pytest.mark.both_backends


def _fill(repo) -> str:
    repo.create_or_replace("/c")
    _, res = repo.create_or_replace("/c/f", data=b"content", media_type="text/plain")
    return res.digest


def _cli(*args, repo=None) -> tuple[int, str]:
    from lakesuperior.cli import cli
    env = {"LSUP_CONFIG": None, "LSUP_DATA_DIR": None, **(cli_env(repo) if repo else {})}
    res = CliRunner().invoke(cli, [str(a) for a in args], env=env)
    return res.exit_code, res.output


# --- stats: binaries from the descriptions, leftover content apart ---------------------

def test_stats_count_binaries_from_their_descriptions(repo):
    _fill(repo)
    repo.binaries.put(b"left by an aborted write")           # no description names it
    for st in (repo.stats(), stats.repository_stats(repo)):
        assert st["binaries"] == 1 and st["binary_bytes"] == len(b"content")
        assert st["unreferenced_files"] == 1
        assert st["unreferenced_bytes"] == len(b"left by an aborted write")


def test_stats_cli_shows_unreferenced_content_apart(repo):
    _fill(repo)
    repo.binaries.put(b"leftover")
    repo.close()
    code, out = _cli("stats", "--data-dir", repo.config.data_dir, repo=repo)
    assert code == 0
    rows = dict(line.split("  ", 1) for line in out.splitlines() if "  " in line)
    assert rows["Binary files"].strip() == "1 (7 B)"
    assert rows["Unreferenced content files"].strip().startswith("1 (8 B")
    code, out = _cli("stats", "--json", "--data-dir", repo.config.data_dir, repo=repo)
    st = json.loads(out)
    assert st["binaries"] == 1 and st["unreferenced_files"] == 1
    assert st["data_dir"] == os.path.abspath(repo.config.data_dir)   # the operator's view


# --- cleanup: what the grace period kept ------------------------------------------------

def _orphan_and_temp(repo) -> tuple[str, str]:
    repo.create_or_replace("/gone", data=b"purged", media_type="text/plain")
    repo.delete("/gone", soft=False)
    leftover(repo.binaries, "put-leftover", b"half an upload")
    tmp = "put-leftover"
    return next(d for d in repo.binaries if d not in cleanup.referenced(repo)), tmp


def test_cleanup_reports_files_too_young_to_remove(repo):
    _fill(repo)
    orphan, tmp = _orphan_and_temp(repo)
    report = cleanup.cleanup(repo, dry_run=True, min_age=3600)
    assert report.orphans == [] and report.temp_files == []
    assert sorted(report.young) == sorted([(orphan, 6), ("put-leftover", 14)])
    report = cleanup.cleanup(repo, min_age=3600)
    assert len(report.young) == 2 and orphan in repo.binaries
    assert [name for name, _, _ in repo.binaries.leftovers()] == [tmp]
    report = cleanup.cleanup(repo, dry_run=True, min_age=0)
    assert report.young == [] and len(report.orphans) == 1 and len(report.temp_files) == 1


def test_cleanup_cli_says_what_the_grace_period_skipped(repo):
    _fill(repo)
    _orphan_and_temp(repo)
    repo.close()
    code, out = _cli("cleanup", "--dry-run", "--data-dir", repo.config.data_dir, repo=repo)
    assert code == 0
    assert "Would remove 0 orphan binaries" in out
    assert "Skipped 2 files younger than 3600 s" in out and "--min-age" in out
    code, out = _cli("cleanup", "--dry-run", "--min-age", "0", "--data-dir",
                     repo.config.data_dir, repo=repo)
    assert "Would remove 1 orphan binaries and 1 temporary files" in out
    assert "Skipped" not in out


# --- backup: corrupt or missing content named by the resources using it -------------------

def _corrupt(repo, digest: str) -> None:
    with repo.binaries.open(digest) as fh:
        rewrite(repo.binaries, digest, fh.read() + b"bit rot")


def test_backup_names_the_resources_of_corrupt_and_missing_content(repo, tmp_path):
    digest = _fill(repo)
    version = repo.create_version("/c/f")
    _, other = repo.create_or_replace("/c/g", data=b"other", media_type="text/plain")
    _corrupt(repo, digest)
    remove(repo.binaries, other.digest)
    report = backup.backup(repo, tmp_path / "b", with_binaries=True)   # S3: copied too
    assert report.corrupt_binaries == [digest] and report.missing_binaries == [other.digest]
    assert report.users[digest] == sorted(["/c/f", f"/c/f/fcr:versions/{version}"])
    (made,) = repo.versions("/c/g")        # versioning.auto: the version of its creation
    assert report.users[other.digest] == ["/c/g", f"/c/g/fcr:versions/{made.id}"]
    problems = "\n".join(report.problems)
    assert "CORRUPT content of /c/f, /c/f/fcr:versions/" in problems and digest in problems
    assert "MISSING content of /c/g" in problems
    manifest = backup.read_manifest(tmp_path / "b")
    assert manifest["binary_users"][digest] == report.users[digest]


def test_backup_cli_names_the_resources(repo, tmp_path):
    digest = _fill(repo)
    _corrupt(repo, digest)
    repo.close()
    code, out = _cli("backup", tmp_path / "b", "--with-binaries", "--data-dir",
                     repo.config.data_dir, repo=repo)
    assert code == 1
    assert "CORRUPT content of /c/f" in out and digest in out


def test_backup_of_s3_content_lists_it_and_names_what_is_missing(repo, tmp_path,
                                                                 binaries_backend):
    """With the S3 backend a backup (without --with-binaries) lists the objects
    with their digests and sizes instead of copying them, and says which are missing;
    with files, it copies them."""
    digest = _fill(repo)
    _, other = repo.create_or_replace("/c/g", data=b"other", media_type="text/plain")
    remove(repo.binaries, other.digest)
    report = backup.backup(repo, tmp_path / "b")
    assert report.missing_binaries == [other.digest]
    assert "MISSING content of /c/g" in "\n".join(report.problems)
    manifest = backup.read_manifest(tmp_path / "b")
    copied = sorted(os.listdir(tmp_path / "b" / "ldpnr"))
    if binaries_backend == "s3":
        assert manifest["s3_objects"]["objects"] == {digest: len(b"content")}
        assert repo.binaries.describe() == manifest["s3_objects"]["location"]
        assert copied == ["tmp"]
    else:
        assert "s3_objects" not in manifest and copied != ["tmp"]


def test_a_failed_restore_leaves_no_object_behind(repo, tmp_path, binary_store):
    """A restore that fails its verification writes nothing: no data directory,
    and (S3) none of the objects it had copied into the bucket."""
    _fill(repo)
    repo.create_or_replace("/c/g", data=b"other", media_type="text/plain")
    backup.backup(repo, tmp_path / "b", with_binaries=True)
    path = tmp_path / "b" / backup.MANIFEST
    manifest = json.loads(path.read_text())
    manifest["counts"]["binaries"] += 1                 # the verification will fail
    path.write_text(json.dumps(manifest))
    target, keywords = binary_store({"data_dir": str(tmp_path / "r"), "sync": False},
                                    "restored")
    with pytest.raises(AdminError, match="Restore verification failed"):
        backup.restore(tmp_path / "b", Config(**keywords))
    assert not os.path.exists(tmp_path / "r")
    if target is not None:
        assert list(target) == []


# --- stale staging directories of killed backups -------------------------------------------

def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _staging(parent, base: str, tag: str, pid: int, host: str | None = None) -> str:
    """A staging directory named as a process ``pid`` on ``host`` names it, with content."""
    host = host or socket.gethostname()
    path = os.path.join(parent, f".{base}.{tag}-{pid}@{host}-abcd1234")
    os.makedirs(os.path.join(path, "ldprs"))
    with open(os.path.join(path, "ldprs", "data.mdb"), "wb") as fh:
        fh.write(b"\0" * 10000)
    old = time.time() - 7200
    os.utime(path, (old, old))
    return path


def test_staging_directories_carry_their_owner(tmp_path):
    path = files.staging_dir(str(tmp_path / "dest"), "partial")
    name = os.path.basename(path)
    assert name.startswith(f".dest.partial-{os.getpid()}@")
    assert files.stale_staging(str(tmp_path)) == []                  # ours: alive


def test_next_backup_removes_stale_staging_and_keeps_live_ones(repo, tmp_path):
    _fill(repo)
    parent = tmp_path / "backups"
    parent.mkdir()
    stale = _staging(parent, "monday", "partial", _dead_pid())
    live = _staging(parent, "tuesday", "partial", os.getpid())       # a running backup
    foreign = _staging(parent, "wed", "partial", _dead_pid(), "another-host")
    report = backup.backup(repo, parent / "friday")
    assert report.ok and (parent / "friday" / "manifest.json").exists()
    assert not os.path.exists(stale)
    assert os.path.exists(live) and os.path.exists(foreign)
    assert report.stale_removed == [os.path.basename(stale)]


def test_cleanup_removes_stale_staging_beside_the_data_directory(repo, tmp_path):
    _fill(repo)
    parent = os.path.dirname(os.path.abspath(repo.config.data_dir))
    base = os.path.basename(os.path.abspath(repo.config.data_dir))
    stale = _staging(parent, base, "restoring", _dead_pid())
    stale2 = _staging(parent, "bk", "partial", _dead_pid())
    live = _staging(parent, "bk2", "partial", os.getpid())
    dry = cleanup.cleanup(repo, dry_run=True)
    assert sorted(n for n, _ in dry.staging_dirs) == sorted(
        [os.path.basename(stale), os.path.basename(stale2)])
    assert all(size >= 10000 for _, size in dry.staging_dirs)
    assert os.path.exists(stale) and os.path.exists(stale2)
    report = cleanup.cleanup(repo)
    assert len(report.staging_dirs) == 2 and report.bytes_freed >= 20000
    assert not os.path.exists(stale) and not os.path.exists(stale2) and os.path.exists(live)


def test_cleanup_cli_reports_stale_staging(repo, tmp_path):
    _fill(repo)
    parent = os.path.dirname(os.path.abspath(repo.config.data_dir))
    stale = _staging(parent, "bk", "partial", _dead_pid())
    repo.close()
    code, out = _cli("cleanup", "--data-dir", repo.config.data_dir, repo=repo)
    assert code == 0 and "1 stale staging directories" in out
    assert not os.path.exists(stale)


@pytest.mark.parametrize("name", [".x.partial-abcd1234", ".x.partial-12@h-abcd1234x",
                                  "x.partial-12@h-abcd1234", ".x.partial-@h-abcd1234",
                                  ".x.other-12@h-abcd1234", ".x.partial-0@h-abcd1234",
                                  ".x.partial-" + "9" * 40 + "@h-abcd1234"])
def test_only_names_made_by_staging_dir_are_candidates(tmp_path, name):
    name = name.replace("@h-", f"@{socket.gethostname()}-")
    os.makedirs(tmp_path / name)
    assert files.stale_staging(str(tmp_path)) == []


def test_restore_removes_stale_staging_beside_the_data_directory(repo, tmp_path):
    _fill(repo)
    backup.backup(repo, tmp_path / "b")
    target = tmp_path / "restored" / "data"
    stale = _staging(target.parent, "data", "restoring", _dead_pid())
    live = _staging(target.parent, "data", "restoring", os.getpid())
    report = backup.restore(tmp_path / "b", repo.config.with_(data_dir=str(target)))
    assert report.ok and report.stale_removed == [os.path.basename(stale)]
    assert not os.path.exists(stale) and os.path.exists(live)
