"""The group commit of one process's writers (``store/group.py``): the writes queued
while a leader works share its write transaction, each in its own savepoint, and
one commit and one sync; a write that raises is undone alone; every LMDB call is
the leader's; a full group hands the rest to the next leader."""
from __future__ import annotations

import contextvars
import os
import threading

import pytest

from lakesuperior.exceptions import StoreBackendError
from lakesuperior.store.group import WriteGroups
from lakesuperior.store.quadstore import QuadStore

from ..groups import WAIT, OneGroup, wait_for

P = "<http://ex.org/p>"
SMALL_MAP = 256 * 1024


def g(name):
    return f"<http://ex.org/{name}>"


def _graphs(st):
    with st.read() as txn:
        return sorted(txn.graphs())


def writer(name, seen=None):
    def work(txn):
        if seen is not None:
            seen.append(txn.graph_count())
        txn.add_graph(g(name), [(g(name), P, f'"{name}"')])
        return name
    return work


def group_of(groups, *works):
    """Run ``works`` (name, work) as one group of ``groups``; their outcomes."""
    one = OneGroup(groups)
    for name, work in works:
        one.start(name, groups.run, work)
    return one.run()


@pytest.fixture
def st(tmp_path):
    store = QuadStore(str(tmp_path / "s"), sync=True)
    yield store
    store.close()


def test_queued_writes_share_one_commit_and_one_sync(st):
    groups = WriteGroups(st)
    syncs = st.durability.syncs
    results = group_of(groups, *[(f"w{i}", writer(f"w{i}")) for i in range(8)])
    assert results == {f"w{i}": ("ok", f"w{i}") for i in range(8)}
    assert groups.commits == 1 and groups.writes == 8
    assert st.durability.syncs == syncs + 1
    assert _graphs(st) == sorted(g(f"w{i}") for i in range(8))


def test_each_write_sees_the_writes_before_it(st):
    """Serial equivalence: the members run one after the other, each on the state
    the earlier ones left."""
    groups = WriteGroups(st)
    seen: list[int] = []
    group_of(groups, *[(f"w{i}", writer(f"w{i}", seen)) for i in range(6)])
    assert seen == list(range(6))
    assert groups.commits == 1


def fails(txn):
    txn.add_graph(g("bad"), [(g("bad"), P, '"bad"')])
    raise ValueError("refused after writing")


def test_a_write_that_raises_is_undone_alone(st):
    groups = WriteGroups(st)
    results = group_of(groups, ("w0", writer("w0")), ("w1", writer("w1")), ("bad", fails),
                       ("w2", writer("w2")))
    kind, error = results.pop("bad")
    assert kind == "error" and isinstance(error, ValueError)
    assert str(error) == "refused after writing"
    assert results == {f"w{i}": ("ok", f"w{i}") for i in range(3)}
    assert _graphs(st) == [g("w0"), g("w1"), g("w2")]
    assert groups.commits == 1 and groups.writes == 3


def test_the_leaders_own_failure_is_undone_and_the_others_land(st):
    groups = WriteGroups(st)
    entered = threading.Event()

    def leads_then_fails(txn):          # alone at first: it leads, then w1 queues
        entered.set()
        wait_for(lambda: groups.waiting == 1, "w1 queued")
        fails(txn)
    errors: list[BaseException] = []

    def lead():
        try:
            groups.run(leads_then_fails)
        except ValueError as e:
            errors.append(e)
    leader = threading.Thread(target=lead)
    leader.start()
    assert entered.wait(WAIT)
    assert groups.run(writer("w1")) == "w1"
    leader.join(WAIT)
    assert not leader.is_alive() and str(errors[0]) == "refused after writing"
    assert _graphs(st) == [g("w1")] and groups.commits == 1


def test_a_full_group_hands_the_rest_to_the_next_leader(st):
    groups = WriteGroups(st, max_members=3)
    results = group_of(groups, *[(f"w{i}", writer(f"w{i}")) for i in range(8)])
    assert all(kind == "ok" for kind, _ in results.values())
    assert groups.commits == 3 and groups.writes == 8        # 3 + 3 + 2
    assert len(_graphs(st)) == 8
    assert groups.waiting == 0


def test_followers_run_in_the_leaders_thread_under_their_own_context(st):
    groups = WriteGroups(st)
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="none")

    def work(txn):
        return threading.get_ident(), var.get()

    def in_context(value):
        var.set(value)
        return groups.run(work)
    one = OneGroup(groups)
    for value in ("a", "b", "c"):
        one.start(value, in_context, value)
    results = one.run()
    assert {value: out[1] for value, (_, out) in results.items()} == {v: v for v in "abc"}
    assert len({out[0] for _, out in results.values()}) == 1     # one thread ran them all
    assert threading.get_ident() not in {out[0] for _, out in results.values()}


def test_a_lone_writer_runs_in_its_own_thread(st):
    groups = WriteGroups(st)
    me = threading.get_ident()
    assert groups.run(lambda txn: threading.get_ident()) == me
    assert groups.commits == 1 and groups.waiting == 0


def test_the_map_grows_inside_a_group(tmp_path):
    st = QuadStore(str(tmp_path / "s"), map_size=SMALL_MAP)
    groups = WriteGroups(st)

    def big(name):
        def work(txn):
            txn.add_graph(g(name), [(f"<http://ex.org/s{i}>", P, f'"{os.urandom(150).hex()}"')
                                    for i in range(100)])
        return work
    results = group_of(groups, *[(name, big(name)) for name in "abcdefgh"])
    assert all(kind == "ok" for kind, _ in results.values()), results
    assert groups.commits == 1
    assert st.stats()["map_size"] > SMALL_MAP
    with st.read() as txn:
        assert all(len(txn.triples(g(name))) == 100 for name in "abcdefgh")
    st.close()


class FailingStore:
    """A store whose write transactions fail at commit, or whose first durability
    sync fails: what happens to the members."""

    def __init__(self, store, *, commit_fails=False):
        self.store = store
        self.commit_fails = commit_fails
        self.sync_calls = 0

    def write(self, durable=True):
        txn = self.store.write(durable=durable)
        if not self.commit_fails:
            return txn
        return _FailingCommit(txn)

    def make_durable(self):
        self.sync_calls += 1
        if self.sync_calls == 1:
            raise StoreBackendError("Cannot sync the store to disk: test")
        self.store.make_durable()


class _FailingCommit:
    def __init__(self, txn):
        self.txn = txn

    def __getattr__(self, name):
        return getattr(self.txn, name)

    def commit(self):
        self.txn.abort()
        raise StoreBackendError("LMDB error: the commit failed (test)")


def test_a_failed_commit_is_every_members_error_and_keeps_nothing(st):
    groups = WriteGroups(FailingStore(st, commit_fails=True))
    results = group_of(groups, *[(f"w{i}", writer(f"w{i}")) for i in range(3)])
    for name in ("w0", "w1", "w2"):
        kind, error = results[name]
        assert kind == "error" and "the commit failed" in str(error)
    assert _graphs(st) == [] and groups.commits == 0


def test_a_failed_sync_is_made_again_by_each_member(st):
    store = FailingStore(st)
    groups = WriteGroups(store)
    results = group_of(groups, ("w0", writer("w0")), ("w1", writer("w1")))
    assert results == {"w0": ("ok", "w0"), "w1": ("ok", "w1")}
    assert store.sync_calls == 3       # the leader's failed sync, then one per member


def test_solo_is_one_threads_transaction_under_the_same_lock(st):
    groups = WriteGroups(st)
    with groups.solo() as txn:
        txn.add_graph(g("solo"), [(g("solo"), P, '"s"')])
        done = threading.Event()
        t = threading.Thread(target=lambda: (groups.run(writer("after")), done.set()))
        t.start()
        assert not done.wait(0.2)               # waits for the lock
    t.join(WAIT)
    assert done.is_set() and groups.commits == 2
    assert _graphs(st) == [g("after"), g("solo")]
    with pytest.raises(RuntimeError):
        with groups.solo() as txn:
            txn.add_graph(g("undone"), [(g("undone"), P, '"u"')])
            raise RuntimeError("boom")
    assert g("undone") not in _graphs(st) and groups.commits == 2


@pytest.mark.parametrize("bad", [0, -1, 2.5, "8", True])
def test_a_group_bound_must_be_a_positive_int(st, bad):
    with pytest.raises(ValueError, match="max_members must be a positive int"):
        WriteGroups(st, max_members=bad)
