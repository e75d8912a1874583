"""lsup-admin: bootstrap, stats, check-fixity, check-refint, cleanup, index, help,
options and every failure path."""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess

import pytest

from .conftest import BASE, script, state

COMMANDS = ("bootstrap", "stats", "check-fixity", "check-refint", "cleanup", "index",
            "backup", "restore", "migrate")


# --- help and options ------------------------------------------------------------------------

def test_help_in_a_real_process():
    out = subprocess.run([script("lsup-admin"), "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    for name in COMMANDS:
        assert name in out.stdout
    assert "Exit codes" in out.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_on_every_command(invoke, command):
    res = invoke(command, "--help")
    assert res.exit_code == 0, res.output
    assert "--config" in res.output and "--data-dir" in res.output
    assert "LSUP_CONFIG" in res.output


def test_unknown_command_is_usage_error(invoke):
    res = invoke("frobnicate")
    assert res.exit_code == 2


def test_data_dir_before_or_after_the_command(invoke, data_dir):
    for args in (("--data-dir", data_dir, "stats", "--json"),
                 ("stats", "--json", "--data-dir", data_dir)):
        res = invoke(*args)
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["data_dir"] == str(data_dir)


def test_config_file_and_env(invoke, data_dir, tmp_path):
    cfg = tmp_path / "lsup.yml"
    cfg.write_text(f"data_dir: {data_dir}\n")
    res = invoke("stats", "--json", "--config", cfg)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["resources"] > 1
    res = invoke("stats", "--json", env={"LSUP_CONFIG": str(cfg)})
    assert res.exit_code == 0, res.output
    res = invoke("stats", "--json", env={"LSUP_DATA_DIR": str(data_dir)})
    assert res.exit_code == 0, res.output


def test_unreadable_config(invoke, tmp_path):
    res = invoke("stats", "--config", tmp_path / "missing.yml")
    assert res.exit_code == 2
    assert "Cannot read configuration file" in res.output
    bad = tmp_path / "bad.yml"
    bad.write_text("data_dir: [unclosed\n")
    res = invoke("stats", "--config", bad)
    assert res.exit_code == 2 and "not valid YAML" in res.output
    wrong = tmp_path / "wrong.yml"
    wrong.write_text("digest_algorithm: crc32\n")
    res = invoke("stats", "--config", wrong)
    assert res.exit_code == 2 and "digest_algorithm" in res.output


def test_no_repository(invoke, tmp_path):
    for command in ("stats", "check-refint", "cleanup", "index"):
        res = invoke(command, "--data-dir", tmp_path / "nothing")
        assert res.exit_code == 2, (command, res.output)
        assert "No repository" in res.output and "bootstrap" in res.output
    assert not (tmp_path / "nothing").exists()


def _foreign_store(path, fmt: bytes | None):
    import lmdb
    store = path / "ldprs"
    store.mkdir(parents=True)
    env = lmdb.open(str(store), max_dbs=4)
    with env.begin(write=True) as txn:
        db = env.open_db(b"meta", txn=txn)
        if fmt is not None:
            txn.put(b"format", fmt, db=db)
        else:
            txn.put(b"something", b"else", db=env.open_db(b"rec", txn=txn))
    env.close()


def test_unknown_store_format(invoke, tmp_path):
    _foreign_store(tmp_path / "newer", b"99")
    res = invoke("stats", "--data-dir", tmp_path / "newer")
    assert res.exit_code == 2
    assert "format 99" in res.output and "Upgrade" in res.output
    _foreign_store(tmp_path / "alien", None)
    res = invoke("check-refint", "--data-dir", tmp_path / "alien")
    assert res.exit_code == 2 and "no format version" in res.output
    garbage = tmp_path / "garbage" / "ldprs"
    garbage.mkdir(parents=True)
    (garbage / "data.mdb").write_bytes(os.urandom(20000))
    res = invoke("stats", "--data-dir", tmp_path / "garbage")
    assert res.exit_code == 2 and "Cannot open the store" in res.output


# --- bootstrap -----------------------------------------------------------------------------------

def test_bootstrap_creates(invoke, tmp_path):
    res = invoke("bootstrap", "--data-dir", tmp_path / "new")
    assert res.exit_code == 0, res.output
    assert "Created" in res.output
    st = state(tmp_path / "new")
    assert list(st["graphs"]) == ["<info:fcres/>"]


def test_bootstrap_asks_before_wiping(invoke, data_dir, tmp_path):
    before = state(data_dir)
    (data_dir / "keep.txt").write_text("not ours")
    res = invoke("bootstrap", "--data-dir", data_dir, input="n\n")
    assert res.exit_code == 1
    assert "Delete everything" in res.output and "Nothing was changed" in res.output
    assert state(data_dir) == before
    res = invoke("bootstrap", "--data-dir", data_dir, input="y\n")
    assert res.exit_code == 0, res.output
    assert "Wiped and re-created" in res.output
    assert list(state(data_dir)["graphs"]) == ["<info:fcres/>"]
    assert state(data_dir)["binaries"] == []
    assert (data_dir / "keep.txt").read_text() == "not ours"
    assert not [p for p in os.listdir(data_dir) if p.startswith(".lsup-wipe")]


def test_bootstrap_yes_wipes_an_unreadable_store(invoke, tmp_path):
    _foreign_store(tmp_path / "newer", b"99")
    res = invoke("bootstrap", "--data-dir", tmp_path / "newer", input="n\n")
    assert res.exit_code == 1 and "cannot read" in res.output
    res = invoke("bootstrap", "--yes", "--data-dir", tmp_path / "newer")
    assert res.exit_code == 0, res.output
    assert list(state(tmp_path / "newer")["graphs"]) == ["<info:fcres/>"]


# --- stats ------------------------------------------------------------------------------------

def test_stats_table_and_json(invoke, data_dir):
    res = invoke("stats", "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    for label in ("Resources", "ldp:BasicContainer", "Tombstones", "Versions", "Binary files",
                  "Triples", "Store size on disk"):
        assert label in res.output
    st = json.loads(invoke("stats", "--json", "--data-dir", data_dir).stdout)
    assert st["resources"] == 8          # root, coll, doc, 2 binaries, dc, member, flat
    assert st["by_model"] == {"ldp:RDFSource": 1, "ldp:NonRDFSource": 2,
                              "ldp:BasicContainer": 4, "ldp:DirectContainer": 1,
                              "ldp:IndirectContainer": 0}
    assert st["tombstones"] == 1 and st["versions"] == 1
    assert st["binaries"] == 2 and st["binary_bytes"] == 800 + 12
    assert st["store"]["quads"] > 50 and st["store"]["store_bytes"] > 0


# --- check-fixity ------------------------------------------------------------------------------

def _corrupt(data_dir, digest: str, content: bytes | None) -> None:
    from lakesuperior.store.binaries import BinaryStore
    path = BinaryStore(data_dir / "ldpnr").path(digest)
    if content is None:
        os.unlink(path)
    else:
        os.chmod(path, 0o644)
        with open(path, "wb") as fh:
            fh.write(content)


def test_check_fixity_one_and_all(invoke, data_dir):
    res = invoke("check-fixity", "/coll/file.bin", "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("OK    /coll/file.bin  sha512:")
    res = invoke("check-fixity", "--all", "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    assert "Checked 2 binaries: all intact" in res.output
    res = invoke("check-fixity", "--all", "--json", "--data-dir", data_dir)
    results = json.loads(res.stdout)
    assert sorted(r["uid"] for r in results) == ["/coll/file.bin", "/coll/note.txt"]
    assert all(r["ok"] for r in results)


def test_check_fixity_reports_every_failure(invoke, data_dir):
    digests = {r.uid: r.expected for r in _fixity(data_dir)}
    _corrupt(data_dir, digests["/coll/file.bin"], b"tampered")
    _corrupt(data_dir, digests["/coll/note.txt"], None)
    res = invoke("check-fixity", "--all", "--data-dir", data_dir)
    assert res.exit_code == 1
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("FAIL")]
    assert len(lines) == 2
    assert any("/coll/file.bin" in ln and "does not match" in ln for ln in lines)
    assert any("/coll/note.txt" in ln and "missing" in ln for ln in lines)
    assert "2 failed" in res.output
    res = invoke("check-fixity", "/coll/note.txt", "--data-dir", data_dir)
    assert res.exit_code == 1


def _fixity(data_dir):
    from lakesuperior.admin.checks import check_fixity
    from lakesuperior.admin.datadir import open_repository
    from lakesuperior.config import Config
    with open_repository(Config(data_dir=str(data_dir))) as repo:
        return check_fixity(repo).results


def test_check_fixity_bad_input(invoke, data_dir):
    res = invoke("check-fixity", "/nope", "--data-dir", data_dir)
    assert res.exit_code == 2 and "/nope does not exist" in res.output
    res = invoke("check-fixity", "/coll", "--data-dir", data_dir)
    assert res.exit_code == 2 and "only binaries" in res.output
    res = invoke("check-fixity", "/gone", "--data-dir", data_dir)
    assert res.exit_code == 2 and "tombstone" in res.output
    res = invoke("check-fixity", "/bad//uid", "--data-dir", data_dir)
    assert res.exit_code == 2 and "Invalid uid" in res.output
    res = invoke("check-fixity", "--data-dir", data_dir)
    assert res.exit_code == 2 and "either a UID or --all" in res.output
    res = invoke("check-fixity", "/coll/file.bin", "--all", "--data-dir", data_dir)
    assert res.exit_code == 2


# --- check-refint -------------------------------------------------------------------------------

def test_check_refint_clean(invoke, data_dir):
    res = invoke("check-refint", "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == "problem,resource,target"
    assert "no problems" in res.output


def test_check_refint_reports_broken_links(invoke, data_dir, tmp_path):
    from lakesuperior import Repository
    with Repository(data_dir, base_uri=BASE, sync=False) as repo:
        repo.create_or_replace("/target")
        repo.create_or_replace("/linker", data=f"<> <http://ex.org/p> <{BASE}/target> .".encode(),
                               media_type="text/turtle")
        repo.delete("/target", soft=False)
    res = invoke("check-refint", "--data-dir", data_dir)
    assert res.exit_code == 1
    rows = list(csv.reader(io.StringIO(res.stdout)))
    assert rows == [["problem", "resource", "target"], ["broken_link", "/linker", "/target"]]
    out = tmp_path / "report.csv"
    res = invoke("check-refint", "--output", out, "--data-dir", data_dir)
    assert res.exit_code == 1
    assert out.read_text().splitlines()[1] == "broken_link,/linker,/target"


# --- cleanup and index ---------------------------------------------------------------------------

def test_cleanup(invoke, data_dir):
    from lakesuperior import Repository
    with Repository(data_dir, base_uri=BASE, sync=False) as repo:
        repo.create_or_replace("/purged", data=b"x" * 1000, media_type="text/plain")
        repo.delete("/purged", soft=False)
        stray = os.path.join(repo.binaries.root, "tmp", "put-leftover")
    with open(stray, "wb") as fh:
        fh.write(b"y" * 10)
    before = state(data_dir)
    assert len(before["binaries"]) == 3
    res = invoke("cleanup", "--data-dir", data_dir)            # too young by default
    assert res.exit_code == 0, res.output
    assert "Removed 0 orphan binaries and 0 temporary files" in res.output
    res = invoke("cleanup", "--dry-run", "--min-age", "0", "-v", "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    assert "Would remove 1 orphan binaries and 1 temporary files: 1.0 KB would be freed" \
        in res.output
    assert state(data_dir) == before and os.path.exists(stray)
    res = invoke("cleanup", "--min-age", "0", "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    assert "Removed 1 orphan binaries and 1 temporary files: 1.0 KB freed" in res.output
    after = state(data_dir)
    assert len(after["binaries"]) == 2 and after["graphs"] == before["graphs"]
    assert not os.path.exists(stray)
    res = invoke("check-fixity", "--all", "--data-dir", data_dir)
    assert res.exit_code == 0


def test_index(invoke, data_dir):
    res = invoke("index", "--data-dir", data_dir)
    assert res.exit_code == 0, res.output
    assert "Union index up to date" in res.output
    st = json.loads(invoke("stats", "--json", "--data-dir", data_dir).stdout)
    assert st["index_pending"] == 0


def test_interrupt_exits_130_and_keeps_repository(invoke, data_dir, monkeypatch):
    before = state(data_dir)

    def boom(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr("lakesuperior.repository.Repository.fixity_check", boom)
    res = invoke("check-fixity", "--all", "--data-dir", data_dir)
    assert res.exit_code == 130
    assert "Interrupted" in res.output
    assert state(data_dir) == before
