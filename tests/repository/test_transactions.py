"""Atomicity: transaction(), failed calls, and a process killed in the middle of a write."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import lakesuperior
import lakesuperior.store
from lakesuperior.exceptions import ResourceNotExistsError, ServerManagedTermError

TTL = "text/turtle"


def test_transaction_commits_all_calls(repo):
    with repo.transaction():
        repo.create_or_replace("/a")
        repo.create_or_replace("/a/b", data=b'<> <http://ex.org/p> "x" .', media_type=TTL)
        assert repo.get("/a").children == ["/a/b"]       # reads see the block's writes
        assert repo.exists("/a/b")
        with repo.transaction():                          # nested: joins the outer one
            repo.create_or_replace("/c")
    assert repo.exists("/a/b") and repo.exists("/c")


def test_transaction_rolls_back_on_error(repo, state):
    before = state(repo)
    with pytest.raises(RuntimeError):
        with repo.transaction():
            repo.create_or_replace("/a")
            repo.create_or_replace("/a/b")
            raise RuntimeError("boom")
    assert state(repo) == before


def test_failed_call_inside_transaction_poisons_it(repo, state):
    before = state(repo)
    with pytest.raises(ServerManagedTermError):
        with repo.transaction():
            repo.create_or_replace("/a")
            try:
                repo.create_or_replace(
                    "/b", data=b'<> <http://fedora.info/definitions/v4/repository#created> "x" .',
                    media_type=TTL)
            except ServerManagedTermError:
                pass                      # caught, but the block is rolled back anyway
            repo.create_or_replace("/c")
    assert state(repo) == before
    # the repository is usable afterwards
    repo.create_or_replace("/d")
    assert repo.exists("/d")


def test_failed_call_writes_nothing(repo, state):
    """A call that fails after some of its writes leaves no trace."""
    repo.create_or_replace("/p")
    before = state(repo)
    # create_or_replace of a deep path creates intermediates first, then fails on the
    # leaf's input: the intermediates must not remain.
    with pytest.raises(ServerManagedTermError):
        repo.create_or_replace(
            "/p/x/y/z", data=b'<> <http://www.w3.org/ns/ldp#contains> </rest/p> .',
            media_type=TTL)
    assert state(repo) == before


def test_other_threads_do_not_see_uncommitted_writes(repo):
    seen = {}
    with repo.transaction():
        repo.create_or_replace("/a")

        def look():
            seen["exists"] = repo.exists("/a")

        t = threading.Thread(target=look)
        t.start()
        t.join()
    assert seen["exists"] is False
    assert repo.exists("/a")


def test_writers_from_other_threads_wait(repo):
    done = threading.Event()

    def write():
        repo.create_or_replace("/from-thread")
        done.set()

    with repo.transaction():
        repo.create_or_replace("/first")
        t = threading.Thread(target=write)
        t.start()
        assert not done.wait(0.2)           # blocked while the transaction is open
    t.join(10)
    assert done.is_set() and repo.exists("/from-thread")


# --- a killed process ---------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys
    paths = json.loads(sys.argv[2])
    sys.path[:0] = paths["sys"]
    import lakesuperior, lakesuperior.store
    lakesuperior.__path__[:] = paths["pkg"]
    lakesuperior.store.__path__[:] = paths["store"]
    from lakesuperior import Repository

    repo = Repository(sys.argv[1], base_uri="http://test.example/rest")
    repo.create_or_replace("/committed", data=b'<> <http://ex.org/p> "safe" .',
                           media_type="text/turtle")
    with repo.transaction():
        repo.create_or_replace("/interrupted", data=b"orphan content 8f2e",
                               media_type="text/plain")
        for i in range(1_000_000):
            repo.create_or_replace(f"/committed/n{i}", data=b'<> <http://ex.org/p> "x" .',
                                   media_type="text/turtle")
            if i == 200:
                print("in the middle", flush=True)
""")


@pytest.mark.slow
def test_kill_in_the_middle_of_a_write(tmp_path, repo_factory):
    data = tmp_path / "killed"
    paths = {"sys": [p for p in sys.path if p], "pkg": list(lakesuperior.__path__),
             "store": list(lakesuperior.store.__path__)}
    with subprocess.Popen([sys.executable, "-c", CHILD, str(data), json.dumps(paths)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            line = proc.stdout.readline()
            if line.strip() != "in the middle":
                proc.kill()
                pytest.fail(f"The child did not start its write: {proc.communicate()[1]}")
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    repo = repo_factory("killed")
    assert repo.exists("/committed")
    assert ("<http://test.example/rest/committed>", "<http://ex.org/p>", '"safe"') in \
        repo.get("/committed").user_data
    assert repo.get("/committed").children == []
    assert repo.exists("/interrupted") is False
    assert repo.exists("/committed/n0") is False
    with pytest.raises(ResourceNotExistsError):
        repo.get("/committed/n100")
    with repo.store.read() as txn:
        assert not any("/committed/n" in g for g in txn.graphs())
    assert repo.integrity_check().ok
    # the binary written before the interrupted transaction is an orphan file
    assert len(list(repo.binaries)) == 1
    assert repo.cleanup(min_age=0)["orphans"] == 1
    assert list(repo.binaries) == []
    # and the repository takes writes again
    repo.create_or_replace("/committed/after")
    assert repo.get("/committed").children == ["/committed/after"]
