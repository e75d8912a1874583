"""The import's read-ahead (``ocfl.readahead``): a child process reads and parses
the objects ahead of the writes. The import with it is the import without it:
the same resources, and every broken object reported with the same error, in
the same order (``test_bad_input``); the child never gets further ahead than its pipe holds; if it
dies, the import reads the remaining objects itself."""
from __future__ import annotations

import os
import signal
import time

import pytest

from lakesuperior import Repository
from lakesuperior.exceptions import OcflError
from lakesuperior.model.uids import UriMap
from lakesuperior.ocfl.export import export_ocfl
from lakesuperior.ocfl.imports import READ_AHEAD_MIN, ImportReport, _list_objects, import_ocfl
from lakesuperior.ocfl.readahead import ReadAhead
from lakesuperior.ocfl.storage import open_root

from .conftest import BASE, config, summary


def _report(report) -> dict:
    out = report.as_dict()
    del out["seconds"], out["read_ahead"]
    return out


def _listing(root) -> list[tuple[str, str]]:
    storage = open_root(str(root))
    listing = _list_objects(storage.path, storage.objects(), ImportReport(storage.path))
    return [(oid, d) for _, oid, d in listing]


@pytest.fixture(scope="module")
def big_root(tmp_path_factory):
    """An export of 40 resources of about 30 KB of N-Triples each: far more than the
    child's pipe holds."""
    tmp_path = tmp_path_factory.mktemp("big")
    with Repository(config=config(tmp_path / "src")) as repo:
        for i in range(40):
            data = "".join(f'<> <http://ex.org/p{j}> "value {i} {j} {"x" * 100}" .\n'
                           for j in range(200)).encode()
            repo.create_or_replace(f"/r{i}", data=data, media_type="text/turtle")
        export_ocfl(repo, tmp_path / "ocfl")
    return tmp_path / "ocfl"


def test_the_import_read_ahead_is_the_import_without(shared_source, tmp_path):
    export_ocfl(shared_source, tmp_path / "ocfl")
    without = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "plain"),
                          read_ahead=False)
    ahead = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "ahead"), read_ahead=True)
    assert without.read_ahead == 0
    assert ahead.read_ahead == ahead.objects == without.objects   # the child read each one
    assert _report(ahead) == _report(without) and not ahead.failed
    with Repository(config=config(tmp_path / "plain")) as plain, \
            Repository(config=config(tmp_path / "ahead")) as dest:
        assert summary(dest) == summary(plain)
    # a second run skips what is there, read ahead as well
    again = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "ahead"), read_ahead=True)
    assert again.objects == 0 and again.skipped == ahead.objects and not again.failed


def test_a_large_root_is_read_ahead_by_default(tmp_path):
    with Repository(config=config(tmp_path / "src")) as repo:
        for i in range(READ_AHEAD_MIN):
            repo.create_or_replace(f"/r{i}", data=b'<> <http://ex.org/p> "x" .',
                                   media_type="text/turtle")
        export_ocfl(repo, tmp_path / "ocfl")
    report = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest"))
    assert report.read_ahead == report.objects == READ_AHEAD_MIN + 1    # and the root
    small = import_ocfl(str(tmp_path / "ocfl"), config(tmp_path / "dest2"), read_ahead=None)
    assert small.read_ahead == small.objects       # None: by the count, as the default
    assert not small.failed


def test_the_child_waits_while_its_pipe_is_full(big_root):
    """Not read, the child stops when the pipe is full (memory flat: it does not
    read the whole root ahead); read, it goes on to the last object."""
    objects = _listing(big_root)
    with ReadAhead(objects) as ahead:
        pid = ahead.pid
        time.sleep(2)
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
        assert state == "S", state        # alive, asleep: waiting for the pipe to drain
        got = [ahead.next(oid) for oid, _ in objects]
    assert all(p is not None and p[0].id == oid for p, (oid, _) in zip(got, objects, strict=True))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)                   # stopped at the end


def test_what_was_read_ahead_is_handed_over_once(big_root, tmp_path):
    """An object's RDF was parsed in the child: it is there though its file is
    gone since, once; asked again, the file is read, and found missing."""
    objects = _listing(big_root)
    with ReadAhead(objects) as ahead:
        got = {oid: ahead.next(oid) for oid, _ in objects}
    first, versions = got["info:fedora/r0"]
    view = versions[-1]
    path = first.root_headers["contentPath"]
    os.rename(os.path.join(first.dir, first.file_name(view.state, path)), tmp_path / "moved")
    try:
        assert len(first.rdf(view, path, UriMap(BASE))) == 200
        with pytest.raises(OcflError, match="is missing"):
            first.rdf(view, path, UriMap(BASE))
    finally:
        os.rename(tmp_path / "moved", os.path.join(first.dir, first.file_name(view.state, path)))


def test_the_import_reads_on_when_the_child_dies(big_root):
    objects = _listing(big_root)
    with ReadAhead(objects) as ahead:
        assert ahead.next(objects[0][0]) is not None
        os.kill(ahead.pid, signal.SIGKILL)
        # what is in the pipe still arrives; then None: the import reads the rest itself
        rest = [ahead.next(oid) for oid, _ in objects[1:]]
        assert rest[-1] is None and ahead.pid is None
        assert all(p is None or p[0].id == oid
                   for p, (oid, _) in zip(rest, objects[1:], strict=True))
