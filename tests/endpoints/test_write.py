"""POST, PUT, PATCH and DELETE on RDF sources and containers."""
from __future__ import annotations

import pytest

from lakesuperior.http import headers as hdr

from .conftest import (
    DC_TITLE,
    FCREPO,
    LDP,
    NT,
    ROOT,
    TTL,
    graph,
    link_targets,
    post_ttl,
    put_ttl,
    types,
)

BUG = f"""@prefix dcterms: <http://purl.org/dc/terms/> .
<> a <http://example.com/ns#Bug>, <{LDP}RDFSource> ;
   <http://example.com/ns#severity> "High" ;
   dcterms:title "Another bug to test." ."""


# --- POST ------------------------------------------------------------------------------

def test_post_creates_child(client):
    r = post_ttl(client, "/rest/", BUG)
    assert r.status_code == 201
    location = r.headers["Location"]
    assert location.startswith(ROOT + "/") and len(location) > len(ROOT) + 30
    assert link_targets(r, LDP + "constrainedBy")
    assert hdr.parse_http_date(r.headers["Last-Modified"])
    child = client.get(location)
    assert child.status_code == 200
    assert (f"<{location}>", DC_TITLE, '"Another bug to test."') in graph(child)
    assert LDP + "BasicContainer" in types(child)
    kids = {o for s, p, o in graph(client.get("/rest/")) if p == f"<{LDP}contains>"}
    assert f"<{location}>" in kids


def test_post_with_slug(client):
    r = post_ttl(client, "/rest/", "", Slug="my thing")
    assert r.status_code == 201 and r.headers["Location"] == f"{ROOT}/my%20thing"
    again = post_ttl(client, "/rest/", "", Slug="my thing")
    assert again.status_code == 201 and again.headers["Location"] != r.headers["Location"]


def test_post_slug_not_reused_after_delete(client):
    loc1 = post_ttl(client, "/rest/", BUG, Slug="uritest").headers["Location"]
    assert client.delete(loc1).status_code == 204
    loc2 = post_ttl(client, "/rest/", BUG, Slug="uritest").headers["Location"]
    assert loc1 != loc2


def test_post_bad_slug(client, repo, state):
    before = state(repo)
    assert post_ttl(client, "/rest/", "", Slug="fcr:versions").status_code == 400
    assert state(repo) == before


def test_post_empty_body_makes_container(client):
    r = client.post("/rest/")
    assert r.status_code == 201
    assert LDP + "BasicContainer" in types(client.get(r.headers["Location"]))


def test_post_null_relative_uri(client):
    r = post_ttl(client, "/rest/", '<> <http://purl.org/dc/terms/identifier> "id-1" ; '
                                   '<http://purl.org/dc/terms/relation> <#part> .')
    loc = r.headers["Location"]
    g = graph(client.get(loc))
    assert (f"<{loc}>", "<http://purl.org/dc/terms/identifier>", '"id-1"') in g
    assert (f"<{loc}>", "<http://purl.org/dc/terms/relation>", f"<{loc}#part>") in g


def test_post_json_ld(client):
    body = ('{"@id": "", "http://purl.org/dc/terms/title": "J", '
            '"@type": "http://example.com/ns#Bug"}')
    r = client.post("/rest/", data=body, content_type="application/ld+json")
    assert r.status_code == 201, r.data
    got = client.get(r.headers["Location"])
    assert got.headers["Content-Type"].startswith(TTL)
    assert LDP + "NonRDFSource" not in types(got)
    assert (f"<{r.headers['Location']}>", DC_TITLE, '"J"') in graph(got)


def test_post_unknown_content_type_is_binary(client):
    r = client.post("/rest/", data=BUG, content_type="text/this-is-not-turtle")
    assert r.status_code == 201
    got = client.get(r.headers["Location"])
    assert got.headers["Content-Type"] == "text/this-is-not-turtle"
    assert LDP + "RDFSource" not in types(got)


@pytest.mark.parametrize("model", ["RDFSource", "BasicContainer", "DirectContainer",
                                   "IndirectContainer"])
def test_post_interaction_models(client, model):
    r = post_ttl(client, "/rest/", "", Link=f'<{LDP}{model}>; rel="type"')
    assert r.status_code == 201, r.data
    assert LDP + model in types(client.get(r.headers["Location"]))


def test_post_non_ldp_type_links_are_ignored(client):
    r = client.post("/rest/", content_type=TTL,
                    headers={"Link": '<http://mementoweb.org/ns#OriginalResource>; rel="type"'})
    assert r.status_code == 201


@pytest.mark.parametrize("link", [
    f'<{LDP}Banana>; rel="type"',
    f'<{LDP}DirectContainer>; rel="type", <{LDP}IndirectContainer>; rel="type"',
    f'<{LDP}NonRDFSource>; rel="type", <{LDP}BasicContainer>; rel="type"',
])
def test_post_bad_interaction_models(client, repo, state, link):
    before = state(repo)
    r = post_ttl(client, "/rest/", "", Link=link)
    assert r.status_code == 409
    assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before


def test_post_rdf_source_with_non_rdf_body_is_415(client, repo, state):
    before = state(repo)
    r = client.post("/rest/", data=b"TestString", content_type="text/plain",
                    headers={"Link": f'<{LDP}RDFSource>; rel="type"'})
    assert r.status_code == 415
    assert state(repo) == before


def test_post_to_non_container(client, repo, state):
    put_ttl(client, "/rest/s", "", Link=f'<{LDP}RDFSource>; rel="type"')
    before = state(repo)
    r = post_ttl(client, "/rest/s", BUG)
    assert r.status_code == 409 and link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before


def test_post_to_missing_parent_is_404(client):
    assert post_ttl(client, "/rest/nope", "").status_code == 404


def test_post_server_managed_types_matching_the_model(client):
    body = (f"@prefix ldp: <{LDP}> . <> a ldp:Container, ldp:BasicContainer ; "
            "<http://purl.org/dc/terms/title> 'Container class Container' .")
    r = post_ttl(client, "/rest/", body, Link=f'<{LDP}BasicContainer>; rel="type"')
    assert r.status_code == 201, r.data


def test_post_server_managed_conflict(client, repo, state):
    before = state(repo)
    r = post_ttl(client, "/rest/", f"<> <{LDP}contains> <{ROOT}/x> .")
    assert r.status_code == 409
    assert "ldp#contains" in r.get_data(as_text=True)
    r = post_ttl(client, "/rest/", f"<> a <{LDP}DirectContainer> .")
    assert r.status_code == 409
    assert state(repo) == before
    r = post_ttl(client, "/rest/", f"<> <{LDP}contains> <{ROOT}/x> ; {DC_TITLE} 'ok' .",
                 Prefer="handling=lenient")
    assert r.status_code == 201 and r.headers["Preference-Applied"] == "handling=lenient"
    assert not [t for t in graph(client.get(r.headers["Location"]))
                if t[1] == f"<{LDP}contains>"]


def test_post_strict_refuses_timestamps(client, repo, state):
    body = (f'<> <{FCREPO}lastModified> '
            '"2000-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .')
    assert post_ttl(client, "/rest/", body).status_code == 201  # ignored by default
    before = state(repo)
    assert post_ttl(client, "/rest/", body, Prefer="handling=strict").status_code == 409
    assert state(repo) == before


# --- PUT --------------------------------------------------------------------------------

def test_put_create_and_replace(client):
    r = put_ttl(client, "/rest/a", f'<> {DC_TITLE} "one" .')
    assert r.status_code == 201 and r.headers["Location"] == f"{ROOT}/a"
    r = put_ttl(client, "/rest/a", f'<> {DC_TITLE} "two" .')
    assert r.status_code == 204 and r.data == b"" and "Content-Type" not in r.headers
    g = graph(client.get("/rest/a"))
    assert (f"<{ROOT}/a>", DC_TITLE, '"two"') in g
    assert (f"<{ROOT}/a>", DC_TITLE, '"one"') not in g


def test_put_creates_intermediate_containers(client):
    assert put_ttl(client, "/rest/x/y/z").status_code == 201
    assert LDP + "BasicContainer" in types(client.get("/rest/x/y"))


def test_put_get_round_trip_with_server_managed_triples(client):
    put_ttl(client, "/rest/c", f'<> {DC_TITLE} "Put class Container" .')
    post_ttl(client, "/rest/c", Slug="containedFolderSlug")
    r = client.get("/rest/c")
    body = r.data.replace(b"Put class Container", b"some-title")
    put = client.put("/rest/c", data=body, content_type=TTL,
                     headers={"If-Match": r.headers["ETag"]})
    assert put.status_code == 204, put.data
    g = graph(client.get("/rest/c"))
    assert (f"<{ROOT}/c>", DC_TITLE, '"some-title"') in g
    assert (f"<{ROOT}/c>", f"<{LDP}contains>", f"<{ROOT}/c/containedFolderSlug>") in g


def test_put_changing_containment_is_409(client, repo, state):
    put_ttl(client, "/rest/c")
    post_ttl(client, "/rest/c", Slug="containedFolderSlug")
    body = client.get("/rest/c").data.replace(b"containedFolderSlug", b"some-name")
    before = state(repo)
    r = client.put("/rest/c", data=body, content_type=TTL)
    assert r.status_code == 409
    assert "ldp#contains" in r.get_data(as_text=True)
    assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before


def test_put_old_timestamps_are_ignored(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "1" .')
    original = client.get("/rest/a").data
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "2" .')
    r = client.put("/rest/a", data=original, content_type=TTL)
    assert r.status_code == 204, r.data
    assert (f"<{ROOT}/a>", DC_TITLE, '"1"') in graph(client.get("/rest/a"))


def test_put_membership_triples_are_not_stored(client):
    put_ttl(client, "/rest/dc", "", Link=f'<{LDP}DirectContainer>; rel="type"')
    post_ttl(client, "/rest/dc", Slug="m")
    member = (f"<{ROOT}/dc>", f"<{LDP}member>", f"<{ROOT}/dc/m>")
    body = client.get("/rest/dc", headers={"Accept": NT}).data
    assert client.put("/rest/dc", data=body, content_type=NT).status_code == 204
    assert client.delete("/rest/dc/m").status_code == 204
    assert member not in graph(client.get("/rest/dc"))


def test_put_lenient_and_strict(client, repo, state):
    put_ttl(client, "/rest/a")
    bad = f"<> <{FCREPO}hasParent> <{ROOT}/elsewhere> ; {DC_TITLE} 'x' ."
    before = state(repo)
    assert put_ttl(client, "/rest/a", bad).status_code == 409
    assert put_ttl(client, "/rest/a", bad, Prefer="handling=strict").status_code == 409
    assert state(repo) == before
    r = put_ttl(client, "/rest/a", bad, Prefer="handling=lenient")
    assert r.status_code == 204 and r.headers["Preference-Applied"] == "handling=lenient"
    assert (f"<{ROOT}/a>", DC_TITLE, '"x"') in graph(client.get("/rest/a"))


def test_put_relative_uri_resolution(client):
    put_ttl(client, "/rest/a")
    put_ttl(client, "/rest/a", "<> <http://purl.org/dc/terms/relation> <#x>, <b> .")
    g = graph(client.get("/rest/a"))
    assert (f"<{ROOT}/a>", "<http://purl.org/dc/terms/relation>", f"<{ROOT}/a#x>") in g


def test_put_interaction_model_rules(client, repo, state):
    put_ttl(client, "/rest/c")
    # a current type (supertype) keeps the model
    r = put_ttl(client, "/rest/c", "", Link=f'<{LDP}RDFSource>; rel="type"')
    assert r.status_code == 204
    assert LDP + "BasicContainer" in types(client.get("/rest/c"))
    before = state(repo)
    r = put_ttl(client, "/rest/c", "", Link=f'<{LDP}DirectContainer>; rel="type"')
    assert r.status_code == 409 and link_targets(r, LDP + "constrainedBy")
    r = put_ttl(client, "/rest/c", "", Link=f'<{LDP}NonRDFSource>; rel="type"')
    assert r.status_code == 409
    assert state(repo) == before


def test_put_non_rdf_body_on_rdf_source_is_415(client, repo, state):
    put_ttl(client, "/rest/a")
    before = state(repo)
    r = client.put("/rest/a", data=b"hello", content_type="text/plain")
    assert r.status_code == 415
    assert state(repo) == before


def test_put_preconditions(client, repo, state):
    put_ttl(client, "/rest/a")
    etag = client.get("/rest/a").headers["ETag"]
    before = state(repo)
    r = put_ttl(client, "/rest/a", f'<> {DC_TITLE} "x" .', **{"If-Match": '"nope"'})
    assert r.status_code == 412 and link_targets(r, LDP + "constrainedBy")
    assert put_ttl(client, "/rest/a", "", **{"If-None-Match": "*"}).status_code == 412
    assert put_ttl(client, "/rest/a", "", **{
        "If-Unmodified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"}).status_code == 412
    assert put_ttl(client, "/rest/new", "", **{"If-Match": "*"}).status_code == 412
    assert state(repo) == before
    assert put_ttl(client, "/rest/a", "", **{"If-Match": etag}).status_code == 204
    assert put_ttl(client, "/rest/a", "", **{"If-Match": etag}).status_code == 412
    assert put_ttl(client, "/rest/b", "", **{"If-None-Match": "*"}).status_code == 201
    # the strong form of a weak tag also matches (clients that strip W/)
    etag = client.get("/rest/b").headers["ETag"]
    assert put_ttl(client, "/rest/b", "", **{"If-Match": etag[2:]}).status_code == 204


def test_put_on_versions_and_mementos_is_405(client, repo, state):
    put_ttl(client, "/rest/a")
    vid = client.post("/rest/a/fcr:versions").headers["Location"].rsplit("/", 1)[1]
    before = state(repo)
    for path in ("/rest/a/fcr:versions", f"/rest/a/fcr:versions/{vid}"):
        r = put_ttl(client, path, "")
        assert r.status_code == 405 and "GET" in r.headers["Allow"]
    assert state(repo) == before


# --- PATCH -----------------------------------------------------------------------------

def _patch(client, path, update, **headers):
    return client.patch(path, data=update.encode(), content_type="application/sparql-update",
                        headers=headers)


def test_patch(client):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "old" .')
    r = _patch(client, "/rest/a", f'DELETE {{ <> {DC_TITLE} ?t }} INSERT {{ <> {DC_TITLE} "new" }} '
                                  f'WHERE {{ <> {DC_TITLE} ?t }}')
    assert r.status_code == 204, r.data
    assert r.headers["Last-Modified"] == client.get("/rest/a").headers["Last-Modified"]
    g = graph(client.get("/rest/a"))
    assert (f"<{ROOT}/a>", DC_TITLE, '"new"') in g and (f"<{ROOT}/a>", DC_TITLE, '"old"') not in g
    r = _patch(client, "/rest/a", "PREFIX pcdm: <http://pcdm.org/models#> "
                                  "INSERT { <> a pcdm:Collection } WHERE {}")
    assert r.status_code == 204


def test_patch_errors(client, repo, state):
    put_ttl(client, "/rest/a", f'<> {DC_TITLE} "old" .')
    post_ttl(client, "/rest/a", Slug="k")
    before = state(repo)
    assert _patch(client, "/rest/a", "INSERT DATA { <> <oops").status_code == 400
    r = _patch(client, "/rest/a", f"INSERT DATA {{ <> <{LDP}contains> <{ROOT}/a/x> }}")
    assert r.status_code == 409 and link_targets(r, LDP + "constrainedBy")
    r = _patch(client, "/rest/a", f"INSERT DATA {{ <> a <{LDP}DirectContainer> }}")
    assert r.status_code == 409
    r = client.patch("/rest/a", data=b"<> <http://x/p> 1 .", content_type=TTL)
    assert r.status_code == 415
    assert _patch(client, "/rest/a", "INSERT DATA { <> <http://x/p> 1 }",
                  **{"If-Match": '"nope"'}).status_code == 412
    assert _patch(client, "/rest/missing", "INSERT DATA { <> <http://x/p> 1 }").status_code == 404
    assert _patch(client, "/rest/a", "DROP ALL").status_code == 400
    assert state(repo) == before


def test_patch_lenient(client):
    put_ttl(client, "/rest/a")
    r = _patch(client, "/rest/a", f"INSERT DATA {{ <> <{FCREPO}hasParent> <{ROOT}/zz> ; "
                                  f"{DC_TITLE} 'ok' }}", Prefer="handling=lenient")
    assert r.status_code == 204
    assert (f"<{ROOT}/a>", DC_TITLE, '"ok"') in graph(client.get("/rest/a"))


# --- DELETE ------------------------------------------------------------------------------

def test_delete(client):
    put_ttl(client, "/rest/c")
    loc = post_ttl(client, "/rest/c", BUG).headers["Location"]
    r = client.delete(loc)
    assert r.status_code == 204 and "Content-Type" not in r.headers
    assert client.get(loc).status_code == 410
    kids = {o for s, p, o in graph(client.get("/rest/c")) if p == f"<{LDP}contains>"}
    assert f"<{loc}>" not in kids


def test_delete_recursive(client):
    put_ttl(client, "/rest/c/d/e")
    assert client.delete("/rest/c").status_code == 204
    for path in ("/rest/c", "/rest/c/d", "/rest/c/d/e"):
        assert client.get(path).status_code == 410


def test_delete_root_is_405(client, repo, state):
    before = state(repo)
    r = client.delete("/rest/")
    assert r.status_code == 405 and "DELETE" not in r.headers["Allow"]
    assert state(repo) == before


def test_delete_preconditions(client, repo, state):
    put_ttl(client, "/rest/a")
    etag = client.get("/rest/a").headers["ETag"]
    before = state(repo)
    assert client.delete("/rest/a", headers={"If-Match": '"x"'}).status_code == 412
    assert state(repo) == before
    assert client.delete("/rest/a", headers={"If-Match": etag}).status_code == 204


def test_delete_missing_is_404(client):
    assert client.delete("/rest/nothing").status_code == 404


def test_put_to_deleted_uri_is_410(client, repo, state):
    put_ttl(client, "/rest/a")
    client.delete("/rest/a")
    before = state(repo)
    r = put_ttl(client, "/rest/a", BUG)
    assert r.status_code == 410
    assert state(repo) == before


# --- misc -----------------------------------------------------------------------------------

def test_unknown_method_is_405(client, repo, state):
    before = state(repo)
    r = client.open("/rest/", method="PROPFIND")
    assert r.status_code == 405 and "GET" in r.headers["Allow"]
    r = client.open("/rest/x", method="BREW")
    assert r.status_code == 405
    assert state(repo) == before


def test_indirect_container(client):
    put_ttl(client, "/rest/mr")
    body = (f"@prefix ldp: <{LDP}> . <> ldp:membershipResource <{ROOT}/mr> ; "
            "ldp:hasMemberRelation <http://purl.org/dc/terms/hasPart> ; "
            "ldp:insertedContentRelation <http://xmlns.com/foaf/0.1/primaryTopic> .")
    assert put_ttl(client, "/rest/ic", body,
                   Link=f'<{LDP}IndirectContainer>; rel="type"').status_code == 201
    r = post_ttl(client, "/rest/ic", "<> <http://xmlns.com/foaf/0.1/primaryTopic> <#it> .")
    loc = r.headers["Location"]
    assert (f"<{ROOT}/mr>", "<http://purl.org/dc/terms/hasPart>", f"<{loc}#it>") in graph(
        client.get("/rest/mr"))


def test_write_preconditions_use_the_get_etag_of_a_container(client, repo, state):
    """The ETag of a GET (children and membership included) is the one the
    preconditions of PUT, PATCH, DELETE and POST compare, without reading children."""
    put_ttl(client, "/rest/c")
    for i in range(3):
        post_ttl(client, "/rest/c", Slug=f"x{i}")
    etag = client.get("/rest/c").headers["ETag"]
    r = client.patch("/rest/c", data=b'INSERT DATA { <> <http://ex.org/p> "v" . }',
                     content_type="application/sparql-update", headers={"If-Match": etag})
    assert r.status_code == 204, r.data
    assert client.patch("/rest/c", data=b"INSERT DATA { <> <http://ex.org/p> \"w\" . }",
                        content_type="application/sparql-update",
                        headers={"If-Match": etag}).status_code == 412
    etag = client.get("/rest/c").headers["ETag"]
    assert post_ttl(client, "/rest/c", **{"If-Match": etag}).status_code == 201
    etag = client.get("/rest/c").headers["ETag"]
    before = state(repo)
    assert client.delete("/rest/c", headers={"If-Match": '"x"'}).status_code == 412
    assert state(repo) == before
    assert client.delete("/rest/c", headers={"If-Match": etag}).status_code == 204


def test_tombstone_link_names_the_deleted_ancestor(client):
    put_ttl(client, "/rest/t")
    put_ttl(client, "/rest/t/a")
    put_ttl(client, "/rest/t/a/b")
    assert client.delete("/rest/t/a").status_code == 204
    for path in ("/rest/t/a", "/rest/t/a/b"):
        for method in (client.get, client.head, client.options, client.delete):
            r = method(path)
            assert r.status_code == 410
            assert link_targets(r, "hasTombstone") == [f"{ROOT}/t/a/fcr:tombstone"]
    r = put_ttl(client, "/rest/t/a/b/c")
    assert r.status_code == 410
    assert link_targets(r, "hasTombstone") == [f"{ROOT}/t/a/fcr:tombstone"]


def test_patch_deleting_containment_is_409(client, repo, state):
    put_ttl(client, "/rest/c")
    put_ttl(client, "/rest/c/x")
    before = state(repo)
    r = client.patch("/rest/c", data=f"DELETE DATA {{ <> <{LDP}contains> <{ROOT}/c/x> }}"
                     .encode(), content_type="application/sparql-update")
    assert r.status_code == 409
    assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before
