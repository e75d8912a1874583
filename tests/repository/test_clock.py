"""A repository's clock (``Repository(clock=...)``): every time a write records
comes from it; the system clock by default."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lakesuperior.exceptions import TombstoneError
from lakesuperior.model.namespaces import FCREPO_CREATED, FCREPO_LAST_MODIFIED
from tests.clock import FakeClock

TTL = "text/turtle"
START = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)


def value(res, predicate: str) -> str:
    (found,) = [o for _s, p, o in res.triples if p == predicate]
    return found


def test_writes_record_the_time_of_the_repository_clock(repo_factory):
    clock = FakeClock(START)
    repo = repo_factory(clock=clock)
    assert START <= repo.now() < START + timedelta(seconds=1)
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "one" .', media_type=TTL)
    res = repo.get("/r")
    assert value(res, FCREPO_CREATED).startswith('"2031-05-06T07:08:09.')
    assert value(res, FCREPO_LAST_MODIFIED).startswith('"2031-05-06T07:08:09.')
    clock.advance()
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "two" .', media_type=TTL)
    assert [v.id for v in repo.versions("/r")] == ["20310506070809", "20310506070810"]
    assert repo.create_version("/r") == "20310506070810"   # keeps the second's version
    clock.advance(60)
    repo.delete("/r")
    with pytest.raises(TombstoneError) as gone:
        repo.get("/r")
    assert "2031-05-06T07:09:10" in str(gone.value.ts)
    times = [c.timestamp for c in repo.changes()]          # milliseconds
    assert times[0] == START and times[-1] == START + timedelta(seconds=61)


def test_a_clock_block_of_a_transaction_wins_over_the_clock(repo_factory):
    repo = repo_factory(clock=FakeClock(START))
    then = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    with repo.transaction(), repo.clock(then):
        repo.create_or_replace("/r")
    assert [v.id for v in repo.versions("/r")] == ["20300102030405"]


def test_the_default_clock_is_the_system_clock(repo):
    before = datetime.now(UTC)
    now = repo.now()
    assert now.tzinfo is not None and before <= now <= datetime.now(UTC)
    repo.create_or_replace("/r")
    (vid,) = [v.id for v in repo.versions("/r")]
    assert before.replace(microsecond=0) <= datetime.strptime(
        vid, "%Y%m%d%H%M%S").replace(tzinfo=UTC) <= datetime.now(UTC)


def test_create_or_replace_records_a_given_creation(repo_factory, state):
    """``created`` / ``created_by``: a migration's creation date and agent, the call's
    time and agent its last modification; a replace keeps its own unless given."""
    from lakesuperior.exceptions import InvalidResourceError
    from lakesuperior.model.namespaces import FCREPO_CREATED_BY, FCREPO_LAST_MODIFIED_BY
    repo = repo_factory(clock=FakeClock(START))
    born = datetime(2020, 2, 3, 4, 5, 6, tzinfo=UTC)
    repo.as_user("editor").create_or_replace(
        "/r", data=b'<> <http://ex.org/p> "one" .', media_type=TTL, created=born,
        created_by="author")
    repo.create_or_replace("/b", data=b"bytes", media_type="text/plain", created=born)
    for uid, creator in (("/r", '"author"'), ("/b", '"admin"')):
        res = repo.get(uid)
        assert value(res, FCREPO_CREATED).startswith('"2020-02-03T04:05:06.')
        assert value(res, FCREPO_LAST_MODIFIED).startswith('"2031-05-06T07:08:09.')
        assert value(res, FCREPO_CREATED_BY) == creator
    assert value(repo.get("/r"), FCREPO_LAST_MODIFIED_BY) == '"editor"'
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "two" .', media_type=TTL)
    assert value(repo.get("/r"), FCREPO_CREATED).startswith('"2020-02-03T04:05:06.')
    repo.create_or_replace("/r", data=b'<> <http://ex.org/p> "two" .', media_type=TTL,
                           created_by="someone")
    res = repo.get("/r")
    assert value(res, FCREPO_CREATED_BY) == '"someone"'
    assert value(res, FCREPO_CREATED).startswith('"2020-02-03T04:05:06.')
    before = state(repo)
    for bad in (dict(created=START + timedelta(days=1)), dict(created=datetime(2020, 1, 1)),
                dict(created="2020-01-01T00:00:00Z"), dict(created_by="")):
        with pytest.raises(InvalidResourceError):
            repo.create_or_replace("/c", **bad)
    assert state(repo) == before
