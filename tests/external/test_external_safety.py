"""External files are opened once, from the allowed directory down, never through
a symbolic link, never blocking; an http source has a total time limit."""
from __future__ import annotations

import http.server
import os
import threading
import time
from collections.abc import Iterator

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ExternalContentError
from tests.apps import serving

from .conftest import TEXT, link

pytestmark = pytest.mark.slow

SECRET = b"secret\n"


def test_a_symlink_swapped_in_never_yields_the_outside(client, files):
    """A thread swaps ``swap`` between a regular file and a link to a file outside
    the allow-list while proxied GETs read it: none reads the outside file (each
    answers the allowed content or 502)."""
    target = files.allowed / "swap"
    (files.allowed / ".plain").write_bytes(TEXT)
    target.write_bytes(TEXT)
    r = client.put("/rest/raced", headers={"Link": link(target.as_uri(), "proxy")})
    assert r.status_code == 201, r.get_data(as_text=True)
    stop = threading.Event()

    def swap() -> None:
        plain, sym = files.allowed / ".plain-next", files.allowed / ".link-next"
        while not stop.is_set():
            plain.write_bytes(TEXT)
            os.replace(plain, target)
            os.symlink(files.outside / "secret.txt", sym)
            os.replace(sym, target)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    statuses: dict[int, int] = {}
    leaked = 0
    try:
        end = time.monotonic() + 4.0
        while time.monotonic() < end:
            r = client.get("/rest/raced")
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            if SECRET in r.data:
                leaked += 1
    finally:
        stop.set()
        swapper.join()
    assert leaked == 0, f"{leaked} GETs read the file outside the allow-list ({statuses})"
    assert set(statuses) <= {200, 502}
    assert statuses.get(200) and statuses.get(502)        # both states were met


def test_a_link_inside_the_allowed_directory_is_not_followed(client, files):
    (files.allowed / "sub").mkdir()
    (files.allowed / "sub" / "f.txt").write_bytes(TEXT)
    os.symlink(files.allowed / "sub", files.allowed / "alias")
    os.symlink(files.allowed / "hello.txt", files.allowed / "hello-link.txt")
    ok = client.put("/rest/ok", headers={"Link": link(files.url("sub/f.txt"), "proxy")})
    assert ok.status_code == 201
    assert client.get("/rest/ok").data == TEXT
    for name in ("alias/f.txt", "hello-link.txt"):
        r = client.put("/rest/l", headers={"Link": link(files.url(name), "copy")})
        assert r.status_code == 400
        assert "symbolic link" in r.get_data(as_text=True)


@pytest.mark.parametrize("handling", ["copy", "proxy"])
def test_a_fifo_is_refused_at_once(ext_repo, files, state, handling):
    """Opening a FIFO for reading blocks until a writer comes: it is opened without
    blocking and refused as not a regular file."""
    fifo = files.allowed / "pipe"
    os.mkfifo(fifo)
    before = state(ext_repo)
    outcome: list[BaseException | None] = []

    def create() -> None:
        try:
            ext_repo.create_or_replace("/p", external=files.url("pipe"),
                                       external_handling=handling)
            outcome.append(None)
        except BaseException as e:     # noqa: BLE001 - the test reads it
            outcome.append(e)

    worker = threading.Thread(target=create, daemon=True)
    worker.start()
    worker.join(5)
    if worker.is_alive():              # release the blocked open, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        pytest.fail("opening a FIFO blocked the request")
    assert isinstance(outcome[0], ExternalContentError)
    assert "not a regular file" in str(outcome[0])
    assert state(ext_repo) == before


def test_a_directory_is_refused(ext_repo, files):
    (files.allowed / "d").mkdir()
    with pytest.raises(ExternalContentError, match="directory"):
        ext_repo.create_or_replace("/d", external=files.url("d"), external_handling="copy")


# --- a source that trickles ----------------------------------------------------------------

class Trickle(http.server.BaseHTTPRequestHandler):
    """``/length`` announces 1000 bytes, ``/chunked`` none (a close-delimited body);
    either sends one byte every 0.1 s. ``/headers`` sends its status line that way."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        return

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()

    def do_GET(self) -> None:
        stop: threading.Event = self.server.stop  # type: ignore[attr-defined]
        if self.path == "/headers":
            self._drip(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", stop)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        if self.path == "/length":
            self.send_header("Content-Length", "1000")
        self.end_headers()
        self._drip(b"x" * 1000, stop)
        self.close_connection = True

    def _drip(self, data: bytes, stop: threading.Event) -> None:
        for i in range(len(data)):
            if stop.wait(0.1):
                return
            try:
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
            except OSError:
                return


@pytest.fixture
def trickle() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    server.stop = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.stop.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.mark.parametrize("path", ["/length", "/chunked", "/headers"])
def test_a_trickling_copy_stops_at_the_total_limit(repo_factory, trickle, state, path):
    """One byte every 0.1 s never trips the 5 s between bytes; the 1.5 s in all
    cuts the copy with a clear error, and nothing is stored."""
    repo = repo_factory(external_content_allowed=(trickle,), external_content_timeout=5.0,
                        external_content_total_timeout=1.5)
    before = state(repo)
    started = time.monotonic()
    with pytest.raises(ExternalContentError,
                       match=r"within the 1\.5 s allowed .*external_content\.total_timeout"):
        repo.create_or_replace("/t", external=trickle + path, external_handling="copy")
    assert time.monotonic() - started < 10   # the whole trickle: 100 s
    assert state(repo) == before
    assert os.listdir(os.path.join(repo.binaries.root, "tmp")) == []


def test_a_trickling_proxy_is_cut_at_the_total_limit(tmp_path, trickle):
    cfg = Config(data_dir=str(tmp_path / "data"), sync=False, auth_enabled=False,
                 external_content_allowed=(trickle,), external_content_timeout=5.0,
                 external_content_total_timeout=1.5)
    for app in serving(cfg):
        client = app.test_client()
        r = client.put("/rest/p", headers={"Link": link(trickle + "/length", "proxy")})
        assert r.status_code == 201
        started = time.monotonic()
        r = client.get("/rest/p")
        assert time.monotonic() - started < 10   # the whole trickle: 100 s
        assert len(r.data) < 1000                     # the relayed answer ended early


def test_the_time_limit_ends_with_its_source(ext_repo, origin):
    """Each http source's timer is cancelled when the source closes: none is left."""
    for i in range(10):
        ext_repo.create_or_replace(f"/c{i}", external=origin.url + "/files/hello.txt",
                                   external_handling="copy")
    deadline = time.monotonic() + 5
    while any(isinstance(t, threading.Timer) for t in threading.enumerate()):
        assert time.monotonic() < deadline, "a source's timer outlived it"
        time.sleep(0.05)
