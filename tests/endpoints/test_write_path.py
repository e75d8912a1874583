"""How a write runs: the body is parsed before the write transaction, a PUT
reads the current state once, preconditions come before the write and
before body errors found only once the state is known."""
from __future__ import annotations

from contextlib import contextmanager

import pytest
from pytest import MonkeyPatch

from lakesuperior import rdfio
from lakesuperior.exceptions import TombstoneError
from lakesuperior.repository.transactions import Transactions

from .conftest import DC_TITLE, LDP, TTL, link_targets, post_ttl, put_ttl


@pytest.fixture
def events(repo, monkeypatch):
    """What the repository and the parser were asked, in order."""
    seen: list[str] = []
    parse, transaction, transact = rdfio.parse, repo.transaction, repo.transact

    def counting_parse(*args, **kwargs):
        seen.append("parse")
        return parse(*args, **kwargs)

    @contextmanager
    def counting_transaction():
        seen.append("transaction")
        with transaction() as r:
            yield r

    def counting_transact(fn, /, *args, **kwargs):    # one write transaction too
        seen.append("transaction")
        return transact(fn, *args, **kwargs)

    monkeypatch.setattr(rdfio, "parse", counting_parse)
    monkeypatch.setattr(repo, "transaction", counting_transaction)
    monkeypatch.setattr(repo, "transact", counting_transact)
    for name in ("info", "exists", "get"):
        method = getattr(repo, name)

        def counting(*args, _name=name, _method=method, **kwargs):
            seen.append(_name)
            return _method(*args, **kwargs)
        monkeypatch.setattr(repo, name, counting)
    return seen


def test_put_parses_first_then_reads_once(client, events):
    assert put_ttl(client, "/rest/a", f'<> {DC_TITLE} "one" .').status_code == 201
    assert events == ["parse", "transaction", "info"]
    events.clear()
    assert put_ttl(client, "/rest/a", f'<> {DC_TITLE} "two" .').status_code == 204
    assert events == ["parse", "transaction", "info"]


def test_conditional_post_parses_before_the_transaction(client, events):
    etag = client.get("/rest/").headers["ETag"]
    events.clear()
    r = post_ttl(client, "/rest/", f'<> {DC_TITLE} "x" .', **{"If-Match": etag})
    assert r.status_code == 201
    assert events == ["parse", "transaction", "info"]


def test_unconditional_writes_open_no_extra_transaction(client, events):
    location = post_ttl(client, "/rest/", f'<> {DC_TITLE} "x" .').headers["Location"]
    assert events == ["parse"]
    events.clear()
    assert client.delete(location).status_code == 204
    assert events == []


def test_description_put_parses_first_then_reads_once(client, events):
    client.put("/rest/bin", data=b"x", content_type="text/plain")
    events.clear()
    r = client.put("/rest/bin/fcr:metadata", data=f'<> {DC_TITLE} "d" .'.encode(),
                   content_type=TTL)
    assert r.status_code == 204
    assert events == ["parse", "transaction", "info"]


def test_failed_precondition_wins_over_a_malformed_body(client, repo, state):
    put_ttl(client, "/rest/a")
    before = state(repo)
    stale = {"If-Match": '"stale"'}
    assert put_ttl(client, "/rest/a", "<> <broken", **stale).status_code == 412
    assert post_ttl(client, "/rest/a", "<> <broken", **stale).status_code == 412
    assert put_ttl(client, "/rest/a", "<> <broken").status_code == 400
    assert post_ttl(client, "/rest/a", "<> <broken").status_code == 400
    assert post_ttl(client, "/rest/missing", "<> <broken").status_code == 400
    assert state(repo) == before


def test_rdf_body_on_a_binary_is_its_content(client):
    assert client.put("/rest/bin", data=b"x", content_type="text/plain").status_code == 201
    r = client.put("/rest/bin", data=b"<> <broken", content_type=TTL)
    assert r.status_code == 204
    got = client.get("/rest/bin")
    assert got.data == b"<> <broken" and got.headers["Content-Type"].startswith(TTL)


def test_post_slug_taken_moves_relative_iris(client):
    post_ttl(client, "/rest/", "", Slug="s")
    r = post_ttl(client, "/rest/", '<> <http://purl.org/dc/terms/relation> <#part> .',
                 Slug="s")
    location = r.headers["Location"]
    assert location != "http://localhost/rest/s"
    body = client.get(location, headers={"Accept": "application/n-triples"}).data.decode()
    assert f"<{location}> <http://purl.org/dc/terms/relation> <{location}#part> ." in body


def test_version_post_takes_no_preconditions(client):
    put_ttl(client, "/rest/a")
    r = client.post("/rest/a/fcr:versions", headers={"If-Match": '"stale"'})
    assert r.status_code == 201


def test_tombstone_answer_links_its_tombstone_and_constraints(client):
    put_ttl(client, "/rest/t/a")
    assert client.delete("/rest/t").status_code == 204
    r = put_ttl(client, "/rest/t/a", "")
    assert r.status_code == 410 and "deleted" in r.data.decode()
    assert link_targets(r, "hasTombstone") == ["http://localhost/rest/t/fcr:tombstone"]
    assert link_targets(r, LDP + "constrainedBy") == ["http://localhost/constraints#tombstones"]


# -- a PUT reads the resource once ------------------------------------------------------

class CountingTxn:
    """A store transaction that counts the calls made on it, by method."""

    def __init__(self, txn, calls: list[str]):
        self._txn = txn
        self._calls = calls

    def __getattr__(self, name):
        attr = getattr(self._txn, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self._calls.append(name)
            return attr(*args, **kwargs)
        return call


def count_store_calls(monkeypatch: MonkeyPatch) -> list[str]:
    """The store calls of the write transactions begun from now on."""
    calls: list[str] = []
    begin = Transactions._begin
    monkeypatch.setattr(Transactions, "_begin",
                        lambda self, txn: begin(self, CountingTxn(txn, calls)))
    return calls


BODY_200 = "\n".join(f'<> <http://ex.org/p{i}> "v{i}" .' for i in range(200))


@pytest.mark.parametrize("auto", [True, False])
def test_put_replacing_a_container_makes_few_store_calls(make_app, monkeypatch, auto):
    """The endpoint's precondition read is the model's read: the container's own
    triples, versions and membership are read once; its children never."""
    client = make_app(auth_enabled=False, versioning_auto=auto).test_client()
    assert put_ttl(client, "/rest/c", BODY_200).status_code == 201
    for i in range(3):
        assert put_ttl(client, f"/rest/c/k{i}", BODY_200).status_code == 201
    etag = client.head("/rest/c").headers["ETag"]
    with monkeypatch.context() as mp:
        calls = count_store_calls(mp)
        r = put_ttl(client, "/rest/c", BODY_200 + '\n<> <http://ex.org/q> "new" .',
                    **{"If-Match": etag})
    assert r.status_code == 204
    assert 0 < len(calls) <= 14, calls
    assert calls.count("triples") <= 3, calls     # own, history, history after
    got = client.get("/rest/c", headers={"Accept": "application/n-triples"})
    assert '"new"' in got.text and got.text.count("ldp#contains") == 3


def test_a_state_read_before_another_write_is_read_again(repo):
    """``current`` stands for the resource only if read in this write with nothing
    written since: a stale one is ignored (the state is read again), never trusted."""
    s = f"<{repo.base_uri}/s>"

    def put(value: str, current=None):
        repo.create_or_replace("/s", current=current,
                               triples=[(s, "<http://ex.org/p>", f"<http://ex.org/{value}>")])

    put("a")
    stale = repo.info("/s", own_triples=True)            # outside any write
    assert stale.own and stale.read_in is None
    repo.delete("/s")
    with pytest.raises(TombstoneError):
        put("b", stale)
    repo.resurrect("/s")
    put("c")
    with pytest.raises(TombstoneError), repo.transaction():
        fresh = repo.info("/s", own_triples=True)
        assert fresh.read_in is not None
        repo.delete("/s")                                # written since
        put("d", fresh)
    with repo.transaction():
        fresh = repo.info("/s", own_triples=True)
        put("e", fresh)                                  # current: used
    assert [o for _s, p, o in repo.get("/s").triples if "ex.org" in p] == ["<http://ex.org/e>"]
