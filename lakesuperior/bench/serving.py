"""Servers a benchmark runs on loopback: a command in a process of its own (an
``lsup-server``, the floor app, a triplestore), waited for until it answers,
stopped when the benchmark is done."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

START_TIMEOUT = 120.0   #: seconds a server may take to answer (a busy machine)


def clean_env(**settings: str) -> dict[str, str]:
    """This environment without ``LSUP_*`` settings, plus ``settings``: a command
    gets its configuration from the benchmark only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSUP_")}
    env.update(settings)
    return env


def accepts(port: int) -> bool:
    """Whether something accepts connections on ``127.0.0.1:port``."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid`` (from ``/proc``, Linux): a server's workers
    and the processes they started."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        out.extend(children)
        todo.extend(children)
    return out


def tree_cpu_s(pid: int) -> float:
    """CPU seconds the threads of ``pid`` and of every live process below it have
    run (the scheduler's nanosecond counts, ``/proc/*/task/*/schedstat``)."""
    total = 0
    for proc in (pid, *descendants(pid)):
        try:
            tasks = os.listdir(f"/proc/{proc}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{proc}/task/{task}/schedstat", "rb") as fh:
                    total += int(fh.read().split()[0])
            except (OSError, IndexError, ValueError):
                continue
    return total / 1e9


def stop(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Terminate ``proc``; kill it if it has not exited after ``timeout`` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def running(command: Sequence[str], log: Path, ready: Callable[[], bool], *,
            env: Mapping[str, str] | None = None, cwd: str | Path | None = None
            ) -> Iterator[subprocess.Popen]:
    """``command`` started with its output in ``log``; yields the process once
    ``ready()`` holds, stops it at exit. Raises ``RuntimeError`` (with the log)
    if it exits or is not ready in ``START_TIMEOUT`` seconds."""
    with open(log, "ab") as out:
        proc = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT,
                                env=dict(env) if env is not None else None, cwd=cwd)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            if proc.poll() is not None:
                raise RuntimeError(f"{command[-1]} exited:\n" + log.read_text(errors="replace"))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[-1]} did not start in {START_TIMEOUT:g} s:\n"
                                   + log.read_text(errors="replace"))
            time.sleep(0.2)
        yield proc
    finally:
        stop(proc)


@contextmanager
def lsup_server(data_dir: str | Path, port: int, log: Path, *,
                settings: Mapping[str, str] | None = None,
                ready: Callable[[], bool] | None = None) -> Iterator[subprocess.Popen]:
    """``lsup-server`` on ``127.0.0.1:port`` with its data in ``data_dir`` and only
    the ``LSUP_*`` ``settings`` given (its defaults otherwise: authentication on);
    ready when it accepts connections, or when ``ready()`` holds."""
    env = clean_env(**(settings or {}))
    command = [sys.executable, "-m", "lakesuperior.server", "--bind", f"127.0.0.1:{port}",
               "--data-dir", str(data_dir)]
    with running(command, log, ready or (lambda: accepts(port)), env=env) as proc:
        yield proc
