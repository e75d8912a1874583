"""Password guessing against a real lsup-server (2 workers, authentication on): a
flood of wrong passwords on 16 connections is answered 429 after a few
verifications, and the right password from another address still works."""
from __future__ import annotations

import http.client
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.auth.conftest import ALICE, basic, write_users
from tests.servers import lsup_server

pytestmark = pytest.mark.slow

#: The access log says which worker (its pid) answered what status.
LOG_FORMAT = "--access-logformat 'worker %(p)s answered %(s)s'"
REFUSED = re.compile(r"worker <(\d+)> answered 429")


def status_from(port: int, who, source: str = "127.0.0.1") -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.request("GET", "/rest/", headers=basic(*who))
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.fixture
def server(tmp_path, seeded_users):
    write_users(tmp_path / "data", seeded_users)
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_STORE_SYNC": "false",
           "LSUP_AUTH_GUESSING_BACKOFF": "60", "LSUP_SERVER_WORKERS": "2",
           "GUNICORN_CMD_ARGS": LOG_FORMAT}
    with lsup_server(tmp_path, env) as (_proc, port, log):
        yield port, log


def test_guessing_flood_is_slowed_and_the_user_still_gets_in(server):
    port, log = server
    # 16 connections guess until both workers have refused a guess (429), so that
    # both are in backoff for this address (120 s stop a server that never refuses)
    both_refused = threading.Event()
    deadline = time.monotonic() + 120

    def guess(_n: int) -> list[int]:
        out: list[int] = []
        while not both_refused.is_set() and time.monotonic() < deadline:
            out.append(status_from(port, ("alice", "guess")))
        return out

    with ThreadPoolExecutor(16) as pool:
        parts = [pool.submit(guess, n) for n in range(16)]
        while not both_refused.is_set() and time.monotonic() < deadline:
            if len(set(REFUSED.findall(log.read_text(errors="replace")))) >= 2:
                both_refused.set()
            time.sleep(0.05)
        both_refused.set()
        statuses = [s for part in parts for s in part.result()]
    verified = statuses.count(401)
    assert set(statuses) <= {401, 429, 503}      # 503: no verification slot in time
    assert 429 in statuses
    # each worker verifies at most free_failures (5) before the backoff, plus the
    # guesses that held one of its 2 verification slots when the backoff began
    assert verified <= 2 * (5 + 2), statuses
    assert status_from(port, ALICE, "127.0.0.2") == 200     # another loopback address
    assert status_from(port, ALICE) == 429
