"""Interaction models, containment and membership (Direct and Indirect containers)."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import IncompatibleLdpTypeError, InvalidTripleError
from lakesuperior.model.namespaces import LDP, LDP_BASIC_CONTAINER

BASE = "http://test.example/rest"
EX = "http://ex.org/"
TTL = "text/turtle"


def pub(uid):
    return f"<{BASE}{uid}>"


def membership_of(repo, uid, predicate):
    return sorted(t for t in repo.get(uid).triples if t[1] == predicate)


# --- interaction models ----------------------------------------------------------------------

@pytest.mark.parametrize("model, expected_types", [
    ("ldp:RDFSource", {LDP.RDFSource, LDP.Resource}),
    ("ldp:BasicContainer", {LDP.RDFSource, LDP.Resource, LDP.Container, LDP.BasicContainer}),
    ("ldp:DirectContainer", {LDP.RDFSource, LDP.Resource, LDP.Container, LDP.DirectContainer}),
    ("ldp:IndirectContainer",
     {LDP.RDFSource, LDP.Resource, LDP.Container, LDP.IndirectContainer}),
])
def test_interaction_models(repo, model, expected_types):
    _, res = repo.create_or_replace("/r", interaction_model=model)
    assert res.ldp_types == expected_types
    assert repo.get("/r").ldp_types == expected_types
    assert res.interaction_model == LDP.term(model.split(":")[1])
    assert res.is_container is (model != "ldp:RDFSource")


def test_interaction_model_cannot_change(repo, state):
    repo.create_or_replace("/r", interaction_model="ldp:BasicContainer")
    before = state(repo)
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/r", interaction_model="ldp:DirectContainer")
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/r", interaction_model="ldp:IndirectContainer")
    assert state(repo) == before
    # the same model, one of its own types (ldp:RDFSource), or none, is fine: the model stays
    assert repo.create_or_replace("/r", interaction_model="ldp:BasicContainer")[0] == "replace"
    assert repo.create_or_replace("/r", interaction_model="ldp:RDFSource")[0] == "replace"
    assert repo.get("/r").interaction_model == LDP_BASIC_CONTAINER
    assert repo.create_or_replace("/r")[0] == "replace"
    assert LDP.BasicContainer in repo.get("/r").ldp_types


def test_rdf_source_cannot_contain(repo, state):
    repo.create_or_replace("/leaf", interaction_model="ldp:RDFSource")
    before = state(repo)
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/leaf/child")
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create("/leaf")
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/leaf/x/y")     # intermediates neither
    assert state(repo) == before


def test_ldp_types_in_body_are_server_managed(repo):
    body = b'<> a <http://www.w3.org/ns/ldp#DirectContainer> .'
    from lakesuperior.exceptions import ServerManagedTermError
    with pytest.raises(ServerManagedTermError):
        repo.create_or_replace("/r", data=body, media_type=TTL)
    _, res = repo.create_or_replace("/r", data=body, media_type=TTL, handling="lenient")
    assert LDP.BasicContainer in res.ldp_types and LDP.DirectContainer not in res.ldp_types


# --- Direct containers -----------------------------------------------------------------------

def test_direct_container_has_member(repo):
    repo.create_or_replace("/album", data=b'<> <http://ex.org/t> "album" .', media_type=TTL)
    repo.create_or_replace(
        "/album/members", interaction_model="ldp:DirectContainer", media_type=TTL,
        data=b'<> <http://www.w3.org/ns/ldp#membershipResource> </rest/album> ;'
             b' <http://www.w3.org/ns/ldp#hasMemberRelation> <http://ex.org/hasPhoto> .')
    repo.create_or_replace("/album/members/p1")
    p2 = repo.create("/album/members", slug="p2")
    assert membership_of(repo, "/album", f"<{EX}hasPhoto>") == [
        (pub("/album"), f"<{EX}hasPhoto>", pub("/album/members/p1")),
        (pub("/album"), f"<{EX}hasPhoto>", pub(p2.uid)),
    ]
    # the container's own representation does not carry them
    assert membership_of(repo, "/album/members", f"<{EX}hasPhoto>") == []
    # deleting a member removes its membership triple; resurrecting brings it back
    repo.delete("/album/members/p1")
    assert membership_of(repo, "/album", f"<{EX}hasPhoto>") == [
        (pub("/album"), f"<{EX}hasPhoto>", pub(p2.uid))]
    repo.resurrect("/album/members/p1")
    assert len(membership_of(repo, "/album", f"<{EX}hasPhoto>")) == 2
    repo.delete("/album/members/p1", soft=False)
    assert len(membership_of(repo, "/album", f"<{EX}hasPhoto>")) == 1
    # get can leave them out
    assert not any(t[1] == f"<{EX}hasPhoto>"
                   for t in repo.get("/album", incl_membership=False).triples)


def test_direct_container_defaults(repo):
    _, c = repo.create_or_replace("/dc", interaction_model="ldp:DirectContainer")
    assert (pub("/dc"), LDP.membershipResource, pub("/dc")) in c.user_data
    assert (pub("/dc"), LDP.hasMemberRelation, LDP.member) in c.user_data
    repo.create_or_replace("/dc/a")
    assert (pub("/dc"), LDP.member, pub("/dc/a")) in repo.get("/dc").triples


def test_direct_container_is_member_of(repo):
    repo.create_or_replace("/coll")
    repo.create_or_replace(
        "/coll/dc", interaction_model="ldp:DirectContainer", media_type=TTL,
        data=b'<> <http://www.w3.org/ns/ldp#membershipResource> </rest/coll> ;'
             b' <http://www.w3.org/ns/ldp#isMemberOfRelation> <http://ex.org/memberOf> .')
    repo.create_or_replace("/coll/dc/m")
    assert (pub("/coll/dc/m"), f"<{EX}memberOf>", pub("/coll")) in repo.get("/coll/dc/m").triples
    assert membership_of(repo, "/coll", f"<{EX}memberOf>") == []
    repo.delete("/coll/dc/m", soft=False)
    repo.create_or_replace("/coll/dc/m")       # recreated: membership again, once
    assert [t for t in repo.get("/coll/dc/m").triples if t[1] == f"<{EX}memberOf>"] == [
        (pub("/coll/dc/m"), f"<{EX}memberOf>", pub("/coll"))]


def test_membership_follows_config_changes(repo):
    repo.create_or_replace("/x")
    repo.create_or_replace("/y")
    cfg = (b'<> <http://www.w3.org/ns/ldp#membershipResource> </rest/%s> ;'
           b' <http://www.w3.org/ns/ldp#hasMemberRelation> <http://ex.org/%s> .')
    repo.create_or_replace("/dc", interaction_model="ldp:DirectContainer", media_type=TTL,
                           data=cfg % (b"x", b"rel1"))
    repo.create_or_replace("/dc/a")
    repo.create_or_replace("/dc/b")
    assert len(membership_of(repo, "/x", f"<{EX}rel1>")) == 2
    repo.create_or_replace("/dc", media_type=TTL, data=cfg % (b"y", b"rel2"))
    assert membership_of(repo, "/x", f"<{EX}rel1>") == []
    assert membership_of(repo, "/y", f"<{EX}rel2>") == [
        (pub("/y"), f"<{EX}rel2>", pub("/dc/a")), (pub("/y"), f"<{EX}rel2>", pub("/dc/b"))]
    # a SPARQL update of the configuration too
    repo.update("/dc", "PREFIX ldp: <http://www.w3.org/ns/ldp#> "
                       "DELETE { <> ldp:hasMemberRelation ?r } "
                       "INSERT { <> ldp:hasMemberRelation <http://ex.org/rel3> } "
                       "WHERE { <> ldp:hasMemberRelation ?r }")
    assert membership_of(repo, "/y", f"<{EX}rel2>") == []
    assert len(membership_of(repo, "/y", f"<{EX}rel3>")) == 2


def test_deleting_the_container_removes_membership(repo):
    repo.create_or_replace("/x")
    repo.create_or_replace("/dc", interaction_model="ldp:DirectContainer", media_type=TTL,
                           data=b'<> <http://www.w3.org/ns/ldp#membershipResource> </rest/x> .')
    repo.create_or_replace("/dc/a")
    assert membership_of(repo, "/x", LDP.member)
    repo.delete("/dc")
    assert membership_of(repo, "/x", LDP.member) == []
    repo.resurrect("/dc")
    assert membership_of(repo, "/x", LDP.member) == [(pub("/x"), LDP.member, pub("/dc/a"))]
    repo.delete("/dc", soft=False)
    assert membership_of(repo, "/x", LDP.member) == []


def test_membership_resource_hash_uri(repo):
    repo.create_or_replace("/x", data=b'<#part> <http://ex.org/t> "p" .', media_type=TTL)
    repo.create_or_replace("/dc", interaction_model="ldp:DirectContainer", media_type=TTL,
                           data=b'<> <http://www.w3.org/ns/ldp#membershipResource> '
                                b'</rest/x#part> .')
    repo.create_or_replace("/dc/a")
    assert (pub("/x#part"), LDP.member, pub("/dc/a")) in repo.get("/x").triples


# --- Indirect containers ---------------------------------------------------------------------

INDIRECT = (b'<> <http://www.w3.org/ns/ldp#membershipResource> </rest/x> ;'
            b' <http://www.w3.org/ns/ldp#hasMemberRelation> <http://ex.org/has> ;'
            b' <http://www.w3.org/ns/ldp#insertedContentRelation> <http://ex.org/proxyFor> .')


def test_indirect_container(repo_factory):
    repo = repo_factory(referential_integrity="off")
    repo.create_or_replace("/x")
    repo.create_or_replace("/ic", interaction_model="ldp:IndirectContainer", media_type=TTL,
                           data=INDIRECT)
    repo.create_or_replace("/ic/p1", media_type=TTL,
                           data=b'<> <http://ex.org/proxyFor> </rest/target1> .')
    repo.create_or_replace("/ic/p2", media_type=TTL,
                           data=b'<> <http://ex.org/proxyFor> </rest/shared> .')
    repo.create_or_replace("/ic/p3", media_type=TTL,
                           data=b'<> <http://ex.org/proxyFor> </rest/shared> .')
    repo.create_or_replace("/ic/none")                   # no proxyFor: no membership
    assert membership_of(repo, "/x", f"<{EX}has>") == [
        (pub("/x"), f"<{EX}has>", pub("/shared")), (pub("/x"), f"<{EX}has>", pub("/target1"))]
    # changing a member's inserted content moves its membership triple
    repo.create_or_replace("/ic/p1", media_type=TTL,
                           data=b'<> <http://ex.org/proxyFor> </rest/target2> .')
    assert membership_of(repo, "/x", f"<{EX}has>") == [
        (pub("/x"), f"<{EX}has>", pub("/shared")), (pub("/x"), f"<{EX}has>", pub("/target2"))]
    # a triple two members give stays until both are gone
    repo.delete("/ic/p2")
    assert (pub("/x"), f"<{EX}has>", pub("/shared")) in repo.get("/x").triples
    repo.delete("/ic/p3", soft=False)
    assert (pub("/x"), f"<{EX}has>", pub("/shared")) not in repo.get("/x").triples
    repo.update("/ic/p1", "DELETE WHERE { <> <http://ex.org/proxyFor> ?o }")
    assert membership_of(repo, "/x", f"<{EX}has>") == []


def test_indirect_container_default_and_bad_config(repo, state):
    _, ic = repo.create_or_replace("/ic", interaction_model="ldp:IndirectContainer")
    assert (pub("/ic"), LDP.insertedContentRelation, LDP.MemberSubject) in ic.user_data
    repo.create_or_replace("/ic/a")
    assert (pub("/ic"), LDP.member, pub("/ic/a")) in repo.get("/ic").triples
    before = state(repo)
    with pytest.raises(InvalidTripleError):
        repo.create_or_replace(
            "/ic", media_type=TTL,
            data=b'<> <http://www.w3.org/ns/ldp#membershipResource> <http://ex.org/a>, '
                 b'<http://ex.org/b> .')
    assert state(repo) == before


@pytest.mark.parametrize("relation", ["hasMemberRelation", "isMemberOfRelation"])
def test_contains_is_not_a_membership_predicate(repo, state, relation):
    """Fedora API 3.1.1: refused by the model, on create, replace and update."""
    repo.create_or_replace("/mr")
    before = state(repo)
    body = (f"@prefix ldp: <{LDP.iri}> . <> ldp:membershipResource {pub('/mr')} ; "
            f"ldp:{relation} ldp:contains .").encode()
    with pytest.raises(InvalidTripleError, match="contains"):
        repo.create_or_replace("/dc", data=body, media_type=TTL,
                               interaction_model="ldp:DirectContainer")
    with pytest.raises(InvalidTripleError, match="contains"):
        repo.create("/", data=body, media_type=TTL, interaction_model="ldp:IndirectContainer")
    assert state(repo) == before
    repo.create_or_replace("/dc", interaction_model="ldp:DirectContainer")
    before = state(repo)
    with pytest.raises(InvalidTripleError, match="contains"):
        repo.update("/dc", f"PREFIX ldp: <{LDP.iri}> DELETE {{ <> ldp:hasMemberRelation ?r }} "
                           f"INSERT {{ <> ldp:{relation} ldp:contains }} "
                           "WHERE { <> ldp:hasMemberRelation ?r }")
    assert state(repo) == before
