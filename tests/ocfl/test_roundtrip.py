"""Repository -> OCFL -> new repository: the same resources, client triples,
binary digests, ACLs, versions (count and datetimes) and tombstones; every export
valid for ocfl-py."""
from __future__ import annotations

import json
import os

import pytest

from lakesuperior import Repository
from lakesuperior.config import Config
from lakesuperior.ocfl.export import export_ocfl
from lakesuperior.ocfl.imports import IMPORT_IRI_CACHE, import_config, import_ocfl
from lakesuperior.ocfl.storage import object_path

from .conftest import DC_TITLE, config, summary
from .validator import assert_valid

ROOTLESS = ("/",)   # the root's creation belongs to the repository that holds it


@pytest.mark.both_backends
@pytest.mark.parametrize("version,digest", [("1.1", "sha512"), ("1.0", "sha256"),
                                            ("1.0", "sha512")])
def test_round_trip_keeps_everything(shared_source, tmp_path, version, digest):
    before = summary(shared_source)
    report = export_ocfl(shared_source, tmp_path / "ocfl", ocfl_version=version, digest=digest)
    # sha256 is a choice OCFL allows and warns of (W004: it prefers sha512)
    assert_valid(str(tmp_path / "ocfl"), allowed=("W004",) if digest == "sha256" else ())
    assert (tmp_path / "ocfl" / f"0=ocfl_{version}").read_text() == f"ocfl_{version}\n"
    # one object per resource outside the group (/, /coll, /coll/doc, /coll/file.bin,
    # /dc, /dc/m1, /café x, and the tombstones /gone, /gone/child), the group one
    assert report.objects == 10
    assert report.tombstones == 3 and report.acls == 2 and report.binaries == 2
    imported = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    assert imported.failed == []
    assert imported.objects == report.objects
    with Repository(config=config(tmp_path / "dest")) as dest:
        after = summary(dest)
    assert after["tombstones"] == before["tombstones"] == ["/ag/old", "/gone"]
    assert sorted(after["resources"]) == sorted(before["resources"])
    for uid, entry in before["resources"].items():
        got = dict(after["resources"][uid])
        if "digests" in entry:   # the import records the inventory's digest too
            assert entry["digests"].items() <= got.pop("digests").items(), uid
            entry = {k: v for k, v in entry.items() if k != "digests"}
        assert got == entry, uid
    doc = before["resources"]["/coll/doc"]
    assert len(doc["versions"]) == 2
    binary = before["resources"]["/coll/file.bin"]
    assert len(binary["versions"]) >= 2 and binary["acl"]


def test_import_keeps_dates_and_agents(shared_source, tmp_path):
    export_ocfl(shared_source, tmp_path / "ocfl")
    import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    with Repository(config=config(tmp_path / "dest")) as dest:
        for uid in ("/coll", "/coll/doc", "/coll/file.bin", "/ag/part/img"):
            a, b = shared_source.get(uid), dest.get(uid)
            assert (b.created, b.last_modified) == (a.created, a.last_modified), uid


def test_the_newest_memento_is_the_imported_current_state(shared_source, tmp_path):
    """The Memento of the version that is also the current state holds that state
    as imported: a binary's description triples and its dates included (it is not
    read and parsed a second time)."""
    export_ocfl(shared_source, tmp_path / "ocfl")
    import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    with Repository(config=config(tmp_path / "dest")) as dest:
        for uid in ("/coll/doc", "/coll/file.bin"):
            now = dest.get(uid, incl_children=False, incl_membership=False)
            newest = dest.get_version(uid, now.version_ids[-1])
            assert sorted(newest.user_data) == sorted(now.user_data), uid
            assert (newest.created, newest.last_modified) == (now.created,
                                                              now.last_modified), uid
        binary = dest.get("/coll/file.bin")
        assert any(p == DC_TITLE and o == '"a binary"' for _, p, o in binary.user_data)


def test_the_import_keeps_few_iris_in_memory():
    """The import's repository caches at most ``IMPORT_IRI_CACHE`` IRIs (it writes
    each resource's own IRIs once: a larger cache would only grow its memory);
    a smaller configured cache is kept."""
    assert import_config(Config().with_(iri_cache=100_000)).iri_cache == IMPORT_IRI_CACHE
    assert import_config(Config().with_(iri_cache=500)).iri_cache == 500
    cfg = import_config(Config())
    assert not cfg.versioning_auto and cfg.allow_foreign_subjects


def test_a_second_import_resumes_and_changes_nothing(shared_source, tmp_path):
    export_ocfl(shared_source, tmp_path / "ocfl")
    first = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    with Repository(config=config(tmp_path / "dest")) as dest:
        once = summary(dest)
    again = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    assert again.objects == 0 and again.skipped == first.objects and again.failed == []
    with Repository(config=config(tmp_path / "dest")) as dest:
        assert summary(dest) == once


def test_an_interrupted_import_resumes(shared_source, tmp_path):
    """The import of /coll stops (its object is damaged); once repaired, running the
    import again brings in what is left, and the result is the whole repository."""
    before = summary(shared_source)
    export_ocfl(shared_source, tmp_path / "ocfl")
    inv = tmp_path / "ocfl" / object_path("info:fedora/coll") / "inventory.json"
    good = inv.read_bytes()
    inv.write_bytes(good.replace(b'"head"', b'"heads"', 1))
    first = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    failed = dict(first.failed)
    assert "info:fedora/coll" in failed and "info:fedora/coll/doc" in failed
    inv.write_bytes(good)
    second = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    assert second.failed == [] and second.objects == len(failed)
    with Repository(config=config(tmp_path / "dest")) as dest:
        assert summary(dest) == before


def test_unversioned_changes_are_the_mutable_head(tmp_path):
    """With automatic versioning off, a change after the last version is not a
    version: it is the object's mutable head (as Fedora writes it then), and the
    import makes no version of it."""
    with Repository(config=config(tmp_path / "src", versioning_auto=False)) as repo:
        repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "v1" .',
                               media_type="text/turtle")
        repo.create_version("/r")
        repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "now" .',
                               media_type="text/turtle")
        repo.create_or_replace("/never", data=b'<> <http://ex.org/p> "x" .',
                               media_type="text/turtle")
        before = summary(repo)
        export_ocfl(repo, tmp_path / "ocfl")
    assert_valid(str(tmp_path / "ocfl"))
    obj = tmp_path / "ocfl" / object_path("info:fedora/r")
    head = obj / "extensions" / "0005-mutable-head" / "head"
    assert json.loads((obj / "inventory.json").read_text())["head"] == "v1"
    assert json.loads((head / "inventory.json").read_text())["head"] == "v2"
    assert (head / "content" / "r1" / "fcr-container.nt").read_text() == \
        '<info:fedora/r> <http://ex.org/p> "now" .\n'
    import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    with Repository(config=config(tmp_path / "dest")) as dest:
        after = summary(dest)
    assert after == before
    assert before["resources"]["/r"]["versions"] and not before["resources"]["/never"][
        "versions"]


def test_incremental_export_adds_only_new_versions(source, clock, tmp_path):
    out = tmp_path / "ocfl"
    export_ocfl(source, out)
    obj = out / object_path("info:fedora/coll/doc")
    heads = {p: json.loads((p / "inventory.json").read_text())["head"]
             for p in (obj, out / object_path("info:fedora/coll"))}
    mtime = os.path.getmtime(out / object_path("info:fedora/coll") / "inventory.json")
    clock.advance()
    since = clock()
    source.create_or_replace("/coll/doc", data=b'<> <http://ex.org/p> "third" .',
                             media_type="text/turtle")
    report = export_ocfl(source, out, since=since)
    assert report.objects == 1 and report.objects_unchanged > 0
    inv = json.loads((obj / "inventory.json").read_text())
    assert int(inv["head"][1:]) == int(heads[obj][1:]) + 1
    assert os.path.getmtime(out / object_path("info:fedora/coll") / "inventory.json") == mtime
    assert_valid(str(out))
    import_ocfl(str(out), config(tmp_path / "dest"))
    with Repository(config=config(tmp_path / "dest")) as dest:
        assert summary(dest)["resources"]["/coll/doc"] == summary(source)["resources"][
            "/coll/doc"]
