"""External content over HTTP (Fedora API 1.0 section 3.9): PUT and POST with an
``ExternalContent`` Link, redirect (307) and proxy (ranges, HEAD, Want-Digest)
answers, and every refusal a 4xx with a constrainedBy link and nothing stored."""
from __future__ import annotations

import base64
import hashlib
import os
import re

import pytest

from lakesuperior.http import headers as hdr
from tests.apps import Client

from .conftest import CONTENT, REL, TEXT, link

CONSTRAINED_BY = "http://www.w3.org/ns/ldp#constrainedBy"


def _constrained(resp) -> str:
    links = hdr.parse_link(resp.headers.getlist("Link"))
    found = [x.uri for x in links if x.has_rel(CONSTRAINED_BY)]
    assert found, resp.headers
    return found[0]


# --- creating --------------------------------------------------------------------------

def test_fedora_3_9_put_copy(client, origin):
    r = client.put("/rest/c", headers={"Link": link(origin.url + "/files/data.bin", "copy")})
    assert r.status_code == 201, r.data
    got = client.get("/rest/c")
    assert got.status_code == 200
    assert got.data == CONTENT
    assert got.headers["Content-Type"] == "application/x-test"
    assert "Content-Location" not in got.headers          # a copy is ours


def test_fedora_3_9_post_copy_with_type_ignores_content_type(client, files):
    r = client.post("/rest/", headers={"Link": link(files.url("hello.txt"), "copy", "text/x-a"),
                                       "Content-Type": "application/x-ignored", "Slug": "n"})
    assert r.status_code == 201, r.data
    got = client.get("/rest/n")
    assert got.data == TEXT
    assert got.headers["Content-Type"] == "text/x-a"


def test_fedora_3_9_put_copy_replaces_content(client, origin):
    client.put("/rest/c", data=b"old", content_type="text/plain")
    r = client.put("/rest/c", headers={"Link": link(origin.url + "/files/hello.txt", "copy")})
    assert r.status_code == 204, r.data
    assert client.get("/rest/c").data == TEXT


# --- redirect ------------------------------------------------------------------------------

def _gone_sources(client, origin, files, handling: str) -> tuple[str, str]:
    """Two binaries of ``handling`` whose sources (over HTTP, a file) are then gone."""
    client.put("/rest/h", headers={"Link": link(origin.url + "/files/hello.txt", handling)})
    client.put("/rest/f", headers={"Link": link(files.url("hello.txt"), handling)})
    del origin.files["hello.txt"]
    os.unlink(files.allowed / "hello.txt")
    return "h", "f"


@pytest.mark.parametrize("where", ["http", "file"])
def test_fedora_3_9_redirect(client, origin, files, where):
    url = origin.url + "/files/hello.txt" if where == "http" else files.url("hello.txt")
    r = client.put("/rest/r", headers={"Link": link(url, "redirect")})
    assert r.status_code == 201, r.data
    origin.requests.clear()
    for method in ("GET", "HEAD"):
        got = client.open("/rest/r", method=method)
        assert got.status_code == 307
        assert got.headers["Location"] == url
        assert got.headers["Content-Location"] == url
        assert "Digest" not in got.headers
        assert "describedby" in got.headers["Link"]
    assert origin.requests == []                    # nothing fetched unless asked
    desc = client.get("/rest/r/fcr:metadata", headers={"Accept": "application/n-triples"})
    assert desc.status_code == 200
    assert f'"{url}"'.encode() in desc.data
    assert b'"redirect"' in desc.data


@pytest.mark.parametrize("where", ["http", "file"])
def test_redirect_want_digest_is_computed_from_the_source(client, origin, files, where):
    """A redirect binary's 307 answers Want-Digest with the digest of the content at
    its (allowed) URL, fetched for it."""
    url = origin.url + "/files/hello.txt" if where == "http" else files.url("hello.txt")
    assert client.put("/rest/r", headers={"Link": link(url, "redirect")}).status_code == 201
    for method in ("GET", "HEAD"):
        got = client.open("/rest/r", method=method,
                          headers={"Want-Digest": "sha-256, md5;q=0.5"})
        assert got.status_code == 307, got.data
        assert got.headers["Location"] == url
        digest = hdr.parse_digest(got.headers["Digest"])
        assert digest["sha-256"] == base64.b64encode(hashlib.sha256(TEXT).digest()).decode()
        assert digest["md5"] == base64.b64encode(hashlib.md5(TEXT).digest()).decode()
    if where == "http":
        assert ("GET", "/files/hello.txt", None) in origin.requests


def test_redirect_want_digest_unreachable_source_is_502(client, origin, files):
    for uid in _gone_sources(client, origin, files, "redirect"):
        r = client.get(f"/rest/{uid}", headers={"Want-Digest": "sha-256"})
        assert r.status_code == 502, r.data
        assert b"cannot be read" in r.data
        plain = client.get(f"/rest/{uid}")            # without Want-Digest: still a 307
        assert plain.status_code == 307


def test_redirect_want_digest_unsupported_algorithm(client, origin):
    client.put("/rest/r", headers={"Link": link(origin.url + "/files/hello.txt", "redirect")})
    origin.requests.clear()
    r = client.get("/rest/r", headers={"Want-Digest": "sha-3-999"})
    assert r.status_code == 400, r.data
    assert b"supported" in r.data
    assert origin.requests == []


# --- proxy ---------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["http", "file"])
def test_fedora_3_9_proxy_get_head_range(client, origin, files, where):
    url = origin.url + "/files/data.bin" if where == "http" else files.url("data.bin")
    r = client.post("/rest/", headers={"Link": link(url, "proxy", "application/x-p"),
                                       "Slug": "p"})
    assert r.status_code == 201, r.data
    got = client.get("/rest/p")
    assert got.status_code == 200
    assert got.data == CONTENT
    assert got.headers["Content-Location"] == url
    assert got.headers["Content-Type"] == "application/x-p"
    head = client.head("/rest/p")
    assert head.status_code == 200
    assert head.headers["Content-Length"] == str(len(CONTENT))
    assert head.data == b""
    part = client.get("/rest/p", headers={"Range": "bytes=10-19"})
    assert part.status_code == 206
    assert part.data == CONTENT[10:20]
    assert part.headers["Content-Range"] == f"bytes 10-19/{len(CONTENT)}"
    past = client.get("/rest/p", headers={"Range": f"bytes={len(CONTENT) + 5}-"})
    assert past.status_code == 416
    want = client.get("/rest/p", headers={"Want-Digest": "sha-256"})
    assert want.status_code == 200
    assert want.headers["Digest"] == "sha-256=" + base64.b64encode(
        hashlib.sha256(CONTENT).digest()).decode()
    assert want.data == CONTENT


def test_fedora_3_9_proxy_http_passes_range_on(client, origin):
    client.put("/rest/p", headers={"Link": link(origin.url + "/files/data.bin", "proxy")})
    origin.requests.clear()
    client.get("/rest/p", headers={"Range": "bytes=0-3"})
    assert ("GET", "/files/data.bin", "bytes=0-3") in origin.requests


def test_proxy_source_gone_is_502(client, origin, files):
    for uid in _gone_sources(client, origin, files, "proxy"):
        r = client.get(f"/rest/{uid}")
        assert r.status_code == 502
        assert b"cannot be read" in r.data
        assert client.get(f"/rest/{uid}/fcr:metadata").status_code == 200


def test_fedora_3_9_1_options_advertise_handlings(client):
    r = client.options("/rest/")
    assert r.headers["Accept-External-Content-Handling"] == "copy,redirect,proxy"


def test_description_round_trip_keeps_external(client, origin):
    url = origin.url + "/files/hello.txt"
    client.put("/rest/p", headers={"Link": link(url, "proxy")})
    desc = client.get("/rest/p/fcr:metadata", headers={"Accept": "text/turtle"})
    body = desc.data + b'\n<> <http://purl.org/dc/terms/title> "t" .\n'
    r = client.put("/rest/p/fcr:metadata", data=body, content_type="text/turtle")
    assert r.status_code == 204, r.data
    got = client.get("/rest/p")
    assert got.headers["Content-Location"] == url
    assert got.data == TEXT


def test_external_makes_a_version(client, origin):
    client.put("/rest/p", headers={"Link": link(origin.url + "/files/hello.txt", "redirect")})
    tm = client.get("/rest/p/fcr:versions", headers={"Accept": "application/link-format"})
    mementos = re.findall(r"<([^>]*fcr:versions/\d+)>", tm.data.decode())
    assert mementos
    m = client.get(mementos[0].replace("http://localhost", ""))
    assert m.status_code == 307
    assert m.headers["Location"] == origin.url + "/files/hello.txt"


# --- refusals ------------------------------------------------------------------------------

BAD = [
    ("no handling", lambda o, f: {"Link": link(o.url + "/files/hello.txt", None)}, 400,
     b"needs a handling"),
    ("unknown handling", lambda o, f: {"Link": link(o.url + "/files/hello.txt", "move")}, 400,
     b"needs a handling"),
    ("malformed Link", lambda o, f: {"Link": f'{o.url}/files/hello.txt; rel="{REL}"'}, 400,
     b"Malformed external content Link"),
    ("two Links", lambda o, f: {"Link": link(o.url + "/files/hello.txt", "copy") + ", "
                                + link(o.url + "/files/data.bin", "copy")}, 400,
     b"2 external content Links"),
    ("not allowed", lambda o, f: {"Link": link(o.url + "/filesx/hello.txt", "copy")}, 400,
     b"not under an allowed"),
    ("traversal", lambda o, f: {"Link": link(f.allowed.as_uri() + "/../allowed-not/secret.txt",
                                             "proxy")}, 400, b". or .. path segments"),
    ("symlink escape", lambda o, f: {"Link": link(f.url("link.txt"), "copy")}, 400,
     b"symbolic link"),
    ("redirect outside", lambda o, f: {"Link": link(o.url + "/go/out", "copy")}, 400,
     b"redirects to a URL that is not allowed"),
    ("failing source", lambda o, f: {"Link": link(o.url + "/files/nope", "redirect")}, 400,
     b"answered 404"),
    ("midway", lambda o, f: {"Link": link(o.url + "/midway", "copy")}, 400, b"ended after"),
    ("digest mismatch", lambda o, f: {"Link": link(o.url + "/files/hello.txt", "copy"),
                                      "Digest": "sha-256=" + "0" * 64}, 409, b"mismatch"),
    ("proxy digest mismatch", lambda o, f: {"Link": link(o.url + "/files/hello.txt", "proxy"),
                                            "Digest": "md5=" + "0" * 32}, 409, b"mismatch"),
    ("too large", lambda o, f: {"Link": link(o.url + "/files/big", "copy")}, 413, b"big"),
    ("RDF model", lambda o, f: {"Link": [link(o.url + "/files/hello.txt", "copy"),
                                         '<http://www.w3.org/ns/ldp#BasicContainer>; '
                                         'rel="type"']}, 400, b"makes a binary"),
    ("bad type", lambda o, f: {"Link": link(o.url + "/files/hello.txt", "copy", "nonsense")},
     400, b"not a media type"),
]


@pytest.mark.parametrize("method", ["PUT", "POST"])
@pytest.mark.parametrize("name, make, status, message", BAD, ids=[b[0] for b in BAD])
def test_fedora_3_9_refusals_store_nothing(client, http_repo, origin, files, state, method,
                                           name, make, status, message):
    os.symlink(files.outside / "secret.txt", files.allowed / "link.txt")
    origin.redirects["out"] = "http://127.0.0.2:9/x"
    origin.files["big"] = (b"x" * 60_000, "application/octet-stream")
    before = state(http_repo)
    path = "/rest/x" if method == "PUT" else "/rest/"
    r = client.open(path, method=method, headers=make(origin, files))
    assert r.status_code == status, r.data
    assert message in r.data
    assert _constrained(r)
    assert state(http_repo) == before


def test_fedora_3_9_body_with_link_refused(client, http_repo, origin, state):
    before = state(http_repo)
    r = client.put("/rest/x", data=b"a body", content_type="text/plain",
                   headers={"Link": link(origin.url + "/files/hello.txt", "copy")})
    assert r.status_code == 400
    assert b"has no body" in r.data
    assert _constrained(r).endswith("#external-content")
    assert state(http_repo) == before


@pytest.mark.parametrize("handling", ["copy", "proxy"])
def test_fedora_3_9_put_external_on_rdf_source_refused(client, http_repo, origin, state,
                                                       handling):
    client.put("/rest/rdf", data=b"", content_type="text/turtle")
    before = state(http_repo)
    r = client.put("/rest/rdf", headers={"Link": link(origin.url + "/files/hello.txt",
                                                       handling)})
    assert r.status_code == 409
    assert b"cannot be replaced with a binary" in r.data
    assert _constrained(r)
    assert state(http_repo) == before
    assert origin.requests == []                  # refused before anything was fetched


def test_empty_allow_list_refuses_over_http(tmp_path, origin):
    """With nothing allowed the server takes no external content: it does not advertise
    handlings (Fedora API 3.9.1) and refuses each request with a 4xx and a
    constrainedBy link (3.9; the Fedora API Test Suite's 3.9-D-1 and 3.9-D-2)."""
    from lakesuperior.config import Config
    from tests.apps import build_app
    app = build_app(Config(data_dir=str(tmp_path / "d"), sync=False, auth_enabled=False))
    app.test_client_class = Client
    try:
        client = app.test_client()
        r = client.put("/rest/x", headers={
            "Link": link(origin.url + "/files/hello.txt", "copy")})
        assert r.status_code == 400
        assert b"LSUP_EXTERNAL_CONTENT_ALLOWED" in r.data
        assert _constrained(r)
        r = client.post("/rest/", headers={"Link": link(origin.url + "/files/hello.txt")})
        assert r.status_code == 400
        assert _constrained(r)
        assert origin.requests == []
        assert client.put("/rest/bin", data=b"x", content_type="text/plain").status_code == 201
        for path in ("/rest/", "/rest/bin"):
            r = client.options(path)
            assert r.status_code == 200
            assert "Accept-External-Content-Handling" not in r.headers
    finally:
        app.extensions["lakesuperior"].close()


def test_fixity_of_external_binary_is_409(client, origin):
    """``fcr:fixity`` checks stored content: a redirect or proxy binary has none."""
    for uid, handling in (("r", "redirect"), ("p", "proxy")):
        client.put(f"/rest/{uid}", headers={"Link": link(origin.url + "/files/hello.txt",
                                                          handling)})
        r = client.get(f"/rest/{uid}/fcr:fixity")
        assert r.status_code == 409, r.data
        assert b"external" in r.data
    client.put("/rest/c", headers={"Link": link(origin.url + "/files/hello.txt", "copy")})
    r = client.get("/rest/c/fcr:fixity")
    assert r.status_code == 200
    assert b"SUCCESS" in r.data
