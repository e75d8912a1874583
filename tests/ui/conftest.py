"""Fixtures of the staff forms (``/ui``): the app with authentication on and the
built-in root ACL (everyone reads, only administrators write), users ``alice``
and ``bob`` and the administrator ``root``, each request sent with HTTP Basic."""
from __future__ import annotations

import base64
import html
import re

import pytest

from tests.auth.conftest import user_file, write_users

USERS = {"alice": "alice-pw", "bob": "bob-pw", "root": "root-pw"}
HTML = "text/html"


@pytest.fixture(scope="session")
def seeded_users(tmp_path_factory) -> bytes:
    """The bytes of a user file with alice, bob and the administrator root."""
    return user_file(tmp_path_factory.mktemp("ui-users"),
                     [(n, p) for n, p in USERS.items() if n != "root"],
                     [("root", USERS["root"])])


@pytest.fixture
def make_app(make_app, tmp_path, seeded_users):
    """``make_app(**config)`` on a data folder holding the seeded users."""
    def make(**settings):
        path = tmp_path / f"ui-data-{len(list(tmp_path.glob('ui-data-*')))}"
        write_users(path, seeded_users)
        return make_app(data_dir=str(path), **settings)
    return make


@pytest.fixture
def app_config():
    """Authentication on, the built-in root ACL."""
    return {}


@pytest.fixture
def repo(app):
    return app.extensions["lakesuperior"].repository


def auth(user: str | None) -> dict[str, str]:
    """Headers of a browser request (HTML) by ``user`` (None: anonymous)."""
    headers = {"Accept": HTML}
    if user is not None:
        token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode("ascii")
        headers["Authorization"] = f"Basic {token}"
    return headers


class Browser:
    """A test client acting as one user, as a browser does: HTML pages, forms."""

    def __init__(self, client, user: str | None):
        self.client = client
        self.headers = auth(user)

    def get(self, url: str, **kw):
        return self.client.get(url, headers=self.headers, **kw)

    def post(self, url: str, data: dict, **kw):
        return self.client.post(url, data=data, headers=self.headers, **kw)

    def page(self, url: str) -> str:
        r = self.get(url)
        assert r.status_code == 200, (url, r.status_code, r.get_data(as_text=True)[:500])
        return r.get_data(as_text=True)


@pytest.fixture
def browser(client):
    """``browser(user)``: a ``Browser`` of ``user``."""
    return lambda user=None: Browser(client, user)


def form_field(page: str, name: str, nth: int = 0) -> str:
    """The value of the ``nth`` hidden or text input ``name`` of a page."""
    return html.unescape(re.findall(rf'name="{name}" value="([^"]*)"', page)[nth])


def grant(repo, uid: str, who: str, *modes: str, default: bool = True) -> None:
    """Give ``who`` (a user name) ``modes`` on ``uid`` through the trusted repository."""
    iri = f"{repo.base_uri}{uid}" if uid != "/" else repo.base_uri + "/"
    webid = f"info:fedora/local-user#{who}"
    ttl = ("@prefix acl: <http://www.w3.org/ns/auth/acl#> .\n"
           f"<#r> a acl:Authorization ; acl:agent <{webid}> ; acl:accessTo <{iri}> ;"
           f" acl:mode {', '.join('acl:' + m for m in modes)}"
           + (f" ; acl:default <{iri}>" if default else "") + " .\n"
           "<#all> a acl:Authorization ; acl:agentClass <http://xmlns.com/foaf/0.1/Agent> ;"
           f" acl:accessTo <{iri}> ; acl:mode acl:Read ; acl:default <{iri}> .\n")
    repo.set_acl(uid, data=ttl.encode(), media_type="text/turtle")
