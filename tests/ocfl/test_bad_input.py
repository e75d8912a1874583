"""A storage root the import cannot take: a clear error naming the object and the
file, and nothing of that object (nor of the objects below it) written; the
other objects are imported. A root it does not understand at all: an error and
nothing written anywhere."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from lakesuperior import Repository
from lakesuperior.exceptions import OcflError, ResourceNotExistsError
from lakesuperior.ocfl.export import export_ocfl
from lakesuperior.ocfl.imports import import_ocfl
from lakesuperior.ocfl.storage import object_path

from .conftest import config, summary

DOC = "info:fedora/coll/doc"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """A small export, made once per module: tests damage copies of it (``export``)."""
    tmp_path = tmp_path_factory.mktemp("pristine")
    with Repository(config=config(tmp_path / "src")) as repo:
        repo.create_or_replace("/coll", data=b'<> <http://ex.org/p> "c" .',
                               media_type="text/turtle")
        repo.create_or_replace("/coll/doc", data=b'<> <http://ex.org/p> "d" .',
                               media_type="text/turtle")
        repo.create_or_replace("/coll/doc/child", data=b'<> <http://ex.org/p> "c" .',
                               media_type="text/turtle")
        repo.create_or_replace("/coll/bin", data=b"some bytes",
                               media_type="application/octet-stream")
        repo.create_or_replace("/other", data=b'<> <http://ex.org/p> "o" .',
                               media_type="text/turtle")
        export_ocfl(repo, tmp_path / "ocfl")
    return tmp_path / "ocfl"


@pytest.fixture
def export(pristine, tmp_path) -> Path:
    """This test's copy of the ``pristine`` export."""
    shutil.copytree(pristine, tmp_path / "ocfl")
    return tmp_path / "ocfl"


def obj(root: Path, oid: str) -> Path:
    return root / object_path(oid)


def inventory_dirs(d: Path) -> list[Path]:
    """Every place with an inventory: the object root, the version directories, the
    mutable head (last)."""
    dirs = [d, *sorted(p for p in d.glob("v*") if (p / "inventory.json").exists())]
    head = d / "extensions" / "0005-mutable-head" / "head"
    return dirs + ([head] if (head / "inventory.json").exists() else [])


def rewrite_inventory(d: Path, change) -> None:
    """Change every inventory of the object and rewrite its sidecar (so that only
    the change is wrong)."""
    for where in inventory_dirs(d):
        inv = json.loads((where / "inventory.json").read_text())
        change(inv)
        body = json.dumps(inv, indent=2).encode()
        (where / "inventory.json").write_bytes(body)
        (where / "inventory.json.sha512").write_text(
            hashlib.sha512(body).hexdigest() + "  inventory.json\n")


def content(d: Path, logical: str) -> Path:
    """The content file of ``logical`` in the object's newest state."""
    inv = json.loads((inventory_dirs(d)[-1] / "inventory.json").read_text())
    state = inv["versions"][inv["head"]]["state"]
    digest = next(k for k, paths in state.items() if logical in paths)
    return d / inv["manifest"][digest][0]


def set_header(d: Path, path: str, change) -> None:
    """Rewrite a header file and its digests in the inventory (a consistent object
    whose header is wrong)."""
    f = content(d, path)
    old = hashlib.sha512(f.read_bytes()).hexdigest()
    doc = json.loads(f.read_text())
    change(doc)
    f.write_text(json.dumps(doc))
    new = hashlib.sha512(f.read_bytes()).hexdigest()

    def fix(inv):
        if old not in inv["manifest"]:
            return
        inv["manifest"][new] = inv["manifest"].pop(old)
        for v in inv["versions"].values():
            if old in v["state"]:
                v["state"][new] = v["state"].pop(old)
    rewrite_inventory(d, fix)


def imported(tmp_path: Path, root: Path, read_ahead: bool | None = None):
    report = import_ocfl(str(root), config(tmp_path / "dest"), read_ahead=read_ahead)
    with Repository(config=config(tmp_path / "dest")) as dest:
        present = {u for u in ("/coll", "/coll/doc", "/coll/doc/child", "/coll/bin", "/other")
                   if _exists(dest, u)}
    return report, present


def _exists(repo, uid):
    try:
        return repo.exists(uid)
    except ResourceNotExistsError:
        return False


def _make_dir(f: Path) -> None:
    f.unlink()
    f.mkdir()


def break_sidecar(d: Path) -> None:
    (d / "inventory.json").write_bytes((d / "inventory.json").read_bytes() + b" ")


def not_json(d: Path) -> None:
    (d / "inventory.json").write_text("{not json")


CASES = {
    "broken inventory": (lambda d: break_sidecar(d), "does not match its sidecar"),
    "digest mismatch": (lambda d: content(d, "fcr-container.nt").write_text(
        '<info:fedora/coll/doc> <http://ex.org/p> "changed" .\n'),
        "does not match its sha512 digest"),
    "missing content file": (lambda d: content(d, "fcr-container.nt").unlink(),
                             "is missing"),
    "content file that is a directory": (lambda d: _make_dir(content(d, "fcr-container.nt")),
                                         "is missing"),
    "missing inventory sidecar": (lambda d: (d / "inventory.json.sha512").unlink(),
                                  "missing or unreadable inventory sidecar"),
    "parent that is not a string": (
        lambda d: set_header(d, ".fcrepo/fcr-root.json", lambda h: h.update(parent=["x"])),
        "Invalid 'parent' value ['x']"),
    "unknown extension": (lambda d: (d / "extensions" / "9999-unknown").mkdir(parents=True),
                          "unknown object extension '9999-unknown'"),
    "header failing Fedora's checks": (
        lambda d: set_header(d, ".fcrepo/fcr-root.json", lambda h: h.pop("createdDate")),
        "fails Fedora's checks: Must define property 'createdDate'"),
    "bad interaction model": (
        lambda d: set_header(d, ".fcrepo/fcr-root.json",
                             lambda h: h.update(interactionModel="http://ex.org/Odd")),
        "Invalid interaction model value: http://ex.org/Odd"),
    "header without its content path": (
        lambda d: set_header(d, ".fcrepo/fcr-root.json", lambda h: h.pop("contentPath")),
        "contentPath"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_object_is_refused_and_nothing_of_it_written(export, tmp_path, case):
    damage, message = CASES[case]
    d = obj(export, DOC)
    damage(d)
    report, present = imported(tmp_path, export)
    failed = dict(report.failed)
    assert DOC in failed, report.failed
    assert message in failed[DOC], failed[DOC]
    assert DOC in failed[DOC]            # the message names the object...
    assert "info:fedora/coll/doc/child" in failed     # ...and what is below it is left out
    assert "/coll/doc" not in present and "/coll/doc/child" not in present
    assert {"/coll", "/coll/bin", "/other"} <= present


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_object_read_ahead_fails_as_without(export, tmp_path, case):
    """Read ahead (``ocfl.readahead``), the child cannot read the object (or one of
    its files): the import reads it itself and fails with the same message, in the
    same order, and leaves out what is below it."""
    damage, message = CASES[case]
    damage(obj(export, DOC))
    without, _ = imported(tmp_path / "plain", export)
    ahead = import_ocfl(str(export), config(tmp_path / "ahead"), read_ahead=True)
    assert ahead.failed == without.failed
    assert message in dict(ahead.failed)[DOC]
    assert ahead.objects == without.objects and ahead.resources == without.resources
    with Repository(config=config(tmp_path / "plain" / "dest")) as plain, \
            Repository(config=config(tmp_path / "ahead")) as dest:
        assert summary(dest) == summary(plain)


def test_an_inventory_that_is_not_json(export, tmp_path):
    """Its id cannot be read: the failure names the object's directory and file, and
    the objects below it are refused, their parent being missing."""
    d = obj(export, DOC)
    not_json(d)
    report, present = imported(tmp_path, export)
    failed = dict(report.failed)
    rel = object_path(DOC)
    assert f"{rel}/inventory.json cannot be read" in failed[rel]
    assert "its parent info:fedora/coll/doc" in failed["info:fedora/coll/doc/child"]
    assert "/coll/doc" not in present and "/coll/doc/child" not in present
    assert {"/coll", "/coll/bin", "/other"} <= present


@pytest.mark.parametrize("read_ahead", [False, True])
def test_a_binary_whose_bytes_do_not_match(export, tmp_path, read_ahead):
    """Read ahead, the bytes are checked as they are stored, as when read then."""
    d = obj(export, "info:fedora/coll/bin")
    content(d, "bin").write_bytes(b"other bytes")
    report, present = imported(tmp_path, export, read_ahead=read_ahead)
    why = dict(report.failed)["info:fedora/coll/bin"]
    assert "info:fedora/coll/bin" in why and "v1/content/bin" in why and "digest" in why
    assert "/coll/bin" not in present and "/other" in present


def test_an_id_outside_info_fedora(export, tmp_path):
    d = obj(export, "info:fedora/other")
    set_header(d, ".fcrepo/fcr-root.json", lambda h: h.update(id="urn:x:other"))
    report, present = imported(tmp_path, export)
    why = dict(report.failed)["info:fedora/other"]
    assert ".fcrepo/fcr-root.json" in why and "urn:x:other" in why
    assert "/other" not in present


def test_an_object_id_outside_info_fedora(export, tmp_path):
    d = obj(export, "info:fedora/other")
    rewrite_inventory(d, lambda inv: inv.update(id="urn:x:other"))
    shutil.move(str(d), str(export / object_path("urn:x:other")))
    report, present = imported(tmp_path, export)
    why = dict(report.failed)["urn:x:other"]
    assert "is not under info:fedora/" in why
    assert "/other" not in present and "/coll/doc" in present


def test_an_object_not_where_the_layout_puts_it(export, tmp_path):
    d = obj(export, "info:fedora/other")
    shutil.move(str(d), str(export / "abc" / "def" / "ghi" / "moved"))
    report, _ = imported(tmp_path, export)
    assert "not where the 0004 layout puts its id" in dict(report.failed)["info:fedora/other"]


@pytest.mark.parametrize("damage,message", [
    (lambda r: (r / "0=ocfl_1.1").rename(r / "0=ocfl_2.0"), "unsupported storage root"),
    (lambda r: (r / "extensions" / "0003-hash-and-id-n-tuple-storage-layout").mkdir(),
     "unknown storage root extension"),
    (lambda r: (r / "ocfl_layout.json").write_text('{"extension": "0002-flat-direct-storage'
                                                   '-layout", "description": "x"}'),
     "unsupported storage layout"),
    (lambda r: (r / "extensions" / "0004-hashed-n-tuple-storage-layout" / "config.json")
     .write_text('{"extensionName": "0004-hashed-n-tuple-storage-layout", "tupleSize": 2}'),
     "3 tuples of 3"),
])
def test_a_root_it_does_not_understand_writes_nothing(export, tmp_path, damage, message):
    damage(export)
    with pytest.raises(OcflError, match=message):
        import_ocfl(str(export), config(tmp_path / "dest"))
    assert not (tmp_path / "dest").exists()


def test_not_a_storage_root(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(OcflError, match="not an OCFL storage root"):
        import_ocfl(str(tmp_path / "empty"), config(tmp_path / "dest"))
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize("read_ahead", [False, True])
@pytest.mark.parametrize("damaged", ["v1", "v2"])
def test_an_older_version_of_a_binary_whose_bytes_do_not_match(tmp_path, damaged,
                                                                read_ahead):
    """The Mementos of a binary are imported in one write: the failure still names
    the file and the version whose bytes are wrong, and nothing of the object is
    written."""
    from tests.clock import FakeClock
    clock = FakeClock()
    with Repository(config=config(tmp_path / "src"), clock=clock) as repo:
        for i in range(3):
            repo.create_or_replace("/b", data=b"state %d" % i,
                                   media_type="application/octet-stream")
            clock.advance()
        repo.create_or_replace("/other", data=b'<> <http://ex.org/p> "o" .',
                               media_type="text/turtle")
        export_ocfl(repo, tmp_path / "ocfl")
    d = obj(tmp_path / "ocfl", "info:fedora/b")
    (d / damaged / "content" / "b").write_bytes(b"tampered")
    report = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"),
                         read_ahead=read_ahead)
    why = dict(report.failed)["info:fedora/b"]
    assert f"{damaged}/content/b (b, {damaged}) does not match its digest" in why, why
    with Repository(config=config(tmp_path / "dest")) as dest:
        assert not _exists(dest, "/b") and _exists(dest, "/other")
