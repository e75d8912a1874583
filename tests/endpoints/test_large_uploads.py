"""Large binaries over HTTP: a PUT's body received into the binary store (read,
hashed and written at once) before the write lock, nothing left behind by a
refused or broken upload, and downloads, ranged ones included, handed to the
server's ``wsgi.file_wrapper`` (gunicorn sends those with ``sendfile``)."""
from __future__ import annotations

import hashlib
import http.client
import os
import socket
import time

import pytest

from lakesuperior.store import pipeline

from ..servers import lsup_server
from .conftest import TTL, put_ttl

SIZE = 3 * pipeline.CHUNK + 12345     # several chunks: the pipeline's threads run


def _temp_files(repo) -> list[str]:
    return os.listdir(os.path.join(repo.binaries.root, "tmp"))


class RecordingWrapper:
    """A ``wsgi.file_wrapper`` that records what it is given: the file, and the
    position of its descriptor, where ``sendfile`` would start."""

    given: list[tuple[int, int]] = []     # (inode, position) of each file given

    def __init__(self, filelike, block_size=8192):
        self.filelike, self.block_size = filelike, block_size
        fd = filelike.fileno()
        RecordingWrapper.given.append((os.fstat(fd).st_ino, os.lseek(fd, 0, os.SEEK_CUR)))

    def __iter__(self):
        while data := self.filelike.read(self.block_size):
            yield data

    def close(self):
        self.filelike.close()


@pytest.fixture
def app_config():
    return {"auth_enabled": False, "max_body_size": 4 * SIZE}


@pytest.fixture
def stored(client):
    data = os.urandom(SIZE)
    assert client.put("/rest/bin", data=data, content_type="application/octet-stream"
                      ).status_code == 201
    return data


@pytest.mark.parametrize("header, start, end", [
    (None, 0, SIZE - 1),
    (f"bytes=1000-{SIZE // 2}", 1000, SIZE // 2),
    ("bytes=-10", SIZE - 10, SIZE - 1),
    (f"bytes={SIZE - 5}-", SIZE - 5, SIZE - 1),
])
def test_downloads_go_through_the_file_wrapper(client, stored, header, start, end):
    """A GET, ranged or not, gives the server the stored file at the first byte to
    send and the length to send (``Content-Length``): a server with ``sendfile``
    sends it without reading it into the process."""
    RecordingWrapper.given.clear()
    headers = {"Range": header} if header else {}
    r = client.get("/rest/bin", headers=headers,
                   environ_base={"wsgi.file_wrapper": RecordingWrapper})
    assert r.status_code == (206 if header else 200)
    assert r.data == stored[start:end + 1]
    assert r.headers["Content-Length"] == str(end - start + 1)
    [(inode, position)] = RecordingWrapper.given
    assert position == start
    repo_file = client.application.extensions["lakesuperior"].repository.binaries.path(
        hashlib.sha512(stored).hexdigest())
    assert inode == os.stat(repo_file).st_ino


def test_a_range_read_by_a_server_without_sendfile_stops_at_its_end(client, stored):
    r = client.get("/rest/bin", headers={"Range": "bytes=10-19"})
    assert r.status_code == 206 and r.data == stored[10:20]


def test_a_put_refused_after_its_body_arrived_leaves_nothing(client, repo):
    assert put_ttl(client, "/rest/rdf").status_code == 201
    before = sorted(repo.binaries)
    r = client.put("/rest/rdf", data=os.urandom(SIZE), content_type="application/pdf")
    assert r.status_code == 415
    r = client.put("/rest/new", data=os.urandom(SIZE), content_type="application/pdf",
                   headers={"If-Match": '"nope"'})
    assert r.status_code == 412
    r = client.put("/rest/new", data=os.urandom(SIZE), content_type="application/pdf",
                   headers={"Digest": "md5=" + hashlib.md5(b"other").hexdigest()})
    assert r.status_code == 409 and b"digest mismatch" in r.data
    assert sorted(repo.binaries) == before and _temp_files(repo) == []
    assert client.get("/rest/new").status_code == 404


def test_a_put_with_digests_of_several_algorithms(client, repo):
    data = os.urandom(SIZE)
    digest = ", ".join(f"{name}={hashlib.new(algo, data).hexdigest()}"
                       for name, algo in (("sha-256", "sha256"), ("md5", "md5")))
    r = client.put("/rest/d", data=data, content_type="application/pdf",
                   headers={"Digest": digest})
    assert r.status_code == 201
    r = client.get("/rest/d/fcr:metadata", headers={"Accept": TTL})
    assert f"urn:sha-256:{hashlib.sha256(data).hexdigest()}".encode() in r.data
    assert f"urn:md5:{hashlib.md5(data).hexdigest()}".encode() in r.data
    assert _temp_files(repo) == []


# -- over a real gunicorn ------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("large-uploads")
    env = {"LSUP_SERVER_WORKERS": "1", "LSUP_MAX_BODY_SIZE": str(64 << 20)}
    with lsup_server(tmp, env) as (_proc, port, _log):
        yield port, tmp / "data" / "ldpnr"


def _wait(condition, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what}")
        time.sleep(0.05)


def _stored(binaries) -> list[str]:
    return [name for top in os.listdir(binaries) if top != "tmp"
            for mid in os.listdir(binaries / top) for name in os.listdir(binaries / top / mid)]


@pytest.mark.slow
def test_a_client_gone_mid_upload_leaves_no_file_and_no_record(server):
    """The body goes straight into the binary store's temporary folder as it
    arrives; a client that goes away leaves no file and no resource."""
    port, binaries = server
    before = _stored(binaries)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"PUT /rest/gone HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/octet-stream\r\n"
                 + f"Content-Length: {32 << 20}\r\n\r\n".encode())
    sock.sendall(os.urandom(8 << 20))
    _wait(lambda: os.listdir(binaries / "tmp"), "the upload's temporary file")
    sock.close()
    _wait(lambda: not os.listdir(binaries / "tmp"), "the temporary file to go")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/rest/gone")
    assert conn.getresponse().status == 404
    conn.close()
    assert _stored(binaries) == before


@pytest.mark.slow
def test_a_large_put_over_the_wire(server):
    port, binaries = server
    data = os.urandom(20 << 20)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("PUT", "/rest/large", body=data,
                 headers={"Content-Type": "application/octet-stream",
                          "Digest": "sha-256=" + hashlib.sha256(data).hexdigest()})
    r = conn.getresponse()
    r.read()
    assert r.status == 201
    conn.request("GET", "/rest/large", headers={"Range": "bytes=5000000-5999999"})
    r = conn.getresponse()
    assert r.status == 206 and r.read() == data[5000000:6000000]
    conn.close()
    assert hashlib.sha512(data).hexdigest() in _stored(binaries)
    assert os.listdir(binaries / "tmp") == []
