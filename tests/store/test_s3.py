"""What only the S3 backend does, against a real S3 store (SeaweedFS on loopback):
multipart writes that leave nothing when refused, the object store going down
mid-upload (nothing lost, nothing half-written, RDF still served, binary writes
503), a missing bucket or refused credentials at start (one ``Error:`` line,
exit 2), and the redirect mode (307 to a presigned URL, after the access check)."""
from __future__ import annotations

import hashlib
import io
import os
import subprocess
import time
import urllib.request
import uuid

import pytest

from lakesuperior import Repository
from lakesuperior.config import Config
from lakesuperior.exceptions import (
    BinaryStoreUnavailableError,
    ChecksumValidationError,
    ConfigError,
    ContentChangedError,
    PayloadTooLargeError,
)
from lakesuperior.store import s3
from lakesuperior.store.s3 import S3BinaryStore

from ..binaries import lsup_env
from ..cli.conftest import script

pytestmark = pytest.mark.slow

MIB = 1 << 20
PART = 5 * MIB


@pytest.fixture
def s3_keywords(seaweedfs):
    return dict(seaweedfs.config(prefix=f"t{uuid.uuid4().hex[:16]}/"),
                binaries_s3_part_size=PART)


@pytest.fixture
def store(s3_keywords, s3_client):
    return S3BinaryStore.from_config(Config(**s3_keywords), client=s3_client)


def keys(store) -> list[str]:
    page = store.client.list_objects_v2(Bucket=store.bucket, Prefix=store.prefix)
    return [o["Key"] for o in page.get("Contents", ())]


def uploads(store) -> list[str]:
    page = store.client.list_multipart_uploads(Bucket=store.bucket, Prefix=store.prefix)
    return [u["Key"] for u in page.get("Uploads", ())]


# --- writes -----------------------------------------------------------------------------

def test_large_content_goes_in_parts_under_its_digest(store):
    data = os.urandom(2 * PART + 123)
    info = store.put(io.BytesIO(data), expected={"md5": hashlib.md5(data).hexdigest()})
    assert info.size == len(data) and info.digest == hashlib.sha512(data).hexdigest()
    d = info.digest
    assert keys(store) == [f"{store.prefix}{d[:2]}/{d[2:4]}/{d}"]     # no temporary key left
    assert uploads(store) == []
    with store.open(d) as f:
        f.seek(PART - 10)
        assert f.read(20) == data[PART - 10:PART + 10]                # a ranged read
    assert store.verify(d)


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_large_content_given_in_memory_goes_in_parts(store, kind):
    """The Python API's ``data=`` bytes: each part sent as bytes (boto3 refuses a
    memoryview)."""
    data = os.urandom(PART + 5)
    info = store.put(kind(data))
    assert info.size == len(data) and info.digest == hashlib.sha512(data).hexdigest()
    assert len(keys(store)) == 1 and uploads(store) == []
    with store.open(info.digest) as f:
        assert f.read() == data


def test_content_whose_digest_the_client_gave_goes_straight_to_its_key(store):
    data = os.urandom(PART + 7)
    digest = hashlib.sha512(data).hexdigest()
    copies: list[str] = []
    store.client.meta.events.register("before-call.s3.CopyObject",
                                      lambda **kw: copies.append("copy"))
    info = store.put(io.BytesIO(data), expected={"sha-512": digest})
    assert info.digest == digest and copies == []              # no temporary key, no copy
    assert keys(store) == [store.key(digest)] and uploads(store) == []
    stream = io.BytesIO(data)
    assert store.put(stream, expected={"sha-512": digest}) == info   # stored: read, not sent
    assert stream.tell() == len(data) and uploads(store) == []
    wrong = hashlib.sha512(b"other").hexdigest()
    with pytest.raises(ChecksumValidationError):
        store.put(io.BytesIO(data), expected={"sha-512": wrong})
    assert keys(store) == [store.key(digest)] and uploads(store) == []
    with store.open(digest) as f:
        assert f.read() == data


def s3_calls(store) -> list[str]:
    """The names of the S3 requests ``store`` makes from now on."""
    calls: list[str] = []
    store.client.meta.events.register("before-call.s3", lambda model, **kw: calls.append(
        model.name))
    return calls


class OneWay(io.RawIOBase):
    """A stream that cannot be read twice (an HTTP body)."""

    def __init__(self, data: bytes):
        self.data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self.data.readinto(b)


@pytest.mark.parametrize("kind", [io.BytesIO, bytes])
@pytest.mark.parametrize("one_put", [True, False], ids=["put", "parts"])
def test_content_read_twice_is_hashed_first_and_sent_straight_to_its_key(store, kind, one_put,
                                                                        monkeypatch):
    """In one ``PutObject`` up to 5 GiB (its ``Content-MD5`` from the first reading),
    in parts beyond (here: beyond 2 parts)."""
    if not one_put:
        monkeypatch.setattr(s3, "_MAX_ONE", 2 * PART)
    data = os.urandom(2 * PART + 9)
    calls = s3_calls(store)
    info = store.put(kind(data))
    assert info.digest == hashlib.sha512(data).hexdigest()
    assert "CopyObject" not in calls
    assert (calls.count("PutObject"), calls.count("UploadPart")) == ((1, 0) if one_put else (0, 3))
    assert keys(store) == [store.key(info.digest)] and uploads(store) == []
    calls.clear()
    assert store.put(kind(data)) == info                       # stored: not sent again
    assert not {"PutObject", "UploadPart"} & set(calls)         # (renewed by a copy)
    with store.open(info.digest) as f:
        assert f.read() == data


def test_content_read_once_goes_to_a_temporary_key_then_is_copied(store):
    data = os.urandom(PART + 11)
    calls = s3_calls(store)
    info = store.put(OneWay(data))
    assert info.digest == hashlib.sha512(data).hexdigest()
    assert "CopyObject" in calls and "DeleteObject" in calls
    assert keys(store) == [store.key(info.digest)] and uploads(store) == []


class Changing(io.BytesIO):
    """A file whose last byte changes once it has been read to its end."""

    changed = False

    def seek(self, pos: int, whence: int = 0) -> int:
        if not self.changed and self.tell() == len(self.getbuffer()):
            self.getbuffer()[-1] ^= 0xFF
            self.changed = True
        return super().seek(pos, whence)


class Shrinking(Changing):
    """A file cut short by a byte once it has been read to its end."""

    def seek(self, pos: int, whence: int = 0) -> int:
        if not self.changed and self.tell() == len(self.getbuffer()):
            self.truncate(len(self.getbuffer()) - 1)
            self.changed = True
        return io.BytesIO.seek(self, pos, whence)


@pytest.mark.parametrize("kind", [Changing, Shrinking])
@pytest.mark.parametrize("one_put", [True, False], ids=["put", "parts"])
def test_a_file_that_changes_between_its_two_readings_is_not_stored(store, kind, one_put,
                                                                    monkeypatch):
    if not one_put:
        monkeypatch.setattr(s3, "_MAX_ONE", PART)
    data = os.urandom(PART + 13)
    with pytest.raises(ContentChangedError, match="changed while it was being stored"):
        store.put(kind(data))
    assert keys(store) == [] and uploads(store) == [] and list(store.leftovers()) == []


@pytest.mark.parametrize("size", [100, 2 * PART + 5])
def test_refused_writes_leave_no_object_and_no_upload(store, size):
    data = os.urandom(size)
    with pytest.raises(ChecksumValidationError):
        store.put(io.BytesIO(data), expected={"sha256": hashlib.sha256(b"other").hexdigest()})
    with pytest.raises(PayloadTooLargeError):
        store.put(io.BytesIO(data), max_size=size - 1)
    assert keys(store) == [] and uploads(store) == [] and list(store.leftovers()) == []


def test_content_stored_again_is_renewed(store):
    small = store.put(b"same")
    data = os.urandom(PART + 3)
    digest = hashlib.sha512(data).hexdigest()
    large = store.put(io.BytesIO(data))
    first = {d: store.modified(d) for d in (small.digest, digest)}
    calls: list[str] = []
    store.client.meta.events.register("before-call.s3", lambda model, **kw: calls.append(
        model.name))
    time.sleep(1.1)                                 # S3 times are in whole seconds
    assert store.put(io.BytesIO(b"same")) == small
    assert calls == ["PutObject"]                   # one part: one request, stored or not
    calls.clear()
    # larger content whose digest the client gave is not sent again
    assert store.put(io.BytesIO(data), expected={"sha-512": digest}) == large
    assert "UploadPart" not in calls and "CopyObject" in calls
    for d in (small.digest, digest):
        assert store.modified(d) > first[d]         # cleanup's grace counts from now
    assert len(keys(store)) == 2 and uploads(store) == []


# --- configuration errors ----------------------------------------------------------------

def test_missing_bucket_and_refused_credentials_are_config_errors(s3_keywords, seaweedfs):
    with pytest.raises(ConfigError, match="no bucket nope-"):
        S3BinaryStore.from_config(Config(**dict(s3_keywords, binaries_s3_bucket="nope-x")))
    bad = dict(s3_keywords, binaries_s3_secret_access_key="wrong-secret-5f1c")
    with pytest.raises(ConfigError, match="refused access") as err:
        S3BinaryStore.from_config(Config(**bad))
    assert "wrong-secret-5f1c" not in str(err.value)
    with pytest.raises(ConfigError, match="names no bucket"):
        S3BinaryStore.from_config(Config(**dict(s3_keywords, binaries_s3_bucket="")))


def test_the_usual_aws_variables_are_the_credentials_when_none_are_configured(
        s3_keywords, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3_keywords.pop("binaries_s3_access_key_id"))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY",
                       s3_keywords.pop("binaries_s3_secret_access_key"))
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    store = S3BinaryStore.from_config(Config(**s3_keywords))
    assert store.put(b"by AWS_*").size == 8
    with pytest.raises(ConfigError, match="Set both"):
        S3BinaryStore.from_config(Config(**s3_keywords, binaries_s3_access_key_id="x"))


def _env(keywords: dict) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LSUP_", "AWS_"))}
    env.update(lsup_env(keywords))
    return env


@pytest.mark.parametrize("cmd, change", [
    (["lsup-admin", "stats"], {"binaries_s3_bucket": "missing-bucket"}),
    (["lsup-server", "--bind", "127.0.0.1:1"], {"binaries_s3_bucket": "missing-bucket"}),
    (["lsup-server", "--bind", "127.0.0.1:1"],
     {"binaries_s3_secret_access_key": "wrong-secret-5f1c"}),
])
def test_server_and_admin_stop_with_one_error_line(tmp_path, s3_keywords, cmd, change):
    env = _env(dict(s3_keywords, **change))
    Repository(tmp_path / "d", background_index=False).close()       # a repository to open
    r = subprocess.run([script(cmd[0]), *cmd[1:], "--data-dir", str(tmp_path / "d")],
                       env=env, capture_output=True, text=True, timeout=60)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1, (cmd, r.stderr)
    assert lines[0].startswith("Error: ") and "Traceback" not in r.stderr
    assert ("missing-bucket" in lines[0]) or ("refused access" in lines[0])
    assert "wrong-secret-5f1c" not in r.stderr + r.stdout


# --- the object store goes down ----------------------------------------------------------

class StopAfter(io.RawIOBase):
    """``size`` bytes whose reading stops the object store once ``when`` are read."""

    def __init__(self, size: int, when: int, server) -> None:
        self.data = io.BytesIO(os.urandom(size))
        self.when, self.server = when, server

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self.data.tell() >= self.when and self.server.proc is not None:
            self.server.stop()
        return self.data.read(n)


def test_object_store_down_mid_upload_loses_nothing_and_half_writes_nothing(
        repo_factory, make_app, seaweedfs, s3_keywords, s3_client):
    fast = dict(s3_keywords, binaries_s3_attempts=1, binaries_s3_timeout=2)
    store = S3BinaryStore.from_config(Config(**fast), client=S3BinaryStore.make_client(
        Config(**fast)))
    repo = repo_factory(binaries=store, **fast)
    repo.create_or_replace("/kept", data=b"stored before", media_type="text/plain")
    repo.create_or_replace("/rdf", data=b'<> <http://ex.org/p> "x" .', media_type="text/turtle")
    app = make_app(auth_enabled=False, **fast)
    client = app.test_client()
    client.put("/rest/kept", data=b"stored before", content_type="text/plain")
    stream = StopAfter(3 * PART, PART + MIB, seaweedfs)
    try:
        t0 = time.monotonic()
        with pytest.raises(BinaryStoreUnavailableError, match="try again later"):
            repo.create_or_replace("/big", stream=stream, media_type="video/mp4")
        assert time.monotonic() - t0 < 30                          # bounded, no hang
        assert seaweedfs.proc is None
        assert not repo.exists("/big")                             # no record
        assert repo.get("/rdf").user_data                          # RDF reads keep working
        r = client.put("/rest/new", data=b"while down", content_type="text/plain")
        assert r.status_code == 503 and b"try again later" in r.data
        assert seaweedfs.endpoint.split("//")[1].encode() not in r.data   # no host named
        assert client.get("/rest/new").status_code == 404          # nothing committed
        assert client.get("/rest/").status_code == 200
        assert client.get("/rest/kept").status_code == 503         # its bytes are out of reach
    finally:
        if seaweedfs.proc is None:
            seaweedfs.start()
    with repo.get("/kept").content as f:                           # nothing lost
        assert f.read() == b"stored before"
    assert client.get("/rest/kept").data == b"stored before"
    digest = hashlib.sha512(stream.data.getvalue()).hexdigest()
    assert digest not in repo.binaries                             # nothing half-written
    assert repo.integrity_check().ok
    assert repo.binaries.remove_temp_files() >= 0
    assert list(repo.binaries.leftovers()) == []
    repo.create_or_replace("/big", stream=io.BytesIO(stream.data.getvalue()))
    assert repo.fixity_check("/big").ok


# --- redirect mode ---------------------------------------------------------------------

def test_redirect_mode_answers_307_to_a_presigned_url(make_app, s3_keywords):
    app = make_app(auth_enabled=False, binaries_s3_redirect=True,
                   binaries_s3_redirect_expires=60, **s3_keywords)
    client = app.test_client()
    data = b"<svg xmlns='http://www.w3.org/2000/svg'/>"
    assert client.put("/rest/pic", data=data, content_type="image/svg+xml").status_code == 201
    r = client.get("/rest/pic")
    assert r.status_code == 307 and r.data == b""
    location = r.headers["Location"]
    assert "X-Amz-Expires=60" in location and "X-Amz-Signature=" in location
    assert s3_keywords["binaries_s3_secret_access_key"] not in location
    with urllib.request.urlopen(location, timeout=10) as answer:   # no credentials
        assert answer.read() == data
        assert answer.headers["Content-Type"] == "image/svg+xml"
        assert answer.headers["Content-Disposition"] == "attachment"   # an active type
    req = urllib.request.Request(location, headers={"Range": "bytes=1-3"})
    with urllib.request.urlopen(req, timeout=10) as answer:
        assert answer.status == 206 and answer.read() == data[1:4]
    head = client.head("/rest/pic")                   # HEAD and Want-Digest: answered here
    assert head.status_code == 200 and head.headers["Content-Length"] == str(len(data))
    want = client.get("/rest/pic", headers={"Want-Digest": "md5"})
    assert want.status_code == 200 and want.data == data
    assert client.get("/rest/pic/fcr:metadata").status_code == 200


def test_redirect_mode_checks_access_first(make_app, s3_keywords):
    app = make_app(auth_enabled=True, binaries_s3_redirect=True, **s3_keywords)
    repo = app.extensions["lakesuperior"].repository
    repo.create_or_replace("/secret", data=b"private bytes", media_type="text/plain")
    repo.set_acl("/secret", media_type="text/turtle", base_uri="http://localhost/rest",
                 data=b"@prefix acl: <http://www.w3.org/ns/auth/acl#> .\n"
                 b"<#owner> a acl:Authorization ; acl:agent <info:fedora/local-user#owner> ;"
                 b" acl:accessTo </rest/secret> ; acl:mode acl:Read .\n")
    r = app.test_client().get("/rest/secret")
    assert r.status_code == 401 and "Location" not in r.headers


def test_http_bodies_are_received_into_s3_and_leave_no_temporary_object(make_app, s3_keywords):
    """A PUT's body goes to a temporary object before the write lock (no local
    spool), then to its digest's key; a refused one leaves nothing."""
    app = make_app(auth_enabled=False, **dict(s3_keywords, binaries_s3_part_size=PART))
    store = app.extensions["lakesuperior"].repository.binaries
    client = app.test_client()
    data = os.urandom(PART + 99)
    assert client.put("/rest/big", data=data, content_type="video/mp4").status_code == 201
    wrong = "sha-256=" + hashlib.sha256(b"other").hexdigest()
    r = client.put("/rest/bad", data=data + b"x", content_type="video/mp4",
                   headers={"Digest": wrong})
    assert r.status_code == 409
    assert list(store.leftovers()) == [] and uploads(store) == []
    assert keys(store) == [store.key(hashlib.sha512(data).hexdigest())]
    assert client.get("/rest/big").data == data
