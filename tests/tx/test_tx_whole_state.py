"""Requests inside a transaction see the whole of its state: membership triples its
writes cause elsewhere in the tree, resources it created on another branch."""
from __future__ import annotations

import pytest

from tests.conftest import store_state
from tests.tx.conftest import ROOT, TTL, open_tx, tx_app

LDP = "http://www.w3.org/ns/ldp#"
NT = "application/n-triples"
MEMBER = f"<{ROOT}/dc/m1> .".encode()


def _in(tx, **headers):
    return {"Atomic-ID": tx, **headers}


def _membership(client, tx):
    """In ``tx``: ``/mr`` (outside the tree of ``/dc``), the direct container ``/dc``
    with ``/mr`` as membership resource, and its member ``/dc/m1``."""
    assert client.put("/rest/mr", data=b"", content_type=TTL,
                      headers=_in(tx)).status_code == 201
    body = (f"@prefix ldp: <{LDP}> . <> ldp:membershipResource <{ROOT}/mr> ; "
            "ldp:hasMemberRelation ldp:member .").encode()
    r = client.put("/rest/dc", data=body, content_type=TTL,
                   headers=_in(tx, Link=f'<{LDP}DirectContainer>; rel="type"'))
    assert r.status_code == 201, r.get_data(as_text=True)
    assert client.put("/rest/dc/m1", data=b"", content_type=TTL,
                      headers=_in(tx)).status_code == 201


def test_ldp_5_4_tx_read_sees_membership_caused_elsewhere(client, repo):
    tx = open_tx(client)
    _membership(client, tx)
    before = store_state(repo)
    r = client.get("/rest/mr", headers=_in(tx, Accept=NT))
    assert r.status_code == 200
    assert f"<{ROOT}/mr> <{LDP}member> ".encode() + MEMBER in r.data
    head = client.head("/rest/mr", headers=_in(tx))
    assert head.status_code == 200 and head.headers["ETag"] == r.headers["ETag"]
    assert store_state(repo) == before   # reads inside change nothing
    assert client.get("/rest/mr").status_code == 404
    assert client.put(tx).status_code == 204
    assert MEMBER in client.get("/rest/mr", headers={"Accept": NT}).data


def test_tx_write_precondition_on_membership_target_sees_whole_state(client):
    tx = open_tx(client)
    _membership(client, tx)
    etag = client.get("/rest/mr", headers=_in(tx)).headers["ETag"]
    r = client.put("/rest/mr", data=b'<> <http://ex.org/p> "x" .', content_type=TTL,
                   headers=_in(tx, **{"If-Match": etag}))
    assert r.status_code == 204, r.get_data(as_text=True)
    r = client.put("/rest/mr", data=b"", content_type=TTL,
                   headers=_in(tx, **{"If-Match": '"stale"'}))
    assert r.status_code == 412
    assert client.put(tx).status_code == 204
    assert b'"x"' in client.get("/rest/mr", headers={"Accept": NT}).data


@pytest.fixture
def strict(tmp_path):
    app = tx_app(tmp_path / "data", referential_integrity="strict")
    yield app
    app.extensions["lakesuperior"].close()


def test_tx_strict_referential_integrity_sees_other_branch(strict):
    client = strict.test_client()
    repo = strict.extensions["lakesuperior"].repository
    tx = open_tx(client)
    assert client.put("/rest/a/target", data=b"", content_type=TTL,
                      headers=_in(tx)).status_code == 201
    link = f"<> <http://ex.org/see> <{ROOT}/a/target> .".encode()
    r = client.put("/rest/b/ref", data=link, content_type=TTL, headers=_in(tx))
    assert r.status_code == 201, r.get_data(as_text=True)
    before = store_state(repo)
    dangling = f"<> <http://ex.org/see> <{ROOT}/a/nothing> .".encode()
    r = client.put("/rest/b/bad", data=dangling, content_type=TTL, headers=_in(tx))
    assert r.status_code == 409 and b"a/nothing" in r.data
    assert client.get("/rest/b/bad", headers=_in(tx)).status_code == 404   # not staged
    assert store_state(repo) == before
    assert client.put(tx).status_code == 204
    assert f"<{ROOT}/a/target>".encode() in client.get(
        "/rest/b/ref", headers={"Accept": NT}).data
    assert client.get("/rest/b/bad").status_code == 404


def test_tx_lenient_referential_integrity_keeps_link_to_other_branch(tmp_path):
    app = tx_app(tmp_path / "data", referential_integrity="lenient")
    client = app.test_client()
    try:
        tx = open_tx(client)
        assert client.put("/rest/a/target", data=b"", content_type=TTL,
                          headers=_in(tx)).status_code == 201
        link = f"<> <http://ex.org/see> <{ROOT}/a/target> .".encode()
        r = client.put("/rest/b/ref", data=link, content_type=TTL, headers=_in(tx))
        assert r.status_code == 201 and "Lakesuperior-Dropped-Triples" not in r.headers
        assert client.put(tx).status_code == 204
        assert f"<{ROOT}/a/target>".encode() in client.get(
            "/rest/b/ref", headers={"Accept": NT}).data
    finally:
        app.extensions["lakesuperior"].close()


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_tx_sparql_with_atomic_id_400(client, repo, method):
    tx = open_tx(client)
    assert client.put("/rest/a", data=b"", content_type=TTL,
                      headers=_in(tx)).status_code == 201
    before = store_state(repo)
    query = "SELECT * WHERE { ?s ?p ?o }"
    headers = _in(tx, Accept="application/sparql-results+json")
    if method == "GET":
        r = client.get("/query/sparql", query_string={"query": query}, headers=headers)
    else:
        r = client.post("/query/sparql", data={"query": query}, headers=headers)
    assert r.status_code == 400
    assert b"do not take part in HTTP transactions" in r.data
    assert store_state(repo) == before
    assert client.put(tx).status_code == 204   # the transaction is untouched
    r = client.get("/query/sparql", query_string={"query": query},
                   headers={"Accept": "application/sparql-results+json"})
    assert r.status_code == 200
