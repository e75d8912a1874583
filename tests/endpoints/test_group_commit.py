"""Concurrent HTTP writes share one commit (group commit): each request still
checks its own preconditions on the state the earlier writes of its group left,
and a request that fails (412) changes nothing while the others land; the
same through a real gunicorn, its request threads and two workers."""
from __future__ import annotations

import http.client
import threading

import pytest

from ..groups import WAIT, OneGroup
from ..servers import lsup_server
from .conftest import DC_TITLE, TTL, put_ttl


def test_concurrent_puts_one_failing_its_precondition(app, client, repo):
    assert put_ttl(client, "/rest/exists", f'<> {DC_TITLE} "first" .').status_code == 201
    etag = client.get("/rest/exists").headers["ETag"]
    commits = repo.write_groups.commits
    requests = {f"/rest/new{i}": {} for i in range(5)}
    requests["/rest/exists"] = {"If-None-Match": "*"}                # 412: it exists

    def put(path, headers):
        title = "changed" if path == "/rest/exists" else path
        return put_ttl(app.test_client(), path, f'<> {DC_TITLE} "{title}" .',
                       **headers).status_code
    group = OneGroup(repo.write_groups)
    for path, headers in requests.items():
        group.start(path, put, path, headers)
    statuses = {path: status for path, (_, status) in group.run().items()}
    assert statuses == {**{f"/rest/new{i}": 201 for i in range(5)}, "/rest/exists": 412}
    assert repo.write_groups.commits == commits + 1
    r = client.get("/rest/exists")
    assert r.headers["ETag"] == etag and b"changed" not in r.data
    for i in range(5):
        assert f"/rest/new{i}".encode() in client.get(f"/rest/new{i}").data
    changed = [c.uid for c in repo.changes() if c.uid == "/exists"]
    assert changed == ["/exists"]                         # its creation only


def test_a_group_checks_each_precondition_on_the_state_before_it(app, client, repo):
    """Two requests with the same If-Match in one group: the first changes the
    resource (its ETag), so the second's precondition fails, as if serial."""
    put_ttl(client, "/rest/r", f'<> {DC_TITLE} "0" .')
    etag = client.get("/rest/r").headers["ETag"]

    def put(n):
        return put_ttl(app.test_client(), "/rest/r", f'<> {DC_TITLE} "{n}" .',
                       **{"If-Match": etag}).status_code
    group = OneGroup(repo.write_groups)
    for n in (1, 2):
        group.start(str(n), put, n)
    assert sorted(status for _, status in group.run().values()) == [204, 412]


def test_each_request_of_a_group_reads_its_own_headers(app, repo):
    """A write runs in the leader's thread, but under its own request's context:
    what it reads of its request inside the write (a binary's file name and
    ``Digest``) is its own."""
    def put(i):
        headers = {"Content-Disposition": f'attachment; filename="f{i}.txt"'}
        if i == 2:
            headers["Digest"] = "sha-256=" + "A" * 43 + "="        # not this body's
        return app.test_client().put(f"/rest/b{i}", data=f"content {i}".encode(),
                                     content_type="text/plain", headers=headers).status_code
    group = OneGroup(repo.write_groups)
    for i in range(4):
        group.start(str(i), put, i)
    statuses = {name: status for name, (_, status) in group.run().items()}
    assert statuses == {"0": 201, "1": 201, "2": 409, "3": 201}
    for i in (0, 1, 3):
        assert repo.info(f"/b{i}").filename == f"f{i}.txt"
    assert not repo.exists("/b2")


@pytest.mark.slow
def test_concurrent_puts_through_gunicorn(tmp_path):
    env = {"LSUP_STORE_SYNC": "true", "LSUP_SERVER_WORKERS": "2"}
    with lsup_server(tmp_path, env) as (_proc, port, log):
        def request(method, path, body=b"", headers=None):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
            try:
                conn.request(method, path, body=body,
                             headers={"Content-Type": TTL, **(headers or {})})
                resp = conn.getresponse()
                return resp.status, resp.read()
            finally:
                conn.close()
        statuses: dict[str, int] = {}
        assert request("PUT", "/rest/exists")[0] == 201
        paths = [f"/rest/c{t}-{i}" for t in range(8) for i in range(10)]

        def client(t):
            for i in range(10):
                path = f"/rest/c{t}-{i}"
                statuses[path] = request(
                    "PUT", path, f'<> {DC_TITLE} "{path}" .'.encode())[0]
                if i == 5:
                    statuses[f"412-{t}"] = request(
                        "PUT", "/rest/exists", b"", {"If-None-Match": "*"})[0]
        threads = [threading.Thread(target=client, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT * 4)
        assert all(statuses[p] == 201 for p in paths), log.read_text()[-2000:]
        assert all(statuses[f"412-{t}"] == 412 for t in range(8))
        for p in paths[::7]:
            status, body = request("GET", p)
            assert status == 200 and p.encode() in body
