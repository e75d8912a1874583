"""Binaries in S3 through the real server (gunicorn on loopback, SeaweedFS):
an upload of several chunks stored under its digest, whole and ranged
downloads, a client gone mid-upload leaving no object, and the presigned
redirect of ``binaries.s3.redirect``."""
from __future__ import annotations

import hashlib
import http.client
import os
import socket
import time
import urllib.request
import uuid

import pytest

from lakesuperior.store import pipeline

from ..binaries import lsup_env
from ..servers import lsup_server

SIZE = 3 * pipeline.CHUNK + 12345     # several chunks: the pipeline's threads run


def _env(seaweedfs, prefix: str, **more: str) -> dict[str, str]:
    return lsup_env({**seaweedfs.config(prefix=prefix), **more})


def _objects(seaweedfs, prefix: str) -> list[str]:
    listed = seaweedfs.client().list_objects_v2(Bucket=seaweedfs.bucket, Prefix=prefix)
    return [o["Key"] for o in listed.get("Contents", [])]


def _uploads(seaweedfs, prefix: str) -> list[str]:
    """Multipart uploads begun and neither completed nor aborted."""
    listed = seaweedfs.client().list_multipart_uploads(Bucket=seaweedfs.bucket, Prefix=prefix)
    return [u["Key"] for u in listed.get("Uploads", [])]


def _request(port: int, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body, headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def _prefix() -> str:
    return f"srv{uuid.uuid4().hex[:12]}/"


@pytest.fixture(scope="module")
def server(tmp_path_factory, seaweedfs):
    """One server for the module's tests but the redirect's: (port, data dir,
    prefix, log path)."""
    tmp, prefix = tmp_path_factory.mktemp("s3server"), _prefix()
    with lsup_server(tmp, _env(seaweedfs, prefix)) as (_proc, port, log):
        yield port, tmp / "data", prefix, log


def test_a_client_gone_mid_upload_leaves_no_object(server, seaweedfs):
    port, _data_dir, prefix, log = server
    before = _objects(seaweedfs, prefix)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"PUT /rest/gone HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/octet-stream\r\n"
                 + f"Content-Length: {32 << 20}\r\n\r\n".encode())
    sock.sendall(os.urandom(8 << 20))
    sock.close()
    deadline = time.monotonic() + 60          # the request logged: it has ended
    while '"PUT /rest/gone HTTP/1.1" 400' not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, "the server did not end the request"
        time.sleep(0.1)
    assert _objects(seaweedfs, prefix) == before
    assert _uploads(seaweedfs, prefix) == []      # the multipart upload was aborted
    assert _request(port, "GET", "/rest/gone")[0] == 404


def test_a_binary_goes_to_s3_and_comes_back_whole_and_in_ranges(server, seaweedfs):
    port, data_dir, prefix, _log = server
    data = os.urandom(SIZE)
    status, _, _ = _request(port, "PUT", "/rest/bin", data,
                            {"Content-Type": "application/octet-stream"})
    assert status == 201
    digest = hashlib.sha512(data).hexdigest()
    assert [k for k in _objects(seaweedfs, prefix) if k.endswith(digest)]
    assert not os.path.exists(data_dir / "ldpnr" / digest[:2])   # not on disk
    status, headers, body = _request(port, "GET", "/rest/bin")
    assert status == 200 and body == data
    assert headers["Content-Length"] == str(SIZE)
    status, headers, body = _request(port, "GET", "/rest/bin",
                                     headers={"Range": "bytes=1000-299999"})
    assert status == 206 and body == data[1000:300000]
    assert headers["Content-Range"] == f"bytes 1000-299999/{SIZE}"
    status, headers, body = _request(port, "HEAD", "/rest/bin")
    assert status == 200 and body == b"" and headers["Content-Length"] == str(SIZE)


def test_the_redirect_sends_a_presigned_url(tmp_path, seaweedfs):
    data = os.urandom(70000)
    env = _env(seaweedfs, _prefix(), binaries_s3_redirect="true")
    with lsup_server(tmp_path, env) as (_proc, port, _log):
        assert _request(port, "PUT", "/rest/bin", data,
                        {"Content-Type": "application/octet-stream"})[0] == 201
        status, headers, _ = _request(port, "GET", "/rest/bin")
        assert status == 307
        assert headers["Cache-Control"] == "private, no-store"
        location = headers["Location"]
        assert location.startswith(seaweedfs.endpoint) and "Signature" in location
        with urllib.request.urlopen(location, timeout=30) as resp:   # noqa: S310 (loopback)
            assert resp.read() == data
        # HEAD and a Want-Digest are answered here, not redirected
        assert _request(port, "HEAD", "/rest/bin")[0] == 200
        status, headers, _ = _request(port, "GET", "/rest/bin", headers={"Want-Digest": "sha-256"})
        assert status == 200 and headers["Digest"].startswith("sha-256=")
