"""Tests for the content-addressed binary store: the contract of both backends
(``store``: files, then objects in a real S3 store, SeaweedFS), and what only
the file store does (``file_store``)."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import threading
import uuid

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import (
    BinaryNotFoundError,
    ChecksumValidationError,
    InvalidDigestError,
    PayloadTooLargeError,
    UnsupportedDigestError,
)
from lakesuperior.store.backends import open_backend
from lakesuperior.store.binaries import (
    CHUNK_SIZE,
    BinaryInfo,
    BinaryStore,
    is_supported,
    normalize_algorithm,
    normalize_digest,
)
from lakesuperior.store.s3 import S3BinaryStore
from tests.binaries import corrupt, leftover

DATA = b"hello, binary world\n"
SHA512 = hashlib.sha512(DATA).hexdigest()


def b64(algo: str, data: bytes = DATA) -> str:
    return base64.b64encode(hashlib.new(algo, data).digest()).decode()


def hexd(algo: str, data: bytes = DATA) -> str:
    return hashlib.new(algo, data).hexdigest()


@pytest.fixture
def file_store(tmp_path) -> BinaryStore:
    return BinaryStore(str(tmp_path / "bin"))


@pytest.fixture(params=["file", "s3"])
def store(request, file_store):
    """The file store, then an S3 store (a prefix of its own in SeaweedFS's bucket),
    its multipart threshold at the smallest part S3 allows."""
    if request.param == "file":
        return file_store
    server = request.getfixturevalue("seaweedfs")
    cfg = Config(**server.config(prefix=f"t{uuid.uuid4().hex[:16]}/"),
                 binaries_s3_part_size=5 << 20)
    return S3BinaryStore.from_config(cfg, client=request.getfixturevalue("s3_client"))


def tmp_files(store) -> list[str]:
    """The leftovers of writes: files in ``tmp/``, temporary objects and unfinished
    multipart uploads."""
    return [name for name, _size, _mtime in store.leftovers()]


class Generated(io.RawIOBase):
    """A deterministic stream of ``size`` bytes, read in short, uneven pieces."""

    PATTERN = bytes(range(251)) * (300_007 // 251 + 2)

    def __init__(self, size: int):
        self.left = size
        self.offset = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = min(self.left, 300_007 if n < 0 else min(n, 300_007))
        out = self.PATTERN[self.offset:self.offset + n]
        self.offset = (self.offset + n) % 251
        self.left -= n
        return out


# -- algorithm and digest names ------------------------------------------------

@pytest.mark.parametrize("name, expected", [
    ("sha512", "sha512"), ("SHA-512", "sha512"), ("sha-256", "sha256"), ("SHA256", "sha256"),
    ("sha", "sha1"), ("SHA1", "sha1"), ("sha-1", "sha1"), ("MD5", "md5"), (" md5 ", "md5"),
])
def test_normalize_algorithm(name, expected):
    assert normalize_algorithm(name) == expected
    assert is_supported(name)


@pytest.mark.parametrize("name", ["sha3-256", "crc32", "", "unixsum", None])
def test_normalize_algorithm_unsupported(name):
    with pytest.raises(UnsupportedDigestError):
        normalize_algorithm(name)
    assert not is_supported(name)


@pytest.mark.parametrize("algo", ["sha512", "sha256", "sha1", "md5"])
def test_normalize_digest_hex_and_base64(algo):
    want = hexd(algo)
    assert normalize_digest(algo, want) == want
    assert normalize_digest(algo, want.upper()) == want
    assert normalize_digest(algo, b64(algo)) == want
    assert normalize_digest(algo, b64(algo).rstrip("=")) == want  # unpadded base64


def test_normalize_digest_rfc3230_names():
    assert normalize_digest("SHA", b64("sha1")) == hexd("sha1")
    assert normalize_digest("sha-256", b64("sha256")) == hexd("sha256")


@pytest.mark.parametrize("value", [
    "", "zz", hexd("sha256"), hexd("sha512")[:-1], "not base64 !!", b64("md5"), None,
])
def test_normalize_digest_invalid(value):
    with pytest.raises(InvalidDigestError):
        normalize_digest("sha512", value)


def test_invalid_digest_error_is_value_error():
    assert issubclass(InvalidDigestError, ValueError)


# -- construction --------------------------------------------------------------

def test_store_creates_root_and_accepts_aliases(tmp_path):
    s = BinaryStore(tmp_path / "x" / "y", "SHA-256")
    assert s.algorithm == "sha256"
    assert repr(s) == f"BinaryStore({str(tmp_path / 'x' / 'y')!r}, 'sha256')"
    assert os.path.isdir(os.path.join(s.root, "tmp"))


def test_store_unsupported_algorithm(tmp_path):
    with pytest.raises(UnsupportedDigestError):
        BinaryStore(str(tmp_path), "whirlpool")


# -- put -----------------------------------------------------------------------

def test_put_bytes(file_store):
    store = file_store
    info = store.put(DATA)
    assert info == BinaryInfo(SHA512, "sha512", len(DATA), {"sha512": SHA512})
    assert store.path(SHA512) == os.path.join(store.root, SHA512[:2], SHA512[2:4], SHA512)
    with open(store.path(SHA512), "rb") as f:
        assert f.read() == DATA
    assert tmp_files(store) == []


def test_put_stream_and_empty(store):
    assert store.put(io.BytesIO(DATA)).digest == SHA512
    empty = store.put(b"")
    assert empty.size == 0 and empty.digest == hashlib.sha512(b"").hexdigest()
    assert store.size(empty.digest) == 0


def test_put_bytearray_and_memoryview(store):
    assert store.put(bytearray(DATA)).digest == SHA512
    assert store.put(memoryview(DATA)).digest == SHA512


def test_put_is_idempotent(store):
    first = store.put(DATA)
    second = store.put(io.BytesIO(DATA))
    assert first == second
    assert list(store) == [SHA512]
    assert tmp_files(store) == []


def test_put_other_store_algorithm(tmp_path):
    s = BinaryStore(str(tmp_path), "md5")
    info = s.put(DATA)
    assert info.digest == hexd("md5") and info.algorithm == "md5"
    assert s.exists(hexd("md5"))


def test_put_expected_digests_hex_and_base64(store):
    info = store.put(DATA, expected={"sha-256": b64("sha256"), "MD5": hexd("md5"),
                                     "sha": b64("sha1"), "sha512": SHA512})
    assert info.digests == {"sha512": SHA512, "sha256": hexd("sha256"),
                            "md5": hexd("md5"), "sha1": hexd("sha1")}


def test_put_mismatch_stores_nothing(store):
    wrong = hexd("sha256", b"other content")
    with pytest.raises(ChecksumValidationError) as err:
        store.put(DATA, expected={"sha-256": wrong})
    msg = str(err.value)
    assert "sha-256" in msg and wrong in msg and hexd("sha256") in msg
    assert list(store) == [] and not store.exists(SHA512)
    assert tmp_files(store) == []


def test_put_one_mismatch_among_several(store):
    with pytest.raises(ChecksumValidationError):
        store.put(DATA, expected={"md5": b64("md5"), "sha1": hexd("sha1", b"x")})
    assert list(store) == []


def test_put_bad_expected_value_or_algorithm(store):
    with pytest.raises(InvalidDigestError):
        store.put(DATA, expected={"sha256": "garbage"})
    with pytest.raises(UnsupportedDigestError):
        store.put(DATA, expected={"crc32c": "AAAAAA=="})
    assert list(store) == [] and tmp_files(store) == []


def test_put_max_size(store):
    with pytest.raises(PayloadTooLargeError):
        store.put(DATA, max_size=len(DATA) - 1)
    assert list(store) == [] and tmp_files(store) == []
    assert store.put(DATA, max_size=len(DATA)).size == len(DATA)


def test_put_max_size_stops_reading_a_large_stream(store):
    stream = Generated(10 * CHUNK_SIZE)
    with pytest.raises(PayloadTooLargeError):
        store.put(stream, max_size=CHUNK_SIZE)
    assert stream.left > 5 * CHUNK_SIZE  # gave up early
    assert tmp_files(store) == []


def test_put_failing_stream_leaves_nothing(store):
    class Broken(io.RawIOBase):
        def readable(self):
            return True

        def read(self, n=-1):
            raise ConnectionResetError("client went away")

    with pytest.raises(ConnectionResetError):
        store.put(Broken())
    assert list(store) == [] and tmp_files(store) == []


def test_put_large_streamed_content(store):
    size = 5 * CHUNK_SIZE + 12345
    reference = hashlib.sha512()
    copy = Generated(size)
    while chunk := copy.read(CHUNK_SIZE):
        reference.update(chunk)
    info = store.put(Generated(size), expected={"md5": _md5_of_generated(size)})
    assert info.size == size == store.size(info.digest)
    assert info.digest == reference.hexdigest()
    assert store.verify(info.digest)


def _md5_of_generated(size: int) -> str:
    h = hashlib.md5()
    g = Generated(size)
    while chunk := g.read():
        h.update(chunk)
    return base64.b64encode(h.digest()).decode()


def test_concurrent_put_of_same_content(store):
    data = os.urandom(3 * CHUNK_SIZE // 2)
    results, errors = [], []

    def put():
        try:
            results.append(store.put(data))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=put) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len({r.digest for r in results}) == 1 and len(results) == 8
    assert list(store) == [results[0].digest]
    assert store.verify(results[0].digest)
    assert tmp_files(store) == []


# -- reading ---------------------------------------------------------------------

def test_open_exists_size(store):
    store.put(DATA)
    with store.open(SHA512) as f:
        assert f.read() == DATA
    assert store.exists(SHA512) and SHA512 in store
    assert store.size(SHA512) == len(DATA)


def test_missing_binary(store):
    missing = hexd("sha512", b"nope")
    assert not store.exists(missing) and missing not in store
    with pytest.raises(BinaryNotFoundError):
        store.open(missing)
    with pytest.raises(BinaryNotFoundError):
        store.size(missing)
    with pytest.raises(BinaryNotFoundError):
        store.verify(missing)
    with pytest.raises(BinaryNotFoundError):
        store.compute(missing, ["md5"])


@pytest.mark.parametrize("bad", [
    SHA512.upper(), SHA512[:-1], SHA512 + "0", hexd("sha256"), "../" + SHA512[3:],
    "/etc/passwd", "", SHA512[:-1] + "\n", SHA512[:-2] + "/.", None, 42,
])
def test_bad_digest_strings_are_refused(store, bad):
    address = store.path if isinstance(store, BinaryStore) else store.key
    for method in (address, store.open, store.exists, store.size, store.delete,
                   store.verify):
        with pytest.raises(InvalidDigestError):
            method(bad)
    assert bad not in store


def test_delete(store):
    store.put(DATA)
    assert store.delete(SHA512) is True
    assert not store.exists(SHA512)
    assert store.delete(SHA512) is False


def test_iter_and_total_size(store):
    contents = [b"a", b"bb", b"ccc", os.urandom(1000)]
    digests = {store.put(c).digest for c in contents}
    # noise the iterator must skip
    if isinstance(store, BinaryStore):
        os.makedirs(os.path.join(store.root, "zz"))
        with open(os.path.join(store.root, SHA512[:2] + "x"), "w"):
            pass
    else:
        for key in ("zz/", SHA512[:2] + "x", f"{SHA512[:2]}/{SHA512[2:4]}/{SHA512[:-1]}"):
            store.client.put_object(Bucket=store.bucket, Key=store.prefix + key, Body=b"x")
    leftover(store, "put-noise")
    assert set(store) == digests and len(list(store)) == 4
    assert store.total_size() == sum(len(c) for c in contents)


def test_empty_store(store):
    assert list(store) == [] and store.total_size() == 0


def test_verify_detects_corruption(store):
    store.put(DATA)
    assert store.verify(SHA512)
    corrupt(store, SHA512)
    assert store.verify(SHA512) is False


def test_compute(store):
    store.put(DATA)
    assert store.compute(SHA512, ["SHA-256", "md5", "sha"]) == {
        "sha256": hexd("sha256"), "md5": hexd("md5"), "sha1": hexd("sha1")}
    assert store.compute(SHA512, []) == {}
    with pytest.raises(UnsupportedDigestError):
        store.compute(SHA512, ["sha3-512"])


# -- temp files --------------------------------------------------------------------

def test_remove_temp_files(store):
    for name in ("put-a", "put-b"):
        leftover(store, name)
    store.put(DATA)
    assert store.remove_temp_files(min_age=3600) == 0  # too recent
    assert store.remove_temp_files() == 2
    assert tmp_files(store) == []
    assert store.exists(SHA512)  # stored content untouched
    assert store.remove_temp_files() == 0


def test_content_stored_again_keeps_its_file_renews_its_time_and_syncs_nothing(
        tmp_path, monkeypatch):
    """A replayed upload (an ``fcr:tx`` request run again, the same file sent twice)
    costs no sync: the durable file stored first stays, its age renewed for cleanup."""
    store = BinaryStore(tmp_path)
    first = store.put(b"same bytes")
    path = store.path(first.digest)
    os.utime(path, (1_000_000, 1_000_000))
    inode = os.stat(path).st_ino
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    assert store.put(io.BytesIO(b"same bytes")) == first
    assert os.stat(path).st_ino == inode and os.stat(path).st_mtime > 1_000_000
    assert synced == [] and os.listdir(tmp_path / "tmp") == []
    with pytest.raises(ChecksumValidationError):      # a wrong digest is still refused
        store.put(b"same bytes", expected={"md5": hashlib.md5(b"other").hexdigest()})
    new = store.put(b"other bytes")                   # new content: synced as before
    assert new.digest != first.digest and synced


@pytest.mark.parametrize("sync", [True, False])
def test_store_sync_off_stores_binaries_without_any_fsync(tmp_path, monkeypatch, sync):
    """``store.sync: false`` (a bulk load, an OCFL import) flushes nothing: not the
    file, not its folder, not the fan-out folders made for it; on, all three."""
    store = open_backend(Config().with_(data_dir=str(tmp_path), sync=sync))
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    info = store.put(io.BytesIO(DATA))
    with store.receive(b"received first") as upload:
        received = store.put(upload)
    assert store.verify(info.digest) and store.verify(received.digest)
    assert os.listdir(tmp_path / "ldpnr" / "tmp") == []
    # on: each file, its folder and the two new fan-out folders' parents
    assert (len(synced) >= 8) if sync else synced == []


def test_content_stored_where_its_fan_out_directories_exist_makes_none(file_store,
                                                                        monkeypatch):
    """``put`` makes a fan-out directory only when it is missing (the first content
    of it): the others cost no ``mkdir``."""
    first = file_store.put(b"first")
    assert os.path.isfile(file_store.path(first.digest))
    file_store.delete(first.digest)           # its directories stay
    made: list[str] = []
    real_mkdir = os.mkdir
    monkeypatch.setattr(os, "mkdir", lambda path, *a, **k: (made.append(path),
                                                             real_mkdir(path, *a, **k)))
    again = file_store.put(b"first")
    assert again.digest == first.digest and made == []
    with file_store.open(first.digest) as fh:
        assert fh.read() == b"first"
    other = file_store.put(b"second")         # another fan-out: made, then stored
    with file_store.open(other.digest) as fh:
        assert fh.read() == b"second"
    assert len(made) == 2 or os.path.dirname(file_store.path(other.digest)) == \
        os.path.dirname(file_store.path(first.digest))
