"""lsup-admin backup / restore: round trips, a backup taken while another process
writes, verification, interruption and every refusal."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from .conftest import BASE, state


def _leftovers(parent) -> list[str]:
    return [p for p in os.listdir(parent) if ".partial-" in p or ".restoring-" in p]


def test_backup_and_restore_round_trip(invoke, data_dir, tmp_path):
    before = state(data_dir)
    dest = tmp_path / "backups" / "b1"
    res = invoke("backup", dest, "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    assert "Backup written to" in res.output and "8 resources" in res.output
    assert sorted(os.listdir(dest)) == ["ldpnr", "ldprs", "manifest.json"]
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["kind"] == "lakesuperior-backup"
    assert manifest["counts"]["resources"] == 8 and manifest["counts"]["binaries"] == 2
    assert manifest["digest_algorithm"] == "sha512"
    assert state(data_dir) == before                      # the source is untouched

    restored = tmp_path / "restored"
    res = invoke("restore", dest, "--data-dir", restored)
    assert res.exit_code == 0, res.output
    assert "verified" in res.output
    assert state(restored) == before
    assert invoke("check-fixity", "--all", "--data-dir", restored).exit_code == 0
    assert invoke("check-refint", "--data-dir", restored).exit_code == 0
    assert _leftovers(tmp_path) == [] and _leftovers(tmp_path / "backups") == []


def test_restore_into_an_existing_empty_directory(invoke, data_dir, tmp_path):
    assert invoke("backup", tmp_path / "b", "--data-dir", data_dir).exit_code == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    res = invoke("restore", tmp_path / "b", "--data-dir", empty)
    assert res.exit_code == 0, res.output
    assert state(empty) == state(data_dir)


def test_backup_destination_exists(invoke, data_dir, tmp_path):
    dest = tmp_path / "exists"
    dest.mkdir()
    (dest / "precious").write_text("keep")
    res = invoke("backup", dest, "--data-dir", data_dir)
    assert res.exit_code == 2
    assert "exists already" in res.output
    assert os.listdir(dest) == ["precious"]
    res = invoke("backup", data_dir / "inside", "--data-dir", data_dir)
    assert res.exit_code == 2 and "inside the data directory" in res.output
    res = invoke("backup", tmp_path / "x", "--data-dir", tmp_path / "no-repo")
    assert res.exit_code == 2 and "No repository" in res.output
    assert not (tmp_path / "x").exists()


def test_restore_refusals(invoke, data_dir, tmp_path):
    backup = tmp_path / "b"
    assert invoke("backup", backup, "--data-dir", data_dir).exit_code == 0
    # into a non-empty directory
    res = invoke("restore", backup, "--data-dir", data_dir)
    assert res.exit_code == 2 and "not empty" in res.output
    # from something that is not a backup
    res = invoke("restore", tmp_path / "missing", "--data-dir", tmp_path / "r1")
    assert res.exit_code == 2 and "not a directory" in res.output
    res = invoke("restore", data_dir, "--data-dir", tmp_path / "r1")
    assert res.exit_code == 2 and "not a Lakesuperior backup" in res.output
    # a digest algorithm that does not match the backup
    res = invoke("restore", backup, "--data-dir", tmp_path / "r1",
                 env={"LSUP_DIGEST_ALGORITHM": "sha256"})
    assert res.exit_code == 2 and "digest_algorithm" in res.output
    assert not (tmp_path / "r1").exists()
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("change, message", [
    (lambda m: "{not json", "Cannot read the backup manifest"),
    (lambda m: json.dumps({**m, "kind": "zip"}), "not a Lakesuperior backup manifest"),
    (lambda m: json.dumps({**m, "backup_format": 7}), "upgrade Lakesuperior"),
    (lambda m: json.dumps({**m, "store_format": 0}), "store of format 0"),
    (lambda m: json.dumps({**m, "counts": {}}), "no valid counts"),
    (lambda m: json.dumps({**m, "counts": {**m["counts"], "resources": 9}}),
     "verification failed: resources is 8"),
])
def test_restore_refuses_a_damaged_manifest(invoke, data_dir, tmp_path, change, message):
    backup = tmp_path / "b"
    assert invoke("backup", backup, "--data-dir", data_dir).exit_code == 0
    manifest = json.loads((backup / "manifest.json").read_text())
    (backup / "manifest.json").write_text(change(manifest))
    res = invoke("restore", backup, "--data-dir", tmp_path / "r")
    assert res.exit_code == 2
    assert message in res.output
    assert not (tmp_path / "r").exists() and _leftovers(tmp_path) == []


def test_restore_detects_corrupt_and_missing_binaries(invoke, data_dir, tmp_path):
    from lakesuperior.store.binaries import BinaryStore
    backup = tmp_path / "b"
    assert invoke("backup", backup, "--data-dir", data_dir).exit_code == 0
    store = BinaryStore(backup / "ldpnr")
    digest = sorted(store)[0]
    path = store.path(digest)
    os.chmod(path, 0o644)
    with open(path, "ab") as fh:
        fh.write(b"bit rot")
    res = invoke("restore", backup, "--data-dir", tmp_path / "r")
    assert res.exit_code == 2
    assert "verification failed: 1 binaries in the backup do not match" in res.output
    assert not (tmp_path / "r").exists()
    os.unlink(path)
    res = invoke("restore", backup, "--data-dir", tmp_path / "r")
    assert res.exit_code == 2
    assert "verification failed: 1 binaries the store refers to are missing" in res.output
    assert not (tmp_path / "r").exists() and _leftovers(tmp_path) == []


def test_backup_reports_content_missing_in_the_source(invoke, data_dir, tmp_path):
    from lakesuperior.store.binaries import BinaryStore
    store = BinaryStore(data_dir / "ldpnr")
    digest = hashlib.sha512(b"hello world\n").hexdigest()      # /coll/note.txt
    os.unlink(store.path(digest))
    res = invoke("backup", tmp_path / "b", "--data-dir", data_dir)
    assert res.exit_code == 1
    assert f"MISSING content of /coll/note.txt (digest {digest})" in res.output
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["missing_binaries"] == [digest]
    # the backup restores, and says what was already missing
    res = invoke("restore", tmp_path / "b", "--data-dir", tmp_path / "r")
    assert res.exit_code == 1
    assert f"binary {digest} was already missing" in res.output
    assert "(used by /coll/note.txt)" in res.output
    assert (tmp_path / "r" / "ldprs" / "data.mdb").exists()


@pytest.mark.parametrize("command", ["backup", "restore"])
def test_interrupted_backup_or_restore_leaves_nothing(invoke, data_dir, tmp_path, monkeypatch,
                                                       command):
    from lakesuperior.admin import backup as backup_module
    backup = tmp_path / "b"
    if command == "restore":
        assert invoke("backup", backup, "--data-dir", data_dir).exit_code == 0
    before = state(data_dir)

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(backup_module, "_copy_binary", interrupt)
    if command == "backup":
        res = invoke("backup", backup, "--data-dir", data_dir)
        assert not backup.exists()
    else:
        res = invoke("restore", backup, "--data-dir", tmp_path / "r")
        assert not (tmp_path / "r").exists()
    assert res.exit_code == 130
    assert "Interrupted" in res.output
    assert _leftovers(tmp_path) == []
    assert state(data_dir) == before


WRITER = r"""
import os, random, sys
from lakesuperior import Repository
from lakesuperior.bench.workload import workload_turtle
path, flag, base = sys.argv[1:4]
repo = Repository(path, base_uri=base, sync=False)
rng = random.Random(7)
internal = [base + "/coll", base + "/flat"]
i = 0
while not os.path.exists(flag + ".stop") and i < 20000:
    with repo.transaction():          # the resource and its binary commit together
        repo.create_or_replace(f"/w/{i}", data=workload_turtle(rng, internal),
                               media_type="text/turtle")
        repo.create_or_replace(f"/w/{i}/bin", data=os.urandom(3000),
                               media_type="application/octet-stream")
    i += 1
    with open(flag + ".tmp", "w") as fh:
        fh.write(str(i))
    os.replace(flag + ".tmp", flag + ".count")
    if i == 30:
        open(flag + ".started", "w").close()
repo.close()
print(i)
"""


def _count(flag: str) -> int:
    with open(flag + ".count") as fh:
        return int(fh.read())


@pytest.mark.slow
def test_backup_while_another_process_writes(invoke, data_dir, tmp_path):
    flag = str(tmp_path / "writer")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(data_dir), flag, BASE],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(tmp_path))
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(flag + ".started"):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the writer did not start"
            time.sleep(0.05)
        before = _count(flag)
        res = invoke("backup", tmp_path / "b", "--data-dir", data_dir)
        assert res.exit_code == 0, res.output
        after = _count(flag)
        while _count(flag) < after + 5:                   # let it write after the copy too
            assert time.monotonic() < deadline + 60
            time.sleep(0.05)
    finally:
        open(flag + ".stop", "w").close()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    written = int(out)
    res = invoke("restore", tmp_path / "b", "--data-dir", tmp_path / "r")
    assert res.exit_code == 0, res.output

    from lakesuperior import Repository
    with Repository(tmp_path / "r", base_uri=BASE, sync=False) as repo:
        children = repo.get("/w").children
        assert before <= len(children) <= after < written
        for uid in children:
            res_ = repo.get(uid)
            assert len(res_.user_data) == 200, uid          # every resource complete
            assert res_.children == [uid + "/bin"]         # with its binary (same txn)
            assert repo.fixity_check(uid + "/bin").ok
        assert repo.integrity_check().ok
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["counts"]["resources"] == 9 + 2 * len(children)
    assert manifest["missing_binaries"] == [] and manifest["corrupt_binaries"] == []


@pytest.mark.parametrize("what", ["binary", "store"])
def test_backup_onto_a_full_disk_is_one_error_line(invoke, data_dir, tmp_path, what):
    """A destination without room (for a binary, or for the store's copy): exit 2,
    one ``Error:`` line saying the disk is full, no traceback, nothing left
    behind, the source unchanged."""
    from lakesuperior import Repository

    from ..store.smallfs import small_filesystem
    with Repository(data_dir, base_uri=BASE, sync=False) as repo:
        if what == "binary":
            repo.create_or_replace("/big", data=os.urandom(2 << 20),
                                   media_type="application/octet-stream")
        else:
            repo.create_or_replace("/big", data="".join(
                f'<> <http://ex.org/p> "{i}{"y" * 1000}" .\n' for i in range(2000)).encode(),
                media_type="text/turtle")
    before = state(data_dir)
    with small_filesystem(tmp_path / "fs", "1m") as fs:
        res = invoke("backup", os.path.join(fs, "b"), "--data-dir", data_dir)
        assert res.exit_code == 2, res.output
        errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "full" in errors[0]
        assert "Traceback" not in res.output
        assert os.listdir(fs) == []
    assert state(data_dir) == before
