"""Password guessing against a real lsup-server (2 workers, authentication on): a
flood of wrong passwords on 16 connections is answered 429 after a few
verifications, and the right password from another address still works."""
from __future__ import annotations

import http.client
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.auth.conftest import ALICE, basic
from tests.servers import lsup_server

pytestmark = pytest.mark.slow


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
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "users.json").write_bytes(seeded_users)
    (tmp_path / "data" / "users.json").chmod(0o600)
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_STORE_SYNC": "false",
           "LSUP_AUTH_GUESSING_BACKOFF": "60"}
    with lsup_server(tmp_path, env) as (_proc, port, _log):
        yield port


def test_guessing_flood_is_slowed_and_the_user_still_gets_in(server):
    deadline = time.monotonic() + 8

    def guess(_n: int) -> list[int]:
        out = []
        while time.monotonic() < deadline:
            out.append(status_from(server, ("alice", "guess")))
        return out

    with ThreadPoolExecutor(16) as pool:
        statuses = [s for part in pool.map(guess, range(16)) for s in part]
    verified = statuses.count(401)
    assert set(statuses) <= {401, 429, 503}      # 503: no verification slot in time
    assert 429 in statuses
    # each worker verifies at most free_failures (5) before the backoff, plus the
    # guesses that held one of its 2 verification slots when the backoff began
    assert verified <= 2 * (5 + 2), statuses
    assert status_from(server, ALICE, "127.0.0.2") == 200     # another loopback address
    assert status_from(server, ALICE) == 429
