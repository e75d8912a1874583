"""Membership triples come only from containers the agent may read: a Direct or
Indirect container in a closed tree whose ``ldp:membershipResource`` is an open
resource does not show its members' names, nor (Indirect) their content, to the
open resource's readers. An answer kept for an agent who reads everything is not
given to one who does not (``endpoints/body_cache.py``)."""
from __future__ import annotations

import pytest

from .conftest import ANONYMOUS, BOB, ROOT, TTL, grant, put_acl

LDP = "http://www.w3.org/ns/ldp#"
NT = "application/n-triples"


@pytest.fixture
def tree(client, repo):
    """/open (everyone reads) gets membership triples from /closed/dc (a member
    /closed/dc/hidden-name) and /closed/ic (a member holding ``ex:v ex:hidden-value``)."""
    title = b'<> <http://purl.org/dc/terms/title> "t" .'
    for uid in ("/open", "/closed"):
        repo.create_or_replace(uid, data=title, media_type=TTL, base_uri=ROOT)
    put_acl(repo, "/open", grant("/open", "acl:Read"))
    put_acl(repo, "/closed", grant("/closed", "acl:Read", who="acl:agent <http://x/carol>"))
    repo.create_or_replace(
        "/closed/dc", media_type=TTL, base_uri=ROOT, interaction_model=f"{LDP}DirectContainer",
        data=(f"<> <{LDP}membershipResource> <{ROOT}/open> ; "
              f"<{LDP}hasMemberRelation> <http://ex/has> .").encode())
    repo.create_or_replace("/closed/dc/hidden-name", data=title, media_type=TTL, base_uri=ROOT)
    repo.create_or_replace(
        "/closed/ic", media_type=TTL, base_uri=ROOT,
        interaction_model=f"{LDP}IndirectContainer",
        data=(f"<> <{LDP}membershipResource> <{ROOT}/open> ; "
              f"<{LDP}hasMemberRelation> <http://ex/hasValue> ; "
              f"<{LDP}insertedContentRelation> <http://ex/v> .").encode())
    repo.create_or_replace("/closed/ic/m", data=b"<> <http://ex/v> <http://ex/hidden-value> .",
                           media_type=TTL, base_uri=ROOT)
    return repo


def _get(client, accept=NT):
    r = client.get("/rest/open", headers={"Accept": accept})
    assert r.status_code == 200
    return r.get_data(as_text=True)


@pytest.mark.parametrize("accept", [NT, TTL, "text/html"])
def test_membership_from_a_closed_container_is_not_shown(client, tree, act, accept):
    assert "hidden-name" in _get(client, accept) and "hidden-value" in _get(client, accept)
    for agent in (BOB, ANONYMOUS):
        act(agent)
        body = _get(client, accept)
        assert "hidden-name" not in body and "hidden-value" not in body
        assert "title" in body


def test_a_kept_answer_with_membership_is_not_given_to_a_filtered_agent(app, client, tree,
                                                                        act):
    bodies = app.extensions["lakesuperior"].bodies
    assert "hidden-name" in _get(client)            # the administrator's, kept
    assert len(bodies) == 1
    act(BOB)
    assert "hidden-name" not in _get(client)
    assert "hidden-name" not in _get(client)         # nor kept from bob's
    assert len(bodies) == 1


def test_open_membership_is_shown_and_kept(app, client, repo, act):
    """Everyone may read the container: its members are every reader's."""
    repo.create_or_replace("/o", media_type=TTL, base_uri=ROOT)
    put_acl(repo, "/o", grant("/o", "acl:Read"))
    repo.create_or_replace(
        "/o/dc", media_type=TTL, base_uri=ROOT, interaction_model=f"{LDP}DirectContainer",
        data=(f"<> <{LDP}membershipResource> <{ROOT}/o> ; "
              f"<{LDP}hasMemberRelation> <http://ex/has> .").encode())
    repo.create_or_replace("/o/dc/m", media_type=TTL, base_uri=ROOT)
    act(BOB)
    r = client.get("/rest/o", headers={"Accept": NT})
    assert f"<{ROOT}/o/dc/m>" in r.get_data(as_text=True)
