"""The ACL resource at ``<resource>/fcr:acl`` over HTTP (Fedora API 1.0 section 5):
discovery, create / read / replace / patch / delete, bad input, and where ACLs
do not appear. Requests act as the administrator unless a test says otherwise."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.http import headers as hdr

from .conftest import (
    ACL,
    ALICE,
    ANONYMOUS,
    BOB,
    ROOT,
    SPARQL_UPDATE,
    TTL,
    acl_doc,
    authorization,
    grant,
    put_acl,
)

CONSTRAINED_BY = "http://www.w3.org/ns/ldp#constrainedBy"
READERS = acl_doc(authorization("readers", "acl:Read", agent_class="foaf:Agent",
                                access_to="<http://localhost/rest/a>"))


def links(response, rel):
    return [lk.uri for lk in hdr.parse_link(response.headers.getlist("Link")) if lk.has_rel(rel)]


def triples(response, base=ROOT + "/"):
    return set(rdfio.parse(response.data, response.headers["Content-Type"], base))


def put(client, path, body="", ctype=TTL):
    return client.put(path, data=body.encode(), content_type=ctype)


# --- discovery: Link rel="acl" ----------------------------------------------------------------

def test_fedora_5_acl_link_on_every_resource_response(client):
    r = put(client, "/rest/a")
    assert links(r, "acl") == [ROOT + "/a/fcr:acl"]
    for method in ("GET", "HEAD", "OPTIONS"):
        r = client.open("/rest/a", method=method)
        assert r.status_code == 200
        assert links(r, "acl") == [ROOT + "/a/fcr:acl"], method
    assert links(client.get("/rest/"), "acl") == [ROOT + "/fcr:acl"]
    r = client.post("/rest/a", data=b"", content_type=TTL, headers={"Slug": "b"})
    assert r.status_code == 201
    assert any(v.startswith(f'<{ROOT}/a/b/fcr:acl>; rel="acl"')
               for v in r.headers.getlist("Link")[0].split(", "))


def test_fedora_5_binaries_descriptions_and_mementos_link_their_resource_acl(client):
    client.put("/rest/bin", data=b"data", content_type="application/octet-stream")
    assert links(client.get("/rest/bin"), "acl") == [ROOT + "/bin/fcr:acl"]
    assert links(client.get("/rest/bin/fcr:metadata"), "acl") == [ROOT + "/bin/fcr:acl"]
    r = client.post("/rest/bin/fcr:versions")
    assert r.status_code == 201
    assert links(client.get(r.headers["Location"]), "acl") == [ROOT + "/bin/fcr:acl"]
    assert links(client.get("/rest/bin/fcr:versions"), "acl") == [ROOT + "/bin/fcr:acl"]


# --- the ACL resource -------------------------------------------------------------------------

def test_fedora_5_acl_is_404_until_created(client):
    put(client, "/rest/a")
    r = client.get("/rest/a/fcr:acl")
    assert r.status_code == 404
    assert b"no ACL" in r.data


def test_fedora_5_acl_of_missing_resource_is_404(client, repo, state):
    before = state(repo)
    assert client.get("/rest/nothing/fcr:acl").status_code == 404
    r = put(client, "/rest/nothing/fcr:acl", READERS)
    assert r.status_code == 404
    assert state(repo) == before


def test_fedora_5_acl_create_read_replace_delete(client, repo):
    put(client, "/rest/a")
    r = put(client, "/rest/a/fcr:acl", READERS)
    assert r.status_code == 201
    assert r.headers["Location"] == ROOT + "/a/fcr:acl"
    r = client.get("/rest/a/fcr:acl")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith(TTL)
    node = f"<{ROOT}/a/fcr:acl#readers>"
    assert (node, f"<{ACL}mode>", f"<{ACL}Read>") in triples(r)
    assert (node, f"<{ACL}accessTo>", f"<{ROOT}/a>") in triples(r)
    assert "http://www.w3.org/ns/ldp#RDFSource" in links(r, "type")
    assert links(r, "describes") == [ROOT + "/a"]
    assert set(r.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "PUT",
                                                       "PATCH", "DELETE"}
    assert client.get("/rest/a/fcr:acl", headers={"If-None-Match": r.headers["ETag"]}
                      ).status_code == 304
    head = client.head("/rest/a/fcr:acl")
    assert head.status_code == 200 and head.data == b""
    writers = acl_doc(authorization("writers", "acl:Write", agent="<http://ex.org/w>",
                                    access_to=f"<{ROOT}/a>"))
    assert put(client, "/rest/a/fcr:acl", writers).status_code == 204
    got = triples(client.get("/rest/a/fcr:acl"))
    assert (f"<{ROOT}/a/fcr:acl#writers>", f"<{ACL}agent>", "<http://ex.org/w>") in got
    assert not any(s == node for s, _, _ in got)
    assert client.delete("/rest/a/fcr:acl").status_code == 204
    assert client.get("/rest/a/fcr:acl").status_code == 404
    assert client.delete("/rest/a/fcr:acl").status_code == 404
    assert not repo.has_acl("/a")


def test_fedora_5_acl_patch(client):
    put(client, "/rest/a")
    put(client, "/rest/a/fcr:acl", READERS)
    r = client.patch("/rest/a/fcr:acl", content_type=SPARQL_UPDATE, data=(
        b"PREFIX acl: <http://www.w3.org/ns/auth/acl#> "
        b"INSERT DATA { <#readers> acl:mode acl:Write }"))
    assert r.status_code == 204
    got = triples(client.get("/rest/a/fcr:acl"))
    assert (f"<{ROOT}/a/fcr:acl#readers>", f"<{ACL}mode>", f"<{ACL}Write>") in got


def test_fedora_5_acl_patch_of_missing_acl_is_404(client, repo, state):
    put(client, "/rest/a")
    before = state(repo)
    r = client.patch("/rest/a/fcr:acl", content_type=SPARQL_UPDATE,
                     data=b"INSERT DATA { <#x> <http://ex.org/p> 1 }")
    assert r.status_code == 404
    assert state(repo) == before


def test_fedora_5_root_acl_is_the_default_until_replaced(client):
    r = client.get("/rest/fcr:acl")
    assert r.status_code == 200
    got = triples(r)
    node = f"<{ROOT}/fcr:acl#default>"
    assert (node, f"<{ACL}agentClass>", "<http://xmlns.com/foaf/0.1/Agent>") in got
    assert (node, f"<{ACL}mode>", f"<{ACL}Read>") in got
    assert (node, f"<{ACL}default>", f"<{ROOT}/>") in got
    assert not any(p == f"<{ACL}mode>" and o != f"<{ACL}Read>" for _, p, o in got)
    assert put(client, "/rest/fcr:acl", grant("/", "acl:Read, acl:Write")).status_code == 201
    assert (f"<{ROOT}/fcr:acl#a>", f"<{ACL}mode>", f"<{ACL}Write>") in triples(
        client.get("/rest/fcr:acl"))
    assert client.delete("/rest/fcr:acl").status_code == 204
    assert triples(client.get("/rest/fcr:acl")) == got


def test_fedora_5_acl_options_and_post(client):
    put(client, "/rest/a")
    r = client.options("/rest/a/fcr:acl")
    assert r.status_code == 200
    assert "PATCH" in r.headers["Allow"]
    r = client.post("/rest/a/fcr:acl", data=b"", content_type=TTL)
    assert r.status_code == 405
    assert "POST" not in r.headers["Allow"]


def test_acl_options_needs_control_on_a_live_resource(client, repo, act):
    """As a GET of the ACL: before, OPTIONS answered 200 to anyone, for any path."""
    put(client, "/rest/a")
    put_acl(repo, "/a", grant("/a", "acl:Read, acl:Control", who=f"acl:agent <{ALICE.webid}>"))
    assert client.options("/rest/nothing/fcr:acl").status_code == 404
    client.put("/rest/gone")
    client.delete("/rest/gone")
    assert client.options("/rest/gone/fcr:acl").status_code == 410
    act(ALICE)
    assert client.options("/rest/a/fcr:acl").status_code == 200
    act(BOB)
    r = client.options("/rest/a/fcr:acl")
    assert r.status_code == 403 and "Allow" not in r.headers
    assert b"Control access to /a" in r.data
    act(ANONYMOUS)
    assert client.options("/rest/a/fcr:acl").status_code == 401


def test_fedora_5_acl_conditional_get(client):
    put(client, "/rest/a")
    put(client, "/rest/a/fcr:acl", READERS)
    r = client.get("/rest/a/fcr:acl", headers={"If-Match": '"other"'})
    assert r.status_code == 412


def test_fedora_5_acl_body_over_the_limit(tmp_path, state, app):
    from lakesuperior.config import Config
    from tests.apps import build_app
    app = build_app(Config(data_dir=str(tmp_path / "small"), sync=False, max_body_size=100))
    try:
        client = app.test_client()
        put(client, "/rest/a")
        repo = app.extensions["lakesuperior"].repository
        before = state(repo)
        r = put(client, "/rest/a/fcr:acl", READERS)
        assert r.status_code == 413
        assert state(repo) == before
    finally:
        app.extensions["lakesuperior"].close()


def test_fedora_5_acl_not_acceptable(client):
    put(client, "/rest/a")
    put(client, "/rest/a/fcr:acl", READERS)
    r = client.get("/rest/a/fcr:acl", headers={"Accept": "image/png"})
    assert r.status_code == 406


def test_fedora_5_acl_of_deleted_resource_is_410(client):
    put(client, "/rest/a")
    client.delete("/rest/a")
    r = client.get("/rest/a/fcr:acl")
    assert r.status_code == 410
    assert links(r, "hasTombstone") == [ROOT + "/a/fcr:tombstone"]


# --- bad ACL input: a clear 4xx, constrainedBy, nothing written -------------------------------

BAD = [
    ("malformed", "<#a> a acl:Authorization ;; .", TTL, 400, "acl"),
    ("foreign accessTo", acl_doc(authorization("a", "acl:Read", agent_class="foaf:Agent",
                                               access_to="<http://elsewhere.org/x>")),
     TTL, 409, "its own resource or a resource below it"),
    ("other resource", acl_doc(authorization("a", "acl:Read", agent_class="foaf:Agent",
                                             access_to=f"<{ROOT}/b>")),
     TTL, 409, "its own resource or a resource below it"),
    ("foreign default", acl_doc(authorization("a", "acl:Read", agent_class="foaf:Agent",
                                              default="<http://elsewhere.org/x>")),
     TTL, 409, "inherited from its own resource"),
    ("default below", acl_doc(authorization("a", "acl:Read", agent_class="foaf:Agent",
                                            default=f"<{ROOT}/a/b>")),
     TTL, 409, "inherited from its own resource"),
    ("foreign group", acl_doc(authorization("a", "acl:Read", group="<http://elsewhere.org/g>",
                                            access_to=f"<{ROOT}/a>")),
     TTL, 409, "outside this repository"),
    ("blank node", acl_doc("[] a acl:Authorization ; acl:mode acl:Read ; "
                           f"acl:agentClass foaf:Agent ; acl:accessTo <{ROOT}/a> .\n"),
     TTL, 409, "hash URIs"),
    ("not rdf", "hello", "text/plain", 415, "An ACL is RDF"),
]


@pytest.mark.parametrize("name, body, ctype, status, message", BAD, ids=[b[0] for b in BAD])
def test_fedora_5_bad_acl_is_refused_and_nothing_written(client, repo, state, name, body, ctype,
                                                         status, message):
    put(client, "/rest/a")
    before = state(repo)
    r = put(client, "/rest/a/fcr:acl", body, ctype)
    assert r.status_code == status, r.data
    assert message.lower() in r.data.decode().lower()
    assert links(r, CONSTRAINED_BY)
    if status == 409:
        assert links(r, CONSTRAINED_BY) == ["http://localhost/constraints#access-control"]
    assert state(repo) == before
    assert client.get("/rest/a/fcr:acl").status_code == 404


def test_fedora_5_bad_acl_patch_is_refused_and_nothing_written(client, repo, state):
    put(client, "/rest/a")
    put(client, "/rest/a/fcr:acl", READERS)
    before = state(repo)
    r = client.patch("/rest/a/fcr:acl", content_type=SPARQL_UPDATE, data=(
        b"PREFIX acl: <http://www.w3.org/ns/auth/acl#> "
        b"INSERT DATA { <#readers> acl:accessTo <http://elsewhere.org/x> }"))
    assert r.status_code == 409
    assert b"its own resource or a resource below it" in r.data
    assert state(repo) == before
    r = client.patch("/rest/a/fcr:acl", content_type=TTL, data=b"<a> <b> <c> .")
    assert r.status_code == 415
    r = client.patch("/rest/a/fcr:acl", content_type=SPARQL_UPDATE, data=b"INSERT nonsense")
    assert r.status_code == 400
    assert state(repo) == before


# --- where ACLs are not ------------------------------------------------------------------------

def test_acls_are_not_children_nor_in_sparql(client, repo):
    put(client, "/rest/a")
    put(client, "/rest/a/fcr:acl", READERS)
    assert repo.get("/a").children == []
    body = client.get("/rest/a").data
    assert b"fcr:acl" not in body
    rows = repo.sparql_query(f"SELECT ?s WHERE {{ ?s <{ACL}mode> ?m }}")
    assert list(rows) == []
    assert repo.get("/a", incl_inbound=True).triples == repo.get("/a").triples


def test_acl_stays_with_a_soft_deleted_resource_and_goes_with_a_purge(client, repo):
    put(client, "/rest/a")
    put(client, "/rest/a/b")
    put_acl(repo, "/a/b", grant("/a/b", "acl:Read"))
    put_acl(repo, "/a", grant("/a", "acl:Read"))
    client.delete("/rest/a")
    assert repo.has_acl("/a/b")
    assert client.post("/rest/a/fcr:tombstone").status_code == 201
    assert client.get("/rest/a/b/fcr:acl").status_code == 200
    client.delete("/rest/a")
    assert client.delete("/rest/a/fcr:tombstone").status_code == 204
    assert not repo.has_acl("/a") and not repo.has_acl("/a/b")
    put(client, "/rest/a")
    assert client.get("/rest/a/fcr:acl").status_code == 404
