"""Browser tests: Debian's Chromium, driven headless by Playwright, against a real
``lsup-server`` on 127.0.0.1 with authentication on (``make test`` installs the
``chromium`` package when it is missing, as it does ActiveMQ)."""
from __future__ import annotations

import base64
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.auth.conftest import user_file
from tests.servers import lsup_server
from tests.ui.conftest import USERS  # name -> password (``root`` is an administrator)

#: Seconds an expectation waits for what a page should show (a loaded machine).
expect.set_options(timeout=15_000)
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
    """The bytes of a user file with USERS (cheaply hashed: what is tested here
    is the pages, not the cost of a password)."""
    users = [(name, pw) for name, pw in USERS.items() if name not in ADMINS]
    admins = [(name, pw) for name, pw in USERS.items() if name in ADMINS]
    return user_file(tmp_path_factory.mktemp("browser-users"), users, admins)


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
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def basic(user: str) -> dict[str, str]:
    """The HTTP Basic ``Authorization`` header of ``user``."""
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


def sign_in(page: Page, site: Site, user: str, next_: str = "/rest/") -> None:
    """Sign ``user`` in through the login form, coming from ``next_``."""
    page.goto(f"{site.url}/login?next={next_}")
    page.get_by_label("User name").fill(user)
    page.get_by_label("Password").fill(USERS[user])
    page.get_by_role("button", name="Log in").click()


@pytest.fixture
def signed_in(browser: Browser, site: Site) -> Iterator[Callable[[str], Page]]:
    """``signed_in(user)``: a page of a fresh browser context in which ``user``
    signed in through the login form (a session cookie: every form then carries
    its CSRF token)."""
    contexts = []

    def make(user: str) -> Page:
        context = browser.new_context()
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        sign_in(page, site, user)
        expect(page.get_by_role("button", name="Log out")).to_be_visible()
        return page

    yield make
    for context in contexts:
        context.close()
