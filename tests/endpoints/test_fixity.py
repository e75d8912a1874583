"""``<binary>/fcr:fixity`` as Fedora 4/5/6 answer it (what Samvera / Hyrax's fixity
check reads): ``premis:hasFixity`` to a result with the computed digest and size
and ``premis:hasEventOutcome`` SUCCESS or BAD_CHECKSUM; 404 for what is not a
binary, 405 for other methods."""
from __future__ import annotations

import hashlib
import json

import pytest

from lakesuperior import rdfio
from tests.binaries import rewrite

from .conftest import LDP, ROOT, TTL, graph, links, put_ttl

pytestmark = pytest.mark.both_backends

PREMIS = "http://www.loc.gov/premis/rdf/v1#"
XSD_LONG = "http://www.w3.org/2001/XMLSchema#long"
DATA = b"fixity content\n"


def _result(g: set, binary: str) -> tuple[str, dict[str, set[str]]]:
    """The fixity node of ``binary`` and its properties."""
    [node] = [o for s, p, o in g if s == f"<{binary}>" and p == f"<{PREMIS}hasFixity>"]
    props: dict[str, set[str]] = {}
    for s, p, o in g:
        if s == node:
            props.setdefault(p, set()).add(o)
    return node, props


def test_fixity_success(client):
    assert client.put("/rest/b", data=DATA, content_type="text/plain").status_code == 201
    r = client.get("/rest/b/fcr:fixity")
    assert r.status_code == 200, r.data
    assert r.headers["Content-Type"].startswith(TTL)
    node, props = _result(graph(r), f"{ROOT}/b")
    assert node.startswith(f"<{ROOT}/b#")
    assert props[f"<{PREMIS}hasEventOutcome>"] == {'"SUCCESS"'}
    assert props[f"<{PREMIS}hasMessageDigest>"] == {
        f"<urn:sha-512:{hashlib.sha512(DATA).hexdigest()}>"}
    assert props[f"<{PREMIS}hasSize>"] == {f'"{len(DATA)}"^^<{XSD_LONG}>'}
    assert {f"<{PREMIS}Fixity>", f"<{PREMIS}EventOutcomeDetail>"} <= props[
        "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"]
    assert {lk.uri for lk in links(r) if lk.has_rel("type")} == {
        LDP + "Resource", LDP + "RDFSource"}
    assert client.head("/rest/b/fcr:fixity").status_code == 200


def test_fixity_formats(client):
    client.put("/rest/b", data=DATA, content_type="text/plain")
    nt = client.get("/rest/b/fcr:fixity", headers={"Accept": rdfio.N_TRIPLES})
    assert nt.status_code == 200
    assert b'"SUCCESS"' in nt.data
    js = client.get("/rest/b/fcr:fixity", headers={"Accept": "application/ld+json"})
    assert js.status_code == 200
    assert "SUCCESS" in json.dumps(json.loads(js.data))
    assert client.get("/rest/b/fcr:fixity",
                      headers={"Accept": "image/png"}).status_code == 406


def test_fixity_bad_checksum(client, repo):
    client.put("/rest/b", data=DATA, content_type="text/plain")
    digest = hashlib.sha512(DATA).hexdigest()
    rewrite(repo.binaries, digest, DATA + b"corrupted")
    r = client.get("/rest/b/fcr:fixity")
    assert r.status_code == 200
    _node, props = _result(graph(r), f"{ROOT}/b")
    assert props[f"<{PREMIS}hasEventOutcome>"] == {'"BAD_CHECKSUM"'}
    assert props[f"<{PREMIS}hasSize>"] == {f'"{len(DATA) + 9}"^^<{XSD_LONG}>'}
    assert props[f"<{PREMIS}hasMessageDigest>"] == {
        f"<urn:sha-512:{hashlib.sha512(DATA + b'corrupted').hexdigest()}>"}


def test_fixity_only_on_binaries(client):
    put_ttl(client, "/rest/c", '<> <http://purl.org/dc/terms/title> "c" .')
    r = client.get("/rest/c/fcr:fixity")
    assert r.status_code == 404
    assert b"not a binary" in r.data
    assert client.get("/rest/fcr:fixity").status_code == 404       # the root
    assert client.get("/rest/missing/fcr:fixity").status_code == 404
    client.put("/rest/b", data=DATA, content_type="text/plain")
    assert client.get("/rest/b/fcr:metadata/fcr:fixity").status_code == 404
    assert client.get("/rest/b/fcr:fixity/x").status_code == 404


def test_fixity_of_deleted_binary_is_410(client):
    client.put("/rest/b", data=DATA, content_type="text/plain")
    assert client.delete("/rest/b").status_code == 204
    r = client.get("/rest/b/fcr:fixity")
    assert r.status_code == 410
    assert "hasTombstone" in r.headers["Link"]


@pytest.mark.parametrize("method", ["PUT", "POST", "PATCH", "DELETE"])
def test_fixity_other_methods_405(client, repo, method, state):
    client.put("/rest/b", data=DATA, content_type="text/plain")
    before = state(repo)
    r = client.open("/rest/b/fcr:fixity", method=method, data=b"x", content_type="text/plain")
    assert r.status_code == 405
    assert r.headers["Allow"] == "GET, HEAD, OPTIONS"
    assert state(repo) == before


def test_fixity_options(client):
    client.put("/rest/b", data=DATA, content_type="text/plain")
    r = client.options("/rest/b/fcr:fixity")
    assert r.status_code == 200
    assert r.headers["Allow"] == "GET, HEAD, OPTIONS"
