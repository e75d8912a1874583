"""A real ``lsup-server`` (gunicorn) on a free port of 127.0.0.1, for the tests that
need the wire: started in a temporary directory, waited for, stopped at exit."""
from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from lakesuperior.bench.ports import free_port

START_TIMEOUT = 120.0  # seconds for the server to answer its first request (a busy machine)


def child_pids(pid: int) -> list[int]:
    """Pids of the live children of process ``pid`` (from ``/proc``): a server's workers."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def get_status(port: int, path: str = "/rest/") -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


@contextmanager
def lsup_server(tmp: Path, env: Mapping[str, str] | None = None, *,
                ready: Callable[[], bool] = lambda: True
                ) -> Iterator[tuple[subprocess.Popen, int, Path]]:
    """``python -m lakesuperior.server`` with its data in ``tmp/data`` and its log in
    ``tmp/server.log`` (``env``: more ``LSUP_*`` settings; authentication is off
    unless ``env`` sets ``LSUP_AUTH_ENABLED``, one worker unless it sets
    ``LSUP_SERVER_WORKERS``: a worker's start costs 0.3 s of CPU); yields ``(process, port,
    log path)`` once ``GET /rest/`` (the LDP root: ``LSUP_HTTP_BASE_PATH`` of ``env``)
    answers 200 and ``ready()`` holds. Raises with the log if the server exits or
    does not start in time."""
    port = free_port()
    full_env = {**os.environ, "LSUP_DATA_DIR": str(tmp / "data"),
                "LSUP_SERVER_BIND": f"127.0.0.1:{port}", "LSUP_AUTH_ENABLED": "false",
                "LSUP_SERVER_WORKERS": "1", **(env or {})}
    full_env.pop("LSUP_CONFIG", None)
    root = full_env.get("LSUP_HTTP_BASE_PATH", "/rest") + "/"
    log_path = tmp / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "lakesuperior.server"], cwd=tmp,
                                env=full_env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError("lsup-server exited:\n" + log_path.read_text(errors="replace"))
            try:
                if get_status(port, root) == 200 and ready():
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("lsup-server did not start:\n"
                                   + log_path.read_text(errors="replace"))
            time.sleep(0.1)
        yield proc, port, log_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
