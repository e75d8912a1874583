"""What a transaction leaves on disk: nothing of its staged requests once it is
rolled back, expired or committed, a large binary body included."""
from __future__ import annotations

import os

import pytest

from tests.apps import close_app
from tests.conftest import store_state
from tests.tx.conftest import Clock, open_tx, tx_app

BIG = os.urandom((1 << 20) + 100)   # past KEEP_IN_MEMORY: staged in a file of its own


@pytest.fixture
def big_app(tmp_path):
    clock = Clock()
    app = tx_app(tmp_path / "data", transactions_max_bytes=8 << 20)
    app.extensions["lakesuperior"].staging.clock = clock
    app.clock = clock
    yield app
    close_app(app)


def tx_files(app, tx: str) -> list[str]:
    root = app.extensions["lakesuperior"].repository.config.staging_dir
    return sorted(os.listdir(os.path.join(root, tx.rpartition("/")[2])))


def put_big(client, tx: str):
    return client.put("/rest/big", data=BIG, content_type="application/octet-stream",
                      headers={"Atomic-ID": tx})


def test_tx_rollback_removes_a_large_staged_body(big_app):
    client = big_app.test_client()
    repo = big_app.extensions["lakesuperior"].repository
    before = store_state(repo)
    tx = open_tx(client)
    assert put_big(client, tx).status_code == 201
    assert len([f for f in tx_files(big_app, tx) if f.endswith(".body")]) == 1
    assert client.get("/rest/big", headers={"Atomic-ID": tx}).data == BIG
    assert client.delete(tx).status_code == 204
    assert tx_files(big_app, tx) == ["meta.json"]
    assert store_state(repo)["graphs"] == before["graphs"]
    assert client.get("/rest/big").status_code == 404


def test_tx_commit_of_a_large_body_and_nothing_left(big_app):
    client = big_app.test_client()
    tx = open_tx(client)
    assert put_big(client, tx).status_code == 201
    assert client.put(tx).status_code == 204
    assert tx_files(big_app, tx) == ["meta.json"]
    assert client.get("/rest/big").data == BIG


def test_tx_expired_unlooked_at_is_swept_by_another_request(big_app):
    client = big_app.test_client()
    old = open_tx(client)
    assert put_big(client, old).status_code == 201
    big_app.clock.now += 100
    young = open_tx(client)
    big_app.clock.now += 90          # ``old`` expired and nobody asked about it
    r = client.put("/rest/x", data=b"", content_type="text/turtle",
                   headers={"Atomic-ID": young})
    assert r.status_code == 201
    assert tx_files(big_app, old) == ["meta.json"]
    assert client.get(old).status_code == 410
