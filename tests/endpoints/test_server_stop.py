"""A stopping lsup-server (SIGTERM): a request its worker has already received is
answered, idle kept-alive connections are closed at once, and the server exits
without waiting for them (lakesuperior/worker.py)."""
from __future__ import annotations

import http.client
import os
import signal
import socket
import time

import pytest

from ..servers import child_pids, lsup_server

pytestmark = pytest.mark.slow

REQUEST = b"GET /rest/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def pending_signals(pid: int) -> int:
    """The process-directed signals pending for ``pid`` (``/proc``, Linux)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("ShdPnd:"):
                return int(line.split()[1], 16)
    raise AssertionError("no ShdPnd in /proc status")


def stopped(pid: int) -> bool:
    """Whether every thread of process ``pid`` is stopped (``/proc``, Linux)."""
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] != "T":
                return False
    return True


def read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def kept_alive(port: int) -> socket.socket:
    """A connection that has had one whole response and stays open (keep-alive)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/rest/")
    r = conn.getresponse()
    r.read()
    assert r.status == 200 and r.getheader("Connection", "").lower() != "close"
    assert conn.sock is not None
    return conn.sock


def test_a_received_request_is_answered_and_idle_connections_do_not_hold_the_stop(tmp_path):
    # Kept-alive connections would otherwise stay open for a minute.
    env = {"LSUP_SERVER_WORKERS": "1", "GUNICORN_CMD_ARGS": "--keep-alive 60"}
    with lsup_server(tmp_path, env) as (proc, port, log):
        (worker,) = child_pids(proc.pid)
        busy, idle = kept_alive(port), kept_alive(port)
        # The worker, stopped, receives a request on a kept-alive connection and
        # then the master's SIGTERM: when it runs again it handles the signal
        # before it reads the request.
        os.kill(worker, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 30
            while not stopped(worker):
                assert time.monotonic() < deadline, "the worker did not stop"
                time.sleep(0.01)
            busy.sendall(REQUEST)
            started = time.monotonic()
            proc.terminate()
            while not pending_signals(worker) & SIGTERM_BIT:
                assert time.monotonic() < deadline, "the master did not stop the worker"
                time.sleep(0.01)
        finally:
            os.kill(worker, signal.SIGCONT)
        answer = read_until_closed(busy)
        head = answer.split(b"\r\n\r\n")[0].lower()
        assert answer.startswith(b"HTTP/1.1 200 ") and b"connection: close" in head, answer
        assert read_until_closed(idle) == b""          # closed by the server, no answer
        assert proc.wait(timeout=30) == 0
        # The idle connection did not keep the worker for the 60 s of its keep-alive
        # (nor for gunicorn's own stop linger: lakesuperior/worker.py).
        assert time.monotonic() - started < 10, log.read_text()
        busy.close()
        idle.close()
