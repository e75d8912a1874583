"""The background indexer in a process of its own (``store/indexer_process.py``):
one child per store, elected by the lock file, stopped with its parent, taken
over when it dies, and never losing what it had not applied."""
import io
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from lakesuperior.store.background import IndexerLock
from lakesuperior.store.indexer_process import IndexerProcess, main, run_child
from lakesuperior.store.quadstore import QuadStore

from .test_index_tail import CONTAINER, TYPE, answers, graph, write_history


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "s")
    QuadStore(p).close()
    return p


def wait_for(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:        # a zombie (not reaped yet) has ended too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def lock_free(path):
    lock = IndexerLock(path)
    if lock.acquire():
        lock.release()
        return True
    return False


def test_the_child_indexes_holds_the_lock_and_stops_with_stop(path):
    proc = IndexerProcess(path, {"sync": False}, lock_poll=0.05).start()
    try:
        assert wait_for(lambda: proc.pid is not None)
        pid = proc.pid
        assert pid != os.getpid() and proc.leader and proc.started == 1
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            assert b"lakesuperior.store.indexer_process" in fh.read()
        assert not lock_free(path)              # the child holds it, not this process
        with QuadStore(path, sync=False) as st:
            write_history(st, random.Random(4))
            assert st.pending() > 0
            assert wait_for(lambda: st.pending() == 0)
            expected = answers(st)
            st.index()                          # nothing was left to apply
            assert answers(st) == expected
    finally:
        proc.stop()
    assert not alive(pid) and proc.pid is None and not proc.leader
    assert lock_free(path)


def test_one_child_per_store_and_another_takes_over_when_it_dies(path):
    first = IndexerProcess(path, {}, lock_poll=0.05).start()
    second = IndexerProcess(path, {}, lock_poll=0.05).start()
    try:
        assert wait_for(lambda: first.leader or second.leader)
        time.sleep(0.3)                         # several looks by both
        assert [first.leader, second.leader].count(True) == 1
        leader = first if first.leader else second
        pid = leader.pid
        with QuadStore(path, sync=False) as st:
            for i in range(200):               # the child is killed in the middle
                with st.write() as txn:
                    txn.add_graph(graph(i), [(graph(i), TYPE, CONTAINER)])
                if i == 100:
                    os.kill(pid, signal.SIGKILL)
            assert wait_for(lambda: first.started + second.started == 2)
            assert wait_for(lambda: st.pending() == 0)
            expected = answers(st)
        assert not alive(pid)
        with QuadStore(path, sync=False) as st:
            assert st.pending() == 0 and answers(st) == expected
            with st.read() as txn:
                assert txn.count(None, TYPE, CONTAINER, None) == 200
    finally:
        first.stop()
        second.stop()
    assert lock_free(path)


PARENT = textwrap.dedent("""
    import sys, time
    from lakesuperior.store.indexer_process import IndexerProcess
    proc = IndexerProcess(sys.argv[1], {}, lock_poll=0.05).start()
    while proc.pid is None:
        time.sleep(0.01)
    print(proc.pid, flush=True)
    time.sleep(600)
""")


def test_the_child_ends_when_its_parent_is_killed(path):
    with subprocess.Popen([sys.executable, "-c", PARENT, path],
                          stdout=subprocess.PIPE) as parent:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    assert wait_for(lambda: not alive(child), 10)
    assert wait_for(lambda: lock_free(path), 10)


def test_a_child_that_cannot_start_is_retried_later_and_later(path):
    # iri_cache=0 makes QuadStore refuse to open: each child exits at once
    proc = IndexerProcess(path, {"iri_cache": 0}, lock_poll=0.05).start()
    try:
        assert wait_for(lambda: proc.failures >= 3)
        started = proc.started
        time.sleep(0.25)                       # the wait has grown past 0.05 s * 2**3
        assert proc.started <= started + 1
    finally:
        proc.stop()
    assert lock_free(path)


def test_unknown_options_are_refused(path):
    with pytest.raises(ValueError, match="Unknown indexer options: colour"):
        IndexerProcess(path, {"colour": 1})


def test_run_child_indexes_until_its_input_ends(path):
    with QuadStore(path, sync=False) as st:
        write_history(st, random.Random(6))
        assert st.pending() > 0
    lock = IndexerLock(path)
    assert lock.acquire()
    fd = os.dup(lock.file.fileno())           # the child's descriptor: same open file
    lock.release()
    # an input that ends at once: the child starts, stops after its batch, exits 0
    assert run_child(path, {"sync": False}, fd, io.BytesIO(b"")) == 0
    with pytest.raises(OSError):
        os.fstat(fd)                          # its descriptor closed: the lock is free
    assert lock_free(path)


def test_main_checks_its_arguments(capsys):
    assert main(["only-one"]) == 2
    assert "usage: python -m lakesuperior.store.indexer_process" in capsys.readouterr().err


def test_main_runs_a_child_on_its_command_line(path):
    lock = IndexerLock(path)
    assert lock.acquire()
    fd = lock.file.fileno()
    cmd = [sys.executable, "-m", "lakesuperior.store.indexer_process", path,
           json.dumps({"sync": False}), str(fd)]
    with QuadStore(path, sync=False) as st:
        write_history(st, random.Random(8))
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, pass_fds=(fd,))
    lock.release()
    with QuadStore(path, sync=False) as st:
        assert wait_for(lambda: st.pending() == 0)
    child.stdin.close()
    assert child.wait(30) == 0
    assert lock_free(path)
