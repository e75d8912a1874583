"""The bad-input battery: one seeded repository per module, and one check per case.

A case is one kind of bad input: a request (or a Python call), the status (or
exception class) it must get, a word its message must contain, and the store
compared whole (every graph with its triples, every binary digest) before and
after it. ``SEED`` describes what every module's repository holds.
"""
from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from flask.testing import FlaskClient

from lakesuperior.config import Config

LDP = "http://www.w3.org/ns/ldp#"
FCREPO = "http://fedora.info/definitions/v4/repository#"
TTL = "text/turtle"
NT = "application/n-triples"
JSONLD = "application/ld+json"
RDFXML = "application/rdf+xml"
N3 = "text/n3"
SPARQL_UPDATE = "application/sparql-update"
MAX_BODY = 50_000
#: A request or call that takes longer than this is a hang (seconds).
HANG = 10

#: What every module's repository holds: a container with a child, a binary, a
#: version of the container, a direct container, and a tombstone.
CONTAINER = "/c"
CHILD = "/c/k"
BINARY = "/c/bin"
BINARY_CONTENT = b"content"
GONE = "/gone"
DIRECT = "/dc"


def store_state(repo: Any) -> dict:
    """Everything the repository holds (as ``tests/conftest.py``'s ``store_state``)."""
    with repo.store.read() as txn:
        graphs = {g: sorted(txn.triples(g)) for g in txn.graphs()}
    return {"graphs": graphs, "binaries": sorted(repo.binaries)}


class _Hang(Exception):
    pass


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    """Fail a case that does not finish within ``HANG`` seconds (a hang), instead of
    blocking the run."""
    def alarm(signum: int, frame: Any) -> None:
        raise _Hang(f"the case did not finish within {HANG} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(HANG)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# --- HTTP -------------------------------------------------------------------------------

class Client(FlaskClient):
    """A test client that reads every response whole, like a real one."""

    def open(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("buffered", True)
        return super().open(*args, **kwargs)


def seed_http(client: Any) -> None:
    """Write ``SEED`` through HTTP."""
    ok = [
        client.put("/rest" + CONTAINER, data=b'<> <http://purl.org/dc/terms/title> "c" .',
                   content_type=TTL),
        client.put("/rest" + CHILD),
        client.put("/rest" + BINARY, data=BINARY_CONTENT, content_type="text/plain",
                   headers={"Content-Disposition": 'attachment; filename="a.txt"'}),
        client.post("/rest" + CONTAINER + "/fcr:versions"),
        client.put("/rest" + GONE),
        client.delete("/rest" + GONE),
        client.put("/rest" + DIRECT, data=(
            f"<> <{LDP}membershipResource> <{CONTAINER[1:]}> ; "
            f"<{LDP}hasMemberRelation> <http://purl.org/dc/terms/hasPart> .").encode(),
            content_type=TTL, headers={"Link": f'<{LDP}DirectContainer>; rel="type"'}),
    ]
    for r in ok:
        assert r.status_code in (201, 204), r.get_data(as_text=True)


@dataclass
class HttpApp:
    app: Any
    client: Any
    repo: Any

    def version_id(self) -> str:
        return self.repo.versions(CONTAINER)[0].id


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpApp]:
    """The app on one seeded repository for the whole module."""
    from tests.apps import build_app
    tmp = tmp_path_factory.mktemp("bad-http")
    app = build_app(Config(data_dir=str(tmp / "data"), sync=False, max_body_size=MAX_BODY,
                            referential_integrity="strict", auth_enabled=False))
    app.testing = True
    app.test_client_class = Client
    client = app.test_client()
    seed_http(client)
    try:
        yield HttpApp(app, client, app.extensions["lakesuperior"].repository)
    finally:
        app.extensions["lakesuperior"].close()


@dataclass(frozen=True)
class Req:
    """One bad request and what it must get.

    ``keyword``: a word (case-insensitive) the response body must contain;
    ``allow``: for a 405, a method the ``Allow`` header must list.
    """

    id: str
    method: str
    path: str
    status: int
    keyword: str
    data: bytes | str | None = None
    ctype: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] | str | None = None
    allow: str | None = None


def ids(cases: list[Any]) -> list[str]:
    names = [c.id for c in cases]
    assert len(names) == len(set(names)), "case ids must be unique"
    return names


def check_request(http: HttpApp, case: Req) -> Any:
    """Send ``case``; assert its status, its message and the unchanged store."""
    before = store_state(http.repo)
    path = case.path.replace("{vid}", http.version_id())
    kwargs: dict[str, Any] = {"headers": dict(case.headers)}
    if case.data is not None:
        kwargs["data"] = case.data.encode() if isinstance(case.data, str) else case.data
    if case.ctype is not None:
        kwargs["content_type"] = case.ctype
    if case.query is not None:
        kwargs["query_string"] = case.query
    r = http.client.open(path, method=case.method, **kwargs)
    text = r.get_data(as_text=True)
    assert r.status_code == case.status, (r.status_code, text)
    if case.method != "HEAD":
        assert case.keyword.lower() in text.lower(), text
    if 400 <= case.status < 500:
        assert f'rel="{LDP}constrainedBy"' in ",".join(r.headers.getlist("Link")), r.headers
    if case.allow is not None:
        allowed = {m.strip() for m in r.headers.get("Allow", "").split(",")}
        assert case.allow in allowed, r.headers.get("Allow")
    assert store_state(http.repo) == before, "the store changed"
    return r


# --- Python API -----------------------------------------------------------------------------

def seed_repo(repo: Any) -> None:
    """Write ``SEED`` through the Python API."""
    repo.create_or_replace(CONTAINER, data=b'<> <http://purl.org/dc/terms/title> "c" .',
                           media_type=TTL)
    repo.create_or_replace(CHILD)
    repo.create_or_replace(BINARY, data=BINARY_CONTENT, media_type="text/plain",
                           filename="a.txt")
    repo.create_version(CONTAINER)
    repo.create_or_replace(GONE)
    repo.delete(GONE)
    repo.create_or_replace(DIRECT, data=(
        f"<> <{LDP}membershipResource> <{CONTAINER[1:]}> ; "
        f"<{LDP}hasMemberRelation> <http://purl.org/dc/terms/hasPart> .").encode(),
        media_type=TTL, interaction_model=f"<{LDP}DirectContainer>")


@pytest.fixture(scope="module")
def api_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One seeded repository for the whole module (strict referential integrity)."""
    from lakesuperior import Repository
    tmp = tmp_path_factory.mktemp("bad-api")
    repo = Repository(tmp / "repo", base_uri="http://test.example/rest", sync=False,
                      referential_integrity="strict")
    seed_repo(repo)
    try:
        yield repo
    finally:
        repo.close()


@dataclass(frozen=True)
class Call:
    """One bad Python call, the exception class it must raise and a word of its message."""

    id: str
    error: type[BaseException]
    keyword: str
    call: Callable[[Any], Any]


def check_call(repo: Any, case: Call) -> None:
    before = store_state(repo)
    with pytest.raises(case.error) as info:
        case.call(repo)
    message = str(info.value)
    assert message, "the error has no message"
    assert case.keyword.lower() in message.lower(), message
    assert store_state(repo) == before, "the store changed"
