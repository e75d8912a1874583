"""GET /changes: the change feed as an Activity Streams OrderedCollection, paged by
seq or time, for administrators and messaging.feed_reader only."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from lakesuperior.endpoints import changes as changes_mod
from lakesuperior.messaging.fedora import activity
from tests.auth.conftest import basic, user_file, write_users

TTL = "text/turtle"
ADMIN = basic("root", "root-pass-1")
READER = basic("indexer", "reader-pass-1")
OTHER = basic("alice", "alice-pass-1")


@pytest.fixture(scope="module")
def users_file(tmp_path_factory) -> bytes:
    return user_file(tmp_path_factory.mktemp("users"),
                     [("indexer", "reader-pass-1"), ("alice", "alice-pass-1")],
                     [("root", "root-pass-1")])


@pytest.fixture
def app_config(tmp_path, users_file):
    write_users(tmp_path / "data", users_file)
    return {"auth_enabled": True, "messaging_feed_reader": "indexer"}


@pytest.fixture
def repo(app):
    return app.extensions["lakesuperior"].repository


def _write(repo, n: int) -> None:
    for i in range(n):
        repo.create_or_replace(f"/r{i}", data=b"<> <http://purl.org/dc/terms/title> 'x' .",
                               media_type=TTL)


def test_the_collection_and_its_pages_hold_the_broker_events(client, repo):
    _write(repo, 3)
    r = client.get("/changes", headers=ADMIN)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("application/ld+json")
    coll = r.get_json()
    assert coll["type"] == "OrderedCollection" and coll["totalItems"] == len(list(repo.changes()))
    assert coll["first"] == "http://localhost/changes?since=0"
    page = client.get(coll["first"], headers=ADMIN).get_json()
    assert page["type"] == "OrderedCollectionPage"
    assert page["partOf"] == "http://localhost/changes"
    expected = []
    for c in repo.changes():
        body = activity(c)
        del body["@context"]
        expected.append(body)
    assert page["orderedItems"] == json.loads(json.dumps(expected))
    assert "prev" not in page
    last = list(repo.changes())[-1].seq
    assert page["next"] == f"http://localhost/changes?since={last}"
    head = client.get(page["next"], headers=ADMIN).get_json()
    assert head["orderedItems"] == [] and "next" not in head     # the head: poll it
    assert head["prev"] == "http://localhost/changes?since=0"


def test_pages_follow_each_other_by_next(client, repo, monkeypatch):
    monkeypatch.setattr(changes_mod, "PAGE_SIZE", 2)
    _write(repo, 5)
    seen, url = [], "http://localhost/changes?since=0"
    while True:
        page = client.get(url, headers=ADMIN).get_json()
        if not page["orderedItems"]:
            break
        assert len(page["orderedItems"]) <= 2
        seen += [item["id"] for item in page["orderedItems"]]
        url = page["next"]
    assert seen == [c.id for c in repo.changes()]


def test_since_a_datetime(client, repo):
    _write(repo, 2)
    cut = datetime.now(UTC) + timedelta(milliseconds=5)
    while datetime.now(UTC) <= cut:
        pass
    repo.create_or_replace("/late", data=b"<> <http://purl.org/dc/terms/title> 'x' .",
                           media_type=TTL)
    r = client.get(f"/changes?since={cut.isoformat().replace('+00:00', 'Z')}", headers=ADMIN)
    assert r.status_code == 200
    ids = [i["object"]["id"] for i in r.get_json()["orderedItems"]]
    assert any(i.endswith("/rest/late") for i in ids)
    assert not any(i.endswith("/rest/r0") for i in ids)


@pytest.mark.parametrize("since", ["yesterday", "-1", "12abc", "2024-13-45"])
def test_a_bad_since_is_400(client, since):
    r = client.get(f"/changes?since={since}", headers=ADMIN)
    assert r.status_code == 400
    assert "since" in r.get_data(as_text=True)


def test_a_position_beyond_the_feed_is_410(client, repo):
    _write(repo, 1)
    seq = repo.feed_state()["seq"]
    assert client.get(f"/changes?since={seq}", headers=ADMIN).status_code == 200
    r = client.get(f"/changes?since={seq + 10}", headers=ADMIN)
    assert r.status_code == 410
    assert f"ends at seq {seq}" in r.get_data(as_text=True)


def test_a_position_older_than_the_retention_is_410(make_app):
    """Events dropped by the retention are never skipped silently."""
    app = make_app(auth_enabled=False, messaging_retention_days=0)
    repo = app.extensions["lakesuperior"].repository
    _write(repo, 3)
    feed = repo.feed_state()
    assert feed["first"] != 1                      # the first events are gone
    r = app.test_client().get("/changes?since=0")
    assert r.status_code == 410
    assert "older than the retention" in r.get_data(as_text=True)


def test_who_may_read_the_feed(client):
    assert client.get("/changes").status_code == 401
    assert client.get("/changes", headers=OTHER).status_code == 403
    assert client.get("/changes?since=0", headers=OTHER).status_code == 403
    assert client.get("/changes", headers=READER).status_code == 200
    assert client.get("/changes", headers=ADMIN).status_code == 200


def test_accept(client):
    r = client.get("/changes", headers={**ADMIN, "Accept": "application/activity+json"})
    assert r.status_code == 200 and r.mimetype == "application/activity+json"
    r = client.get("/changes", headers={**ADMIN, "Accept": "text/turtle"})
    assert r.status_code == 406
