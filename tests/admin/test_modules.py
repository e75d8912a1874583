"""The admin modules through Python, without the CLI: every public function."""
from __future__ import annotations

import base64
import hashlib
import json
import os

import pytest

from lakesuperior.admin import backup, checks, cleanup, datadir, files, migrate, stats
from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.config import Config
from lakesuperior.exceptions import (
    AdminError,
    LakesuperiorError,
    MigrationError,
    NoRepositoryError,
    ResourceNotExistsError,
)
from lakesuperior.model.checks import IntegrityReport


class Recorder(Progress):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def start(self, label: str, total: int | None = None) -> None:
        self.events.append(("start", label, total))

    def advance(self, n: int = 1) -> None:
        self.events.append(("advance", n))

    def finish(self) -> None:
        self.events.append(("finish",))


def _config(path) -> Config:
    return Config(data_dir=str(path), sync=False)


def _fill(repo) -> str:
    repo.create_or_replace("/c")
    _, res = repo.create_or_replace("/c/f", data=b"content", media_type="text/plain")
    return res.digest


def test_errors_are_one_hierarchy():
    assert issubclass(NoRepositoryError, AdminError)
    assert issubclass(MigrationError, AdminError)
    assert issubclass(AdminError, LakesuperiorError)


def test_datadir(tmp_path):
    cfg = _config(tmp_path / "d")
    assert not datadir.store_exists(cfg) and not datadir.has_data(cfg)
    with pytest.raises(NoRepositoryError, match="lsup-admin bootstrap"):
        datadir.open_repository(cfg)
    assert datadir.bootstrap(cfg) == {"data_dir": str(tmp_path / "d"), "wiped": False,
                                      "resources": 1}
    assert datadir.store_exists(cfg) and datadir.has_data(cfg)
    with datadir.open_repository(cfg) as repo:
        repo.create_or_replace("/x")
    with pytest.raises(AdminError, match="explicit confirmation"):
        datadir.bootstrap(cfg)
    (tmp_path / "d" / "keep.txt").write_text("not ours")
    assert datadir.bootstrap(cfg, wipe=True)["wiped"] is True
    with datadir.open_repository(cfg) as repo:
        assert not repo.exists("/x")
    assert (tmp_path / "d" / "keep.txt").read_text() == "not ours"


def test_stats_and_binary_uids(repo):
    _fill(repo)
    repo.create_or_replace("/c/g", data=b"more", media_type="text/plain")
    st = stats.repository_stats(repo)
    assert st["by_model"]["ldp:NonRDFSource"] == 2
    assert st["by_model"]["ldp:BasicContainer"] == 2          # root and /c
    assert "data_dir" not in st          # served to anyone by /admin/stats: no host paths
    assert stats.binary_uids(repo) == ["/c/f", "/c/g"]


def test_check_fixity_reports_progress(repo):
    digest = _fill(repo)
    progress = Recorder()
    report = checks.check_fixity(repo, progress=progress)
    assert report.ok and [r.uid for r in report.results] == ["/c/f"]
    assert progress.events == [("start", "Checking fixity", 1), ("advance", 1), ("finish",)]
    os.unlink(repo.binaries.path(digest))
    report = checks.check_fixity(repo, ["c/f"])
    assert not report.ok and [r.uid for r in report.failures] == ["/c/f"]
    with pytest.raises(ResourceNotExistsError):
        checks.check_fixity(repo, ["/nope"])


def test_check_refint_and_rows(repo):
    _fill(repo)
    report = checks.check_refint(repo)
    assert report.ok and checks.integrity_rows(report) == []
    made = IntegrityReport(resources=3, broken_links=[("/a", "/gone")],
                           dangling_children=[("/", "/ghost")], missing_parent=["/p/q"],
                           not_contained=["/r"], missing_content=["/c/f"])
    assert checks.integrity_rows(made) == [
        ("broken_link", "/a", "/gone"), ("dangling_child", "/", "/ghost"),
        ("missing_parent", "/p/q", "/p"), ("not_contained", "/r", "/"),
        ("missing_content", "/c/f", "")]


def test_cleanup_and_referenced(repo):
    digest = _fill(repo)
    repo.create_or_replace("/gone", data=b"purged", media_type="text/plain")
    repo.delete("/gone", soft=False)
    purged = hashlib.sha512(b"purged").hexdigest()
    assert cleanup.referenced(repo) == {digest}
    dry = cleanup.cleanup(repo, dry_run=True, min_age=0)
    assert dry.dry_run and dry.orphans == [(purged, 6)] and purged in repo.binaries
    done = cleanup.cleanup(repo, min_age=0, progress=QUIET)
    assert done.orphans == [(purged, 6)] and done.bytes_freed == 6
    assert purged not in repo.binaries and digest in repo.binaries


def test_backup_read_manifest_restore(repo, tmp_path):
    _fill(repo)
    report = backup.backup(repo, tmp_path / "b")
    assert report.ok and report.counts["binaries"] == 1 and report.store_bytes > 0
    manifest = backup.read_manifest(tmp_path / "b")
    assert manifest["backup_format"] == backup.BACKUP_FORMAT
    assert manifest["counts"] == report.counts
    restored = backup.restore(tmp_path / "b", _config(tmp_path / "r"))
    assert restored.ok and restored.counts == report.counts
    with pytest.raises(AdminError, match="exists already"):
        backup.backup(repo, tmp_path / "b")
    with pytest.raises(AdminError, match="not empty"):
        backup.restore(tmp_path / "b", _config(tmp_path / "r"))
    path = tmp_path / "b" / backup.MANIFEST
    path.write_text(json.dumps({**manifest, "backup_format": backup.BACKUP_FORMAT + 1}))
    with pytest.raises(AdminError, match="upgrade Lakesuperior"):
        backup.read_manifest(tmp_path / "b")
    with pytest.raises(AdminError, match="not a directory"):
        backup.read_manifest(tmp_path / "nothing")


def test_migration_report_rows():
    report = migrate.MigrationReport("http://s/rest", "/d", rdf_sources=2, binaries=1,
                                     skipped=[("http://s/rest/a", "not found (404)")],
                                     failed=[("http://s/rest/b", "HEAD answered 500")])
    assert report.copied == 3 and not report.ok
    assert report.as_dict()["copied"] == 3
    assert list(migrate.iter_rows(report)) == [
        ("skipped", "http://s/rest/a", "not found (404)"),
        ("failed", "http://s/rest/b", "HEAD answered 500")]


def test_digest_header_is_read_leniently():
    raw = hashlib.sha512(b"x").digest()
    header = (f"SHA-512={base64.b64encode(raw).decode()}, md5={hashlib.md5(b'x').hexdigest()}, "
              "unixsum=30637, sha-256=not-a-digest, sha")
    assert migrate._header_digests(header) == {"sha512": raw.hex(),
                                               "md5": hashlib.md5(b"x").hexdigest()}
    assert migrate._header_digests(None) == {}


def test_files(tmp_path):
    assert not files.has_content(str(tmp_path / "none"))
    (tmp_path / "d").mkdir()
    assert not files.has_content(str(tmp_path / "d"))
    (tmp_path / "d" / "f").write_bytes(b"x" * 5000)
    assert files.has_content(str(tmp_path / "d")) and files.has_content(str(tmp_path / "d/f"))
    assert files.inside(str(tmp_path / "d" / "f"), str(tmp_path))
    assert not files.inside(str(tmp_path), str(tmp_path / "d"))
    staging = files.staging_dir(str(tmp_path / "dest"), "partial")
    assert os.path.dirname(staging) == str(tmp_path) and ".dest.partial-" in staging
    files.fsync_tree(str(tmp_path / "d"))
    assert files.dir_bytes(str(tmp_path / "d")) >= 4096
    files.unlink(str(tmp_path / "d" / "f"))
    files.unlink(str(tmp_path / "d" / "f"))          # gone already: no error
    assert not files.has_content(str(tmp_path / "d"))


def test_promote_replaces_an_empty_destination_and_refuses_a_full_one(tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "f").write_bytes(b"x")
    (tmp_path / "dest").mkdir()
    files.promote(str(staging), str(tmp_path / "dest"))
    assert (tmp_path / "dest" / "f").read_bytes() == b"x" and not staging.exists()
    staging.mkdir()
    with pytest.raises(OSError):
        files.promote(str(staging), str(tmp_path / "dest"))   # dest holds data
    assert (tmp_path / "dest" / "f").exists() and staging.exists()
