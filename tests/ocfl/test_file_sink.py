"""The export's writes behind it (``ocfl.filesink``, ``ocfl.fswrite``): done in the
order asked, announced as audit events, nothing written after a failure, the
failure raised in the export's thread; an export whose write fails leaves
nothing; a binary larger than a batch is copied whole; the repository to export
is opened with a bounded IRI cache. Real files on tmp dirs."""
from __future__ import annotations

import errno
import os

import pytest

from lakesuperior import Repository
from lakesuperior.ocfl import filesink
from lakesuperior.ocfl.export import EXPORT_IRI_CACHE, export_config, export_ocfl
from lakesuperior.ocfl.filesink import FileSink
from lakesuperior.ocfl.fswrite import MKDIR, PUT, REPLACE, write_batch
from lakesuperior.ocfl.storage import object_path

from .conftest import config
from .validator import assert_valid


def test_write_batch_makes_directories_and_files_in_order(tmp_path):
    d = str(tmp_path / "d")
    (tmp_path / "old").write_bytes(b"old")
    write_batch([(MKDIR, d, b""), (MKDIR, d, b""),           # a second mkdir is no error
                 (PUT, d + "/a", b"x" * 100_000), (PUT, d + "/empty", b""),
                 (REPLACE, str(tmp_path / "old"), b"new")])
    assert (tmp_path / "d" / "a").read_bytes() == b"x" * 100_000
    assert (tmp_path / "d" / "empty").read_bytes() == b""
    assert (tmp_path / "old").read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path)) == ["d", "old"]      # no temporary file left


def test_write_batch_stops_at_the_first_failure_and_names_its_path(tmp_path):
    missing = str(tmp_path / "missing" / "a")
    with pytest.raises(OSError) as e:
        write_batch([(PUT, str(tmp_path / "first"), b"1"), (PUT, missing, b"2"),
                     (PUT, str(tmp_path / "after"), b"3")])
    assert e.value.errno == errno.ENOENT and e.value.filename == missing
    assert os.listdir(tmp_path) == ["first"]
    with pytest.raises(ValueError, match="Unknown write kind"):
        write_batch([(7, str(tmp_path / "x"), b"")])
    assert os.listdir(tmp_path) == ["first"]


def test_write_batch_announces_each_call_as_the_os_module_does(tmp_path, fs_calls):
    d = str(tmp_path / "d")
    write_batch([(MKDIR, d, b""), (PUT, d + "/a", b"a"), (REPLACE, d + "/a", b"b")])
    seen = [(e, a) for e, a in fs_calls if str(a[0]).startswith(d)]
    assert [(e, a[0]) for e, a in seen] == [("os.mkdir", d), ("open", d + "/a"),
                                            ("open", d + "/a.tmp"), ("os.rename", d + "/a.tmp")]
    assert all(a[2] & os.O_CREAT for e, a in seen if e == "open")
    assert seen[-1][1][1] == d + "/a"


def test_the_sink_raises_a_failed_write_and_writes_nothing_after_it(tmp_path):
    missing = str(tmp_path / "missing" / "a")
    sink = FileSink()
    sink.put(str(tmp_path / "first"), b"1")
    sink.put(missing, b"2")
    sink.mkdir(str(tmp_path / "d"))
    with pytest.raises(FileNotFoundError) as e:
        sink.wait()
    assert e.value.filename == missing
    with pytest.raises(FileNotFoundError):          # and at every call after it
        sink.put(str(tmp_path / "later"), b"3")
        sink.wait()
    sink.close(check=False)
    assert os.listdir(tmp_path) == ["first"]


def test_the_sink_writes_everything_asked_in_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(filesink, "_BATCH_OPS", 3)       # many batches, a full queue
    with FileSink() as sink:
        for i in range(200):
            sink.mkdir(str(tmp_path / f"d{i}"))
            sink.put(str(tmp_path / f"d{i}" / "f"), str(i).encode())
    assert all((tmp_path / f"d{i}" / "f").read_bytes() == str(i).encode()
               for i in range(200))


def test_an_export_whose_write_fails_leaves_nothing(tmp_path, clock):
    """A name the file system refuses (a binary named with 250 bytes, which its
    description's files, ``<name>~fcr-desc.nt``, take over 255): the error reaches
    the caller, and neither the destination nor a staging directory is left."""
    with Repository(config=config(tmp_path / "src"), clock=clock) as repo:
        repo.create_or_replace("/a", data=b'<> <http://ex.org/p> "1" .',
                               media_type="text/turtle")
        repo.create_or_replace("/a/" + "n" * 250, data=b"bytes",
                               media_type="application/octet-stream")
        out = tmp_path / "out"
        with pytest.raises(OSError) as e:
            export_ocfl(repo, out / "ocfl")
    assert e.value.errno == errno.ENAMETOOLONG
    assert os.listdir(out) == []


def test_a_binary_larger_than_a_read_is_copied_whole(tmp_path, clock):
    data = os.urandom((1 << 20) * 2 + 12345)
    with Repository(config=config(tmp_path / "src"), clock=clock) as repo:
        repo.create_or_replace("/big", data=data, media_type="application/octet-stream")
        repo.create_or_replace("/small", data=b"small", media_type="text/plain")
        export_ocfl(repo, tmp_path / "ocfl")
    obj = tmp_path / "ocfl" / object_path("info:fedora/big")
    assert (obj / "v1" / "content" / "big").read_bytes() == data
    assert_valid(str(tmp_path / "ocfl"))


def test_the_export_reads_with_a_bounded_iri_cache(tmp_path, clock):
    cfg = config(tmp_path / "src")
    assert cfg.iri_cache > EXPORT_IRI_CACHE
    assert export_config(cfg).iri_cache == EXPORT_IRI_CACHE
    assert export_config(cfg.with_(iri_cache=20)).iri_cache == 20
    with Repository(config=cfg, clock=clock) as repo:
        for i in range(40):
            repo.create_or_replace(f"/r{i}", data=f'<> <http://ex.org/p{i}> <#h{i}> .'.encode(),
                                   media_type="text/turtle")
    with Repository(config=export_config(cfg.with_(iri_cache=20))) as repo:
        report = export_ocfl(repo, tmp_path / "ocfl")
        assert 0 < repo.store.iri_cache_size() <= 20
    assert report.resources == 41
    assert_valid(str(tmp_path / "ocfl"))
