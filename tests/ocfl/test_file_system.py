"""What an export asks of the file system: a new export writes each file of the
storage root with one open and makes each directory with one ``mkdir`` (the
0004 layout's n-tuple directories shared by objects made once), reads nothing
back and renames nothing but the finished staging directory; an incremental
export replaces what an interrupted one left. The calls are seen through
Python's audit hooks (``sys.addaudithook``), on a real export to a tmp dir."""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from lakesuperior import Repository
from lakesuperior.ocfl.export import export_ocfl
from lakesuperior.ocfl.storage import json_bytes, object_path

from .conftest import config
from .validator import assert_valid

_WRITE = os.O_WRONLY | os.O_RDWR


def _tree(root: Path) -> tuple[Counter, Counter]:
    """(files, directories) below ``root``, relative to it."""
    files: Counter = Counter()
    dirs: Counter = Counter()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for d in dirnames:
            dirs[os.path.normpath(os.path.join(rel, d))] += 1
        for f in filenames:
            files[os.path.normpath(os.path.join(rel, f))] += 1
    return files, dirs


def test_a_new_export_writes_each_file_once_and_makes_each_directory_once(
        shared_source, tmp_path, fs_calls):
    dest = tmp_path / "ocfl"
    export_ocfl(shared_source, dest)
    mine = [(e, a) for e, a in fs_calls if str(a[0]).startswith(str(tmp_path) + os.sep)]
    made = [str(a[0]) for e, a in mine if e == "os.mkdir"]
    staging = [p for p in made if os.path.dirname(p) == str(tmp_path)]
    assert len(staging) == 1 and ".ocfl.exporting-" in staging[0]
    below = staging[0] + os.sep

    def rel(path: object) -> str:
        if str(path) == staging[0]:
            return "."
        assert str(path).startswith(below), path
        return str(path)[len(below):]
    files, dirs = _tree(dest)
    assert Counter(rel(p) for p in made if p != staging[0]) == dirs
    opened = [a for e, a in mine if e == "open"]
    assert Counter(rel(a[0]) for a in opened if a[2] & _WRITE) == files
    # read: only the staging directory, to flush it before its rename
    assert [rel(a[0]) for a in opened if not a[2] & _WRITE] == ["."]
    assert [a[:2] for e, a in mine if e == "os.rename"] == [(staging[0], str(dest))]
    assert_valid(str(dest))


def test_an_incremental_export_replaces_what_an_interrupted_one_left(tmp_path, clock):
    """An incremental export killed in an object leaves a version directory the
    inventory does not name (or a new object without inventory): the next one
    writes that version (object) anew, and the root stays valid."""
    with Repository(config=config(tmp_path / "src"), clock=clock) as repo:
        repo.create_or_replace("/a", data=b'<> <http://ex.org/p> "1" .',
                               media_type="text/turtle")
        out = tmp_path / "ocfl"
        export_ocfl(repo, out)
        obj = out / object_path("info:fedora/a")
        head = json.loads((obj / "inventory.json").read_text())["head"]
        left = obj / f"v{int(head[1:]) + 1}" / "content"
        left.mkdir(parents=True)
        (left / "fcr-container.nt").write_bytes(b"half written")
        (left / "left-over.nt").write_bytes(b"of the interrupted export")
        new_obj = out / object_path("info:fedora/b")
        (new_obj / "v1" / "content").mkdir(parents=True)
        (new_obj / "v1" / "content" / "left-over.nt").write_bytes(b"no inventory")
        since = clock()
        clock.advance()          # versions are a second apart
        repo.create_or_replace("/a", data=b'<> <http://ex.org/p> "2" .',
                               media_type="text/turtle")
        repo.create_or_replace("/b", data=b'<> <http://ex.org/p> "b" .',
                               media_type="text/turtle")
        export_ocfl(repo, out, since=since)
    assert not (left / "left-over.nt").exists()
    assert not (new_obj / "v1" / "content" / "left-over.nt").exists()
    assert (left / "fcr-container.nt").read_bytes() == \
        b'<info:fedora/a> <http://ex.org/p> "2" .\n'
    assert_valid(str(out))


@pytest.mark.parametrize("doc", [
    {"id": "info:fedora/caf\u00e9 \"q\" \\ \n\t\u0001 \u2028", "head": "v1",
     "manifest": {"ab": ["v1/content/x", "v1/content/y"]},
     "versions": {"v1": {"created": "2024-01-01T00:00:00Z", "state": {},
                         "user": {"name": "n", "address": "urn:x"}}},
     "empty": [], "nested": [[], {}, [1, 2.5, True, False, None]], "n": -3},
    {}, [], "text", 0,
])
def test_inventory_json_is_jsons_own_indented_form(doc):
    assert json_bytes(doc) == (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def test_a_storage_roots_objects_are_listed_as_os_walk_finds_them(tmp_path):
    """The object directories, depth first in name order, as ``os.walk`` with sorted
    directories finds them: not inside an object, not in the root's ``extensions``,
    not through a symbolic link to a directory."""
    from lakesuperior.ocfl.storage import StorageRoot, create_root
    root = tmp_path / "root"
    root.mkdir()
    create_root(str(root), "1.1")
    objs = [root / "b" / "x", root / "a" / "z", root / "a" / "y" / "deep", root / "c"]
    for d in objs:
        d.mkdir(parents=True)
        (d / "0=ocfl_object_1.1").write_text("ocfl_object_1.1\n")
    (root / "a" / "z" / "inner").mkdir()                      # inside an object
    (root / "a" / "z" / "inner" / "0=ocfl_object_1.1").write_text("x")
    (root / "extensions" / "e").mkdir()                        # the root's extensions
    (root / "extensions" / "e" / "0=ocfl_object_1.1").write_text("x")
    (root / "d").symlink_to(root / "b")                        # a link to a directory
    found = list(StorageRoot(str(root), "1.1").objects())
    expected = []
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        if dirpath == str(root):
            dirs.remove("extensions")
        if any(f.startswith("0=ocfl_object_") for f in files):
            dirs.clear()
            expected.append(dirpath)
    assert found == expected == [str(root / "a" / "y" / "deep"), str(root / "a" / "z"),
                                 str(root / "b" / "x"), str(root / "c")]
