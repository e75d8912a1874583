"""Group commit through the ``Repository`` (``transactions.py``, ``store/group.py``):
the writes of several threads share one commit and one sync, each sees the
writes before it, a write that fails leaves no trace (its change events
included) while the others land, events stay per write and in commit order,
the map grows inside a group, and a killed process loses no acknowledged write."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import lakesuperior
import lakesuperior.store
from lakesuperior.exceptions import ResourceNotExistsError, ServerManagedTermError

from ..groups import OneGroup

TTL = "text/turtle"
CREATED = "<http://fedora.info/definitions/v4/repository#created>"
MAP = 512 << 10


def test_concurrent_writes_share_one_commit_and_one_sync(repo_factory):
    repo = repo_factory(sync=True, background_index=False)
    syncs, commits = repo.store.durability.syncs, repo.write_groups.commits
    group = OneGroup(repo.write_groups)
    for i in range(8):
        group.start(f"w{i}", repo.create_or_replace, f"/w{i}",
                    data=f'<> <http://ex.org/p> "{i}" .'.encode(), media_type=TTL)
    results = group.run()
    assert all(r[0] == "ok" and r[1][0] == "create" for r in results.values()), results
    assert repo.write_groups.commits == commits + 1
    assert repo.store.durability.syncs == syncs + 1
    assert sorted(repo.get("/").children) == sorted(f"/w{i}" for i in range(8))


def test_observers_hear_each_writes_wait_for_the_lock(repo):
    waits: list[float] = []

    def broken(seconds: float) -> None:
        raise RuntimeError("an observer's bug is not the write's")
    repo.write_groups.observe_waits(waits.append)
    repo.write_groups.observe_waits(broken)
    group = OneGroup(repo.write_groups)
    for i in range(3):
        group.start(f"w{i}", repo.create_or_replace, f"/w{i}")
    threading.Event().wait(0.2)                  # the lock held: they all wait
    results = group.run()
    assert all(r[0] == "ok" for r in results.values()), results
    assert len(waits) == 3 and min(waits) >= 0.2
    with repo.transaction():                     # a write of its own: it waits too
        pass
    assert len(waits) == 4 and waits[-1] < 0.2
    repo.write_groups.forget_observer(waits.append)
    repo.create_or_replace("/after")
    assert len(waits) == 4


def test_each_write_of_a_group_sees_the_writes_before_it(repo):
    repo.create_or_replace("/c")
    seen: list[int] = []

    def add(i):
        seen.append(len(repo.get("/c").children))
        repo.create_or_replace(f"/c/n{i}")
        return i
    group = OneGroup(repo.write_groups)
    for i in range(6):
        group.start(f"n{i}", repo.transact, add, i)
    group.run()
    assert seen == list(range(6))
    assert len(repo.get("/c").children) == 6


def test_a_write_that_fails_after_writing_leaves_no_trace(repo):
    commits = repo.write_groups.commits

    def fails():
        repo.create_or_replace("/bad")                     # written, then refused:
        repo.create_or_replace("/bad/x", data=f"<> {CREATED} \"x\" .".encode(),
                               media_type=TTL)

    def swallows():                                        # the error caught: still undone
        repo.create_or_replace("/quiet")
        try:
            repo.create_or_replace("/quiet/x", data=f"<> {CREATED} \"x\" .".encode(),
                                   media_type=TTL)
        except ServerManagedTermError:
            pass
        return "returned"
    group = OneGroup(repo.write_groups)
    group.start("a", repo.create_or_replace, "/a")
    group.start("bad", repo.transact, fails)
    group.start("quiet", repo.transact, swallows)
    group.start("b", repo.create_or_replace, "/b")
    results = group.run()
    assert results["a"][0] == "ok" and results["b"][0] == "ok"
    for name in ("bad", "quiet"):
        kind, error = results[name]
        assert kind == "error" and isinstance(error, ServerManagedTermError), results[name]
    assert repo.write_groups.commits == commits + 1
    assert sorted(repo.get("/").children) == ["/a", "/b"]
    for uid in ("/bad", "/quiet"):
        with pytest.raises(ResourceNotExistsError):
            repo.get(uid)
    uids = [c.uid for c in repo.changes()]
    assert "/bad" not in uids and "/quiet" not in uids


def test_events_stay_per_write_and_in_commit_order(repo):
    order: list[str] = []

    def create(uid):
        order.append(uid)
        return repo.create_or_replace(uid)
    before = repo.feed_state()["seq"]
    group = OneGroup(repo.write_groups)
    for i in range(5):
        group.start(f"e{i}", repo.transact, create, f"/e{i}")
    group.run()
    changes = list(repo.changes(before))
    created = [c.uid for c in changes if c.kind == "create"]
    assert created == order
    # each write's events are its own: its resource's creation, then its parent's update
    assert [c.uid for c in changes] == [u for uid in order for u in (uid, "/")]
    seqs = [c.seq for c in changes]
    assert seqs == sorted(seqs)


def test_the_map_grows_inside_a_group(repo_factory):
    repo = repo_factory(map_size=MAP, background_index=False)
    assert repo.store.stats()["map_size"] == MAP
    commits = repo.write_groups.commits
    group = OneGroup(repo.write_groups)
    for i in range(8):
        body = "\n".join(f'<> <http://ex.org/p{j}> "{os.urandom(150).hex()}" .'
                         for j in range(300))
        group.start(f"w{i}", repo.create_or_replace, f"/big{i}", data=body.encode(),
                    media_type=TTL)
    results = group.run()
    assert repo.write_groups.commits == commits + 1
    assert all(r[0] == "ok" for r in results.values()), results
    assert repo.store.stats()["map_size"] > MAP          # grown inside the group
    assert len(repo.get("/").children) == 8
    assert len(repo.get("/big7").user_data) == 300
    assert repo.integrity_check().ok


def test_transact_inside_a_transaction_joins_it(repo, state):
    before = state(repo)
    with pytest.raises(RuntimeError):
        with repo.transaction():
            assert repo.transact(lambda: repo.create_or_replace("/in")[0]) == "create"
            assert repo.in_transaction and repo.exists("/in")
            raise RuntimeError("boom")
    assert state(repo) == before
    assert repo.transact(lambda x, y=0: x + y, 1, y=2) == 3
    assert not repo.in_transaction


def test_transact_of_what_is_not_callable_is_refused(repo, state):
    before = state(repo)
    with pytest.raises(TypeError, match="transact takes a callable"):
        repo.transact("/a")                                  # type: ignore[arg-type]
    assert state(repo) == before


def test_a_writer_alone_runs_in_its_own_thread(repo):
    me = threading.get_ident()
    assert repo.transact(threading.get_ident) == me
    assert repo.write_groups.waiting == 0


# --- a killed process -------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys, threading
    paths = json.loads(sys.argv[2])
    sys.path[:0] = paths["sys"]
    import lakesuperior, lakesuperior.store
    lakesuperior.__path__[:] = paths["pkg"]
    lakesuperior.store.__path__[:] = paths["store"]
    from lakesuperior import Repository

    repo = Repository(sys.argv[1], base_uri="http://test.example/rest", sync=True)
    out = threading.Lock()

    def write(t):
        for i in range(1_000_000):
            uid = f"/t{t}-{i}"
            repo.create_or_replace(uid, data=b'<> <http://ex.org/p> "x" .',
                                   media_type="text/turtle")
            with out:
                print(uid, flush=True)

    for t in range(6):
        threading.Thread(target=write, args=(t,), daemon=True).start()
    threading.Event().wait()
""")


@pytest.mark.slow
def test_a_killed_process_loses_no_acknowledged_write(tmp_path, repo_factory):
    data = tmp_path / "killed"
    paths = {"sys": [p for p in sys.path if p], "pkg": list(lakesuperior.__path__),
             "store": list(lakesuperior.store.__path__)}
    acked: list[str] = []
    with subprocess.Popen([sys.executable, "-c", CHILD, str(data), json.dumps(paths)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            while len(acked) < 300:
                line = proc.stdout.readline()
                if not line:
                    pytest.fail(f"The child stopped writing: {proc.communicate()[1]}")
                acked.append(line.strip())
            proc.send_signal(signal.SIGKILL)
            rest = proc.communicate(timeout=30)[0]
            acked.extend(line.strip() for line in rest.splitlines() if line.strip())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    repo = repo_factory("killed", background_index=False)
    children = set(repo.get("/").children)
    missing = [uid for uid in acked if uid not in children]
    assert not missing, f"{len(missing)} acknowledged writes lost, e.g. {missing[:3]}"
    assert repo.integrity_check().ok
