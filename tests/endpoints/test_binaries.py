"""Binaries (LDP-NRs): content, descriptions, digests, ranges."""
from __future__ import annotations

import base64
import hashlib

import pytest

from lakesuperior.http import headers as hdr

from .conftest import DC_TITLE, LDP, ROOT, TTL, graph, link_targets, links, types

pytestmark = pytest.mark.both_backends

DATA = b"TestString." * 10


def _post_binary(client, data=DATA, ctype="text/plain", **headers):
    headers.setdefault("Content-Disposition", 'attachment; filename="test.txt"')
    r = client.post("/rest/", data=data, content_type=ctype, headers=headers)
    assert r.status_code == 201, r.data
    return r


def test_post_binary(client):
    r = _post_binary(client, Slug="bin")
    loc = r.headers["Location"]
    assert loc == f"{ROOT}/bin"
    assert link_targets(r, "describedby") == [f"{ROOT}/bin/fcr:metadata"]
    # the links of a POST response are about the new resource, not the container
    described = [lk for lk in links(r) if lk.has_rel("describedby")][0]
    assert described.params["anchor"] == loc
    assert link_targets(r, LDP + "constrainedBy")
    g = client.get("/rest/bin")
    assert g.data == DATA
    assert g.headers["Content-Type"] == "text/plain"
    assert g.headers["Content-Length"] == str(len(DATA))
    assert hdr.parse_content_disposition(g.headers["Content-Disposition"]) == "test.txt"
    assert LDP + "NonRDFSource" in types(g) and LDP + "RDFSource" not in types(g)
    assert link_targets(g, "describedby") == [f"{ROOT}/bin/fcr:metadata"]
    assert not g.headers["ETag"].startswith("W/")   # strong for binaries
    assert g.headers["Accept-Ranges"] == "bytes"
    assert "PATCH" not in g.headers["Allow"] and "POST" not in g.headers["Allow"]


def test_binary_by_link_type_whatever_the_content_type(client):
    r = client.post("/rest/", data=b"<> <http://x/p> 1 .", content_type=TTL,
                    headers={"Link": f'<{LDP}NonRDFSource>; rel="type"'})
    assert r.status_code == 201
    g = client.get(r.headers["Location"])
    assert g.data == b"<> <http://x/p> 1 ." and g.headers["Content-Type"] == TTL


def test_post_without_content_type_is_octet_stream(client):
    r = client.post("/rest/", data=b"\x00\x01binary")
    assert r.status_code == 201
    g = client.get(r.headers["Location"])
    assert g.headers["Content-Type"] == "application/octet-stream" and g.data == b"\x00\x01binary"


def test_description(client):
    _post_binary(client, Slug="bin")
    d = client.get("/rest/bin/fcr:metadata")
    assert d.status_code == 200 and d.headers["Content-Type"].startswith(TTL)
    assert link_targets(d, "describes") == [f"{ROOT}/bin"]
    assert types(d) >= {LDP + "RDFSource"} and LDP + "NonRDFSource" not in types(d)
    g = graph(d)
    assert (f"<{ROOT}/bin>", "<http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#filename>",
            '"test.txt"') in g
    assert (f"<{ROOT}/bin>", "<http://www.loc.gov/premis/rdf/v1#hasSize>",
            f'"{len(DATA)}"^^<http://www.w3.org/2001/XMLSchema#long>') in g
    assert d.headers["ETag"].startswith("W/")
    assert "PATCH" in d.headers["Allow"] and d.headers["Accept-Patch"]


def test_patch_and_put_description(client, repo, state):
    _post_binary(client, Slug="bin")
    r = client.patch("/rest/bin/fcr:metadata", content_type="application/sparql-update",
                     data=f'INSERT DATA {{ <> {DC_TITLE} "A file" }}')
    assert r.status_code == 204, r.data
    assert (f"<{ROOT}/bin>", DC_TITLE, '"A file"') in graph(client.get("/rest/bin/fcr:metadata"))
    body = client.get("/rest/bin/fcr:metadata").data.replace(b"A file", b"Renamed")
    r = client.put("/rest/bin/fcr:metadata", data=body, content_type=TTL)
    assert r.status_code == 204, r.data
    g = graph(client.get("/rest/bin/fcr:metadata"))
    assert (f"<{ROOT}/bin>", DC_TITLE, '"Renamed"') in g
    assert (f"<{ROOT}/bin>", DC_TITLE, '"A file"') not in g
    r = client.put("/rest/bin/fcr:metadata", data=f'<> {DC_TITLE} "Relative" .',
                   content_type=TTL)
    assert r.status_code == 204
    g = graph(client.get("/rest/bin/fcr:metadata"))
    assert (f"<{ROOT}/bin>", DC_TITLE, '"Relative"') in g
    assert client.get("/rest/bin").data == DATA
    before = state(repo)
    sneaky = ("<> <http://www.loc.gov/premis/rdf/v1#hasSize> "
              '"1"^^<http://www.w3.org/2001/XMLSchema#long> .')
    assert client.put("/rest/bin/fcr:metadata", data=sneaky,
                      content_type=TTL).status_code == 409
    assert client.put("/rest/bin/fcr:metadata", data=b"x",
                      content_type="text/plain").status_code == 415
    assert client.delete("/rest/bin/fcr:metadata").status_code == 405
    assert client.post("/rest/bin/fcr:metadata").status_code == 405
    assert state(repo) == before


def test_patch_binary_content_is_415(client, repo, state):
    _post_binary(client, Slug="bin")
    before = state(repo)
    r = client.patch("/rest/bin", content_type="application/sparql-update",
                     data='INSERT DATA { <> <http://x/p> "x" }')
    assert r.status_code == 415
    assert "fcr:metadata" in r.get_data(as_text=True)
    assert state(repo) == before


def test_put_replaces_content(client):
    _post_binary(client, Slug="bin")
    e1 = client.get("/rest/bin").headers["ETag"]
    r = client.put("/rest/bin", data=b"TestString2.", content_type="text/plain",
                   headers={"Content-Disposition": 'attachment; filename="putUpdate.txt"'})
    assert r.status_code == 204
    g = client.get("/rest/bin")
    assert g.data == b"TestString2." and g.headers["ETag"] != e1
    assert hdr.parse_content_disposition(g.headers["Content-Disposition"]) == "putUpdate.txt"
    # RDF media type on a binary replaces the content too
    r = client.put("/rest/bin", data=b"<> <http://x/p> 1 .", content_type=TTL)
    assert r.status_code == 204
    assert client.get("/rest/bin").data == b"<> <http://x/p> 1 ."


def test_put_create_binary(client):
    r = client.put("/rest/file.bin", data=b"abc", content_type="application/x-thing")
    assert r.status_code == 201
    assert client.get("/rest/file.bin").data == b"abc"


def test_put_rdf_source_link_on_binary_is_409(client, repo, state):
    _post_binary(client, Slug="bin")
    before = state(repo)
    r = client.put("/rest/bin", data=b"TestString2.",
                   headers={"Link": f'<{LDP}RDFSource>; rel="type"'})
    assert r.status_code == 409 and link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before


def _b64(algo, data):
    return base64.b64encode(hashlib.new(algo, data).digest()).decode()


def test_upload_digests(client, repo, state):
    good = f"md5={_b64('md5', DATA)}, sha-256={_b64('sha256', DATA)}"
    r = _post_binary(client, Digest=good)
    assert r.status_code == 201
    hexed = f"sha={hashlib.sha1(DATA).hexdigest()}"
    assert _post_binary(client, Digest=hexed).status_code == 201
    before = state(repo)
    for digest, status in [("md5=1234", 409), (f"md5={_b64('md5', b'other')}", 409),
                           ("abc=abc", 400), (f"sha-256={_b64('sha256', b'x')}", 409)]:
        r = client.post("/rest/", data=DATA, content_type="text/plain",
                        headers={"Digest": digest})
        assert r.status_code == status, digest
        assert link_targets(r, LDP + "constrainedBy")
    assert client.put("/rest/new", data=DATA, content_type="text/plain",
                      headers={"Digest": "MD5=97c4627dc7734f65f5195f1d5f556d7a"}).status_code == 409
    assert state(repo) == before


@pytest.mark.parametrize("want, expected", [
    ("md5", {"md5"}), ("md5,sha", {"md5", "sha"}), ("md5;q=0.3,sha;q=1", {"md5", "sha"}),
    ("md5;q=0.3,sha;q=0", {"md5"}), ("md5,abc", {"md5"}), ("SHA-256", {"sha-256"}),
    ("sha-512", {"sha-512"}), ("abc", set()),
])
def test_want_digest(client, want, expected):
    _post_binary(client, Slug="bin")
    for method in (client.get, client.head):
        r = method("/rest/bin", headers={"Want-Digest": want})
        got = hdr.parse_digest(r.headers.get("Digest", ""))
        assert set(got) == expected
    names = {"md5": "md5", "sha": "sha1", "sha-256": "sha256", "sha-512": "sha512"}
    for name, value in got.items():
        assert value == _b64(names[name], DATA)


def test_head_binary(client):
    _post_binary(client, Slug="bin")
    g, h = client.get("/rest/bin"), client.head("/rest/bin")
    assert h.status_code == 200 and h.data == b""
    for name in ("ETag", "Content-Type", "Content-Length", "Link", "Last-Modified",
                 "Content-Disposition"):
        assert h.headers[name] == g.headers[name]


def test_ranges(client):
    data = bytes(range(256)) * 4
    _post_binary(client, data=data, ctype="application/octet-stream", Slug="bin")
    r = client.get("/rest/bin", headers={"Range": "bytes=10-19"})
    assert r.status_code == 206 and r.data == data[10:20]
    assert r.headers["Content-Range"] == f"bytes 10-19/{len(data)}"
    assert r.headers["Content-Length"] == "10"
    r = client.get("/rest/bin", headers={"Range": "bytes=-5"})
    assert r.status_code == 206 and r.data == data[-5:]
    r = client.get("/rest/bin", headers={"Range": "bytes=0-1,100-101"})
    assert r.status_code == 206
    ctype = r.headers["Content-Type"]
    assert ctype.startswith("multipart/byteranges; boundary=")
    boundary = ctype.split("boundary=")[1].encode()
    assert int(r.headers["Content-Length"]) == len(r.data)
    parts = [p for p in r.data.split(b"--" + boundary) if p.strip(b"-\r\n")]
    assert len(parts) == 2
    assert parts[0].endswith(b"\r\n\r\n" + data[0:2] + b"\r\n")
    assert b"Content-Range: bytes 100-101/1024" in parts[1]
    r = client.get("/rest/bin", headers={"Range": "bytes=5000-6000"})
    assert r.status_code == 416 and r.headers["Content-Range"] == "bytes */1024"
    assert client.get("/rest/bin", headers={"Range": "lines=1-2"}).data == data
    etag = client.get("/rest/bin").headers["ETag"]
    r = client.get("/rest/bin", headers={"Range": "bytes=0-0", "If-Range": etag})
    assert r.status_code == 206
    r = client.get("/rest/bin", headers={"Range": "bytes=0-0", "If-Range": '"stale"'})
    assert r.status_code == 200 and r.data == data
    assert client.head("/rest/bin", headers={"Range": "bytes=0-0"}).status_code == 200


def test_conditional_binary(client):
    _post_binary(client, Slug="bin")
    etag = client.get("/rest/bin").headers["ETag"]
    assert client.get("/rest/bin", headers={"If-None-Match": etag}).status_code == 304
    assert client.get("/rest/bin", headers={"If-None-Match": "W/" + etag}).status_code == 304
    r = client.put("/rest/bin", data=b"new", content_type="text/plain",
                   headers={"If-Match": "W/" + etag})
    assert r.status_code == 412   # strong comparison for binaries
    r = client.put("/rest/bin", data=b"new", content_type="text/plain",
                   headers={"If-Match": etag})
    assert r.status_code == 204


def test_delete_binary(client):
    _post_binary(client, Slug="bin")
    assert client.delete("/rest/bin").status_code == 204
    assert client.get("/rest/bin").status_code == 410
    assert client.get("/rest/bin/fcr:metadata").status_code == 410


def test_oversized_binary(client, repo, state):
    from .conftest import MAX_BODY
    before = state(repo)
    r = client.post("/rest/", data=b"x" * (MAX_BODY + 1), content_type="application/zip")
    assert r.status_code == 413
    r = client.put("/rest/big", data=b"x" * (MAX_BODY + 1), content_type="application/zip")
    assert r.status_code == 413
    assert state(repo) == before
