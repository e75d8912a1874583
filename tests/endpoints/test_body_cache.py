"""Cached RDF bodies (``endpoints/body_cache.py``, ``http.body_cache``): a GET of
an unchanged store answers with the body kept, and never with one that a write
has made stale."""
from __future__ import annotations

import pytest

from lakesuperior.config import Config
from lakesuperior.endpoints.body_cache import BodyCache, Kept
from lakesuperior.endpoints.paths import Target
from lakesuperior.exceptions import ConfigError
from tests.tx.conftest import open_tx

TTL = "text/turtle"
NT = "application/n-triples"
JSON_LD = "http://www.w3.org/ns/json-ld"
TITLE = '<> <http://purl.org/dc/terms/title> "%s" .'


def bodies(app) -> BodyCache:
    return app.extensions["lakesuperior"].bodies


def get(client, path="/rest/a", accept=TTL, **headers):
    r = client.get(path, headers={"Accept": accept, **headers})
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_data()


# --- the cache --------------------------------------------------------------------------------

def kept(body: bytes, etag: str = '"e"') -> Kept:
    return Kept(body, {"ETag": etag}, None)


def test_an_answer_is_kept_once_per_key():
    cache = BodyCache(1000)
    assert cache.get(("k",)) is None
    cache.keep(("k",), kept(b"one"))
    cache.keep(("k",), kept(b"two"))                 # the first one stays
    assert cache.get(("k",)).body == b"one"
    assert len(cache) == 1 and cache.size == 3 + len("ETag") + len('"e"')


def test_no_key_or_no_room_keeps_nothing():
    cache = BodyCache(1000)
    cache.keep(None, kept(b"x"))
    assert len(cache) == 0 and cache.get(None) is None
    off = BodyCache(0)
    off.keep(("k",), kept(b"x"))
    assert len(off) == 0 and off.get(("k",)) is None


def test_least_recently_used_answers_go_first_and_large_ones_are_not_kept():
    cache = BodyCache(800)                      # answers of up to 100 bytes kept
    headers = len("ETag") + len('"e"')
    cache.keep(("a",), kept(b"a" * (100 - headers)))
    cache.keep(("big",), kept(b"b" * (101 - headers)))
    assert len(cache) == 1
    for name in "bcdefgh":
        cache.keep((name,), kept(b"x" * (100 - headers)))
    assert cache.size == 800
    assert cache.get(("a",)) is not None        # used: now the most recent
    cache.keep(("i",), kept(b"i" * (100 - headers)))
    assert cache.size <= 800 and cache.get(("a",)).body.startswith(b"a")
    assert cache.get(("b",)) is None            # the oldest went


def test_key_names_the_state_the_resource_and_the_representation():
    target = Target("/a")
    key = BodyCache.key(7, target, "http://h/rest", TTL, None)
    assert key == BodyCache.key(7, Target("/a"), "http://h/rest", TTL, {})
    others = [BodyCache.key(8, target, "http://h/rest", TTL, None),
              BodyCache.key(7, Target("/b"), "http://h/rest", TTL, None),
              BodyCache.key(7, Target("/a", "description"), "http://h/rest", TTL, None),
              BodyCache.key(7, target, "http://other/rest", TTL, None),
              BodyCache.key(7, target, "http://h/rest", NT, None),
              BodyCache.key(7, target, "http://h/rest", TTL, {"incl_children": False})]
    assert None not in others and len({key, *others}) == 7


@pytest.mark.parametrize("snapshot, options", [
    (None, None),                                  # read in a write transaction
    (7, {"incl_inbound": True}),                   # filtered per agent
    (7, {"embed_children": True}),
])
def test_views_that_may_not_be_kept_have_no_key(snapshot, options):
    assert BodyCache.key(snapshot, Target("/a"), "http://h/rest", TTL, options) is None


def test_the_bound_is_configured():
    assert Config().http_body_cache == 8 << 20
    assert Config().with_(http_body_cache=0).http_body_cache == 0
    with pytest.raises(ConfigError, match="http.body_cache must be 0"):
        Config().with_(http_body_cache=-1)


def test_a_snapshot_id_names_the_last_write_it_sees(repo):
    repo.create_or_replace("/a", data=TITLE.encode() % b"1", media_type=TTL)
    assert repo.snapshot_id() is None                  # outside a snapshot
    with repo.snapshot():
        first = repo.snapshot_id()
        with repo.snapshot():                          # the same snapshot
            assert repo.snapshot_id() == first is not None
    with repo.snapshot():
        assert repo.snapshot_id() == first             # nothing written since
    repo.create_or_replace("/b", data=b"", media_type=TTL)
    with repo.snapshot():
        assert repo.snapshot_id() > first
    with repo.transaction(), repo.snapshot():
        assert repo.snapshot_id() is None


# --- over HTTP ----------------------------------------------------------------------------------

def test_a_second_get_is_answered_from_the_cache(app, client):
    client.put("/rest/a", data=TITLE % "one", content_type=TTL)
    body = get(client)
    assert len(bodies(app)) == 1
    assert get(client) == body and len(bodies(app)) == 1
    assert b'"one"' in body


def test_every_write_makes_the_next_get_read_again(app, client):
    client.put("/rest/a", data=TITLE % "one", content_type=TTL)
    assert b'"one"' in get(client)
    # a write elsewhere changes this container's containment
    assert client.put("/rest/a/child", data=b"", content_type=TTL).status_code == 201
    assert b"/rest/a/child>" in get(client)
    r = client.patch("/rest/a", content_type="application/sparql-update",
                     data=b'DELETE DATA { <> <http://purl.org/dc/terms/title> "one" } ;'
                          b'INSERT DATA { <> <http://purl.org/dc/terms/title> "two" }')
    assert r.status_code == 204
    body = get(client)
    assert b'"two"' in body and b'"one"' not in body
    assert client.delete("/rest/a/child").status_code == 204
    assert b"/rest/a/child>" not in get(client)


def test_each_representation_has_its_own_body(app, client):
    client.put("/rest/a", data=TITLE % "one", content_type=TTL)
    client.put("/rest/a/child", data=b"", content_type=TTL)
    turtle, nt = get(client), get(client, accept=NT)
    omit = get(client, Prefer='return=representation; '
                              'omit="http://www.w3.org/ns/ldp#PreferContainment"')
    other_host = get(client, Host="example.org")
    assert len({turtle, nt, omit, other_host}) == 4
    assert b"ldp#contains" not in omit and b"/rest/a/child" not in omit
    assert b"<http://example.org/rest/a>" in other_host
    assert len(bodies(app)) == 4
    assert get(client, accept=NT) == nt and get(client, Host="example.org") == other_host
    profiles = {p: get(client, accept=f'application/ld+json; profile="{JSON_LD}#{p}"')
                for p in ("compacted", "expanded", "flattened")}
    assert len(set(profiles.values())) == 3 and len(bodies(app)) == 7
    assert get(client, accept=f'application/ld+json; profile="{JSON_LD}#expanded"') \
        == profiles["expanded"]


def test_a_transaction_sees_its_own_writes_not_a_kept_body(app, client):
    client.put("/rest/a", data=TITLE % "one", content_type=TTL)
    before = get(client)
    tx = open_tx(client)
    assert client.put("/rest/a", data=TITLE % "two", content_type=TTL,
                      headers={"Atomic-ID": tx}).status_code == 204
    assert b'"two"' in get(client, **{"Atomic-ID": tx})
    assert get(client) == before


def test_a_kept_answer_has_the_headers_and_validators_of_a_read_one(app, client):
    client.put("/rest/a", data=TITLE % "one", content_type=TTL)
    prefer = {"Prefer": 'return=representation; omit="http://www.w3.org/ns/ldp#PreferContainment"'}
    read, again = (client.get("/rest/a", headers={"Accept": TTL, **prefer}) for _ in range(2))
    assert len(bodies(app)) == 1
    drop = {"Date"}
    assert {k: v for k, v in read.headers.items() if k not in drop} == \
        {k: v for k, v in again.headers.items() if k not in drop}
    assert again.headers["Preference-Applied"] == "return=representation"
    assert again.headers["Content-Type"].startswith(TTL) and again.get_data() == read.get_data()
    plain = client.get("/rest/a", headers={"Accept": TTL})      # its own key and headers
    assert "Preference-Applied" not in plain.headers and len(bodies(app)) == 2
    etag, modified = read.headers["ETag"], read.headers["Last-Modified"]
    assert client.get("/rest/a", headers={"Accept": TTL, "If-None-Match": etag,
                                          **prefer}).status_code == 304
    assert client.get("/rest/a", headers={"Accept": TTL, "If-Modified-Since": modified,
                                          **prefer}).status_code == 304
    assert client.get("/rest/a", headers={"Accept": TTL, "If-Match": '"other"',
                                          **prefer}).status_code == 412
    assert client.get("/rest/a", headers={"Accept": "image/png"}).status_code == 406


@pytest.mark.parametrize("app_config", [{"auth_enabled": False, "http_body_cache": 0}])
def test_a_zero_bound_keeps_nothing(app, client):
    client.put("/rest/a", data=TITLE % "one", content_type=TTL)
    assert get(client) == get(client) and len(bodies(app)) == 0
