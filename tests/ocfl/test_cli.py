"""``lsup-admin export-ocfl`` and ``import-ocfl``: output, exit codes, options."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from lakesuperior import Repository
from lakesuperior.ocfl.storage import object_path
from tests.cli.conftest import THREAD_INDEXER

from .conftest import BASE, summary
from .validator import assert_valid


@pytest.fixture
def invoke(monkeypatch):
    from lakesuperior.cli import cli
    for var in ("LSUP_CONFIG", "LSUP_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    runner = CliRunner()

    def run(*args):
        return runner.invoke(cli, [str(a) for a in args], env=THREAD_INDEXER)
    return run


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data"
    with Repository(path, base_uri=BASE, sync=False, indexer_process=False) as repo:
        repo.create_or_replace("/a", data=b'<> <http://ex.org/p> "a" .',
                               media_type="text/turtle")
        repo.create_or_replace("/a/b", data=b"bytes", media_type="text/plain")
    return path


def test_export_then_import(invoke, data, tmp_path):
    r = invoke("export-ocfl", tmp_path / "ocfl", "--data-dir", data)
    assert r.exit_code == 0, r.output
    assert "Exported 3 OCFL objects" in r.output and "OCFL 1.1, sha512" in r.output
    assert_valid(str(tmp_path / "ocfl"))
    r = invoke("import-ocfl", tmp_path / "ocfl", "--data-dir", tmp_path / "new")
    assert r.exit_code == 0, r.output
    assert "Imported 3 OCFL objects" in r.output and "0 not imported" in r.output
    with Repository(data, base_uri=BASE, indexer_process=False) as a, \
            Repository(tmp_path / "new", base_uri=BASE, indexer_process=False) as b:
        assert summary(a) == summary(b)
    r = invoke("import-ocfl", tmp_path / "ocfl", "--data-dir", tmp_path / "new")
    assert r.exit_code == 0 and "3 objects already imported" in r.output


def test_export_options(invoke, data, tmp_path):
    r = invoke("export-ocfl", tmp_path / "ocfl", "--ocfl-version", "1.0", "--digest",
               "sha256", "--data-dir", data)
    assert r.exit_code == 0, r.output
    inv = json.loads((tmp_path / "ocfl" / object_path("info:fedora/a") / "inventory.json")
                     .read_text())
    assert inv["digestAlgorithm"] == "sha256"
    assert inv["type"] == "https://ocfl.io/1.0/spec/#inventory"
    assert (tmp_path / "ocfl" / "0=ocfl_1.0").exists()


@pytest.mark.parametrize("args,message", [
    (("--ocfl-version", "2.0"), "'2.0' is not one of"),
    (("--digest", "md5"), "'md5' is not one of"),
    (("--since", "yesterday"), "is not an ISO 8601 date-time"),
])
def test_export_bad_options(invoke, data, tmp_path, args, message):
    r = invoke("export-ocfl", tmp_path / "ocfl", *args, "--data-dir", data)
    assert r.exit_code == 2 and message in r.output
    assert not (tmp_path / "ocfl").exists()


def test_export_into_a_non_empty_directory_is_refused(invoke, data, tmp_path):
    (tmp_path / "ocfl").mkdir()
    (tmp_path / "ocfl" / "x").write_text("x")
    r = invoke("export-ocfl", tmp_path / "ocfl", "--data-dir", data)
    assert r.exit_code == 2 and "is not empty" in r.output
    assert os.listdir(tmp_path / "ocfl") == ["x"]
    assert not [n for n in os.listdir(tmp_path) if ".exporting-" in n]


def test_export_since_needs_an_earlier_export(invoke, data, tmp_path):
    r = invoke("export-ocfl", tmp_path / "ocfl", "--since", "2024-01-01T00:00:00Z",
               "--data-dir", data)
    assert r.exit_code == 2 and "is not a directory" in r.output


def test_export_since(invoke, data, tmp_path):
    assert invoke("export-ocfl", tmp_path / "ocfl", "--data-dir", data).exit_code == 0
    r = invoke("export-ocfl", tmp_path / "ocfl", "--since", "2999-01-01", "--data-dir", data)
    assert r.exit_code == 0, r.output
    assert "Exported 0 OCFL objects" in r.output and "3 objects unchanged" in r.output


def test_export_without_a_repository(invoke, tmp_path):
    r = invoke("export-ocfl", tmp_path / "ocfl", "--data-dir", tmp_path / "none")
    assert r.exit_code == 2 and "No repository" in r.output


def test_import_of_something_else(invoke, tmp_path):
    (tmp_path / "src").mkdir()
    r = invoke("import-ocfl", tmp_path / "src", "--data-dir", tmp_path / "new")
    assert r.exit_code == 2 and "not an OCFL storage root" in r.output
    assert not (tmp_path / "new").exists()


def test_import_with_a_broken_object_exits_1(invoke, data, tmp_path):
    assert invoke("export-ocfl", tmp_path / "ocfl", "--data-dir", data).exit_code == 0
    inv = tmp_path / "ocfl" / object_path("info:fedora/a/b") / "inventory.json"
    inv.write_bytes(inv.read_bytes() + b" ")
    r = invoke("import-ocfl", tmp_path / "ocfl", "--data-dir", tmp_path / "new")
    assert r.exit_code == 1
    assert "1 not imported" in r.output
    assert "FAILED info:fedora/a/b: info:fedora/a/b:" in r.output
    assert "does not match its sidecar" in r.output


def test_an_interrupted_export_leaves_no_root_and_is_cleaned_up(data, tmp_path, monkeypatch):
    """An export killed half-way leaves only its staging directory, never DIR; the
    next export beside it removes that leftover of a process that is gone."""
    from lakesuperior.admin import files
    from lakesuperior.ocfl import export as export_mod

    def boom(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(export_mod.ObjectWriter, "commit", boom)
    with Repository(data, base_uri=BASE, indexer_process=False) as repo, \
            pytest.raises(KeyboardInterrupt):
        export_mod.export_ocfl(repo, tmp_path / "ocfl")
    assert not (tmp_path / "ocfl").exists()
    assert not [n for n in os.listdir(tmp_path) if ".exporting-" in n]
    monkeypatch.undo()
    stale = tmp_path / f".ocfl.exporting-999999999@{files._host()}-abcdefgh"
    stale.mkdir()
    with Repository(data, base_uri=BASE, indexer_process=False) as repo:
        export_mod.export_ocfl(repo, tmp_path / "ocfl")
    assert not stale.exists() and (tmp_path / "ocfl" / "0=ocfl_1.1").exists()
