"""Browser tests: Debian's Chromium, driven headless by Playwright, against a real
``lsup-server`` on 127.0.0.1 with authentication on (``make test`` installs the
``chromium`` package when it is missing, as it does ActiveMQ)."""
from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from lakesuperior.auth.users import UserDB
from tests.servers import lsup_server

#: The users of the test site: name -> password (``root`` is an administrator).
USERS = {"alice": "alice-pw", "bob": "bob-pw", "root": "root-pw"}
ADMINS = frozenset({"root"})


@dataclass
class Site:
    """A running server: its base URL, its LDP root, its log."""

    url: str
    log: Path

    @property
    def root(self) -> str:
        return self.url + "/rest/"


@pytest.fixture(scope="session")
def browser_users(tmp_path_factory) -> bytes:
    """The bytes of a user file with USERS (hashed once per session)."""
    db = UserDB(tmp_path_factory.mktemp("browser-users"))
    for name, password in USERS.items():
        db.add(name, password, admin=name in ADMINS)
    with open(db.path, "rb") as fh:
        return fh.read()


@pytest.fixture(scope="module")
def site(tmp_path_factory, browser_users) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("site")
    data = tmp / "data"
    data.mkdir()
    (data / "users.json").write_bytes(browser_users)
    (data / "users.json").chmod(0o600)
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_STORE_SYNC": "false"}
    with lsup_server(tmp, env) as (_proc, port, log):
        yield Site(f"http://127.0.0.1:{port}", log)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = shutil.which("chromium")
    assert executable, "Debian's chromium package is missing: `make test` installs it"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page of a fresh browser context, without credentials."""
    context = browser.new_context()
    yield context.new_page()
    context.close()


@pytest.fixture
def basic_page(browser: Browser) -> Iterator[Callable[[str], Page]]:
    """``basic_page(user)``: a page of a fresh context sending ``user``'s HTTP Basic
    credentials."""
    contexts = []

    def make(user: str) -> Page:
        context = browser.new_context(
            http_credentials={"username": user, "password": USERS[user]})
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
