"""A container's representation over HTTP, its containment written as one object
list (issue 15, deliverable 5): every RDF format carries every child;
``Prefer`` omissions (LDP 7.2.2, Fedora API 3.2.1) leave it out; a PUT or PATCH of
the container's own triples keeps its children (LDP 5.2.4.1: a PUT does not
change containment)."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.endpoints.representation import JSON_LD_OUT

from .conftest import LDP, ROOT, TTL, graph, put_ttl

CONTAINS = f"<{LDP}contains>"
TITLE = "<http://purl.org/dc/terms/title>"
N = 40


@pytest.fixture
def container(client):
    assert put_ttl(client, "/rest/c", f'<> {TITLE} "c" .').status_code == 201
    for i in range(N):
        assert client.put(f"/rest/c/k{i}").status_code == 201
    return {(f"<{ROOT}/c>", CONTAINS, f"<{ROOT}/c/k{i}>") for i in range(N)}


def _contains(triples: set) -> set:
    return {t for t in triples if t[1] == CONTAINS}


@pytest.mark.parametrize("media_type", [TTL, rdfio.N_TRIPLES, rdfio.RDF_XML, *JSON_LD_OUT])
def test_ldp_containment_in_every_format(client, container, media_type):
    resp = client.get("/rest/c", headers={"Accept": media_type})
    assert resp.status_code == 200
    got = set(rdfio.parse(resp.data, media_type, ROOT + "/c"))
    assert _contains(got) == container
    assert (f"<{ROOT}/c>", TITLE, '"c"') in got


@pytest.mark.parametrize("prefer", [
    f'return=representation; omit="{LDP}PreferContainment"',
    f'return=representation; include="{LDP}PreferMinimalContainer"',
    "return=minimal"])
def test_ldp_7_2_2_prefer_omits_containment(client, container, prefer):
    resp = client.get("/rest/c", headers={"Accept": TTL, "Prefer": prefer})
    assert resp.status_code == 200 and resp.headers["Preference-Applied"]
    got = graph(resp, ROOT + "/c")
    assert not _contains(got) and (f"<{ROOT}/c>", TITLE, '"c"') in got


def test_ldp_5_2_4_1_put_and_patch_keep_the_children(client, container):
    etag = client.get("/rest/c").headers["ETag"]
    resp = put_ttl(client, "/rest/c", f'<> {TITLE} "d" .')
    assert resp.status_code == 204
    got = graph(client.get("/rest/c", headers={"Accept": TTL}), ROOT + "/c")
    assert _contains(got) == container and (f"<{ROOT}/c>", TITLE, '"d"') in got
    resp = client.patch("/rest/c", data=f'INSERT DATA {{ <> {TITLE} "e" }}'.encode(),
                        content_type="application/sparql-update")
    assert resp.status_code == 204
    resp = client.get("/rest/c", headers={"Accept": TTL})
    assert resp.headers["ETag"] != etag
    got = graph(resp, ROOT + "/c")
    assert _contains(got) == container and (f"<{ROOT}/c>", TITLE, '"e"') in got
