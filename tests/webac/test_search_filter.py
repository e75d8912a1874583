"""The search page finds only what the agent may read: the same filter as SPARQL
(``Repository.as_agent``), for the results and for their titles."""
from __future__ import annotations

from .conftest import ALICE, ANONYMOUS, BOB, ROOT, TTL, grant, put_acl

TITLE = "<http://purl.org/dc/terms/title>"


def test_search_hides_what_the_agent_may_not_read(client, repo, act):
    for uid, title in (("/open", "Lake open"), ("/private", "Lake private")):
        repo.create_or_replace(uid, data=f'<> {TITLE} "{title}" .'.encode(),
                               media_type=TTL, base_uri=ROOT)
    put_acl(repo, "/private", grant("/private", "acl:Read", who=f"acl:agent <{ALICE.webid}>"))
    for agent, expected in ((BOB, ["Lake open"]), (ANONYMOUS, ["Lake open"]),
                            (ALICE, ["Lake open", "Lake private"])):
        act(agent)
        page = client.get("/search?q=lake").get_data(as_text=True)
        shown = [t for t in ("Lake open", "Lake private") if t in page]
        assert shown == expected, agent
        assert ("/private" in page) is (agent is ALICE)
