"""WebAC decisions over HTTP (Fedora API 1.0 section 5): status codes per method
and mode, 401 vs 403, inheritance and defaults, groups, accessToClass, Append,
Control on ACLs, and what follows its resource's ACL. Each refusal leaves the
store unchanged."""
from __future__ import annotations

import pytest

from lakesuperior.auth.agents import Agent

from .conftest import (
    ADMIN,
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

ALICE_ID = f"<{ALICE.webid}>"
INSERT = b"INSERT DATA { <> <http://purl.org/dc/terms/title> \"t\" }"
DELETE = b"DELETE DATA { <> <http://purl.org/dc/terms/title> \"t\" }"


@pytest.fixture
def tree(client, repo):
    """/a, /a/b, /a/b/c and a binary /a/bin, made by the administrator."""
    for uid in ("/a", "/a/b", "/a/b/c"):
        repo.create_or_replace(uid, data=b'<> <http://purl.org/dc/terms/title> "t" .',
                               media_type=TTL, base_uri=ROOT)
    repo.create_or_replace("/a/bin", data=b"content", media_type="application/octet-stream")
    return repo


def requests(client):
    """One request per LDP method on /a/b (and a POST into it)."""
    return {
        "GET": lambda: client.get("/rest/a/b"),
        "HEAD": lambda: client.head("/rest/a/b"),
        "OPTIONS": lambda: client.options("/rest/a/b"),
        "PUT": lambda: client.put("/rest/a/b", data=b"", content_type=TTL),
        "PATCH": lambda: client.patch("/rest/a/b", data=DELETE, content_type=SPARQL_UPDATE),
        "POST": lambda: client.post("/rest/a/b", data=b"", content_type=TTL),
        "DELETE": lambda: client.delete("/rest/a/b"),
    }


MODE_OF = {"GET": "Read", "HEAD": "Read", "OPTIONS": "Read", "PUT": "Write",
           "PATCH": "Write", "POST": "Append", "DELETE": "Write"}
OK = {"GET": 200, "HEAD": 200, "OPTIONS": 200, "PUT": 204, "PATCH": 204, "POST": 201,
      "DELETE": 204}


# --- the default root ACL: everyone reads, nobody but administrators writes --------------------

@pytest.mark.parametrize("method", list(MODE_OF))
def test_fedora_5_default_root_acl(client, tree, act, state, method):
    act(ANONYMOUS)
    before = state(tree)
    r = requests(client)[method]()
    if MODE_OF[method] == "Read":
        assert r.status_code == 200
        return
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"].startswith("Basic realm=")
    assert state(tree) == before
    act(ALICE)
    r = requests(client)[method]()
    assert r.status_code == 403
    assert "WWW-Authenticate" not in r.headers
    assert state(tree) == before


def test_fedora_5_401_and_403_bodies_name_the_mode_and_resource(client, tree, act):
    act(ANONYMOUS)
    r = client.put("/rest/a/b", data=b"", content_type=TTL)
    assert r.status_code == 401
    assert r.data.decode() == "401 Unauthorized: Write access to /a/b is not granted to " \
                              "this agent\n"
    act(BOB)
    r = client.post("/rest/a/b", data=b"", content_type=TTL)
    assert r.status_code == 403
    assert r.data.decode() == "403 Forbidden: Append access to /a/b is not granted to " \
                              "this agent\n"


def test_fedora_5_administrators_bypass(client, tree, act, repo):
    put_acl(repo, "/", acl_doc())
    act(ADMIN)
    for method, request in requests(client).items():
        assert request().status_code == OK[method], method


# --- each mode, each method ------------------------------------------------------------------

@pytest.mark.parametrize("modes, allowed", [
    ("acl:Read", {"GET", "HEAD", "OPTIONS"}),
    ("acl:Write", {"PUT", "PATCH", "POST", "DELETE"}),
    ("acl:Append", {"POST"}),
    ("acl:Control", set()),
    ("acl:Read, acl:Write", set(MODE_OF)),
])
@pytest.mark.parametrize("method", list(MODE_OF))
def test_fedora_5_modes_per_method(client, tree, act, state, modes, allowed, method):
    put_acl(tree, "/a/b", grant("/a/b", modes, who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    before = state(tree)
    r = requests(client)[method]()
    if method in allowed:
        assert r.status_code == OK[method], r.data
    else:
        assert r.status_code == 403, r.data
        assert state(tree) == before


def test_fedora_5_other_agents_get_nothing_from_an_agent_rule(client, tree, act):
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agent {ALICE_ID}"))
    act(BOB)
    assert client.get("/rest/a/b").status_code == 403
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 401
    act(ALICE)
    assert client.get("/rest/a/b").status_code == 200


def test_fedora_5_authenticated_agent_class(client, tree, act):
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who="acl:agentClass acl:AuthenticatedAgent"))
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 401
    act(BOB)
    assert client.get("/rest/a/b").status_code == 200


# --- inheritance and defaults ----------------------------------------------------------------

def test_fedora_5_3_inherits_the_nearest_acl_defaults(client, tree, act):
    put_acl(tree, "/a", grant("/a", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    assert client.get("/rest/a/b/c").status_code == 200
    assert client.put("/rest/a/b/c/new", data=b"", content_type=TTL).status_code == 201
    act(BOB)
    assert client.get("/rest/a/b/c").status_code == 403


def test_fedora_5_3_without_default_an_acl_decides_for_its_resource_only(client, tree, act):
    put_acl(tree, "/a", grant("/a", "acl:Read", who=f"acl:agent {ALICE_ID}", default=False))
    act(ANONYMOUS)
    assert client.get("/rest/a").status_code == 401
    # /a's ACL has no acl:default: /a/b inherits the root's (everyone reads), as Fedora 6
    assert client.get("/rest/a/b").status_code == 200
    assert client.get("/rest/").status_code == 200


def test_fedora_5_3_own_acl_overrides_the_inherited_one(client, tree, act):
    put_acl(tree, "/a", grant("/a", "acl:Read"))
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agent {ALICE_ID}"))
    act(BOB)
    assert client.get("/rest/a").status_code == 200
    assert client.get("/rest/a/b").status_code == 403
    assert client.get("/rest/a/b/c").status_code == 403
    act(ALICE)
    assert client.get("/rest/a/b/c").status_code == 200


def test_fedora_5_root_acl_replaced_over_http(client, tree, act):
    act(ADMIN)
    r = client.put("/rest/fcr:acl", content_type=TTL,
                   data=grant("/", "acl:Read", who=f"acl:agent {ALICE_ID}").encode())
    assert r.status_code == 201
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 401
    act(ALICE)
    assert client.get("/rest/a/b").status_code == 200


# --- groups ----------------------------------------------------------------------------------

GROUP_DOC = ("<#editors> a <http://www.w3.org/2006/vcard/ns#Group> ; "
             "<http://www.w3.org/2006/vcard/ns#hasMember> <" + str(ALICE.webid) + "> .")


def test_fedora_5_5_group_resource_members(client, tree, act):
    tree.create_or_replace("/groups", data=GROUP_DOC.encode(), media_type=TTL, base_uri=ROOT)
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read, acl:Write",
                                who=f"acl:agentGroup <{ROOT}/groups#editors>"))
    act(ALICE)
    assert client.patch("/rest/a/b", data=DELETE, content_type=SPARQL_UPDATE).status_code == 204
    act(BOB)
    assert client.get("/rest/a/b").status_code == 403


def test_fedora_5_5_group_not_typed_vcard_group_counts_for_nothing(client, tree, act):
    tree.create_or_replace("/groups", data=GROUP_DOC.replace(
        "<http://www.w3.org/2006/vcard/ns#Group>", "<http://ex.org/NotAGroup>").encode(),
        media_type=TTL, base_uri=ROOT)
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agentGroup <{ROOT}/groups#editors>"))
    act(ALICE)
    assert client.get("/rest/a/b").status_code == 403


def test_fedora_5_5_groups_the_agent_is_known_to_be_in(client, tree, act):
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agentGroup <{ROOT}/groups/staff>"))
    act(Agent(name="carol", webid="http://example.org/people/carol",
              groups=(f"{ROOT}/groups/staff",)))
    assert client.get("/rest/a/b").status_code == 200
    act(BOB)
    assert client.get("/rest/a/b").status_code == 403


# --- agents named by literals, as Fedora 6 reads them ------------------------------------------

@pytest.mark.parametrize("text", [ALICE.webid, ALICE.name], ids=["webid", "name"])
def test_fedora_5_literal_agent_names_a_user(client, tree, act, text):
    """``acl:agent "..."``: Fedora 6 reads a literal as the user it names (the Fedora
    API Test Suite's user-read-only-multiple-agents.ttl names its user so)."""
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f'acl:agent "{text}"'))
    act(ALICE)
    assert client.get("/rest/a/b").status_code == 200
    act(BOB)
    assert client.get("/rest/a/b").status_code == 403
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 401


@pytest.mark.parametrize("text", [ALICE.webid, ALICE.name], ids=["webid", "name"])
def test_fedora_5_5_group_member_named_by_a_literal(client, tree, act, text):
    """``vcard:hasMember "..."`` in a group listing (the suite's
    agent-group-using-hash-uris.ttl), as Fedora 6 reads group members."""
    doc = GROUP_DOC.replace(f"<{ALICE.webid}>", f'"{text}"')
    tree.create_or_replace("/groups", data=doc.encode(), media_type=TTL, base_uri=ROOT)
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agentGroup <{ROOT}/groups#editors>"))
    act(ALICE)
    assert client.get("/rest/a/b").status_code == 200
    act(BOB)
    assert client.get("/rest/a/b").status_code == 403


def test_fedora_5_acl_agent_foaf_agent_is_not_everyone(client, tree, act):
    """Everyone is ``acl:agentClass foaf:Agent``; given as ``acl:agent`` it names no
    agent (Fedora 6's WebACRolesProvider drops it too)."""
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who="acl:agent foaf:Agent"))
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 401
    act(BOB)
    assert client.get("/rest/a/b").status_code == 403


# --- accessToClass ---------------------------------------------------------------------------

def test_fedora_5_6_access_to_class(client, tree, act):
    tree.create_or_replace("/a/b/pub", data=b"<> a <http://ex.org/Public> .", media_type=TTL)
    put_acl(tree, "/a", acl_doc(
        authorization("cls", "acl:Read", agent_class="foaf:Agent", default=f"<{ROOT}/a>",
                      access_to_class="<http://ex.org/Public>")))
    act(ANONYMOUS)
    assert client.get("/rest/a/b/pub").status_code == 200
    assert client.get("/rest/a/b/c").status_code == 401
    assert client.get("/rest/a").status_code == 401


def test_fedora_5_6_access_to_class_on_the_resource_itself(client, tree, act):
    tree.create_or_replace("/a/b", data=b"<> a <http://ex.org/Public> .", media_type=TTL)
    put_acl(tree, "/a/b", acl_doc(authorization("cls", "acl:Read", agent_class="foaf:Agent",
                                                access_to_class="<http://ex.org/Public>")))
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 200
    tree.create_or_replace("/a/b", data=b"<> a <http://ex.org/Private> .", media_type=TTL)
    assert client.get("/rest/a/b").status_code == 401


# --- Append (section 5.7) --------------------------------------------------------------------

def test_fedora_5_7_append_allows_post_and_insert_only_patch(client, tree, act, state):
    put_acl(tree, "/a/b", grant("/a/b", "acl:Append", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    assert client.post("/rest/a/b", data=b"", content_type=TTL).status_code == 201
    assert client.patch("/rest/a/b", data=INSERT, content_type=SPARQL_UPDATE).status_code == 204
    insert_where = (b"INSERT { <> <http://ex.org/p> ?o } WHERE { <> "
                    b"<http://purl.org/dc/terms/title> ?o }")
    assert client.patch("/rest/a/b", data=insert_where,
                        content_type=SPARQL_UPDATE).status_code == 204
    before = state(tree)
    for body in (DELETE, b"DELETE { <> ?p ?o } INSERT { <> ?p 1 } WHERE { <> ?p ?o }",
                 b"DELETE WHERE { <> <http://ex.org/p> ?o }"):
        r = client.patch("/rest/a/b", data=body, content_type=SPARQL_UPDATE)
        assert r.status_code == 403, body
        assert b"Write access to /a/b" in r.data
    assert client.put("/rest/a/b", data=b"", content_type=TTL).status_code == 403
    assert client.delete("/rest/a/b/c").status_code == 403
    assert state(tree) == before


def test_fedora_5_7_append_on_a_container_allows_creating_a_child_with_put(client, tree, act):
    put_acl(tree, "/a/b", grant("/a/b", "acl:Append", who=f"acl:agent {ALICE_ID}",
                                default=False))
    act(ALICE)
    assert client.put("/rest/a/b/new", data=b"", content_type=TTL).status_code == 201


def test_fedora_5_7_append_cannot_send_an_update_that_does_not_parse(client, tree, act):
    """What does not parse cannot be shown to only insert: it needs Write."""
    put_acl(tree, "/a/b", grant("/a/b", "acl:Append", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    r = client.patch("/rest/a/b", data=b"INSERT DATA {", content_type=SPARQL_UPDATE)
    assert r.status_code == 403


# --- Control (section 5.8): the ACL of an ACL is its resource's ------------------------------

@pytest.mark.parametrize("modes, status", [
    ("acl:Read, acl:Write, acl:Append", 403), ("acl:Control", 200)])
def test_fedora_5_8_acl_needs_control(client, tree, act, state, modes, status):
    put_acl(tree, "/a/b", grant("/a/b", modes, who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    r = client.get("/rest/a/b/fcr:acl")
    assert r.status_code == status
    before = state(tree)
    r = client.put("/rest/a/b/fcr:acl", content_type=TTL,
                   data=grant("/a/b", "acl:Read, acl:Control",
                              who=f"acl:agent {ALICE_ID}").encode())
    assert r.status_code == (403 if status == 403 else 204)
    if status == 403:
        assert b"Control access to /a/b" in r.data
        assert state(tree) == before
        for request in (lambda: client.delete("/rest/a/b/fcr:acl"),
                        lambda: client.patch("/rest/a/b/fcr:acl", data=INSERT,
                                             content_type=SPARQL_UPDATE)):
            assert request().status_code == 403
        assert state(tree) == before


def test_fedora_5_8_anonymous_acl_read_is_401(client, tree, act):
    act(ANONYMOUS)
    r = client.get("/rest/fcr:acl")
    assert r.status_code == 401
    assert b"Control access to /" in r.data


# --- what follows its resource's ACL ---------------------------------------------------------

def test_fedora_5_binaries_descriptions_versions_follow_the_resource(client, tree, act):
    client.post("/rest/a/bin/fcr:versions")
    client.post("/rest/a/b/fcr:versions")
    vid = tree.versions("/a/bin")[0].id
    put_acl(tree, "/a", grant("/a", "acl:Read", who=f"acl:agent {ALICE_ID}"))
    paths = ["/rest/a/bin", "/rest/a/bin/fcr:metadata", "/rest/a/bin/fcr:versions",
             f"/rest/a/bin/fcr:versions/{vid}", "/rest/a/b/fcr:versions"]
    act(ANONYMOUS)
    for path in paths:
        assert client.get(path).status_code == 401, path
    act(ALICE)
    for path in paths:
        assert client.get(path).status_code == 200, path
    assert client.put("/rest/a/bin", data=b"x",
                      content_type="application/octet-stream").status_code == 403
    assert client.post("/rest/a/bin/fcr:versions").status_code == 403


def test_fedora_5_tombstones_follow_the_resource(client, tree, act, state):
    tree.delete("/a/b")
    put_acl(tree, "/a", grant("/a", "acl:Read", who=f"acl:agent {ALICE_ID}"))
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 401
    act(ALICE)
    assert client.get("/rest/a/b").status_code == 410
    before = state(tree)
    assert client.delete("/rest/a/b/fcr:tombstone").status_code == 403
    assert client.post("/rest/a/b/fcr:tombstone").status_code == 403
    assert state(tree) == before


def test_delete_needs_write_on_everything_below(client, tree, act, state):
    put_acl(tree, "/a", grant("/a", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    put_acl(tree, "/a/b/c", grant("/a/b/c", "acl:Read", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    before = state(tree)
    r = client.delete("/rest/a/b")
    assert r.status_code == 403
    assert b"Write access to /a/b/c" in r.data
    assert state(tree) == before
    assert client.delete("/rest/a/bin").status_code == 204


def test_delete_of_a_container_whose_children_inherit_no_write(client, tree, act, state):
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}",
                                default=False))
    act(ALICE)
    before = state(tree)
    r = client.delete("/rest/a/b")
    assert r.status_code == 403
    assert b"Write access to /a/b/c " in r.data     # inherits the root's ACL: Read only
    assert state(tree) == before


# --- the agent's name is recorded ------------------------------------------------------------

def test_writes_record_the_agent(client, tree, act):
    put_acl(tree, "/a", grant("/a", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    assert client.put("/rest/a/new", data=b"", content_type=TTL).status_code == 201
    fcrepo = "http://fedora.info/definitions/v4/repository#"
    assert [o for _, p, o in tree.get("/a/new").triples
            if p == f"<{fcrepo}createdBy>"] == ['"alice"']
    act(Agent(name="root", admin=True))
    client.put("/rest/a/new2", data=b"", content_type=TTL)
    assert [o for _, p, o in tree.get("/a/new2").triples
            if p == f"<{fcrepo}createdBy>"] == ['"root"']


def test_fedora_5_memento_writes_need_write(client, tree, act, state):
    r = client.post("/rest/a/b/fcr:versions")
    vid = r.headers["Location"].rsplit("/", 1)[-1]
    put_acl(tree, "/a", grant("/a", "acl:Read", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    before = state(tree)
    assert client.delete(f"/rest/a/b/fcr:versions/{vid}").status_code == 403
    r = client.post("/rest/a/b/fcr:versions", data=b"", content_type=TTL,
                    headers={"Memento-Datetime": "Tue, 01 Jan 2019 00:00:00 GMT"})
    assert r.status_code == 403
    assert state(tree) == before
    put_acl(tree, "/a", grant("/a", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    assert client.delete(f"/rest/a/b/fcr:versions/{vid}").status_code == 204
