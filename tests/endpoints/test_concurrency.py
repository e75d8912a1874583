"""Every kind of request at once, on a real ``lsup-server`` with its default
threaded workers (2 x 8): SPARQL queries, SPARQL Update PATCHes, PUTs, GETs in
several formats, ACL changes and HTTP transactions, for a few seconds from
threads that start together on fresh workers. Every response must be the right
one, status and content: rdflib's SPARQL grammar, shared by a process's
threads, failed valid queries and updates with 400 when two threads parsed at
once (``lakesuperior.rdf.sparql_parser``)."""
from __future__ import annotations

import base64
import http.client
import json
import re
import threading
import time
from collections.abc import Callable, Mapping

import pytest

from tests.auth.conftest import user_file, write_users
from tests.servers import lsup_server

pytestmark = pytest.mark.slow

LOAD_SECONDS = 6.0
ADMIN = ("root", "r00t pw")
ALICE = ("alice", "alice pw")
SEEDS = 12
PREFIXES = "PREFIX ex: <http://example.org/ns#>\n"
EX = "http://example.org/ns#"
TITLE = "http://purl.org/dc/terms/title"

Reply = tuple[int, Mapping[str, str], bytes]


def _auth(user: tuple[str, str] | None) -> dict[str, str]:
    if user is None:
        return {}
    token = base64.b64encode(f"{user[0]}:{user[1]}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


class Client:
    """One connection's worth of requests to the server, as ``user``."""

    def __init__(self, port: int, user: tuple[str, str] | None = ADMIN) -> None:
        self.port = port
        self.user = user

    def send(self, method: str, path: str, body: bytes | str | None = None,
             headers: Mapping[str, str] | None = None) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.request(method, path, body=body, headers={**_auth(self.user), **(headers or {})})
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def put_turtle(self, path: str, turtle: str, **headers: str) -> Reply:
        return self.send("PUT", path, turtle, {"Content-Type": "text/turtle", **headers})

    def sparql(self, query: str, accept: str) -> Reply:
        return self.send("POST", "/query/sparql", PREFIXES + query,
                         {"Content-Type": "application/sparql-query", "Accept": accept})


def _bindings(body: bytes, var: str) -> list[str]:
    return [row[var]["value"] for row in json.loads(body)["results"]["bindings"]]


JSON = "application/sparql-results+json"
NT = "application/n-triples"

#: (query, Accept, what the body must give): the seeds are ex:n 0..11, title "seed N".
QUERIES: tuple[tuple[str, str, Callable[[bytes], object], object], ...] = (
    ("SELECT ?t WHERE { ?s ex:n ?n ; dcterms:title ?t FILTER(?n >= 3) } "
     "ORDER BY DESC(?n) LIMIT 4", JSON, lambda b: _bindings(b, "t"),
     ["seed 11", "seed 10", "seed 9", "seed 8"]),
    ("ASK { ?s ex:n 7 }", JSON, lambda b: json.loads(b)["boolean"], True),
    ("ASK { ?s ex:n 99 }", JSON, lambda b: json.loads(b)["boolean"], False),
    ("CONSTRUCT { ?s dcterms:title ?t } WHERE { ?s ex:n ?n ; dcterms:title ?t "
     "FILTER(?n < 3) }", NT, lambda b: sorted(re.findall(rb'"(seed \d+)"', b)),
     [b"seed 0", b"seed 1", b"seed 2"]),
    ("SELECT (COUNT(?s) AS ?c) WHERE { ?s ex:n ?n }", JSON, lambda b: _bindings(b, "c"),
     [str(SEEDS)]),
    ("SELECT ?s WHERE { ?s ex:n ?n FILTER(regex(str(?s), 'seed/s1[01]$')) } ORDER BY ?s",
     "text/csv", lambda b: b.decode().split()[1:], None),
)

INCREMENT = ("PREFIX ex: <http://example.org/ns#>\n"
             "DELETE { <> ex:count ?n } INSERT { <> ex:count ?m } "
             "WHERE { <> ex:count ?n BIND(?n + 1 AS ?m) }")

ACL = """@prefix acl: <http://www.w3.org/ns/auth/acl#> .
<#admin> a acl:Authorization ; acl:agent <info:fedora/local-user#root> ;
    acl:mode acl:Read, acl:Write, acl:Control ; acl:accessTo <{target}> .
"""
ALICE_READS = """<#alice> a acl:Authorization ; acl:agent <info:fedora/local-user#alice> ;
    acl:mode acl:Read ; acl:accessTo <{target}> .
"""


class Load:
    """The threads of the mix, their failures, and the time they stop."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.failures: list[str] = []
        self.counts: dict[str, int] = {}
        self.barrier = threading.Barrier(1)
        self.stop_at = 0.0
        self._lock = threading.Lock()

    def expect(self, what: str, reply: Reply, statuses: tuple[int, ...]) -> bool:
        status, _, body = reply
        with self._lock:
            self.counts[what] = self.counts.get(what, 0) + 1
            if status not in statuses:
                self.failures.append(f"{what}: {status} {body[:300]!r}")
                return False
        return True

    def check(self, what: str, ok: bool, detail: object) -> None:
        if not ok:
            with self._lock:
                self.failures.append(f"{what}: {detail!r:.300}")

    def running(self, rounds: int) -> bool:
        """Whether a thread that made ``rounds`` rounds goes on: two at least,
        however slow the machine, then until the time is up."""
        return rounds < 2 or time.monotonic() < self.stop_at

    def run(self, work: Callable[[Client], None]) -> Callable[[], None]:
        def thread() -> None:
            self.barrier.wait()
            try:
                work(Client(self.port))
            except Exception as e:  # a broken connection, a bad body: a failure too
                self.check(work.__name__, False, f"{type(e).__name__}: {e}")
        return thread


def _seed(client: Client) -> None:
    assert client.put_turtle("/rest/seed", "<> a <http://example.org/ns#Seeds> .")[0] == 201
    for n in range(SEEDS):
        turtle = f'<> <{EX}n> {n} ; <{TITLE}> "seed {n}" .'
        assert client.put_turtle(f"/rest/seed/s{n}", turtle)[0] == 201
    for i in range(3):
        assert client.put_turtle(f"/rest/patched{i}", f"<> <{EX}count> 0 .")[0] == 201
    assert client.put_turtle("/rest/guarded", f'<> <{TITLE}> "guarded" .')[0] == 201


@pytest.fixture
def server(tmp_path):
    (tmp_path / "users").mkdir()
    write_users(tmp_path / "data", user_file(tmp_path / "users", [ALICE], [ADMIN]))
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_SERVER_WORKERS": "2"}
    with lsup_server(tmp_path, env) as (_proc, port, _log):
        yield port


def test_every_request_right_under_concurrency(server):
    port = server
    _seed(Client(port))
    load = Load(port)
    csv_expected = [f"http://127.0.0.1:{port}/rest/seed/s10", f"http://127.0.0.1:{port}/rest/seed/s11"]

    def queries(client: Client, offset: int) -> None:
        i = 0
        while load.running(i):
            query, accept, read, expected = QUERIES[(offset + i) % len(QUERIES)]
            i += 1
            reply = client.sparql(query, accept)
            if load.expect("query", reply, (200,)):
                got = read(reply[2])
                want = csv_expected if expected is None else expected
                load.check(f"query {query[:40]}", got == want, (got, want))

    def query_a(client: Client) -> None:
        queries(client, 0)

    def query_b(client: Client) -> None:
        queries(client, 2)

    def query_c(client: Client) -> None:
        queries(client, 4)

    patched: dict[int, int] = {}

    def patcher(i: int) -> Callable[[Client], None]:
        def patch(client: Client) -> None:
            done = tries = 0
            while load.running(tries):
                tries += 1
                reply = client.send("PATCH", f"/rest/patched{i}", INCREMENT,
                                    {"Content-Type": "application/sparql-update"})
                done += load.expect("patch", reply, (204,))
            patched[i] = done
        patch.__name__ = f"patch{i}"
        return patch

    def putter(client: Client) -> None:
        k = 0
        while load.running(k):
            k += 1
            path = f"/rest/put/r{k}"
            reply = client.put_turtle(path, f'<> <{TITLE}> "put {k}" ; <{EX}k> {k} .')
            if not load.expect("put", reply, (201,)):
                continue
            for accept, needle in (("text/turtle", f'"put {k}"'),
                                   ("application/ld+json", f'"put {k}"'),
                                   (NT, f'<{TITLE}> "put {k}"')):
                status, _, body = got = client.send("GET", path, headers={"Accept": accept})
                if load.expect(f"get {accept}", got, (200,)):
                    load.check(f"get {accept}", needle in body.decode(), body[:300])

    def acl_changer(client: Client) -> None:
        alice = Client(port, ALICE)
        target = f"http://127.0.0.1:{port}/rest/guarded"
        grant, rounds = True, 0
        while load.running(rounds):
            rounds += 1
            body = ACL.format(target=target) + (ALICE_READS.format(target=target) if grant else "")
            load.expect("acl put", client.put_turtle("/rest/guarded/fcr:acl", body), (201, 204))
            reply = alice.send("GET", "/rest/guarded")
            load.expect(f"acl {'granted' if grant else 'revoked'}", reply,
                        (200,) if grant else (403,))
            grant = not grant

    def transactor(client: Client) -> None:
        k = 0
        while load.running(k):
            k += 1
            status, head, body = opened = client.send("POST", "/rest/fcr:tx")
            if not load.expect("tx open", opened, (201,)):
                continue
            tx = head["location"]
            path = f"/rest/tx/r{k}"
            load.expect("tx put", client.put_turtle(path, f'<> <{TITLE}> "tx {k}" .',
                                                   **{"Atomic-ID": tx}), (201,))
            load.expect("tx unseen", client.send("GET", path), (404,))
            load.expect("tx commit", client.send("PUT", tx.split(str(port), 1)[1]), (204,))
            seen = client.send("GET", path, headers={"Accept": "text/turtle"})
            if load.expect("tx seen", seen, (200,)):
                load.check("tx seen", f'"tx {k}"'.encode() in seen[2], seen[2][:300])

    works = [query_a, query_b, query_c, query_a, patcher(0), patcher(1), patcher(2), putter,
             acl_changer, transactor]
    load.barrier = threading.Barrier(len(works))
    threads = [threading.Thread(target=load.run(w)) for w in works]
    load.stop_at = time.monotonic() + LOAD_SECONDS
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert load.failures == [], f"{len(load.failures)} wrong responses of " \
        f"{sum(load.counts.values())} ({load.counts}): {load.failures[:8]}"
    for kind in ("query", "patch", "put", "get text/turtle", "acl granted", "acl revoked",
                 "tx commit"):
        assert load.counts.get(kind, 0) > 0, (kind, load.counts)
    # every acknowledged PATCH was applied, once
    client = Client(port)
    for i, done in patched.items():
        status, _, body = client.send("GET", f"/rest/patched{i}", headers={"Accept": NT})
        assert status == 200
        assert f'<{EX}count> "{done}"^^'.encode() in body, (done, body[:500])
