"""Group commit (``store/durability.py``): a write returns only after a sync that
started after its commit; one sync covers the commits made before it started;
what may run ahead of main's durable state (the index, the events publisher) is
kept from acting on commits a machine crash could undo."""
from __future__ import annotations

import os
import shutil
import threading

import pytest

from lakesuperior.exceptions import StoreBackendError
from lakesuperior.store.durability import DurabilityGate
from lakesuperior.store.quadstore import QuadStore

P = "<http://ex.org/p>"
WAIT = 30.0     # seconds a thread may take to reach a point (never a timing assertion)


class BlockingSync:
    """A sync that records the gate's last ticket when it starts, and (while
    ``hold`` is clear) waits until the test lets it finish."""

    def __init__(self) -> None:
        self.gate: DurabilityGate | None = None
        self.started: list[int] = []
        self.entered = threading.Semaphore(0)
        self.hold = threading.Event()
        self.fail = False

    def __call__(self) -> None:
        assert self.gate is not None
        self.started.append(self.gate.issued)
        self.entered.release()
        assert self.hold.wait(WAIT)
        if self.fail:
            self.fail = False
            raise StoreBackendError("Cannot sync the store to disk: test")


def waiting(gate: DurabilityGate, n: int) -> None:
    """Wait until ``n`` threads wait on the gate's condition."""
    for _ in range(int(WAIT * 100)):
        with gate._cond:
            if len(gate._cond._waiters) >= n:    # type: ignore[attr-defined]
                return
        threading.Event().wait(0.01)
    raise AssertionError(f"{n} threads never waited on the gate")


def test_one_sync_covers_every_ticket_issued_before_it_started():
    sync = BlockingSync()
    gate = sync.gate = DurabilityGate(sync)
    first = threading.Thread(target=gate.sync)
    first.start()
    assert sync.entered.acquire(timeout=WAIT)        # sync 1 runs, covering ticket 1
    late = [threading.Thread(target=gate.sync) for _ in range(3)]
    for t in late:
        t.start()
    waiting(gate, 3)                                 # tickets 2-4 wait: sync 1 is too early
    assert gate.issued == 4 and gate.durable == 0
    sync.hold.set()
    for t in [first, *late]:
        t.join(WAIT)
    assert sync.started == [1, 4]                    # one more sync for the three
    assert gate.syncs == 2 and gate.durable == 4


def test_a_ticket_a_running_sync_covers_waits_for_it_without_a_sync_of_its_own():
    sync = BlockingSync()
    gate = sync.gate = DurabilityGate(sync)
    ticket = gate.ticket()
    runner = threading.Thread(target=gate.sync)      # ticket 2: its sync covers 1 and 2
    runner.start()
    assert sync.entered.acquire(timeout=WAIT)
    waiter = threading.Thread(target=gate.wait, args=(ticket,))
    waiter.start()
    waiting(gate, 1)
    sync.hold.set()
    runner.join(WAIT)
    waiter.join(WAIT)
    assert sync.started == [2] and gate.syncs == 1 and gate.durable == 2


def test_a_failed_sync_raises_in_its_runner_and_the_others_sync_again():
    sync = BlockingSync()
    gate = sync.gate = DurabilityGate(sync)
    sync.fail = True
    errors: list[Exception] = []

    def run() -> None:
        try:
            gate.sync()
        except StoreBackendError as e:
            errors.append(e)

    first = threading.Thread(target=run)
    first.start()
    assert sync.entered.acquire(timeout=WAIT)
    other = threading.Thread(target=run)
    other.start()
    waiting(gate, 1)
    sync.hold.set()
    first.join(WAIT)
    other.join(WAIT)
    assert len(errors) == 1 and "Cannot sync" in str(errors[0])
    assert sync.started == [1, 2] and gate.syncs == 1 and gate.durable == 2


def test_store_commit_is_synced_unless_deferred(tmp_path):
    with QuadStore(str(tmp_path / "s")) as st:
        gate = st.durability
        assert gate is not None
        before = gate.syncs
        with st.write() as txn:
            txn.add_graph("<urn:g:1>", [("<urn:s>", P, '"1"')])
        assert gate.syncs == before + 1 and gate.durable == gate.issued
        with st.write(durable=False) as txn:
            txn.add_graph("<urn:g:2>", [("<urn:s>", P, '"2"')])
        assert gate.syncs == before + 1
        st.make_durable()
        assert gate.syncs == before + 2


def test_store_sync_off_keeps_no_gate_and_never_syncs(tmp_path):
    with QuadStore(str(tmp_path / "s"), sync=False) as st:
        assert st.durability is None
        with st.write() as txn:
            txn.add_graph("<urn:g:1>", [("<urn:s>", P, '"1"')])
        st.make_durable()                                # a no-op
    with QuadStore(str(tmp_path / "s"), readonly=True) as ro:
        assert ro.durability is None


def test_repository_writes_return_after_a_sync_that_started_after_their_commit(
        repo_factory):
    repo = repo_factory(sync=True)
    gate = repo.store.durability
    lock = threading.Lock()
    syncs: list[dict] = []           # feed seq committed when each sync started; done
    real = gate._sync

    def recording_sync() -> None:
        rec = {"seq": repo.feed_state()["seq"], "done": False}
        with lock:
            syncs.append(rec)
        real()
        with lock:
            rec["done"] = True

    gate._sync = recording_sync
    covered: dict[str, int] = {}     # uid -> highest feed seq a finished sync covered

    def writer(i: int) -> None:
        for k in range(5):
            uid = f"/w{i}-{k}"
            repo.create_or_replace(uid)
            with lock:
                covered[uid] = max((s["seq"] for s in syncs if s["done"]), default=-1)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    created = {c.uid: c.seq for c in repo.changes() if c.kind == "create"}
    assert len(covered) == 30
    for uid, seq in created.items():
        if uid in covered:
            assert covered[uid] >= seq, f"{uid} returned before a sync covered it"
    assert 0 < gate.syncs <= gate.issued


def test_repository_transaction_returns_after_a_sync(repo_factory):
    repo = repo_factory(sync=True)
    gate = repo.store.durability
    before = gate.syncs
    with repo.transaction():
        repo.create_or_replace("/a")
        repo.create_or_replace("/b")
    assert gate.syncs == before + 1 and gate.durable == gate.issued


def test_repository_failed_write_does_not_sync(repo_factory):
    repo = repo_factory(sync=True)
    gate = repo.store.durability
    before = gate.syncs
    with pytest.raises(RuntimeError), repo.transaction():
        repo.create_or_replace("/a")
        raise RuntimeError("rolled back")
    assert gate.syncs == before and not repo.exists("/a")


def test_index_ahead_of_main_is_rebuilt_when_opened(tmp_path):
    """A machine crash undid main's last (unsynced) commits after the indexer had
    applied them: the index, ahead of main's log, is rebuilt from main's graphs."""
    path = str(tmp_path / "s")
    with QuadStore(path) as st:
        for i in range(3):
            with st.write() as txn:
                txn.add_graph(f"<urn:g:{i}>", [("<urn:s>", P, f'"{i}"')])
        st.copy(str(tmp_path / "crashed"))           # main as it was on disk
        for i in range(3, 5):
            with st.write() as txn:
                txn.add_graph(f"<urn:g:{i}>", [("<urn:s>", P, f'"{i}"')])
        st.index()
        assert st.index_state() == (5, 5)
    shutil.copy(os.path.join(tmp_path, "crashed", "data.mdb"), os.path.join(path, "data.mdb"))
    with QuadStore(path) as st:
        assert st.index_state() == (0, 3)            # a rebuild under way
        expected = sorted(('"0"', '"1"', '"2"'))
        with st.read() as txn:
            assert sorted(q[2] for q in txn.match(None, P, None)) == expected
        st.index()
        assert st.index_state() == (3, 3)
        with st.read() as txn:
            assert sorted(q[2] for q in txn.match(None, P, None)) == expected


def test_index_behind_main_is_kept_when_opened(tmp_path):
    path = str(tmp_path / "s")
    with QuadStore(path) as st:
        for i in range(3):
            with st.write() as txn:
                txn.add_graph(f"<urn:g:{i}>", [("<urn:s>", P, f'"{i}"')])
        st.index()
        with st.write() as txn:
            txn.add_graph("<urn:g:3>", [("<urn:s>", P, '"3"')])
    with QuadStore(path) as st:
        assert st.index_state() == (3, 4)
