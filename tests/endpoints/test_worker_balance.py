"""New connections go to the lsup-server worker holding the fewest: the
``ConnectionBoard`` alone, then a real server of two workers."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from gunicorn.config import Config as GunicornConfig
from gunicorn.glogging import Logger

from lakesuperior.config import Config
from lakesuperior.worker import ConnectionBoard, HeaderReadingWorker

from ..servers import child_pids, lsup_server

# -- the board ------------------------------------------------------------------------


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_board_tells_of_a_live_worker_holding_fewer():
    board = ConnectionBoard(slots=4)
    mine = board.take(1)
    board.post(mine, 3)
    assert not board.fewer_elsewhere(mine, 3)        # alone on the board
    other = board.take(2)                            # this process stands for the other worker
    board.post(other, 3)
    assert not board.fewer_elsewhere(mine, 3)        # as many: no one holds fewer
    board.post(other, 2)
    assert board.fewer_elsewhere(mine, 3)
    assert not board.fewer_elsewhere(other, 2)       # a worker never counts itself


def test_board_slots_follow_worker_age_and_are_left_on_exit():
    board = ConnectionBoard(slots=4)
    assert board.take(1) == 1 and board.take(6) == 2
    board.post(2, 0)
    assert board.fewer_elsewhere(1, 1)
    board.leave(2)
    assert not board.fewer_elsewhere(1, 1)           # a free slot is no worker


def test_board_forgets_a_worker_that_died_without_leaving():
    board = ConnectionBoard(slots=4)
    mine = board.take(1)
    board.take(2)
    cells = memoryview(board._mem).cast("i")
    cells[2 * 2] = dead_pid()                        # slot 2's worker died holding 0
    assert not board.fewer_elsewhere(mine, 5)
    assert cells[2 * 2] == 0                         # freed for good


def test_board_is_shared_with_forked_workers():
    board = ConnectionBoard(slots=4)
    mine = board.take(1)
    pid = os.fork()
    if pid == 0:                                     # the child: a worker of age 2, holding 0
        try:
            board.take(2)
            time.sleep(5)
        finally:
            os._exit(0)
    try:
        deadline = time.monotonic() + 5
        while not board.fewer_elsewhere(mine, 1) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert board.fewer_elsewhere(mine, 1)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert not board.fewer_elsewhere(mine, 1)        # it died: not a worker any more


def test_a_worker_takes_its_slot_in_its_own_process_not_the_arbiters(tmp_path):
    board = ConnectionBoard(slots=4)
    app = type("App", (), {"lsup_config": Config(data_dir=str(tmp_path)),
                           "connection_board": board})()
    cfg = GunicornConfig()
    worker = HeaderReadingWorker(3, os.getpid(), [], app, 30, cfg, Logger(cfg))
    try:
        worker.nr_conns = 2
        # The arbiter builds the worker before the fork: a slot taken there would bear
        # the arbiter's pid, alive after the worker died, its count left for ever.
        assert bytes(board._mem) == bytes(8 * 4)
        assert worker.slot == -1
    finally:
        worker.tmp.close()


# -- a real server --------------------------------------------------------------------


def sockets_of(pid: int) -> set[str]:
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            out.add(target)
    return out


@contextmanager
def connections(port: int, n: int) -> Iterator[list[socket.socket]]:
    """``n`` connections opened at once, each with one answered request, kept open."""
    conns = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(n)]
    try:
        for conn in conns:
            conn.sendall(b"GET /rest/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for conn in conns:
            assert conn.recv(65536).startswith(b"HTTP/1.1 200")
        yield conns
    finally:
        for conn in conns:
            conn.close()


def held(workers: list[int], before: dict[int, set[str]]) -> list[int]:
    return [len(sockets_of(w) - before[w]) for w in workers]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with lsup_server(tmp_path_factory.mktemp("balance"), {"LSUP_SERVER_WORKERS": "2"}) as (
            proc, port, _log):
        workers = [pid for pid in child_pids(proc.pid)
                   if b"indexer" not in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(workers) == 2
        deadline = time.monotonic() + 30
        while True:          # both workers up: a second connection goes to the other
            before = {w: sockets_of(w) for w in workers}
            with connections(port, 1), connections(port, 1):
                if sorted(held(workers, before)) == [1, 1]:
                    break
            assert time.monotonic() < deadline, "the second worker did not start"
            time.sleep(0.1)
        yield port, workers


def test_connections_opened_at_once_are_spread_over_the_workers(server):
    port, workers = server
    fewer = []
    for _ in range(5):
        before = {w: sockets_of(w) for w in workers}
        with connections(port, 8):
            counts = held(workers, before)
        assert sum(counts) == 8, counts
        fewer.append(min(counts))
        time.sleep(0.2)                                  # the closes counted
    # 4 to 4 or 5 to 3 each time (a busy machine may delay a worker now and
    # then); without the board, mostly 8 to 0, 7 to 1 or 6 to 2.
    assert sum(fewer) >= 15, fewer


def test_a_stopped_worker_delays_no_connection(server):
    port, workers = server
    os.kill(workers[1], signal.SIGSTOP)              # it holds fewer, and takes nothing
    try:
        before = {w: sockets_of(w) for w in workers}
        started = time.monotonic()
        with connections(port, 4):
            assert held(workers, before) == [4, 0]
        assert time.monotonic() - started < 20
    finally:
        os.kill(workers[1], signal.SIGCONT)
