"""A version a caller made (``create_version``) or imported (``import_version``)
keeps its state: a change in the same second gets the next free second instead
of overwriting it. Automatic versions of one second still fold into one
(docs/versioning.md). Writes are made in one second with ``Repository.clock``."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lakesuperior.model.archival import ARCHIVAL_GROUP

TTL = "text/turtle"
P = "<http://ex.org/p>"
#: A second after every real version of the test (ids never go back in time).
T = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
TID = T.strftime("%Y%m%d%H%M%S")


def ttl(value: str) -> bytes:
    return f'<> <http://ex.org/p> "{value}" .'.encode()


def values(res) -> list[str]:
    return sorted(t[2] for t in res.triples if t[1] == P)


def ids(repo, uid: str) -> list[str]:
    return [v.id for v in repo.versions(uid)]


def plus(seconds: int) -> str:
    return (T + timedelta(seconds=seconds)).strftime("%Y%m%d%H%M%S")


def at(repo, when: datetime = T):
    """One write block of the repository, its writes dated ``when``."""
    class _Block:
        def __enter__(self):
            self._tx = repo.transaction()
            self._tx.__enter__()
            self._clock = repo.clock(when)
            self._clock.__enter__()
            return repo

        def __exit__(self, *exc):
            self._clock.__exit__(*exc)
            return self._tx.__exit__(*exc)
    return _Block()


def test_change_after_create_version_in_the_same_second(repo):
    with at(repo):
        repo.create_or_replace("/v", data=ttl("one"), media_type=TTL)
    with at(repo):
        vid = repo.create_version("/v", label="mine")
    with at(repo):                                   # another request, the same second
        repo.create_or_replace("/v", data=ttl("two"), media_type=TTL)
    assert vid == TID
    assert values(repo.get_version("/v", vid)) == ['"one"']     # what the caller versioned
    assert ids(repo, "/v") == [TID, plus(1)]
    assert values(repo.get_version("/v", plus(1))) == ['"two"']
    assert values(repo.get("/v")) == ['"two"']
    assert [v.label for v in repo.versions("/v")] == ["mine", None]
    with at(repo):                                   # still that second: folds into +1
        repo.update("/v", f'INSERT DATA {{ <> {P} "three" }}')
    assert ids(repo, "/v") == [TID, plus(1)]
    assert values(repo.get_version("/v", vid)) == ['"one"']
    assert values(repo.get_version("/v", plus(1))) == ['"three"', '"two"']


def test_create_version_then_change_in_one_transaction(repo):
    with at(repo):
        repo.create_or_replace("/v", data=ttl("one"), media_type=TTL)
        vid = repo.create_version("/v")
        repo.create_or_replace("/v", data=ttl("two"), media_type=TTL)
        vid2 = repo.create_version("/v", label="b")
        repo.create_or_replace("/v", data=ttl("three"), media_type=TTL)
    assert (vid, vid2) == (TID, plus(1))
    assert values(repo.get_version("/v", vid)) == ['"one"']
    assert values(repo.get_version("/v", vid2)) == ['"two"']
    assert ids(repo, "/v") == [TID, plus(1), plus(2)]
    assert values(repo.get_version("/v", plus(2))) == ['"three"']


def test_auto_versions_of_one_second_still_fold(repo):
    with at(repo):
        repo.create_or_replace("/a", data=ttl("one"), media_type=TTL)
        repo.create_or_replace("/a", data=ttl("two"), media_type=TTL)
    with at(repo):
        repo.create_or_replace("/a", data=ttl("three"), media_type=TTL)
    assert ids(repo, "/a") == [TID]
    assert values(repo.get_version("/a", TID)) == ['"three"']


def test_create_version_of_an_auto_version_keeps_it(repo):
    """An explicit version in the second of an automatic one is that version, now kept."""
    with at(repo):
        repo.create_or_replace("/a", data=ttl("one"), media_type=TTL)
    with at(repo):
        assert repo.create_version("/a") == TID
    with at(repo):
        repo.create_or_replace("/a", data=ttl("two"), media_type=TTL)
    assert values(repo.get_version("/a", TID)) == ['"one"']
    assert ids(repo, "/a") == [TID, plus(1)]


def test_imported_version_keeps_its_state(repo):
    past = T - timedelta(hours=2)
    with at(repo, past):
        repo.create_or_replace("/i", data=ttl("one"), media_type=TTL)
    now = datetime.now(UTC).replace(microsecond=0)   # an import is not in the future
    vid = repo.import_version("/i", now, data=ttl("imported"), media_type=TTL)
    with at(repo, now):                              # a change in the imported second
        repo.create_or_replace("/i", data=ttl("two"), media_type=TTL)
    after = (now + timedelta(seconds=1)).strftime("%Y%m%d%H%M%S")
    assert vid == now.strftime("%Y%m%d%H%M%S")
    assert values(repo.get_version("/i", vid)) == ['"imported"']
    assert ids(repo, "/i") == [past.strftime("%Y%m%d%H%M%S"), vid, after]
    assert values(repo.get_version("/i", after)) == ['"two"']


def test_versioning_auto_false_two_explicit_versions_in_one_second(repo_factory):
    repo = repo_factory(versioning_auto=False)
    with at(repo):
        repo.create_or_replace("/m", data=ttl("one"), media_type=TTL)
        first = repo.create_version("/m")
    with at(repo):
        repo.create_or_replace("/m", data=ttl("two"), media_type=TTL)
    with at(repo):
        second = repo.create_version("/m")
    assert (first, second) == (TID, plus(1))
    assert values(repo.get_version("/m", first)) == ['"one"']
    assert values(repo.get_version("/m", second)) == ['"two"']


def test_archival_group_version_keeps_its_members(repo):
    with at(repo):
        repo.create_or_replace("/g", interaction_model=None, archival_group=True)
        repo.create_or_replace("/g/m", data=ttl("one"), media_type=TTL)
    with at(repo):
        vid = repo.create_version("/g/m")              # the whole group
    with at(repo):
        repo.create_or_replace("/g/m", data=ttl("two"), media_type=TTL)
        repo.create_or_replace("/g/n", data=ttl("new"), media_type=TTL)
    assert vid == TID
    assert values(repo.get_version("/g/m", vid)) == ['"one"']
    assert ids(repo, "/g") == [TID, plus(1)]
    assert ids(repo, "/g/n") == [plus(1)]                # not in the kept version
    assert values(repo.get_version("/g/m", plus(1))) == ['"two"']
    assert ARCHIVAL_GROUP in repo.get("/g").types


@pytest.mark.parametrize("auto", [True, False])
def test_delete_then_recreate_a_kept_version(repo_factory, auto):
    repo = repo_factory(versioning_auto=auto)
    with at(repo):
        repo.create_or_replace("/d", data=ttl("one"), media_type=TTL)
        vid = repo.create_version("/d")
        repo.delete_version("/d", vid)
        assert repo.create_version("/d") == vid        # the second is free again
    assert values(repo.get_version("/d", vid)) == ['"one"']
