"""HTTP transactions (Fedora 6 ``fcr:tx``): the endpoint's statuses and headers,
visibility, commit, rollback, expiry, conflicts, limits, events."""
from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import pytest

from lakesuperior.model.events import changes_after
from tests.clock import FakeClock
from tests.conftest import store_state
from tests.tx.conftest import ROOT, TTL, open_tx

pytestmark = pytest.mark.slow

TITLE = b'<> <http://purl.org/dc/terms/title> "%s" .'
COMMIT_REL = "http://fedora.info/definitions/v4/transaction#commitEndpoint"


def put(client, path, tx=None, title=b"T", **headers):
    if tx is not None:
        headers["Atomic-ID"] = tx
    return client.put(path, data=TITLE % title, content_type=TTL, headers=headers)


def graphs(repo):
    return store_state(repo)["graphs"]


def events(repo):
    with repo.store.read() as txn:
        return changes_after(txn, 0)


def staged_files(repo):
    """What the transactions under the staging directory hold of staged requests: their
    files, but ``data`` only if not empty and ``journal`` only if it holds a request
    (not only the first state of what a transaction read)."""
    root = repo.config.staging_dir
    out = []
    for d, _, fs in os.walk(root):
        for f in fs:
            path = os.path.join(d, f)
            if f in ("meta.json", ".alive") or (f == "data" and not os.path.getsize(path)):
                continue
            if f == "journal":
                with open(path, encoding="utf-8") as fh:
                    if not any("op" in json.loads(line) for line in fh):
                        continue
            out.append(os.path.relpath(path, root))
    return sorted(out)


# --- the endpoint ---------------------------------------------------------------------------

def test_fedora_tx_create_201_location_expires(client, clock):
    r = client.post("/rest/fcr:tx")
    assert r.status_code == 201
    tx = r.headers["Location"]
    assert tx.startswith(ROOT + "/fcr:tx/")
    expires = parsedate_to_datetime(r.headers["Atomic-Expires"]).timestamp()
    assert expires == clock.now + 180
    assert f'<{tx}>; rel="{COMMIT_REL}"' in r.headers["Link"]


def test_fedora_tx_status_204_while_open(client):
    tx = open_tx(client)
    r = client.get(tx)
    assert r.status_code == 204
    assert "Atomic-Expires" in r.headers


def test_fedora_tx_extend_204_new_expiry(client, clock):
    tx = open_tx(client)
    clock.now += 100
    r = client.post(tx)
    assert r.status_code == 204
    assert parsedate_to_datetime(r.headers["Atomic-Expires"]).timestamp() == clock.now + 180
    clock.now += 150          # past the first expiry, within the extended one
    assert client.get(tx).status_code == 204


def test_fedora_tx_unknown_404_on_every_method(client):
    tx = ROOT + "/fcr:tx/" + "0" * 32
    for method in ("get", "post", "put", "delete"):
        r = getattr(client, method)(tx)
        assert r.status_code == 404, method
        assert "No transaction" in r.get_data(as_text=True)
    assert client.get(ROOT + "/fcr:tx/not-an-id").status_code == 404


def test_fedora_tx_committed_410(client):
    tx = open_tx(client)
    assert client.put(tx).status_code == 204
    for method in ("get", "post", "put", "delete"):
        r = getattr(client, method)(tx)
        assert r.status_code == 410, method
        assert "committed" in r.get_data(as_text=True)
        assert "/constraints#transactions>" in r.headers["Link"]


def test_fedora_tx_rolled_back_410(client):
    tx = open_tx(client)
    assert client.delete(tx).status_code == 204
    r = client.put(tx)
    assert r.status_code == 410
    assert "rolled back" in r.get_data(as_text=True)


def test_fedora_tx_expired_410_and_nothing_applied(client, repo, clock):
    before = store_state(repo)
    tx = open_tx(client)
    assert put(client, "/rest/a", tx).status_code == 201
    clock.now += 181
    r = client.put(tx)
    assert r.status_code == 410
    assert "expired" in r.get_data(as_text=True)
    assert client.get("/rest/a").status_code == 404
    assert graphs(repo) == before["graphs"]
    assert staged_files(repo) == []


def test_fedora_tx_atomic_id_unknown_or_closed_409(client, repo):
    before = store_state(repo)
    r = put(client, "/rest/a", ROOT + "/fcr:tx/" + "1" * 32)
    assert r.status_code == 409
    assert "No transaction" in r.get_data(as_text=True)
    tx = open_tx(client)
    client.delete(tx)
    r = put(client, "/rest/a", tx)
    assert r.status_code == 409
    assert "rolled back" in r.get_data(as_text=True)
    assert store_state(repo) == before


def test_fedora_tx_atomic_id_malformed_400(client, repo):
    before = store_state(repo)
    for value in ("nope", "http://localhost/rest/a/" + "1" * 32, ""):
        r = put(client, "/rest/a", value)
        assert r.status_code == 400, value
        assert "Atomic-ID" in r.get_data(as_text=True)
    assert store_state(repo) == before


def test_fedora_tx_atomic_id_bare_id(client):
    tx = open_tx(client)
    assert put(client, "/rest/a", tx.rpartition("/")[2]).status_code == 201
    assert client.get("/rest/a", headers={"Atomic-ID": tx}).status_code == 200


# --- visibility, commit, rollback ------------------------------------------------------------

def test_tx_visibility_in_and_out(client, repo):
    before = store_state(repo)
    tx = open_tx(client)
    assert put(client, "/rest/a", tx, b"inside").status_code == 201
    r = client.get("/rest/a", headers={"Atomic-ID": tx, "Accept": "application/n-triples"})
    assert r.status_code == 200 and b'"inside"' in r.data
    assert client.get("/rest/a").status_code == 404
    assert store_state(repo) == before
    other = open_tx(client)
    assert client.get("/rest/a", headers={"Atomic-ID": other}).status_code == 404


def test_tx_commit_applies_everything(client, repo):
    client.put("/rest/gone", data=b"", content_type=TTL)
    tx = open_tx(client)
    assert put(client, "/rest/a", tx, b"one").status_code == 201
    assert put(client, "/rest/a/b", tx).status_code == 201
    r = client.patch("/rest/a", data=b'INSERT DATA { <> <http://ex.org/p> "x" . }',
                     content_type="application/sparql-update", headers={"Atomic-ID": tx})
    assert r.status_code == 204
    assert client.delete("/rest/gone", headers={"Atomic-ID": tx}).status_code == 204
    assert client.get("/rest/gone").status_code == 200
    assert client.put(tx).status_code == 204
    r = client.get("/rest/a", headers={"Accept": "application/n-triples"})
    assert b'"one"' in r.data and b'"x"' in r.data
    assert client.get("/rest/a/b").status_code == 200
    assert client.get("/rest/gone").status_code == 410
    assert staged_files(repo) == []


def test_tx_request_records_the_time_it_was_sent(make_app, app_config):
    """A request in a transaction records when it was sent (by the repository's
    clock), not when the transaction commits."""
    times = FakeClock(datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC))
    client = make_app(clock=times, **app_config).test_client()
    tx = open_tx(client)
    assert put(client, "/rest/a", tx).status_code == 201
    times.advance(60)
    assert client.put(tx).status_code == 204
    assert client.get("/rest/a").headers["Last-Modified"] == "Tue, 06 May 2031 07:08:09 GMT"


@pytest.mark.both_backends
def test_tx_rollback_leaves_nothing(client, repo):
    before = store_state(repo)
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    client.post("/rest/a", data=b"bytes", content_type="text/plain", headers={"Atomic-ID": tx})
    assert staged_files(repo) != []
    assert client.delete(tx).status_code == 204
    assert graphs(repo) == before["graphs"]
    assert staged_files(repo) == []
    assert client.get("/rest/a").status_code == 404


def test_tx_failed_request_is_not_staged(client, repo):
    tx = open_tx(client)
    r = client.put("/rest/a", data=b"<> <broken", content_type=TTL, headers={"Atomic-ID": tx})
    assert r.status_code == 400
    assert staged_files(repo) == []
    assert client.put(tx).status_code == 204
    assert client.get("/rest/a").status_code == 404


def test_tx_preconditions_checked_against_the_transaction_view(client):
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    etag = client.get("/rest/a", headers={"Atomic-ID": tx}).headers["ETag"]
    r = put(client, "/rest/a", tx, b"new", **{"If-Match": '"nope"'})
    assert r.status_code == 412
    assert put(client, "/rest/a", tx, b"new", **{"If-Match": etag}).status_code == 204
    assert client.put(tx).status_code == 204
    r = client.get("/rest/a", headers={"Accept": "application/n-triples"})
    assert b'"new"' in r.data


#: POSTs of ``test_tx_container_of_many_posts_and_binaries``: each POST to the
#: container runs the staged writes under it again (docs/http.md), so the cost
#: grows with the square of this (100 took about 5 s of CPU, 30 about a tenth).
POSTS = 30


def test_tx_container_of_many_posts_and_binaries(client, repo):
    tx = open_tx(client)
    assert put(client, "/rest/box", tx).status_code == 201
    made = []
    for i in range(POSTS):
        if i % 2:
            r = client.post("/rest/box", data=b"content %d" % i, content_type="text/plain",
                            headers={"Atomic-ID": tx})
        else:
            r = client.post("/rest/box", data=TITLE % b"child", content_type=TTL,
                            headers={"Atomic-ID": tx})
        assert r.status_code == 201, r.get_data(as_text=True)
        made.append(r.headers["Location"])
    assert client.get("/rest/box").status_code == 404
    assert client.put(tx).status_code == 204
    for i, url in enumerate(made):
        r = client.get(url)
        assert r.status_code == 200
        if i % 2:
            assert r.data == b"content %d" % i
    r = client.get("/rest/box", headers={"Accept": "application/n-triples"})
    assert r.data.count(b"http://www.w3.org/ns/ldp#contains") == POSTS


# --- conflicts -----------------------------------------------------------------------------

def test_tx_conflict_409_nothing_applied(client, repo):
    put(client, "/rest/a", title=b"first")
    tx = open_tx(client)
    assert put(client, "/rest/a", tx, b"tx").status_code == 204
    assert put(client, "/rest/b", tx).status_code == 201
    assert put(client, "/rest/a", title=b"outside").status_code == 204
    before = store_state(repo)
    r = client.put(tx)
    assert r.status_code == 409
    assert "changed outside transaction" in r.get_data(as_text=True)
    assert store_state(repo) == before
    assert client.get(tx).status_code == 410


def test_tx_conflict_after_read(client, repo):
    put(client, "/rest/a", title=b"first")
    tx = open_tx(client)
    assert client.get("/rest/a", headers={"Atomic-ID": tx}).status_code == 200
    assert put(client, "/rest/b", tx).status_code == 201
    put(client, "/rest/a", title=b"outside")
    assert client.put(tx).status_code == 409
    assert client.get("/rest/b").status_code == 404


def test_tx_conflict_created_outside(client):
    tx = open_tx(client)
    assert put(client, "/rest/a", tx, b"tx").status_code == 201
    assert put(client, "/rest/a", title=b"outside").status_code == 201
    assert client.put(tx).status_code == 409


def test_tx_others_write_while_open(client):
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    assert put(client, "/rest/other").status_code == 201
    assert client.put(tx).status_code == 204
    assert client.get("/rest/other").status_code == 200


# --- limits --------------------------------------------------------------------------------

def test_tx_limit_open_transactions_409(client):
    for _ in range(3):
        open_tx(client)
    r = client.post("/rest/fcr:tx")
    assert r.status_code == 409
    assert "transactions.max_open" in r.get_data(as_text=True)


def test_tx_limit_operations_409(tmp_path):
    from tests.tx.conftest import tx_app
    app = tx_app(tmp_path / "data", transactions_max_operations=5)
    client = app.test_client()
    tx = open_tx(client)
    for i in range(5):
        assert put(client, f"/rest/r{i}", tx).status_code == 201
    r = put(client, "/rest/r50", tx)
    assert r.status_code == 409
    assert "transactions.max_operations" in r.get_data(as_text=True)
    assert client.get("/rest/r50", headers={"Atomic-ID": tx}).status_code == 404
    assert client.put(tx).status_code == 204
    assert client.get("/rest/r4").status_code == 200
    app.extensions["lakesuperior"].close()


@pytest.mark.both_backends
def test_tx_limit_bytes_413(client, repo):
    tx = open_tx(client)
    r = client.put("/rest/bin", data=b"x" * 10_001, content_type="text/plain",
                   headers={"Atomic-ID": tx})
    assert r.status_code == 413
    assert "transactions.max_bytes" in r.get_data(as_text=True)
    assert staged_files(repo) == []
    assert client.get("/rest/bin", headers={"Atomic-ID": tx}).status_code == 404


# --- events --------------------------------------------------------------------------------

def test_tx_events_at_commit_only(client, repo):
    start = len(events(repo))
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    put(client, "/rest/a/b", tx)
    assert len(events(repo)) == start
    client.delete(tx)
    assert len(events(repo)) == start
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    put(client, "/rest/a/b", tx)
    assert client.put(tx).status_code == 204
    uids = [e.uid for e in events(repo)[start:]]
    assert "/a" in uids and "/a/b" in uids


# --- restart -------------------------------------------------------------------------------

def test_tx_restart_leaves_no_trace(tmp_path):
    from tests.tx.conftest import tx_app
    app = tx_app(tmp_path / "data")
    client = app.test_client()
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    staging = app.extensions["lakesuperior"].staging
    staging.close()          # the process holding the staging directory is gone
    app.extensions["lakesuperior"].repository.close()
    app = tx_app(tmp_path / "data")
    client = app.test_client()
    try:
        assert client.get(tx).status_code == 404
        assert client.get("/rest/a").status_code == 404
        assert staged_files(app.extensions["lakesuperior"].repository) == []
    finally:
        app.extensions["lakesuperior"].close()


def test_tx_atomic_id_of_expired_409(client, repo, clock):
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    clock.now += 181
    r = put(client, "/rest/b", tx)
    assert r.status_code == 409
    assert "expired" in r.get_data(as_text=True)
    assert client.post(tx).status_code == 410


def test_tx_closed_records_forgotten_after_a_day(client, clock):
    tx = open_tx(client)
    client.delete(tx)
    assert client.get(tx).status_code == 410
    clock.now += 86400 + 1
    open_tx(client)            # opening one sweeps the staging directory
    assert client.get(tx).status_code == 404


def test_tx_damaged_record_is_lost_409(client, repo):
    tx = open_tx(client)
    put(client, "/rest/a", tx)
    meta = os.path.join(repo.config.staging_dir, tx.rpartition("/")[2], "meta.json")
    with open(meta, "r+b") as fh:
        fh.truncate(10)
    r = put(client, "/rest/b", tx)
    assert r.status_code == 409
    assert "damaged" in r.get_data(as_text=True)
    assert client.get(tx).status_code == 404
    assert client.get("/rest/a").status_code == 404


def test_tx_commit_after_the_parent_was_deleted_409(client, repo):
    client.put("/rest/p", data=b"", content_type=TTL)
    tx = open_tx(client)
    assert put(client, "/rest/p/c", tx).status_code == 201
    # the parent is deleted outside the transaction: /p/c is now under a tombstone
    client.delete("/rest/p")
    before = store_state(repo)
    r = client.put(tx)
    assert r.status_code == 409
    assert store_state(repo) == before
    assert client.get(tx).status_code == 410


def test_tx_percent_encoded_paths_and_binaries(client):
    tx = open_tx(client)
    r = client.put("/rest/caf%C3%A9", data=b"bytes", content_type="text/plain",
                   headers={"Atomic-ID": tx, "Content-Disposition": 'attachment; filename="a.txt"'})
    assert r.status_code == 201
    assert r.headers["Location"].endswith("/rest/caf%C3%A9")
    r = client.get("/rest/caf%C3%A9", headers={"Atomic-ID": tx})
    assert r.status_code == 200 and r.data == b"bytes"
    assert client.put(tx).status_code == 204
    r = client.get("/rest/caf%C3%A9/fcr:metadata", headers={"Accept": "application/n-triples"})
    assert r.status_code == 200 and b'"a.txt"' in r.data


def test_tx_commit_the_store_refuses_is_rolled_back_under_the_write_lock(
        app, client, repo, monkeypatch):
    """A commit whose store write fails closes the transaction as rolled back,
    under the write lock (as every change of its record), and writes nothing."""
    from lakesuperior.exceptions import StoreBackendError
    from lakesuperior.repository import transactions
    tx = open_tx(client)
    assert put(client, "/rest/refused", tx).status_code == 201
    before = graphs(repo)
    staging = app.extensions["lakesuperior"].staging
    closed = []
    real_finish = staging.finish

    def finish(info, state):
        closed.append((state, repo.in_transaction))
        real_finish(info, state)

    def refuse(*args, **kwargs):
        raise StoreBackendError("LMDB error: the disk refused")

    monkeypatch.setattr(staging, "finish", finish)
    monkeypatch.setattr(transactions.events, "write_outbox", refuse)
    r = client.put(tx.replace(ROOT, "/rest"))
    monkeypatch.undo()
    assert r.status_code >= 500
    assert closed == [("committed", True), ("rolled back", True)]
    assert graphs(repo) == before
    r = client.get(tx.replace(ROOT, "/rest"))
    assert r.status_code == 410 and "rolled back" in r.get_data(as_text=True)
