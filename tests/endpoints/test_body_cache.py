"""Cached RDF bodies (``endpoints/body_cache.py``, ``http.body_cache``): a GET of
an unchanged store answers with the body kept, and never with one that a write
has made stale."""
from __future__ import annotations

import pytest

from lakesuperior.config import Config
from lakesuperior.endpoints.body_cache import BodyCache
from lakesuperior.endpoints.paths import Target
from lakesuperior.exceptions import ConfigError
from tests.tx.conftest import open_tx

TTL = "text/turtle"
NT = "application/n-triples"
JSON_LD = "http://www.w3.org/ns/json-ld"
TITLE = '<> <http://purl.org/dc/terms/title> "%s" .'


class Res:
    """A view as ``BodyCache.key`` reads it."""

    def __init__(self, snapshot):
        self.snapshot = snapshot


def bodies(app) -> BodyCache:
    return app.extensions["lakesuperior"].bodies


def get(client, path="/rest/a", accept=TTL, **headers):
    r = client.get(path, headers={"Accept": accept, **headers})
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_data()


# --- the cache --------------------------------------------------------------------------------

def test_a_body_is_made_once_per_key():
    cache, made = BodyCache(1000), []

    def make(body):
        return lambda: made.append(body) or body
    assert cache.body(("k",), make(b"one")) == b"one"
    assert cache.body(("k",), make(b"two")) == b"one"
    assert made == [b"one"] and len(cache) == 1 and cache.size == 3


def test_no_key_or_no_room_keeps_nothing():
    cache = BodyCache(1000)
    assert cache.body(None, lambda: b"x") == b"x" and len(cache) == 0
    off = BodyCache(0)
    assert off.body(("k",), lambda: b"x") == b"x" and len(off) == 0


def test_least_recently_used_bodies_go_first_and_large_ones_are_not_kept():
    cache = BodyCache(800)                          # bodies of up to 100 bytes kept
    cache.body(("a",), lambda: b"a" * 100)
    cache.body(("big",), lambda: b"b" * 101)
    assert len(cache) == 1
    for name in "bcdefgh":
        cache.body((name,), lambda: b"x" * 100)
    assert cache.size == 800
    cache.body(("a",), lambda: b"?")                # used: now the most recent
    cache.body(("i",), lambda: b"i" * 100)
    assert cache.size <= 800 and cache.body(("a",), lambda: b"?") == b"a" * 100
    assert cache.body(("b",), lambda: b"new") == b"new"      # the oldest went


def test_key_names_the_state_the_resource_and_the_representation():
    target = Target("/a")
    key = BodyCache.key(Res(7), target, "http://h/rest", TTL, None)
    assert key == BodyCache.key(Res(7), Target("/a"), "http://h/rest", TTL, {})
    others = [BodyCache.key(Res(8), target, "http://h/rest", TTL, None),
              BodyCache.key(Res(7), Target("/b"), "http://h/rest", TTL, None),
              BodyCache.key(Res(7), Target("/a", "description"), "http://h/rest", TTL, None),
              BodyCache.key(Res(7), target, "http://other/rest", TTL, None),
              BodyCache.key(Res(7), target, "http://h/rest", NT, None),
              BodyCache.key(Res(7), target, "http://h/rest", TTL, {"incl_children": False})]
    assert None not in others and len({key, *others}) == 7


@pytest.mark.parametrize("res, options", [
    (Res(None), None),                                 # read in a write transaction
    (object(), None),                                  # a view without a snapshot
    (Res(7), {"incl_inbound": True}),                  # filtered per agent
    (Res(7), {"embed_children": True}),
])
def test_views_that_may_not_be_kept_have_no_key(res, options):
    assert BodyCache.key(res, Target("/a"), "http://h/rest", TTL, options) is None


def test_the_bound_is_configured():
    assert Config().http_body_cache == 8 << 20
    assert Config().with_(http_body_cache=0).http_body_cache == 0
    with pytest.raises(ConfigError, match="http.body_cache must be 0"):
        Config().with_(http_body_cache=-1)


def test_a_snapshot_names_the_last_write_it_sees(repo):
    repo.create_or_replace("/a", data=TITLE.encode() % b"1", media_type=TTL)
    first, again = repo.get("/a"), repo.get("/a")
    assert first.snapshot is not None and again.snapshot == first.snapshot
    repo.create_or_replace("/b", data=b"", media_type=TTL)
    assert repo.get("/a").snapshot > first.snapshot
    with repo.transaction():
        assert repo.get("/a").snapshot is None


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


@pytest.mark.parametrize("app_config", [{"auth_enabled": False, "http_body_cache": 0}])
def test_a_zero_bound_keeps_nothing(app, client):
    client.put("/rest/a", data=TITLE % "one", content_type=TTL)
    assert get(client) == get(client) and len(bodies(app)) == 0
