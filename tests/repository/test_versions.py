"""Versions made on request (``versioning.auto: false``): create, list, read,
revert. ``test_auto_versions`` covers automatic versions."""
from __future__ import annotations

import re

import pytest

from lakesuperior.exceptions import (
    InvalidResourceError,
    ResourceNotExistsError,
    TombstoneError,
)

pytestmark = pytest.mark.both_backends

BASE = "http://test.example/rest"
TTL = "text/turtle"
P = "<http://ex.org/p>"


def pub(uid):
    return f"<{BASE}{uid}>"


def values(res):
    return sorted(t[2] for t in res.user_data if t[1] == P)


@pytest.fixture
def repo(repo_factory, clock):
    """Versions on request only, on a clock the tests move on (``clock.advance()``:
    the next second, since version ids have a one-second resolution)."""
    return repo_factory(versioning_auto=False, clock=clock)


def test_create_list_get_version(repo, clock):
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "one" .', media_type=TTL)
    assert repo.versions("/r") == []
    vid = repo.create_version("/r", label="first")
    assert re.fullmatch(r"\d{14}", vid)
    clock.advance()
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "two" .', media_type=TTL)
    vid2 = repo.create_version("/r")
    assert vid2 > vid
    infos = repo.versions("/r")
    assert [v.id for v in infos] == [vid, vid2]
    assert infos[0].label == "first" and infos[1].label is None
    assert infos[0].uri == f"{BASE}/r/fcr:versions/{vid}"
    assert infos[0].created.endswith("dateTime>")
    assert [v.id for v in repo.get("/r").version_info] == [vid, vid2]
    assert repo.get("/r").version_ids == [vid, vid2] == repo.info("/r").version_ids
    assert repo.get("/r").version_info == infos     # made when asked for: the same values
    old = repo.get_version("/r", vid)
    assert values(old) == ['"one"']
    assert old.uri == f"{BASE}/r/fcr:versions/{vid}"
    assert old.version_of == vid
    assert values(repo.get("/r")) == ['"two"']
    with pytest.raises(ResourceNotExistsError):
        repo.get_version("/r", "19990101000000")
    with pytest.raises(InvalidResourceError):
        repo.get_version("/r", "../../etc")


def test_same_second_versions_keep_their_states(repo):
    """Two versions made in one second with a change between: the second takes the
    next second, and each keeps what it was made of (tests/repository/test_kept_versions.py)."""
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "one" .', media_type=TTL)
    with repo.transaction():
        vid = repo.create_version("/r", label="a")
        repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "two" .', media_type=TTL)
        vid2 = repo.create_version("/r", label="b")
    assert vid2 > vid
    infos = {v.id: v for v in repo.versions("/r")}
    assert (infos[vid].label, infos[vid2].label) == ("a", "b")
    assert values(repo.get_version("/r", vid)) == ['"one"']
    assert values(repo.get_version("/r", vid2)) == ['"two"']


def test_revert_to_version(repo, clock):
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "one" .', media_type=TTL)
    repo.create_or_replace("/r/child")
    vid = repo.create_version("/r")
    clock.advance()
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "two", "three" .', media_type=TTL)
    res = repo.revert_to_version("/r", vid)
    assert values(res) == ['"one"']
    assert values(repo.get("/r")) == ['"one"']
    assert repo.get("/r").children == ["/r/child"]       # containment is not versioned
    infos = repo.versions("/r")
    assert len(infos) == 2                                 # the state before reverting
    assert values(repo.get_version("/r", infos[-1].id)) == ['"three"', '"two"']


def test_binary_versions_keep_content(repo, clock):
    repo.create_or_replace("/f", data=b"first", media_type="text/plain")
    vid = repo.create_version("/f")
    clock.advance()
    repo.create_or_replace("/f", data=b"second version", media_type="text/x-other")
    old = repo.get_version("/f", vid)
    with old.content as fh:
        assert fh.read() == b"first"
    res = repo.revert_to_version("/f", vid)
    assert res.size == 5 and res.mimetype == "text/plain"
    with repo.get("/f").content as fh:
        assert fh.read() == b"first"


def test_versions_of_missing_or_deleted(repo):
    with pytest.raises(ResourceNotExistsError):
        repo.create_version("/nope")
    with pytest.raises(ResourceNotExistsError):
        repo.versions("/nope")
    repo.create_or_replace("/r")
    repo.create_version("/r")
    repo.delete("/r")
    with pytest.raises(TombstoneError):
        repo.versions("/r")
    repo.resurrect("/r")
    assert len(repo.versions("/r")) == 1
