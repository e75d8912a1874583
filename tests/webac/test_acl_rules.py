"""How ACLs are read, as Fedora 6 reads them (issue #28, items 1-3): what an ACL
may hold, which nodes grant anything, and which ACL decides for a resource.

* An ``acl:accessTo`` may name the ACL's resource or a resource below it; an
  inherited rule with an ``acl:accessTo`` list applies to a descendant only if the
  list is empty or names the ACL's resource or that descendant.
* Only nodes typed ``acl:Authorization`` with a mode and an agent grant anything;
  nothing else in an ACL is an error.
* The effective ACL of a resource is its own; else the nearest ancestor's that
  has an ``acl:default`` rule: an ACL without one does not seal what is below it.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from lakesuperior.auth.authorizations import origin_of
from lakesuperior.exceptions import AccessDeniedError

from .conftest import (
    ALICE,
    ANONYMOUS,
    BOB,
    PREFIXES,
    ROOT,
    TTL,
    acl_doc,
    authorization,
    grant,
    put_acl,
)

ALICE_ID = f"<{ALICE.webid}>"
BOB_ID = f"<{BOB.webid}>"
CONSTRAINED_BY = "http://www.w3.org/ns/ldp#constrainedBy"


@pytest.fixture
def tree(client, repo):
    """/a, /a/b, /a/b/c, /a/d and /e, made by the administrator."""
    for uid in ("/a", "/a/b", "/a/b/c", "/a/d", "/e"):
        repo.create_or_replace(uid, data=b'<> <http://purl.org/dc/terms/title> "t" .',
                               media_type=TTL, base_uri=ROOT)
    return repo


def put(client, path: str, body: str):
    return client.put(path, data=body.encode(), content_type=TTL)


# --- 1. acl:accessTo naming resources below the ACL's own ------------------------------------

def test_access_to_a_descendant_is_stored(client, tree):
    body = acl_doc(authorization("b", "acl:Read", agent_class="foaf:Agent",
                                 access_to=f"<{ROOT}/a/b>", default=f"<{ROOT}/a>"))
    r = put(client, "/rest/a/fcr:acl", body)
    assert r.status_code == 201, r.data
    got = client.get("/rest/a/fcr:acl")
    assert f"<{ROOT}/a/b>".encode() in got.data


@pytest.mark.parametrize("target", [f"<{ROOT}/e>", f"<{ROOT}/>", f"<{ROOT}/ab>",
                                    "<http://elsewhere.org/a/b>", f"<{ROOT}/a/b#x>"])
def test_access_to_outside_the_acl_resource_is_still_refused(client, tree, state, target):
    before = state(tree)
    body = acl_doc(authorization("x", "acl:Read", agent_class="foaf:Agent", access_to=target))
    r = put(client, "/rest/a/fcr:acl", body)
    assert r.status_code == 409, r.data
    assert b"its own resource or a resource below it" in r.data
    assert any("constraints#access-control" in v for v in r.headers.getlist("Link"))
    assert state(tree) == before


def test_an_inherited_rule_with_an_access_to_list_applies_to_what_it_names(client, tree, act):
    put_acl(tree, "/a", acl_doc(
        authorization("b", "acl:Read", agent_class="foaf:Agent",
                      access_to=f"<{ROOT}/a/b>", default=f"<{ROOT}/a>"),
        authorization("all", "acl:Read", agent=ALICE_ID, default=f"<{ROOT}/a>"),
        authorization("own", "acl:Read", agent=BOB_ID,
                      access_to=f"<{ROOT}/a>, <{ROOT}/a/d>", default=f"<{ROOT}/a>")))
    act(ANONYMOUS)
    assert client.get("/rest/a/b").status_code == 200        # named in the list
    assert client.get("/rest/a/b/c").status_code == 401      # neither /a nor /a/b/c
    assert client.get("/rest/a/d").status_code == 401
    assert client.get("/rest/a").status_code == 401          # the list does not name /a
    act(ALICE)                                               # no list: every descendant
    assert [client.get(p).status_code for p in ("/rest/a/b", "/rest/a/b/c", "/rest/a/d")] \
        == [200, 200, 200]
    assert client.get("/rest/a").status_code == 403          # acl:default only: not /a
    act(BOB)                                                 # the list names /a: everything
    assert [client.get(p).status_code for p in ("/rest/a", "/rest/a/b", "/rest/a/b/c")] \
        == [200, 200, 200]


def test_access_to_a_descendant_without_default_grants_nothing_below(client, tree, act):
    """A rule that is not inherited (no acl:default) decides only for the ACL's resource."""
    put_acl(tree, "/a", acl_doc(
        authorization("b", "acl:Read", agent=ALICE_ID, access_to=f"<{ROOT}/a/b>"),
        authorization("a", "acl:Read", agent=ALICE_ID, access_to=f"<{ROOT}/a>",
                      default=f"<{ROOT}/a>")))
    put_acl(tree, "/", acl_doc())          # nothing else is readable by anyone
    act(ALICE)
    assert client.get("/rest/a").status_code == 200
    assert client.get("/rest/a/b").status_code == 200        # through the inherited rule
    put_acl(tree, "/a", acl_doc(
        authorization("b", "acl:Read", agent=ALICE_ID, access_to=f"<{ROOT}/a/b>")))
    assert client.get("/rest/a/b").status_code == 403        # not inherited: skipped


# --- 2. only typed authorizations with a mode and an agent grant anything -----------------------

STORED = [
    ("untyped node", f"<#n> acl:mode acl:Read ; acl:agentClass foaf:Agent ; "
                     f"acl:accessTo <{ROOT}/a> .\n"),
    ("no agent", f"<#n> a acl:Authorization ; acl:mode acl:Read ; acl:accessTo <{ROOT}/a> .\n"),
    ("no mode", f"<#n> a acl:Authorization ; acl:agentClass foaf:Agent ; "
                f"acl:accessTo <{ROOT}/a> .\n"),
    ("no target", "<#n> a acl:Authorization ; acl:mode acl:Read ; acl:agent <http://x/y> .\n"),
    ("type only", "<#x> a acl:Authorization .\n"),
    ("unknown mode", f"<#n> a acl:Authorization ; acl:mode acl:Fly ; acl:agentClass foaf:Agent "
                     f"; acl:accessTo <{ROOT}/a> .\n"),
    ("unknown agent class", f"<#n> a acl:Authorization ; acl:mode acl:Read ; acl:agentClass "
                            f"<http://ex.org/Class> ; acl:accessTo <{ROOT}/a> .\n"),
    ("unknown predicates", "<#n> <http://ex.org/p> \"x\" ; acl:origin <http://ex.org/> .\n"
                           "<> <http://purl.org/dc/terms/title> \"the ACL of /a\" .\n"),
    ("empty", ""),
]


@pytest.mark.parametrize("name, body", STORED, ids=[s[0] for s in STORED])
def test_what_grants_nothing_is_stored_and_grants_nothing(client, tree, act, name, body):
    r = put(client, "/rest/a/fcr:acl", PREFIXES + body)
    assert r.status_code == 201, r.data
    assert put(client, "/rest/a/fcr:acl", PREFIXES + body).status_code == 204
    assert client.get("/rest/a/fcr:acl").status_code == 200
    # /a's own ACL decides for /a, and it grants nothing
    act(BOB)
    r = client.get("/rest/a")
    assert r.status_code == 403
    act(ANONYMOUS)
    r = client.get("/rest/a")
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"].startswith("Basic realm=")


def test_untyped_nodes_beside_an_authorization_do_not_change_it(client, tree, act):
    body = acl_doc(authorization("ok", "acl:Read", agent=ALICE_ID, access_to=f"<{ROOT}/a>"),
                   f"<#n> acl:mode acl:Write ; acl:agent {ALICE_ID} ; "
                   f"acl:accessTo <{ROOT}/a> .\n<#ok> <http://ex.org/note> \"hi\" .\n")
    assert put(client, "/rest/a/fcr:acl", body).status_code == 201
    act(ALICE)
    assert client.get("/rest/a").status_code == 200
    r = client.put("/rest/a", data=b"", content_type=TTL)
    assert r.status_code == 403
    assert b"Write access to /a" in r.data


def test_malformed_acl_is_still_400(client, tree, state):
    before = state(tree)
    r = put(client, "/rest/a/fcr:acl", PREFIXES + "<#x> a acl:Authorization ; acl:mode .")
    assert r.status_code == 400
    assert state(tree) == before


def test_type_only_authorization_through_the_python_api(tree):
    tree.set_acl("/a", triples=[(f"<{ROOT}/a/fcr:acl#x>",
                                 "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
                                 "<http://www.w3.org/ns/auth/acl#Authorization>")],
                 base_uri=ROOT)
    assert tree.as_agent(ALICE.webid).modes("/a") == frozenset()
    with pytest.raises(AccessDeniedError):
        tree.as_agent(None).get("/a")


# --- 3. inheritance: containment and acl:default --------------------------------------------

def test_an_acl_without_default_does_not_seal_what_is_below(client, tree, act):
    put_acl(tree, "/a", grant("/a", "acl:Read", who=f"acl:agent {ALICE_ID}", default=False))
    act(ANONYMOUS)
    assert client.get("/rest/a").status_code == 401           # /a's own ACL
    assert client.get("/rest/a/b").status_code == 200         # the root's, by default
    assert client.get("/rest/a/b/c").status_code == 200


def test_a_default_rule_that_grants_nothing_seals_what_is_below(client, tree, act):
    """The documented way to keep what is below a resource closed."""
    put_acl(tree, "/a", acl_doc(
        authorization("own", "acl:Read", agent_class="foaf:Agent", access_to=f"<{ROOT}/a>"),
        f"<#none> a acl:Authorization ; acl:default <{ROOT}/a> .\n"))
    act(ANONYMOUS)
    assert client.get("/rest/a").status_code == 200
    assert client.get("/rest/a/b").status_code == 401
    assert client.get("/rest/e").status_code == 200


def test_ancestors_without_default_are_skipped(client, tree, act, state):
    put_acl(tree, "/a", grant("/a", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agent {BOB_ID}", default=False))
    act(ALICE)
    assert client.get("/rest/a/b/c").status_code == 200       # from /a, past /a/b
    assert client.get("/rest/a/b").status_code == 403         # /a/b's own ACL
    assert client.put("/rest/a/b/c/new", data=b"", content_type=TTL).status_code == 201
    act(BOB)
    assert client.get("/rest/a/b").status_code == 200
    assert client.get("/rest/a/b/c").status_code == 403
    act(ANONYMOUS)
    assert client.get("/rest/a/b/c").status_code == 401


def test_the_nearest_acl_with_a_default_decides(client, tree, act):
    put_acl(tree, "/a", grant("/a", "acl:Read", who=f"acl:agent {ALICE_ID}"))
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agent {BOB_ID}"))
    act(ALICE)
    assert client.get("/rest/a/d").status_code == 200
    assert client.get("/rest/a/b/c").status_code == 403
    act(BOB)
    assert client.get("/rest/a/b/c").status_code == 200


def test_no_inheritable_acl_above_grants_nothing(client, tree, act):
    """A root ACL without acl:default: the root's resources inherit nothing."""
    put_acl(tree, "/", grant("/", "acl:Read", default=False))
    act(ANONYMOUS)
    assert client.get("/rest/").status_code == 200
    assert client.get("/rest/a").status_code == 401
    put_acl(tree, "/a", grant("/a", "acl:Read", default=False))
    assert client.get("/rest/a").status_code == 200
    assert client.get("/rest/a/b").status_code == 401


def test_delete_follows_the_inheritance(client, tree, act, state):
    put_acl(tree, "/a", grant("/a", "acl:Read, acl:Write", who=f"acl:agent {ALICE_ID}"))
    put_acl(tree, "/a/b", grant("/a/b", "acl:Read", who=f"acl:agent {ALICE_ID}",
                                default=False))
    act(ALICE)
    before = state(tree)
    r = client.delete("/rest/a/b")
    assert r.status_code == 403
    assert b"Write access to /a/b " in r.data
    assert state(tree) == before
    assert client.delete("/rest/a/b/c").status_code == 204  # inherits /a's Write


def test_delete_checks_every_inheriting_resource_below(client, tree, act, state):
    put_acl(tree, "/a", acl_doc(
        authorization("all", "acl:Read, acl:Write", agent=ALICE_ID, access_to=f"<{ROOT}/a>",
                      default=f"<{ROOT}/a>"),
        authorization("one", "acl:Read", agent=BOB_ID, access_to=f"<{ROOT}/a/b>",
                      default=f"<{ROOT}/a>"),
        authorization("bw", "acl:Write", agent=BOB_ID, access_to=f"<{ROOT}/a/b>, <{ROOT}/a/b/c>",
                      default=f"<{ROOT}/a>")))
    act(BOB)
    before = state(tree)
    r = client.delete("/rest/a")
    assert r.status_code == 403 and state(tree) == before
    assert client.delete("/rest/a/b").status_code == 204      # Write on /a/b and /a/b/c
    act(ALICE)
    assert client.delete("/rest/a").status_code == 204


def test_sparql_sees_what_inherits_past_an_acl_without_default(tree):
    put_acl(tree, "/a", grant("/a", "acl:Read", who=f"acl:agent {ALICE_ID}", default=False))
    rows = tree.as_agent(None).sparql_query(
        "SELECT ?s WHERE { ?s <http://purl.org/dc/terms/title> ?t }", base_uri=ROOT).bindings
    seen = {str(row["s"]) for row in rows}
    assert {f"{ROOT}/a/b", f"{ROOT}/a/b/c", f"{ROOT}/a/d"} <= seen
    assert f"{ROOT}/a" not in seen


# --- acl:origin: a rule that names web origins grants to requests from them only --------------

APP_ORIGIN = "https://app.example.org"


def _origin_rule(tree, origins: str, agent: str = "acl:agentClass foaf:Agent") -> None:
    pred, obj = agent.split(" ", 1)
    body = acl_doc(authorization("app", "acl:Read, acl:Write", access_to=f"<{ROOT}/a>",
                                 default=f"<{ROOT}/a>", **{
                                     "agent_class" if pred == "acl:agentClass" else "agent": obj})
                   ).rstrip(" .\n") + f" ;\n    acl:origin {origins} .\n"
    put_acl(tree, "/a", body)


@pytest.mark.parametrize("origin, granted", [
    (APP_ORIGIN, True), ("https://APP.example.org:443", True), (APP_ORIGIN + "/", True),
    ("https://evil.example", False), ("http://app.example.org", False),
    ("https://app.example.org:8443", False), ("null", False), (None, False),
])
def test_an_origin_rule_grants_to_its_origins_only(tree, origin, granted):
    """acl:origin was ignored: a rule meant for one web application's pages granted
    to every page (a script of any site, with the user's cached credentials, could
    write) and to every program. Now it grants to requests whose Origin it names."""
    _origin_rule(tree, f"<{APP_ORIGIN}>")
    agent = replace(ALICE, origin=origin_of(origin) if origin else None)
    expected = frozenset({"Read", "Write", "Append"}) if granted else frozenset()
    assert tree.as_agent(agent).modes("/a") == expected
    assert tree.as_agent(agent).modes("/a/b") == expected      # inherited the same way


def test_an_origin_rule_still_needs_its_agent(tree):
    _origin_rule(tree, f"<{APP_ORIGIN}>, <https://other.example>", agent=f"acl:agent {BOB_ID}")
    assert tree.as_agent(replace(BOB, origin=origin_of(APP_ORIGIN))).modes("/a")
    assert tree.as_agent(replace(BOB, origin=origin_of("https://other.example"))).modes("/a")
    assert not tree.as_agent(replace(ALICE, origin=origin_of(APP_ORIGIN))).modes("/a")


def test_an_origin_that_names_no_web_origin_grants_nothing(tree):
    _origin_rule(tree, '"not an origin", <urn:x:y>')
    for origin in (APP_ORIGIN, None):
        agent = replace(ALICE, origin=origin_of(origin) if origin else None)
        assert tree.as_agent(agent).modes("/a") == frozenset()


def test_origin_of():
    assert origin_of("https://App.Example.org") == "https://app.example.org:443"
    assert origin_of("<http://a.example:8080/some/path>") == "http://a.example:8080"
    for bad in ("null", "", "ftp://a.example", "app.example.org", "http://a:port"):
        assert origin_of(bad) is None
