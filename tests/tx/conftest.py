"""Fixtures for HTTP transactions: an app with a controllable clock."""
from __future__ import annotations

import pytest

from lakesuperior.config import Config
from tests.apps import build_app

TTL = "text/turtle"
ROOT = "http://localhost/rest"


class Clock:
    """A clock the tests move forward (transaction expiry without waiting)."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def tx_app(data_dir, **overrides):
    """The app on ``data_dir`` (authentication off unless ``overrides`` say), for a
    test that closes and opens it again itself; the caller closes it."""
    overrides.setdefault("auth_enabled", False)
    return build_app(Config(data_dir=str(data_dir), sync=False, **overrides))


@pytest.fixture
def app_config():
    return {"auth_enabled": False, "transactions_max_open": 3,
            "transactions_max_operations": 200, "transactions_max_bytes": 10_000}


@pytest.fixture
def clock():
    """The clock of the apps' transactions, moved by the test."""
    return Clock()


@pytest.fixture
def make_app(make_app, clock):
    """``make_app`` (tests/conftest.py) whose apps' transactions run on ``clock``."""
    def make(**config):
        app = make_app(**config)
        app.extensions["lakesuperior"].staging.clock = clock
        return app
    return make


@pytest.fixture
def repo(app):
    return app.extensions["lakesuperior"].repository


def open_tx(client) -> str:
    r = client.post("/rest/fcr:tx")
    assert r.status_code == 201, r.get_data(as_text=True)
    return r.headers["Location"]
