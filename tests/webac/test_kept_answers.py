"""A GET answered from a kept answer (``endpoints/body_cache.py``) checks the
agent's access first, as a GET that reads the resource does."""
from __future__ import annotations

from .conftest import ALICE, ANONYMOUS, BOB, TTL, grant, put_acl


def test_a_kept_answer_is_given_only_to_agents_who_may_read(app, client, repo, act):
    client.put("/rest/a", data=b'<> <http://purl.org/dc/terms/title> "t" .', content_type=TTL)
    put_acl(repo, "/a", grant("/a", "acl:Read", who=f"acl:agent <{BOB.webid}>"))
    body = client.get("/rest/a", headers={"Accept": TTL}).get_data()   # the administrator
    bodies = app.extensions["lakesuperior"].bodies
    assert len(bodies) == 1
    act(BOB)
    r = client.get("/rest/a", headers={"Accept": TTL})
    assert r.status_code == 200 and r.get_data() == body and len(bodies) == 1
    act(ALICE)
    assert client.get("/rest/a", headers={"Accept": TTL}).status_code == 403
    act(ANONYMOUS)
    assert client.get("/rest/a", headers={"Accept": TTL}).status_code == 401
