"""A Direct or Indirect container cannot write triples into a resource its writer may
not write (as Fedora 6's ``WebACFilter.isAuthorizedForMembershipResource``): making
one whose ``ldp:membershipResource`` is such a resource, adding, changing or
deleting its members, or (inverse relation) naming one with the
inserted-content relation is 403 and changes nothing."""
from __future__ import annotations

import pytest

from ..conftest import store_state
from .conftest import BOB, ROOT, SPARQL_UPDATE, TTL, grant, put_acl

LDP = "http://www.w3.org/ns/ldp#"
BOB_ID = f"<{BOB.webid}>"
DIRECT = {"Link": f'<{LDP}DirectContainer>; rel="type"'}
INDIRECT = {"Link": f'<{LDP}IndirectContainer>; rel="type"'}
TITLE = b'<> <http://purl.org/dc/terms/title> "m" .'


@pytest.fixture
def tree(client, repo):
    """/secret (closed to bob) and /open (bob: Read, Write), made by the administrator."""
    for uid in ("/secret", "/open"):
        repo.create_or_replace(uid, data=TITLE, media_type=TTL, base_uri=ROOT)
    put_acl(repo, "/secret", grant("/secret", "acl:Read", who="acl:agent <http://x/alice>"))
    put_acl(repo, "/open", grant("/open", "acl:Read, acl:Write", who=f"acl:agent {BOB_ID}"))
    return repo


def _direct(target: str) -> bytes:
    return (f"<> <{LDP}membershipResource> <{ROOT}{target}> ; "
            f"<{LDP}hasMemberRelation> <http://ex/has> .").encode()


def _secret_triples(repo) -> list:
    with repo.snapshot() as ctx:
        return [t for t in ctx.txn.match(None, "<http://ex/has>", None, None)]


def test_a_direct_container_into_a_closed_resource_is_refused(client, tree, act):
    act(BOB)
    before = store_state(tree)
    r = client.put("/rest/open/dc", data=_direct("/secret"), content_type=TTL, headers=DIRECT)
    assert r.status_code == 403
    assert b"Write access to /secret" in r.data
    assert store_state(tree) == before


def test_members_of_a_container_into_a_closed_resource_are_refused(client, tree, act):
    """The administrator made the container; bob may write below it, not into /secret."""
    tree.create_or_replace("/open/dc", data=_direct("/secret"), media_type=TTL,
                           base_uri=ROOT, interaction_model=f"{LDP}DirectContainer")
    act(BOB)
    before = store_state(tree)
    assert client.put("/rest/open/dc/m", data=TITLE, content_type=TTL).status_code == 403
    assert client.post("/rest/open/dc", data=TITLE, content_type=TTL).status_code == 403
    assert store_state(tree) == before
    assert _secret_triples(tree) == []
    tree.create_or_replace("/open/dc/m", data=TITLE, media_type=TTL, base_uri=ROOT)
    assert len(_secret_triples(tree)) == 1
    before = store_state(tree)
    assert client.delete("/rest/open/dc/m").status_code == 403     # would remove it
    assert client.delete("/rest/open/dc").status_code == 403
    update = (f"DELETE DATA {{ <> <{LDP}hasMemberRelation> <http://ex/has> }} ; "
              f"INSERT DATA {{ <> <{LDP}hasMemberRelation> <http://ex/other> }}")
    assert client.patch("/rest/open/dc", data=update,
                        content_type=SPARQL_UPDATE).status_code == 403
    assert store_state(tree) == before


def test_an_indirect_container_cannot_name_a_closed_resource(client, tree, act):
    """With ldp:isMemberOfRelation the triples go to what the members name."""
    config = (f"<> <{LDP}membershipResource> <{ROOT}/open/ic> ; "
              f"<{LDP}isMemberOfRelation> <http://ex/has> ; "
              f"<{LDP}insertedContentRelation> <http://ex/target> .").encode()
    act(BOB)
    assert client.put("/rest/open/ic", data=config, content_type=TTL,
                      headers=INDIRECT).status_code == 201
    before = store_state(tree)
    r = client.put("/rest/open/ic/m", data=f"<> <http://ex/target> <{ROOT}/secret> .".encode(),
                   content_type=TTL)
    assert r.status_code == 403
    assert store_state(tree) == before
    r = client.put("/rest/open/ic/m", data=f"<> <http://ex/target> <{ROOT}/open> .".encode(),
                   content_type=TTL)
    assert r.status_code == 201


def test_containers_into_writable_resources_work(client, tree, act):
    act(BOB)
    assert client.put("/rest/open/dc", data=_direct("/open"), content_type=TTL,
                      headers=DIRECT).status_code == 201
    assert client.put("/rest/open/dc/m", data=TITLE, content_type=TTL).status_code == 201
    assert client.put("/rest/open/dc2", data=b"", content_type=TTL,
                      headers=DIRECT).status_code == 201      # itself: the default
    assert client.post("/rest/open/dc2", data=TITLE, content_type=TTL).status_code == 201
    assert client.delete("/rest/open/dc").status_code == 204
    assert len(_secret_triples(tree)) == 0


def test_deleting_a_tree_holding_such_a_container_is_refused(client, tree, act):
    """The container deep in the tree: its members' triples would leave /secret."""
    tree.create_or_replace("/open/sub/dc", data=_direct("/secret"), media_type=TTL,
                           base_uri=ROOT, interaction_model=f"{LDP}DirectContainer")
    tree.create_or_replace("/open/sub/dc/m", data=TITLE, media_type=TTL, base_uri=ROOT)
    act(BOB)
    before = store_state(tree)
    r = client.delete("/rest/open/sub")
    assert r.status_code == 403 and b"Write access to /secret" in r.data
    assert store_state(tree) == before
