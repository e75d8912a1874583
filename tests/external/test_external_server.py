"""External content over a real gunicorn (lsup-server) on 127.0.0.1, and
``lsup-admin migrate`` of a source holding external-content binaries."""
from __future__ import annotations

import http.client

import pytest

from lakesuperior.config import Config

from ..servers import lsup_server
from .conftest import CONTENT, TEXT, link

pytestmark = pytest.mark.slow


def _request(port: int, method: str, path: str, headers: dict | None = None
             ) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def test_fedora_3_9_over_gunicorn_and_migrate(tmp_path, origin, files):
    env = {"LSUP_EXTERNAL_CONTENT_ALLOWED": f"{origin.url}/files {files.allowed.as_uri()}",
           "LSUP_STORE_SYNC": "false"}
    with lsup_server(tmp_path, env) as (_proc, port, log):
        cases = {"/rest/proxy": link(origin.url + "/files/data.bin", "proxy"),
                 "/rest/redirect": link(origin.url + "/files/hello.txt", "redirect"),
                 "/rest/copy": link(origin.url + "/files/hello.txt", "copy"),
                 "/rest/local": link(files.url("hello.txt"), "redirect")}
        for path, value in cases.items():
            status, _, body = _request(port, "PUT", path, {"Link": value, "Content-Length": "0"})
            assert status == 201, (path, body, log.read_text())
        status, headers, body = _request(port, "GET", "/rest/proxy")
        assert (status, body) == (200, CONTENT)
        assert headers["content-location"] == origin.url + "/files/data.bin"
        status, headers, body = _request(port, "GET", "/rest/proxy", {"Range": "bytes=5-9"})
        assert (status, body) == (206, CONTENT[5:10])
        status, headers, _ = _request(port, "HEAD", "/rest/proxy")
        assert (status, headers["content-length"]) == (200, str(len(CONTENT)))
        status, headers, _ = _request(port, "GET", "/rest/redirect")
        assert (status, headers["location"]) == (307, origin.url + "/files/hello.txt")
        status, _, _ = _request(port, "PUT", "/rest/bad", {
            "Link": link(origin.url + "/elsewhere", "copy"), "Content-Length": "0"})
        assert status == 400

        # migrate: the http: URLs are on the target's allow-list, the file: one is not
        from lakesuperior import Repository
        from lakesuperior.admin import migrate
        dest = tmp_path / "dest"
        cfg = Config(data_dir=str(dest), sync=False,
                     external_content_allowed=(origin.url + "/files",))
        report = migrate.migrate(f"http://127.0.0.1:{port}/rest", cfg, skip_errors=True)
    failed = dict(report.failed)
    assert list(failed) == [f"http://127.0.0.1:{port}/rest/local"], report.failed
    assert "cannot be kept external" in failed[f"http://127.0.0.1:{port}/rest/local"]
    assert "redirect to file://" in failed[f"http://127.0.0.1:{port}/rest/local"]
    with Repository(dest, sync=False) as repo:
        proxy = repo.get("/proxy")
        assert (proxy.external_url, proxy.external_handling) == (
            origin.url + "/files/data.bin", "proxy")
        redirect = repo.get("/redirect")
        assert (redirect.external_url, redirect.external_handling) == (
            origin.url + "/files/hello.txt", "redirect")
        copy = repo.get("/copy")
        assert copy.external_url is None
        with copy.content as fh:
            assert fh.read() == TEXT
        assert not repo.exists("/local")
