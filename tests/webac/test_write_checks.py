"""Permission before validation (issue #28, items 4 and 5): every write is checked
for the mode it needs before its body, media type, interaction model or method is
judged, as Fedora 6's WebACFilter does before its resources run; a create that
names its own ACL with ``Link: <...>; rel="acl"`` is refused (400, as Fedora 6's
``RequestWithAclLinkHeaderException``), after the permission check."""
from __future__ import annotations

import pytest

from lakesuperior.auth.agent_view import inserts_only

from .conftest import (
    ALICE,
    ANONYMOUS,
    BOB,
    ROOT,
    SPARQL_UPDATE,
    TTL,
    grant,
    put_acl,
)

ALICE_ID = f"<{ALICE.webid}>"
OCTETS = "application/octet-stream"
INSERT_ONLY = (b'DELETE { } INSERT { <> <http://purl.org/dc/terms/title> "added" } WHERE { }')
CONSTRAINED_BY = "http://www.w3.org/ns/ldp#constrainedBy"


@pytest.fixture
def tree(client, repo):
    """/a (an RDF source), /a/b and the binary /a/bin, made by the administrator."""
    for uid in ("/a", "/a/b"):
        repo.create_or_replace(uid, data=b'<> <http://purl.org/dc/terms/title> "t" .',
                               media_type=TTL, base_uri=ROOT)
    repo.create_or_replace("/a/bin", data=b"content", media_type=OCTETS)
    return repo


def _requests(client):
    """Writes that are each refused for some reason other than permission (415, 405,
    409 or 400) when the agent has the mode they need."""
    return {
        "PUT text/plain on an RDF source": (
            lambda: client.put("/rest/a/b", data=b"text", content_type="text/plain"), 415),
        "PUT changing the interaction model": (
            lambda: client.put("/rest/a/bin", data=b"", content_type=TTL, headers={
                "Link": '<http://www.w3.org/ns/ldp#BasicContainer>; rel="type"'}), 409),
        "POST on a binary": (
            lambda: client.post("/rest/a/bin", data=b"x", content_type=OCTETS), 409),
        "POST on a description": (
            lambda: client.post("/rest/a/bin/fcr:metadata", data=b"", content_type=TTL), 405),
        "PUT text/plain on a description": (
            lambda: client.put("/rest/a/bin/fcr:metadata", data=b"x",
                               content_type="text/plain"), 415),
        "DELETE of a description": (lambda: client.delete("/rest/a/bin/fcr:metadata"), 405),
        "PATCH with text/plain": (
            lambda: client.patch("/rest/a/b", data=b"x", content_type="text/plain"), 415),
        "PATCH of a binary": (
            lambda: client.patch("/rest/a/bin", data=b"DELETE DATA { <> <p:x> 1 }",
                                 content_type=SPARQL_UPDATE), 415),
        "PUT on a TimeMap": (lambda: client.put("/rest/a/b/fcr:versions", data=b"",
                                                content_type=TTL), 405),
        "DELETE of the root": (lambda: client.delete("/rest/"), 405),
        "PUT of a malformed body": (
            lambda: client.put("/rest/a/b", data=b"<a> <b> .", content_type=TTL), 400),
    }


CASES = list(_requests(None))


@pytest.mark.parametrize("case", CASES)
def test_without_the_mode_a_write_is_denied_before_it_is_judged(client, tree, act, state, case):
    put_acl(tree, "/", grant("/", "acl:Read, acl:Append", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    before = state(tree)
    request, _ = _requests(client)[case]
    r = request()
    assert r.status_code == 403, (r.status_code, r.data)
    assert b"Write access to /" in r.data
    assert state(tree) == before
    act(ANONYMOUS)
    r = request()
    assert r.status_code == 401, (r.status_code, r.data)
    assert state(tree) == before


@pytest.mark.parametrize("case", CASES)
def test_with_the_mode_the_write_is_judged(client, tree, act, state, case):
    put_acl(tree, "/", grant("/", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    before = state(tree)
    request, status = _requests(client)[case]
    r = request()
    assert r.status_code == status, (r.status_code, r.data)
    assert state(tree) == before


def test_acl_writes_need_control_before_anything_else(client, tree, act, state):
    put_acl(tree, "/", grant("/", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    before = state(tree)
    for request in (
            lambda: client.put("/rest/a/fcr:acl", data=b"hello", content_type="text/plain"),
            lambda: client.post("/rest/a/fcr:acl", data=b"", content_type=TTL),
            lambda: client.patch("/rest/a/fcr:acl", data=b"x", content_type="text/plain"),
            lambda: client.delete("/rest/a/fcr:acl")):
        r = request()
        assert r.status_code == 403, r.data
        assert b"Control access to /a" in r.data
    assert state(tree) == before


def test_append_may_post_into_a_container_but_not_onto_a_binary(client, tree, act, state):
    put_acl(tree, "/", grant("/", "acl:Read, acl:Append", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    assert client.post("/rest/a", data=b"", content_type=TTL).status_code == 201
    before = state(tree)
    r = client.post("/rest/a/bin", data=b"", content_type=TTL)
    assert r.status_code == 403 and b"Write access to /a/bin" in r.data
    r = client.post("/rest/nothing/here", data=b"", content_type=TTL)
    assert r.status_code == 403 and b"Write access to /nothing/here" in r.data
    assert state(tree) == before


def test_empty_delete_template_is_insert_only(client, tree, act):
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read, acl:Append", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    r = client.patch("/rest/a/b", data=INSERT_ONLY, content_type=SPARQL_UPDATE)
    assert r.status_code == 204, r.data
    assert b'"added"' in client.get("/rest/a/b", headers={"Accept": "text/turtle"}).data
    r = client.patch("/rest/a/b", data=b"DELETE DATA { } ; INSERT DATA { <> <p:x> 1 }",
                     content_type=SPARQL_UPDATE)
    assert r.status_code == 204, r.data


def test_inserts_only_with_empty_delete_templates():
    assert inserts_only(INSERT_ONLY)
    assert inserts_only("DELETE DATA { } ; INSERT DATA { <> <p:x> 1 }")
    assert inserts_only("DELETE { } INSERT { <> <p:x> ?o } WHERE { <> <p:y> ?o }")
    assert not inserts_only("DELETE { <> <p:x> ?o } INSERT { } WHERE { <> <p:x> ?o }")
    assert not inserts_only("DELETE WHERE { <> <p:x> ?o }")
    assert not inserts_only("DELETE DATA { <> <p:x> 1 }")
    assert not inserts_only("DELETE { } WHERE { }")          # changes nothing: Write decides


# --- 5. Link rel="acl" on a create ---------------------------------------------------------------

ACL_LINK = {"Link": '<http://example.org/my-acl>; rel="acl"'}


@pytest.mark.parametrize("request_of", [
    lambda c: c.post("/rest/a", data=b"", content_type=TTL, headers=ACL_LINK),
    lambda c: c.post("/rest/a", data=b"bytes", content_type=OCTETS, headers=ACL_LINK),
    lambda c: c.put("/rest/a/new", data=b"test body", content_type="text/plain",
                    headers=ACL_LINK),
    lambda c: c.put("/rest/a/new", data=b"", content_type=TTL,
                    headers={"Link": f'<{ROOT}/a/fcr:acl>; rel="acl", '
                                     '<http://www.w3.org/ns/ldp#RDFSource>; rel="type"'}),
    lambda c: c.put("/rest/a/b", data=b"", content_type=TTL, headers=ACL_LINK),
], ids=["POST rdf", "POST binary", "PUT binary", "PUT with another link", "PUT replace"])
def test_a_write_naming_its_acl_is_refused(client, tree, state, request_of):
    before = state(tree)
    r = request_of(client)
    assert r.status_code == 400, r.data
    assert b'rel="acl"' in r.data and b"fcr:acl" in r.data
    assert any(f'<http://localhost/constraints#access-control>; rel="{CONSTRAINED_BY}"' == v
               for v in r.headers.getlist("Link")), r.headers.getlist("Link")
    assert state(tree) == before
    assert client.get("/rest/a/new").status_code == 404


def test_a_write_naming_its_acl_is_checked_for_permission_first(client, tree, act, state):
    act(ANONYMOUS)
    before = state(tree)
    r = client.post("/rest/a", data=b"", content_type=TTL, headers=ACL_LINK)
    assert r.status_code == 401
    assert state(tree) == before


# --- an update's body is judged only once the agent may make it ---------------------------------

@pytest.mark.parametrize("body", [b"", b"   ", b"# only a comment", b"PREFIX x: <http://x/>"])
def test_an_update_without_operations_is_refused_for_permission_first(client, tree, act,
                                                                      state, body):
    """An update holding no operation (empty, a comment, a prologue) was a 500 for every
    agent but administrators (``inserts_only`` iterated None)."""
    before = state(tree)
    act(ANONYMOUS)
    r = client.patch("/rest/a/b", data=body, content_type=SPARQL_UPDATE)
    assert r.status_code == 401, (r.status_code, r.data)
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read, acl:Append", who=f"acl:agent {ALICE_ID}"))
    before = state(tree)
    act(ALICE)
    r = client.patch("/rest/a/b", data=body, content_type=SPARQL_UPDATE)
    assert r.status_code == 403 and b"Write access to /a/b" in r.data, (r.status_code, r.data)
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    before = state(tree)
    r = client.patch("/rest/a/b", data=body, content_type=SPARQL_UPDATE)
    assert r.status_code == 400 and b"empty" in r.data, (r.status_code, r.data)
    assert state(tree) == before


def test_inserts_only_of_an_update_without_operations():
    for text in ("", "  ", "# nothing", "PREFIX x: <http://x/>", "BASE <http://x/>"):
        assert not inserts_only(text)


def test_the_update_of_an_agent_without_append_or_write_is_not_parsed(
        client, tree, act, state, monkeypatch):
    """Deciding Append against Write parses the update; an agent with neither mode was
    made to wait for that parse (seconds for a few hundred kilobytes, under the
    process's one parser lock) before its 401 or 403."""
    from lakesuperior.auth import agent_view
    parses = []
    real = agent_view.parse_update

    def counted(text):
        parses.append(len(text))
        return real(text)
    monkeypatch.setattr(agent_view, "parse_update", counted)
    update = ("INSERT DATA { " + " ".join(f'<> <http://x/p{i}> "v{i}" .' for i in range(200))
              + " }").encode()
    before = state(tree)
    act(ANONYMOUS)
    assert client.patch("/rest/a/b", data=update, content_type=SPARQL_UPDATE).status_code == 401
    act(BOB)
    assert client.patch("/rest/a/b", data=update, content_type=SPARQL_UPDATE).status_code == 403
    assert parses == []
    assert state(tree) == before
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read, acl:Append", who=f"acl:agent {ALICE_ID}"))
    act(ALICE)
    assert client.patch("/rest/a/b", data=update, content_type=SPARQL_UPDATE).status_code == 204
    assert parses, "an agent with Append only has its update parsed to decide"
