"""Versions over HTTP with ``versioning.auto`` (Fedora 6): a memento per change,
POST with ``Memento-Datetime`` (Fedora API 4.3.3), DELETE of a memento (4.2.6),
and Archival Groups."""
from __future__ import annotations

import pytest

from .conftest import FCREPO, LDP, MEMENTO, NT, TTL, link_targets, put_ttl, types

AG = FCREPO + "ArchivalGroup"
AG_LINK = f'<{AG}>; rel="type"'
TITLE = "<http://purl.org/dc/terms/title>"


@pytest.fixture
def app(make_app, app_config, clock):
    """The app on a clock the tests move on (``clock.advance()``: the next second,
    since Memento datetimes have a one-second resolution)."""
    return make_app(clock=clock, **app_config)


def memento_uris(client, path):
    r = client.get(path + "/fcr:versions", headers={"Accept": "application/link-format"})
    assert r.status_code == 200
    return [part.split(">")[0].lstrip("<\n ") for part in r.get_data(as_text=True).split(",")
            if 'rel="memento"' in part or "memento\"" in part or " memento" in part]


def version_ids(repo, uid):
    return [v.id for v in repo.versions(uid)]


def body_of(client, uri):
    return client.get(uri, headers={"Accept": NT}).get_data(as_text=True)


def test_fedora_4_1_every_change_makes_a_memento(client, repo, clock):
    put_ttl(client, "/rest/a", f'<> {TITLE} "one" .')
    (first,) = version_ids(repo, "/a")
    clock.advance()
    put_ttl(client, "/rest/a", f'<> {TITLE} "two" .')
    clock.advance()
    r = client.patch("/rest/a", data=f'INSERT DATA {{ <> {TITLE} "three" }}'.encode(),
                     content_type="application/sparql-update")
    assert r.status_code == 204
    ids = version_ids(repo, "/a")
    assert len(ids) == 3 and ids[0] == first
    uris = memento_uris(client, "/rest/a")
    assert [u.rsplit("/", 1)[1] for u in uris] == ids
    assert '"one"' in body_of(client, uris[0]) and '"two"' not in body_of(client, uris[0])
    assert '"three"' in body_of(client, uris[2])
    # the TimeGate finds the newest memento
    r = client.get("/rest/a", headers={"Accept-Datetime": "Sat, 01 Jan 2050 00:00:00 GMT"})
    assert r.status_code == 302 and r.headers["Location"] == uris[2]


def test_fedora_4_1_binary_content_and_description_changes_make_mementos(client, repo, clock):
    assert client.put("/rest/b", data=b"old", content_type="text/plain").status_code == 201
    clock.advance()
    assert client.put("/rest/b", data=b"new", content_type="text/plain").status_code == 204
    clock.advance()
    r = client.put("/rest/b/fcr:metadata", data=f'<> {TITLE} "described" .'.encode(),
                   content_type=TTL)
    assert r.status_code == 204
    v1, v2, v3 = version_ids(repo, "/b")
    assert client.get(f"/rest/b/fcr:versions/{v1}").data == b"old"
    assert client.get(f"/rest/b/fcr:versions/{v2}").data == b"new"
    assert '"described"' in body_of(client, f"/rest/b/fcr:metadata/fcr:versions/{v3}")


def test_fedora_4_3_3_post_with_memento_datetime_imports_a_version(client, repo, state):
    put_ttl(client, "/rest/a", f'<> {TITLE} "now" .')
    r = client.post("/rest/a/fcr:versions", data=f'<> {TITLE} "then" .'.encode(),
                    content_type=TTL,
                    headers={"Memento-Datetime": "Sat, 01 Jan 2000 10:20:30 GMT"})
    assert r.status_code == 201, r.data
    assert r.headers["Location"] == "http://localhost/rest/a/fcr:versions/20000101102030"
    m = client.get(r.headers["Location"], headers={"Accept": NT})
    assert m.status_code == 200 and '"then"' in m.get_data(as_text=True)
    assert m.headers["Memento-Datetime"] == "Sat, 01 Jan 2000 10:20:30 GMT"
    assert '"now"' in body_of(client, "/rest/a")
    assert memento_uris(client, "/rest/a")[0] == r.headers["Location"]
    before = state(repo)
    again = client.post("/rest/a/fcr:versions", data=f'<> {TITLE} "x" .'.encode(),
                        content_type=TTL,
                        headers={"Memento-Datetime": "Sat, 01 Jan 2000 10:20:30 GMT"})
    assert again.status_code == 409 and "already has a version" in again.get_data(as_text=True)
    assert link_targets(again, LDP + "constrainedBy")[0].endswith("#versions")
    assert state(repo) == before


def test_fedora_4_3_3_post_with_memento_datetime_and_no_body(client, repo):
    put_ttl(client, "/rest/a", f'<> {TITLE} "now" .')
    r = client.post("/rest/a/fcr:versions",
                    headers={"Memento-Datetime": "Mon, 03 Jan 2000 00:00:00 GMT"})
    assert r.status_code == 201
    assert '"now"' in body_of(client, r.headers["Location"])


def test_fedora_4_3_3_post_with_memento_datetime_of_a_binary(client, repo, state):
    client.put("/rest/b", data=b"now", content_type="text/plain")
    r = client.post("/rest/b/fcr:versions", data=b"then", content_type="text/csv",
                    headers={"Memento-Datetime": "Sat, 01 Jan 2000 00:00:00 GMT"})
    assert r.status_code == 201
    m = client.get(r.headers["Location"])
    assert m.data == b"then" and m.headers["Content-Type"].startswith("text/csv")
    assert client.get("/rest/b").data == b"now"
    before = state(repo)
    r = client.post("/rest/b/fcr:versions", data=b"x",
                    headers={"Memento-Datetime": "Sun, 02 Jan 2000 00:00:00 GMT",
                             "Content-Type": ""})
    assert r.status_code == 415 and "Content-Type" in r.get_data(as_text=True)
    r = client.post("/rest/b/fcr:metadata/fcr:versions", data=f'<> {TITLE} "d" .'.encode(),
                    content_type=TTL,
                    headers={"Memento-Datetime": "Sun, 02 Jan 2000 00:00:00 GMT"})
    assert r.status_code == 415 and "/rest/b/fcr:versions" in r.get_data(as_text=True)
    assert state(repo) == before
    r = client.post("/rest/b/fcr:metadata/fcr:versions",
                    headers={"Memento-Datetime": "Sun, 02 Jan 2000 00:00:00 GMT"})
    assert r.status_code == 201
    assert r.headers["Location"].endswith("/rest/b/fcr:metadata/fcr:versions/20000102000000")
    assert client.get("/rest/b/fcr:versions/20000102000000").data == b"now"


def test_fedora_4_3_3_bad_memento_datetime_is_refused(client, repo, state):
    put_ttl(client, "/rest/a")
    before = state(repo)
    for value, status, words in (
            ("yesterday", 400, "not an HTTP date"),
            ("2000-01-01T00:00:00Z", 400, "not an HTTP date"),
            ("", 400, "not an HTTP date"),
            ("Fri, 01 Jan 2100 00:00:00 GMT", 400, "in the future")):
        r = client.post("/rest/a/fcr:versions", data=f'<> {TITLE} "x" .'.encode(),
                        content_type=TTL, headers={"Memento-Datetime": value})
        assert r.status_code == status, value
        assert words in r.get_data(as_text=True), value
        assert link_targets(r, LDP + "constrainedBy")
    r = client.post("/rest/a/fcr:versions", data=b"bytes", content_type="text/plain",
                    headers={"Memento-Datetime": "Sat, 01 Jan 2000 00:00:00 GMT"})
    assert r.status_code == 415 and "RDF" in r.get_data(as_text=True)
    r = client.post("/rest/a/fcr:versions", data=b"<> <x", content_type=TTL,
                    headers={"Memento-Datetime": "Sat, 01 Jan 2000 00:00:00 GMT"})
    assert r.status_code == 400
    r = client.post("/rest/missing/fcr:versions", data=b"", content_type=TTL,
                    headers={"Memento-Datetime": "Sat, 01 Jan 2000 00:00:00 GMT"})
    assert r.status_code == 404
    assert state(repo) == before


def test_fedora_4_2_6_delete_of_a_memento(client, repo, state, clock):
    put_ttl(client, "/rest/a", f'<> {TITLE} "one" .')
    clock.advance()
    put_ttl(client, "/rest/a", f'<> {TITLE} "two" .')
    first, second = memento_uris(client, "/rest/a")
    assert client.options(first).headers["Allow"] == "GET, HEAD, OPTIONS, DELETE"
    r = client.delete(first)
    assert r.status_code == 204
    assert client.get(first).status_code == 404
    assert memento_uris(client, "/rest/a") == [second]
    assert '"two"' in body_of(client, "/rest/a")
    before = state(repo)
    assert client.delete(first).status_code == 404
    assert client.delete("/rest/a/fcr:versions/2020").status_code == 404   # not a memento
    assert client.delete("/rest/missing/fcr:versions/20200101000000").status_code == 404
    assert state(repo) == before


def test_fedora6_archival_group(client, repo, clock):
    r = client.put("/rest/ag", data=f'<> {TITLE} "g" .'.encode(), content_type=TTL,
                   headers={"Link": AG_LINK})
    assert r.status_code == 201
    assert AG in types(r)                                # the 201 has the type link
    assert AG in types(client.get("/rest/ag"))
    assert AG in types(client.head("/rest/ag"))
    r = client.post("/rest/ag", data=f'<> {TITLE} "m1" .'.encode(), content_type=TTL,
                    headers={"Slug": "m"})
    assert r.status_code == 201 and AG not in types(client.get("/rest/ag/m"))
    clock.advance()
    put_ttl(client, "/rest/ag/m", f'<> {TITLE} "m2" .')
    group = [u.rsplit("/", 1)[1] for u in memento_uris(client, "/rest/ag")]
    member = [u.rsplit("/", 1)[1] for u in memento_uris(client, "/rest/ag/m")]
    assert len(group) == 2 and member == group         # the group's versions
    assert '"m1"' in body_of(client, f"/rest/ag/m/fcr:versions/{group[0]}")
    assert '"g"' in body_of(client, f"/rest/ag/fcr:versions/{group[1]}")
    assert MEMENTO + "Memento" in types(client.get(f"/rest/ag/fcr:versions/{group[1]}"))


def test_fedora6_archival_groups_refused(client, repo, state):
    client.put("/rest/ag", headers={"Link": AG_LINK})
    put_ttl(client, "/rest/ag/c")
    put_ttl(client, "/rest/plain")
    before = state(repo)
    r = client.put("/rest/ag/c/inner", headers={"Link": AG_LINK})
    assert r.status_code == 409 and "cannot be nested" in r.get_data(as_text=True)
    r = client.post("/rest/ag", headers={"Link": AG_LINK})
    assert r.status_code == 409
    r = client.put("/rest/bin", data=b"x", content_type="text/plain",
                   headers={"Link": AG_LINK})
    assert r.status_code == 400 and "Binary" in r.get_data(as_text=True)
    r = client.post("/rest/", data=b"x", content_type="text/plain", headers={"Link": AG_LINK})
    assert r.status_code == 400
    r = client.put("/rest/plain", headers={"Link": AG_LINK})
    assert r.status_code == 409 and "only when it is created" in r.get_data(as_text=True)
    r = client.put("/rest/new", headers={"Link": '<http://example.org/Thing>; rel="type"'})
    assert r.status_code == 400 and "Invalid interaction model" in r.get_data(as_text=True)
    assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before
    ok = client.put("/rest/ok", headers={"Link": f'<{FCREPO}VersionedResource>; rel="type"'})
    assert ok.status_code == 201                        # accepted and ignored, as Fedora 6
