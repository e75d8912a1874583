"""Binaries and proxied content cannot script the repository's origin: never
sniffed, sandboxed, and active types (HTML, SVG, XML, JavaScript) downloaded,
as ``http.binary_protection`` says; the repository's own HTML view is not a
binary and keeps working."""
from __future__ import annotations

import pytest

from lakesuperior.config import Config
from lakesuperior.http import headers as hdr
from tests.apps import serving
from tests.external.conftest import REL

SCRIPT = b"<html><body><script>alert(document.cookie)</script></body></html>"


def make(tmp_path, **config):
    return serving(Config(data_dir=str(tmp_path / "data"), sync=False, auth_enabled=False,
                          external_content_allowed=((tmp_path / "ext").as_uri(),),
                          **config))


@pytest.fixture
def client(tmp_path):
    for app in make(tmp_path):
        yield app.test_client()


def put_binary(client, path, body, mimetype, **headers):
    r = client.put(path, data=body, content_type=mimetype, headers=headers)
    assert r.status_code == 201, r.get_data(as_text=True)


@pytest.mark.parametrize("mimetype", ["text/html", "image/svg+xml", "application/xml",
                                      "application/javascript", "application/xhtml+xml",
                                      "application/atom+xml", "text/html; charset=utf-8"])
def test_active_binary_is_sandboxed_and_downloaded(client, mimetype):
    put_binary(client, "/rest/page", SCRIPT, mimetype)
    for method in ("GET", "HEAD"):
        r = client.open("/rest/page", method=method)
        assert r.status_code == 200
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Content-Security-Policy"] == "sandbox"
        assert r.headers["Content-Disposition"] == "attachment"


def test_passive_binary_is_sandboxed_and_inline(client):
    put_binary(client, "/rest/img", b"\x89PNG...", "image/png")
    r = client.get("/rest/img")
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Content-Security-Policy"] == "sandbox"
    assert "Content-Disposition" not in r.headers


def test_a_filename_keeps_its_disposition(client):
    put_binary(client, "/rest/named", SCRIPT, "text/html",
               **{"Content-Disposition": 'attachment; filename="x.html"'})
    r = client.get("/rest/named")
    assert r.headers.getlist("Content-Disposition") == ['attachment; filename="x.html"']
    assert r.headers["Content-Security-Policy"] == "sandbox"


def test_ranges_and_mementos_are_protected(client):
    put_binary(client, "/rest/page", SCRIPT, "text/html")
    r = client.get("/rest/page", headers={"Range": "bytes=0-5,10-12"})
    assert r.status_code == 206
    assert r.headers["Content-Security-Policy"] == "sandbox"
    assert r.headers["Content-Disposition"] == "attachment"
    versions = client.get("/rest/page/fcr:versions",
                          headers={"Accept": "application/link-format"})
    memento = [lk.uri for lk in hdr.parse_link(versions.get_data(as_text=True))
               if lk.has_rel("memento")][0]
    r = client.get(memento)
    assert r.status_code == 200
    assert r.data == SCRIPT
    assert r.headers["Content-Security-Policy"] == "sandbox"
    assert r.headers["Content-Disposition"] == "attachment"


def test_proxied_file_is_protected(tmp_path, client):
    (tmp_path / "ext").mkdir()
    (tmp_path / "ext" / "p.html").write_bytes(SCRIPT)
    url = (tmp_path / "ext" / "p.html").as_uri()
    r = client.put("/rest/prox", headers={"Link": f'<{url}>; rel="{REL}"; handling="proxy"'})
    assert r.status_code == 201
    r = client.get("/rest/prox")
    assert r.data == SCRIPT
    assert r.headers["Content-Type"].startswith("text/html")
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Content-Security-Policy"] == "sandbox"
    assert r.headers["Content-Disposition"] == "attachment"


def test_the_html_view_is_not_sandboxed(client):
    r = client.get("/rest/", headers={"Accept": "text/html"})
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/html")
    assert r.headers.getlist("Content-Security-Policy") == ["frame-ancestors 'none'"]
    assert "Content-Disposition" not in r.headers


@pytest.mark.parametrize("policy, csp, disposition", [
    ("sandbox", "sandbox", None), ("off", None, None)])
def test_the_protection_is_configurable(tmp_path, policy, csp, disposition):
    for app in make(tmp_path, http_binary_protection=policy):
        client = app.test_client()
        put_binary(client, "/rest/page", SCRIPT, "text/html")
        r = client.get("/rest/page")
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers.get("Content-Security-Policy") == csp
        assert r.headers.get("Content-Disposition") == disposition
