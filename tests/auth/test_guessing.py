"""Password guessing is slowed: wrong passwords are counted per user name and per
client address, with a growing backoff (429 and ``Retry-After``) that never locks
the right password out from another address; the counts are bounded (least
recently seen forgotten first) and so are the argon2 verifications at once (503
with ``Retry-After`` when none is free in time)."""
from __future__ import annotations

import threading

import pytest

from lakesuperior.config import Config
from lakesuperior.endpoints import authn
from tests.auth.conftest import ALICE, ROOT, basic

WRONG = ("alice", "not her password")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def guarded(make_app, clock):
    """``guarded(**config)``: (client, guard) of an app with those settings (3 free
    failures, a 30 s first backoff unless given), its guard on the test clock."""
    def build(**settings):
        settings = {"auth_guessing_free_failures": 3, "auth_guessing_backoff": 30,
                    **settings}
        app = make_app(**settings)
        guard = app.extensions[authn.EXTENSION].guard
        guard.clock = clock
        return app.test_client(), guard
    return build


def get(client, who, address: str, **headers):
    return client.get("/rest/", headers={**basic(*who), **headers},
                      environ_base={"REMOTE_ADDR": address})


def retry_after(r) -> int:
    assert r.status_code == 429, r.get_data(as_text=True)
    return int(r.headers["Retry-After"])


def test_guessing_backoff_429_after_free_failures(guarded):
    client, _ = guarded()
    for _ in range(3):
        assert get(client, WRONG, "10.0.0.1").status_code == 401
    r = get(client, ALICE, "10.0.0.1")           # even the right password waits
    assert 1 <= retry_after(r) <= 30
    text = r.get_data(as_text=True)
    assert "Too many wrong passwords" in text and "wonder" not in text
    assert "WWW-Authenticate" not in r.headers


def test_guessing_right_password_from_another_address_is_never_locked_out(guarded):
    client, _ = guarded()
    for _ in range(3):
        assert get(client, WRONG, "10.0.0.1").status_code == 401
    assert get(client, WRONG, "10.0.0.1").status_code == 429
    # another address guessing alice gets one try, then waits for alice's backoff
    assert get(client, WRONG, "10.0.0.3").status_code == 401
    assert get(client, WRONG, "10.0.0.3").status_code == 429
    assert get(client, ALICE, "10.0.0.2").status_code == 200
    # other users: refused from the guessing address, not from others
    assert get(client, ROOT, "10.0.0.1").status_code == 429
    assert get(client, ROOT, "10.0.0.5").status_code == 200


def test_guessing_cached_password_does_not_bypass_backoff(guarded):
    client, _ = guarded()
    assert get(client, ALICE, "10.0.0.1").status_code == 200     # now in the cache
    for _ in range(3):
        assert get(client, WRONG, "10.0.0.1").status_code == 401
    assert get(client, ALICE, "10.0.0.1").status_code == 429


def test_guessing_backoff_doubles_then_caps_then_is_forgotten(guarded, clock):
    client, _ = guarded(auth_guessing_free_failures=1, auth_guessing_backoff=2,
                        auth_guessing_max_backoff=10)
    waits = []
    for _ in range(5):
        assert get(client, WRONG, "10.0.0.1").status_code == 401
        waits.append(retry_after(get(client, WRONG, "10.0.0.1")))
        clock.now += waits[-1]
    assert waits == [2, 4, 8, 10, 10]
    clock.now += 2 * 10                      # twice max_backoff without a failure
    assert get(client, WRONG, "10.0.0.1").status_code == 401
    assert retry_after(get(client, WRONG, "10.0.0.1")) == 2


def test_guessing_success_clears_the_user_count(guarded, clock):
    client, _ = guarded(auth_guessing_backoff=1)
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        assert get(client, WRONG, address).status_code == 401
    assert get(client, WRONG, "10.0.0.1").status_code == 429     # alice's backoff
    clock.now += 1
    assert get(client, ALICE, "10.0.0.9").status_code == 200
    assert get(client, WRONG, "10.0.0.1").status_code == 401     # counted afresh


def test_guessing_memory_is_bounded(guarded):
    client, guard = guarded(auth_guessing_tracked=8)
    for i in range(40):
        assert get(client, (f"u{i}", "x"), f"10.0.1.{i}").status_code == 401
    assert guard.tracked() == (8, 8)


def test_guessing_verifications_at_once_are_bounded_503(guarded):
    client, guard = guarded(auth_guessing_max_verifying=1, auth_guessing_verify_wait=0.2)
    with guard.verifying():               # another request is verifying a password
        r = get(client, ALICE, "10.0.0.1")
    assert r.status_code == 503
    assert int(r.headers["Retry-After"]) >= 1
    assert "password" in r.get_data(as_text=True).lower()
    assert get(client, ALICE, "10.0.0.1").status_code == 200      # free again


def test_guessing_waits_briefly_for_a_verification(guarded):
    client, guard = guarded(auth_guessing_max_verifying=1, auth_guessing_verify_wait=10)
    held = threading.Event()
    release = threading.Event()

    def hold():
        with guard.verifying():
            held.set()
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    threading.Timer(0.3, release.set).start()
    assert get(client, ALICE, "10.0.0.1").status_code == 200
    t.join()


def test_guessing_address_behind_a_trusted_proxy(guarded):
    client, _ = guarded(auth_trusted_proxies=("127.0.0.1",))
    for _ in range(3):
        assert get(client, WRONG, "127.0.0.1",
                   **{"X-Forwarded-For": "9.9.9.9, 1.2.3.4"}).status_code == 401
    # the proxy's own address is not locked: the client behind it is
    assert get(client, WRONG, "127.0.0.1", **{"X-Forwarded-For": "1.2.3.4"}
               ).status_code == 429
    assert get(client, ROOT, "127.0.0.1", **{"X-Forwarded-For": "5.6.7.8"}).status_code == 200
    # from an address that is not a trusted proxy, the header is ignored
    for _ in range(3):
        assert get(client, ("bob", "x"), "10.0.0.7",
                   **{"X-Forwarded-For": "8.8.8.8"}).status_code == 401
    assert get(client, ROOT, "10.0.0.7", **{"X-Forwarded-For": "8.8.4.4"}).status_code == 429


def test_guessing_state_is_per_app(app, data_dir):
    """Each app has its own counts: no process-wide state."""
    other = authn.Authenticator(Config(data_dir=str(data_dir)))
    assert other.guard is not app.extensions[authn.EXTENSION].guard
    assert other.guard.tracked() == (0, 0)
