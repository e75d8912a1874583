"""Automatic versions (``versioning.auto``, Fedora 6), their shared storage, imported
and deleted versions, and Archival Groups, through the Python API."""
from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest

from lakesuperior.exceptions import (
    ArchivalGroupError,
    IncompatibleLdpTypeError,
    InvalidTypeLinkError,
    InvalidVersionError,
    ResourceNotExistsError,
    VersionExistsError,
)
from lakesuperior.model.archival import ARCHIVAL_GROUP
from tests.clock import FakeClock

BASE = "http://test.example/rest"
TTL = "text/turtle"
P = "<http://ex.org/p>"
LAST_MODIFIED = "<http://fedora.info/definitions/v4/repository#lastModified>"


def ttl(value: str) -> bytes:
    return f'<> <http://ex.org/p> "{value}" .'.encode()


def values(res):
    return sorted(t[2] for t in res.triples if t[1] == P)


@pytest.fixture
def repo(repo_factory, clock):
    """A new repository on a clock the tests move on (``clock.advance()``: the next
    second, since version ids have a one-second resolution)."""
    return repo_factory(clock=clock)


def graphs(repo, prefix: str) -> list[str]:
    with repo.store.read() as txn:
        return sorted(g for g in txn.graphs() if g.startswith(prefix))


def ids(repo, uid):
    return [v.id for v in repo.versions(uid)]


# --- versioning.auto ---------------------------------------------------------------------

def test_every_change_makes_a_version_sharing_the_current_record(repo, clock):
    repo.create_or_replace("/r", data=ttl("one"), media_type=TTL)
    (v1,) = ids(repo, "/r")
    assert values(repo.get_version("/r", v1)) == ['"one"']
    assert graphs(repo, "<info:fcsnap") == []      # the version is the current record
    clock.advance()
    repo.create_or_replace("/r", data=ttl("two"), media_type=TTL)
    v1b, v2 = ids(repo, "/r")
    assert v1b == v1 and v2 > v1
    # each state is stored once: the old one in its snapshot, the new one as current
    assert graphs(repo, "<info:fcsnap") == [f"<info:fcsnap/r/fcr:versions/{v1}>"]
    assert values(repo.get_version("/r", v1)) == ['"one"']
    assert values(repo.get_version("/r", v2)) == ['"two"'] == values(repo.get("/r"))
    clock.advance()
    repo.update("/r", 'INSERT DATA { <> <http://ex.org/p> "three" }')
    assert len(ids(repo, "/r")) == 3
    assert values(repo.get_version("/r", v2)) == ['"two"']
    assert len(graphs(repo, "<info:fcsnap")) == 2


def test_two_changes_in_one_second_make_one_version_of_the_later_state(repo):
    with repo.transaction():       # the clock stays in one second
        repo.create_or_replace("/r", data=ttl("one"), media_type=TTL)
        repo.create_or_replace("/r", data=ttl("two"), media_type=TTL)
    (vid,) = ids(repo, "/r")
    assert values(repo.get_version("/r", vid)) == ['"two"']


def test_versioning_auto_false_makes_versions_on_request_only(repo_factory):
    repo = repo_factory(versioning_auto=False)
    repo.create_or_replace("/r", data=ttl("one"), media_type=TTL)
    repo.create_or_replace("/r", data=ttl("two"), media_type=TTL)
    assert repo.versions("/r") == []
    vid = repo.create_version("/r")
    assert ids(repo, "/r") == [vid]
    assert graphs(repo, "<info:fcsnap") == []      # live until the resource changes
    repo.create_or_replace("/r", data=ttl("three"), media_type=TTL)
    assert values(repo.get_version("/r", vid)) == ['"two"']
    assert ids(repo, "/r") == [vid]


def test_binary_versions_share_the_content_files(repo, clock):
    repo.create_or_replace("/b", data=b"old", media_type="text/plain")
    clock.advance()
    repo.create_or_replace("/b", data=b"new", media_type="text/plain")
    clock.advance()
    repo.update_delta("/b", None, [("<>", "<http://purl.org/dc/terms/title>", '"t"')])
    v1, v2, v3 = ids(repo, "/b")
    assert repo.get_version("/b", v1).digest == hashlib.sha512(b"old").hexdigest()
    assert repo.get_version("/b", v2).digest == hashlib.sha512(b"new").hexdigest()
    assert repo.get_version("/b", v3).digest == repo.get("/b").digest
    assert sorted(repo.binaries) == sorted(hashlib.sha512(c).hexdigest()
                                           for c in (b"old", b"new"))


def test_adding_a_child_keeps_the_parent_version(repo, clock):
    repo.create_or_replace("/c")
    (vid,) = ids(repo, "/c")
    before = repo.get_version("/c", vid).triples
    clock.advance()
    repo.create_or_replace("/c/x")
    assert ids(repo, "/c") == [vid]                # containment is not versioned
    assert repo.get_version("/c", vid).triples == before
    modified = [t[2] for t in repo.get("/c").triples if t[1] == LAST_MODIFIED]
    assert modified and [t for t in before if t[1] == LAST_MODIFIED][0][2] != modified[0]


def test_revert_keeps_the_current_state_as_a_version(repo, clock):
    repo.create_or_replace("/r", data=ttl("one"), media_type=TTL)
    (v1,) = ids(repo, "/r")
    clock.advance()
    repo.create_or_replace("/r", data=ttl("two"), media_type=TTL)
    clock.advance()
    repo.revert_to_version("/r", v1)
    v1b, v2, v3 = ids(repo, "/r")
    assert values(repo.get("/r")) == ['"one"'] == values(repo.get_version("/r", v3))
    assert values(repo.get_version("/r", v2)) == ['"two"']


def test_purge_removes_the_versions(repo, state, clock):
    before = state(repo)
    repo.create_or_replace("/r", data=ttl("one"), media_type=TTL)
    clock.advance()
    repo.create_or_replace("/r", data=ttl("two"), media_type=TTL)
    repo.delete("/r")
    repo.forget("/r")
    after = state(repo)
    assert {g for g in after["graphs"] if not g.startswith("<info:fcres/>")} == {
        g for g in before["graphs"] if not g.startswith("<info:fcres/>")}


# --- delete and import -----------------------------------------------------------------------

def test_delete_version(repo, state, clock):
    repo.create_or_replace("/r", data=ttl("one"), media_type=TTL)
    clock.advance()
    repo.create_or_replace("/r", data=ttl("two"), media_type=TTL)
    v1, v2 = ids(repo, "/r")
    repo.delete_version("/r", v1)
    assert ids(repo, "/r") == [v2] and graphs(repo, "<info:fcsnap") == []
    with pytest.raises(ResourceNotExistsError):
        repo.get_version("/r", v1)
    repo.delete_version("/r", v2)                  # the live one: the resource stays
    assert repo.versions("/r") == [] and values(repo.get("/r")) == ['"two"']
    before = state(repo)
    with pytest.raises(ResourceNotExistsError):
        repo.delete_version("/r", v2)
    with pytest.raises(InvalidVersionError):
        repo.delete_version("/r", "2020")
    assert state(repo) == before


def test_import_version_of_an_rdf_source(repo, state):
    repo.create_or_replace("/r", data=ttl("now"), media_type=TTL)
    (current,) = ids(repo, "/r")
    when = datetime(2000, 1, 1, 12, 30, 5, tzinfo=UTC)
    vid = repo.import_version("/r", when, data=ttl("then"), media_type=TTL)
    assert vid == "20000101123005" and ids(repo, "/r") == [vid, current]
    old = repo.get_version("/r", vid)
    assert values(old) == ['"then"'] and old.last_modified.startswith("2000-01-01T12:30:05")
    assert values(repo.get("/r")) == ['"now"'] == values(repo.get_version("/r", current))
    bare = repo.import_version("/r", datetime(2001, 1, 1, tzinfo=UTC))   # the current state
    assert values(repo.get_version("/r", bare)) == ['"now"']
    before = state(repo)
    with pytest.raises(VersionExistsError):
        repo.import_version("/r", when, data=ttl("again"), media_type=TTL)
    for bad in (datetime.now(UTC) + timedelta(days=2), datetime(2000, 1, 1),
                "Sat, 01 Jan 2000 00:00:00 GMT"):
        with pytest.raises(InvalidVersionError):
            repo.import_version("/r", bad, data=ttl("x"), media_type=TTL)
    with pytest.raises(IncompatibleLdpTypeError):
        repo.import_version("/r", when + timedelta(days=1), data=b"bytes",
                            media_type="text/plain")
    with pytest.raises(ResourceNotExistsError):
        repo.import_version("/missing", when, data=ttl("x"), media_type=TTL)
    assert state(repo) == before


def test_imported_newest_version_of_the_current_state_is_stored_once(repo_factory, clock):
    """Without input, a version newer than every other is live (the current record,
    as ``create_version``): nothing is copied until the resource changes."""
    repo = repo_factory(clock=clock, versioning_auto=False)
    repo.create_or_replace("/r", data=ttl("one"), media_type=TTL)
    old = repo.import_version("/r", datetime(2000, 1, 1, tzinfo=UTC), data=ttl("zero"),
                              media_type=TTL)
    assert graphs(repo, "<info:fcsnap") == [f"<info:fcsnap/r/fcr:versions/{old}>"]
    vid = repo.import_version("/r", datetime(2001, 1, 1, tzinfo=UTC))
    assert graphs(repo, "<info:fcsnap") == [f"<info:fcsnap/r/fcr:versions/{old}>"]
    assert ids(repo, "/r") == [old, vid]
    assert values(repo.get_version("/r", vid)) == ['"one"']
    with pytest.raises(VersionExistsError):
        repo.import_version("/r", datetime(2001, 1, 1, tzinfo=UTC))
    clock.advance()
    repo.create_or_replace("/r", data=ttl("two"), media_type=TTL)   # settles it
    assert values(repo.get_version("/r", vid)) == ['"one"']
    assert values(repo.get("/r")) == ['"two"']
    assert values(repo.get_version("/r", old)) == ['"zero"']
    assert len(graphs(repo, "<info:fcsnap")) == 2
    repo.create_version("/r")      # live: an import of an earlier date copies the state
    earlier = repo.import_version("/r", datetime(2002, 1, 1, tzinfo=UTC))
    assert values(repo.get_version("/r", earlier)) == ['"two"']
    assert len(graphs(repo, "<info:fcsnap")) == 3


def test_a_child_added_at_the_containers_last_modification_copies_nothing(repo_factory):
    """A child added at the very time the container was last modified leaves its
    state as it is: its live version is not copied (a migration writes both at the
    container's date); a later child moves ``lastModified`` and settles it."""
    repo = repo_factory(versioning_auto=False)
    then = datetime(2020, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    with repo.transaction(), repo.clock(then):
        repo.create_or_replace("/c", data=ttl("one"), media_type=TTL)
        vid = repo.create_version("/c")
    with repo.transaction(), repo.clock(then):
        repo.create_or_replace("/c/x")
    assert graphs(repo, "<info:fcsnap") == []
    stamp = [o for _s, p, o in repo.get("/c").triples if p == LAST_MODIFIED]
    assert values(repo.get_version("/c", vid)) == ['"one"']
    with repo.transaction(), repo.clock(then + timedelta(seconds=1)):
        repo.create_or_replace("/c/y")
    assert graphs(repo, "<info:fcsnap") == [f"<info:fcsnap/c/fcr:versions/{vid}>"]
    assert [o for _s, p, o in repo.get_version("/c", vid).triples
            if p == LAST_MODIFIED] == stamp
    assert [o for _s, p, o in repo.get("/c").triples if p == LAST_MODIFIED] != stamp


def test_import_version_of_a_binary(repo):
    repo.create_or_replace("/b", data=b"now", media_type="text/plain")
    vid = repo.import_version("/b", datetime(2000, 1, 1, tzinfo=UTC), data=b"then",
                              media_type="text/csv", filename="old.csv")
    old = repo.get_version("/b", vid)
    assert old.digest == hashlib.sha512(b"then").hexdigest()
    assert old.mimetype == "text/csv" and old.filename == "old.csv"
    assert repo.get("/b").digest == hashlib.sha512(b"now").hexdigest()


def test_import_versions_is_import_version_for_each_in_one_write(repo_factory, state):
    """``import_versions`` stores what one ``import_version`` per version stores (and
    announces the same changes), in one write: one refused, none is added."""
    then = datetime(2020, 1, 1, tzinfo=UTC)
    rdf = [(datetime(2000, 1, 1, tzinfo=UTC), {"data": ttl("zero"), "media_type": TTL}),
           (datetime(2001, 1, 1, tzinfo=UTC), {"triples": [(f"<{BASE}/r>", P, '"one"')]}),
           (datetime(2002, 1, 1, tzinfo=UTC), {})]                 # the current state
    binary = [(datetime(2000, 1, 1, tzinfo=UTC), {"data": b"then", "media_type": "text/csv",
                                                  "filename": "old.csv"}),
              (datetime(2003, 1, 1, tzinfo=UTC), {})]
    one, many = (repo_factory(name, versioning_auto=False,
                              clock=FakeClock(datetime(2021, 1, 1, tzinfo=UTC)))
                 for name in ("one", "many"))
    for repo in (one, many):
        with repo.transaction(), repo.clock(then):
            repo.create_or_replace("/r", data=ttl("now"), media_type=TTL)
            repo.create_or_replace("/b", data=b"now", media_type="text/plain")
    with one.transaction(), one.clock(then):
        got = [[one.import_version(uid, when, **inputs) for when, inputs in versions]
               for uid, versions in (("/r", rdf), ("/b", binary))]
    with many.transaction(), many.clock(then):
        assert [many.import_versions("/r", rdf), many.import_versions("/b", binary)] == got
    assert got == [["20000101000000", "20010101000000", "20020101000000"],
                   ["20000101000000", "20030101000000"]]
    assert state(many) == state(one)
    assert [(c.uid, c.kind, c.types, c.timestamp) for c in many.changes()] == \
        [(c.uid, c.kind, c.types, c.timestamp) for c in one.changes()]
    before = state(many)
    with pytest.raises(VersionExistsError):
        many.import_versions("/r", [(datetime(1999, 1, 1, tzinfo=UTC), {"data": ttl("x"),
                                                                         "media_type": TTL}),
                                    (datetime(2000, 1, 1, tzinfo=UTC), {})])
    with pytest.raises(TypeError):
        many.import_versions("/r", [(datetime(1998, 1, 1, tzinfo=UTC), {"body": ttl("x")})])
    assert state(many)["graphs"] == before["graphs"]


# --- Archival Groups -----------------------------------------------------------------------

def test_archival_group_is_versioned_as_one_unit(repo, clock):
    group = repo.create("/", slug="ag", archival_group=True, data=ttl("g1"), media_type=TTL)
    assert ARCHIVAL_GROUP in group.types
    repo.create_or_replace("/ag/m", data=ttl("m1"), media_type=TTL)
    (g1,) = ids(repo, "/ag")
    clock.advance()
    repo.create_or_replace("/ag/m", data=ttl("m2"), media_type=TTL)
    clock.advance()
    repo.create_or_replace("/ag", data=ttl("g2"), media_type=TTL)
    g1b, g2, g3 = ids(repo, "/ag")
    assert g1b == g1
    assert ids(repo, "/ag/m") == [g1, g2, g3]      # the member lists the group's versions
    assert values(repo.get_version("/ag/m", g1)) == ['"m1"']
    assert values(repo.get_version("/ag/m", g3)) == ['"m2"']   # unchanged since g2
    assert values(repo.get_version("/ag", g2)) == ['"g1"']
    assert ARCHIVAL_GROUP in repo.get("/ag").types           # kept by a replacement
    clock.advance()
    vid = repo.create_version("/ag/m")                          # a version of the group
    assert ids(repo, "/ag")[-1] == vid == ids(repo, "/ag/m")[-1]


def test_member_timemap_starts_with_the_member(repo, clock):
    repo.create_or_replace("/ag", archival_group=True)
    clock.advance()
    repo.create_or_replace("/ag/late")
    first, second = ids(repo, "/ag")
    assert ids(repo, "/ag/late") == [second]
    with pytest.raises(ResourceNotExistsError):
        repo.get_version("/ag/late", first)


def test_archival_groups_cannot_nest_nor_be_binaries(repo, state):
    repo.create_or_replace("/ag", archival_group=True)
    repo.create_or_replace("/ag/c")
    repo.create_or_replace("/plain")
    before = state(repo)
    with pytest.raises(ArchivalGroupError):
        repo.create_or_replace("/ag/c/inner", archival_group=True)
    with pytest.raises(ArchivalGroupError):
        repo.create("/ag", archival_group=True)
    with pytest.raises(InvalidTypeLinkError):
        repo.create_or_replace("/bin", data=b"x", media_type="text/plain",
                               archival_group=True)
    with pytest.raises(InvalidTypeLinkError, match="ldp:RDFSource cannot"):
        repo.create_or_replace("/rdf", archival_group=True,
                               interaction_model="http://www.w3.org/ns/ldp#RDFSource")
    with pytest.raises(IncompatibleLdpTypeError):    # only at creation
        repo.create_or_replace("/plain", archival_group=True)
    assert state(repo) == before
