"""The read/hash/write pipeline of binary uploads (``store.pipeline``), and the
binary store's ``receive`` / ``put`` of an ``Upload`` built on it."""
from __future__ import annotations

import hashlib
import os
import threading

import pytest

from lakesuperior.exceptions import ChecksumValidationError, PayloadTooLargeError
from lakesuperior.store import binaries as binmod
from lakesuperior.store import pipeline
from lakesuperior.store.binaries import BinaryStore, Upload

ALGOS = ["sha512", "sha256", "sha1", "md5"]


class Source:
    """``size`` pseudo-random bytes, read in pieces; counts its reads; raises
    ``fail`` once ``fail_after`` bytes were read."""

    def __init__(self, size: int, fail_after: int | None = None, fail: Exception | None = None,
                 data: bytes | None = None):
        self.data = os.urandom(size) if data is None else data
        self.pos = 0
        self.reads = 0
        self.fail_after, self.fail = fail_after, fail

    def read(self, n: int) -> bytes:
        if self.fail_after is not None and self.pos >= self.fail_after:
            raise self.fail or ConnectionResetError("client went away")
        self.reads += 1
        piece = self.data[self.pos:self.pos + n]
        self.pos += len(piece)
        return piece


def sequential(data: bytes) -> dict[str, str]:
    return {a: hashlib.new(a, data).hexdigest() for a in ALGOS}


def _upload_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("upload-")]


@pytest.mark.parametrize("size", [0, 1, 1000, pipeline.CHUNK - 1, pipeline.CHUNK,
                                  pipeline.CHUNK + 1, 7 * pipeline.CHUNK + 12345])
def test_results_equal_a_sequential_hash_and_the_sink_gets_every_byte_in_order(size):
    src = Source(size)
    out = bytearray()
    result = pipeline.run(src.read, ALGOS, out.extend)
    assert result.size == size
    assert result.digests == sequential(src.data)
    assert bytes(out) == src.data
    assert _upload_threads() == []


def test_small_chunks_and_a_shallow_queue_give_the_same_digests():
    src = Source(300_001)
    out = bytearray()
    result = pipeline.run(src.read, ALGOS, out.extend, chunk=4096, depth=1)
    assert result.digests == sequential(src.data) and bytes(out) == src.data


def test_the_same_algorithm_twice_is_hashed_once():
    src = Source(3 * pipeline.CHUNK)
    assert pipeline.run(src.read, ["sha256", "sha256"]).digests == {
        "sha256": hashlib.sha256(src.data).hexdigest()}


def test_memory_is_bounded_by_the_queues():
    """Whatever the size, an upload holds at most ``(DEPTH + 2) * CHUNK`` bytes: the
    reader never runs more than ``DEPTH + 2`` chunks ahead of the slowest stage."""
    assert pipeline.max_buffered() == (pipeline.DEPTH + 2) * pipeline.CHUNK <= 8 << 20
    chunk, depth = 1024, 3
    done = 0
    ahead: list[int] = []
    gate = threading.Event()

    class Counted(Source):
        def read(self, n):
            ahead.append(self.reads + 1 - done)   # chunks read (this one too), not written
            return super().read(n)

    def slow_sink(piece):
        nonlocal done
        gate.wait(0.002)                      # the disk is slower than the network
        done += 1

    src = Counted(200 * chunk)
    pipeline.run(src.read, ["md5"], slow_sink, chunk=chunk, depth=depth)
    assert done == 200
    assert max(ahead) <= depth + 2 == pipeline.max_buffered(chunk, depth) // chunk
    assert max(ahead) > 2                     # and the reader did run ahead


def test_too_much_content_stops_reading():
    src = Source(20 * pipeline.CHUNK)
    with pytest.raises(PayloadTooLargeError, match="larger than"):
        pipeline.run(src.read, ["sha512"], lambda piece: None, max_size=3 * pipeline.CHUNK)
    assert src.pos <= 4 * pipeline.CHUNK
    assert _upload_threads() == []


def test_a_failing_source_stops_every_thread():
    src = Source(10 * pipeline.CHUNK, fail_after=4 * pipeline.CHUNK)
    with pytest.raises(ConnectionResetError):
        pipeline.run(src.read, ALGOS, lambda piece: None)
    assert _upload_threads() == []


def test_a_failing_sink_stops_the_reader():
    src = Source(200 * pipeline.CHUNK)
    written = []

    def sink(piece):
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(len(piece))

    with pytest.raises(OSError, match="No space"):
        pipeline.run(src.read, ["sha512"], sink)
    assert len(written) == 2
    assert src.reads < 20                     # gave up long before the end
    assert _upload_threads() == []


# -- the binary store's receive and put of an Upload ------------------------------------

@pytest.fixture
def store(tmp_path):
    return BinaryStore(tmp_path / "bin")


def tmp_files(store: BinaryStore) -> list[str]:
    return os.listdir(os.path.join(store.root, "tmp"))


def test_receive_then_put_stores_the_content(store):
    src = Source(3 * pipeline.CHUNK + 5)
    with store.receive(src, algorithms=["SHA-256", "md5"]) as upload:
        assert upload.size == len(src.data) and upload.synced
        assert upload.digests == {a: hashlib.new(a, src.data).hexdigest()
                                  for a in ("sha512", "sha256", "md5")}
        assert len(tmp_files(store)) == 1 and list(store) == []
        assert upload.read(10) == src.data[:10]   # it reads as the content
        info = store.put(upload, expected={"sha-256": upload.digests["sha256"]})
    assert info.digest == hashlib.sha512(src.data).hexdigest()
    assert info.digests["md5"] == hashlib.md5(src.data).hexdigest()
    assert list(store) == [info.digest] and tmp_files(store) == []
    with open(store.path(info.digest), "rb") as fh:
        assert fh.read() == src.data
    with pytest.raises(ValueError, match="stored or discarded"):
        store.put(upload)


def test_an_upload_not_stored_is_removed(store):
    with store.receive(Source(2 * pipeline.CHUNK)) as upload:
        assert isinstance(upload, Upload)
        assert len(tmp_files(store)) == 1
    assert tmp_files(store) == [] and list(store) == []
    upload.discard()                                   # harmless again


def test_a_digest_mismatch_on_an_upload_stores_nothing_and_removes_it(store):
    upload = store.receive(Source(2 * pipeline.CHUNK), algorithms=["md5"])
    with pytest.raises(ChecksumValidationError, match="md5 digest mismatch"):
        store.put(upload, expected={"md5": hashlib.md5(b"other").hexdigest()})
    assert tmp_files(store) == [] and list(store) == []


def test_a_digest_not_computed_on_receipt_is_computed_from_the_upload(store):
    src = Source(pipeline.CHUNK + 1)
    upload = store.receive(src)
    info = store.put(upload, expected={"sha1": hashlib.sha1(src.data).hexdigest()})
    assert info.digests["sha1"] == hashlib.sha1(src.data).hexdigest()


def test_an_upload_over_the_limit_stores_nothing(store):
    upload = store.receive(Source(100))
    with pytest.raises(PayloadTooLargeError):
        store.put(upload, max_size=99)
    assert tmp_files(store) == [] and list(store) == []


def test_an_upload_belongs_to_its_store(store, tmp_path):
    other = BinaryStore(tmp_path / "other")
    with other.receive(Source(10)) as upload, pytest.raises(ValueError, match="another"):
        store.put(upload)


@pytest.mark.parametrize("fail", [ConnectionResetError("client went away"),
                                  PayloadTooLargeError("too large")])
def test_receive_failing_midway_leaves_no_file(store, fail):
    src = Source(10 * pipeline.CHUNK, fail_after=3 * pipeline.CHUNK, fail=fail)
    with pytest.raises(type(fail)):
        store.receive(src)
    assert tmp_files(store) == [] and list(store) == []


def test_content_already_stored_is_not_synced_again(store, monkeypatch):
    src = Source(2 * pipeline.CHUNK)
    store.put(src.data)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    with store.receive(Source(0, data=src.data)) as upload:
        assert not upload.synced
        store.put(upload)
    assert synced == [] and tmp_files(store) == []


def test_an_unsynced_upload_whose_content_went_meanwhile_is_synced_before_its_rename(
        store, monkeypatch):
    """Durability: a file is synced before it is renamed into place, even when
    ``receive`` skipped the sync because the content was stored then."""
    src = Source(2 * pipeline.CHUNK)
    digest = store.put(src.data).digest
    upload = store.receive(Source(0, data=src.data))
    assert not upload.synced
    store.delete(digest)                               # cleanup removed it meanwhile
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append("fsync") or real_fsync(fd))
    monkeypatch.setattr(binmod.os, "replace",
                        lambda a, b: calls.append("rename") or real_replace(a, b))
    store.put(upload)
    assert calls[:2] == ["fsync", "rename"] and calls[2:] == ["fsync"]   # then the folder
    assert store.verify(digest)


def test_put_of_bytes_streams_through_the_pipeline(store):
    data = Source(5 * pipeline.CHUNK + 3).data
    info = store.put(memoryview(data))
    assert info.digest == hashlib.sha512(data).hexdigest() and store.size(info.digest) == len(data)


def test_compute_hashes_every_algorithm_at_once(store):
    data = Source(3 * pipeline.CHUNK).data
    digest = store.put(data).digest
    assert store.compute(digest, ALGOS) == sequential(data)
