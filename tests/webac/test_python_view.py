"""``Repository.as_agent``: the same API, WebAC enforced, domain errors only; the
trusted ``Repository`` unchanged; the root ACL from configuration; the cache."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lakesuperior.auth.agent_view import AgentView, inserts_only
from lakesuperior.auth.agents import ANONYMOUS, Agent
from lakesuperior.exceptions import (
    AccessDeniedError,
    AclError,
    ConfigError,
    ResourceNotExistsError,
)

BASE = "http://test.example/rest"
TTL = "text/turtle"
ALICE = "http://example.org/people/alice"
FCREPO = "http://fedora.info/definitions/v4/repository#"


def acl_for(uid: str, modes: str, who: str = f"acl:agent <{ALICE}>",
            default: bool = True) -> bytes:
    target = f"<{BASE}{uid}>"
    text = ("@prefix acl: <http://www.w3.org/ns/auth/acl#> .\n"
            "@prefix foaf: <http://xmlns.com/foaf/0.1/> .\n"
            f"<#a> a acl:Authorization ; acl:mode {modes} ; {who} ; acl:accessTo {target}"
            + (f" ; acl:default {target}" if default else "") + " .\n")
    return text.encode()


@pytest.fixture
def tree(repo_factory):
    """A plain repository (base ``BASE``) with /a (Alice: Read, Write) and /a/b."""
    repo = repo_factory()
    repo.create_or_replace("/a")
    repo.create_or_replace("/a/b", data=b'<> <http://purl.org/dc/terms/title> "t" .',
                           media_type=TTL)
    repo.set_acl("/a", data=acl_for("/a", "acl:Read, acl:Write"), media_type=TTL)
    return repo


def test_as_agent_signatures(tree):
    by_webid = tree.as_agent(ALICE, groups=[f"{BASE}/g"])
    assert isinstance(by_webid, AgentView)
    assert by_webid.agent == Agent(name=ALICE, webid=ALICE, groups=(f"{BASE}/g",))
    assert tree.as_agent(ALICE, name="alice").agent.name == "alice"
    assert tree.as_agent(Agent(name="x", webid=ALICE)).get("/a/b").uid == "/a/b"
    assert tree.as_agent(None).agent == ANONYMOUS
    with pytest.raises(TypeError):
        tree.as_agent(42)  # type: ignore[arg-type]


def test_the_trusted_repository_checks_nothing(tree):
    tree.set_acl("/", data=acl_for("/", "acl:Read"), media_type=TTL)
    tree.create_or_replace("/a/b/c")
    assert tree.get("/a/b/c").uid == "/a/b/c"


def test_reads_and_writes_through_the_view(tree):
    alice = tree.as_agent(ALICE, name="alice")
    assert alice.exists("/a/b")
    assert alice.info("/a/b").uid == "/a/b"
    assert alice.get("/a/b").uid == "/a/b"
    _, res = alice.create_or_replace("/a/b/c")
    created_by = [o for _, p, o in res.triples if p == f"<{FCREPO}createdBy>"]
    assert created_by == ['"alice"']
    child = alice.create("/a/b", slug="d")
    assert child.uid == "/a/b/d"
    alice.update("/a/b", "INSERT DATA { <> <http://ex.org/p> 1 }")
    alice.update_delta("/a/b", None, [("<>", "<http://ex.org/q>", '"2"')])
    vid = alice.create_version("/a/b")
    assert [v.id for v in alice.versions("/a/b")] == [vid]
    assert alice.get_version("/a/b", vid).uid == "/a/b"
    alice.revert_to_version("/a/b", vid)
    alice.delete("/a/b/d")
    alice.resurrect("/a/b/d")
    alice.delete("/a/b/d", soft=False)
    assert alice.modes("/a/b") == {"Read", "Write", "Append"}


def test_denied_calls_raise_and_write_nothing(tree, state):
    anon = tree.as_agent(None)
    before = state(tree)
    calls = [
        ("Read", lambda: anon.get("/a/b")),
        ("Read", lambda: anon.info("/a/b")),
        ("Read", lambda: anon.exists("/a/b")),
        ("Read", lambda: anon.versions("/a/b")),
        ("Read", lambda: anon.fixity_check("/a/b")),
        ("Write", lambda: anon.create_or_replace("/a/b")),
        ("Append", lambda: anon.create("/a/b")),
        ("Write", lambda: anon.update("/a/b", "DELETE WHERE { <> ?p ?o }")),
        ("Write", lambda: anon.update("/a/b", "INSERT DATA { <> <http://ex.org/p> 1 }")),
        ("Write", lambda: anon.update_delta("/a/b", [(None, None, None)], [])),
        ("Write", lambda: anon.delete("/a/b")),
        ("Write", lambda: anon.create_version("/a/b")),
        ("Write", lambda: anon.delete_version("/a/b", "20200101000000")),
        ("Write", lambda: anon.import_version("/a/b", datetime(2020, 1, 1, tzinfo=UTC))),
        ("Write", lambda: anon.import_versions("/a/b", [(datetime(2020, 1, 1, tzinfo=UTC), {})])),
        ("Control", lambda: anon.acl("/a")),
        ("Control", lambda: anon.has_acl("/a")),
        ("Control", lambda: anon.set_acl("/a", data=b"", media_type=TTL)),
        ("Control", lambda: anon.update_acl("/a", "INSERT DATA { <#x> <http://e/p> 1 }")),
        ("Control", lambda: anon.delete_acl("/a")),
        ("Control", lambda: anon.stats()),
        ("Control", lambda: anon.integrity_check()),
        ("Control", lambda: anon.cleanup()),
    ]
    for mode, call in calls:
        with pytest.raises(AccessDeniedError) as info:
            call()
        assert info.value.mode == mode
        assert info.value.authenticated is False
    bob = tree.as_agent("http://example.org/people/bob")
    with pytest.raises(AccessDeniedError) as info:
        bob.get("/a/b")
    assert info.value.authenticated is True and info.value.uid == "/a/b"
    assert str(info.value) == "Read access to /a/b is not granted to this agent"
    assert state(tree) == before


def test_anonymous_writes_record_anonymous(tree):
    tree.set_acl("/a", data=acl_for("/a", "acl:Read, acl:Write", "acl:agentClass foaf:Agent"),
                 media_type=TTL)
    _, res = tree.as_agent(None).create_or_replace("/a/new")
    assert [o for _, p, o in res.triples if p == f"<{FCREPO}createdBy>"] == ['"anonymous"']


def test_an_admin_agent_bypasses_and_is_recorded(tree):
    admin = tree.as_agent(Agent(name="boss", admin=True))
    tree.set_acl("/", data=acl_for("/", "acl:Read"), media_type=TTL)
    _, res = admin.create_or_replace("/x")
    assert [o for _, p, o in res.triples if p == f"<{FCREPO}createdBy>"] == ['"boss"']
    assert admin.stats()["resources"] >= 1
    assert admin.integrity_check() is not None


def test_view_transaction_is_atomic(tree, state):
    alice = tree.as_agent(ALICE)
    with alice.transaction() as view:
        view.create_or_replace("/a/one")
        view.create_or_replace("/a/two")
    assert tree.exists("/a/one") and tree.exists("/a/two")
    before = state(tree)
    with pytest.raises(AccessDeniedError):
        with alice.transaction() as view:
            view.create_or_replace("/a/three")
            view.create_or_replace("/elsewhere")
    assert state(tree) == before


def test_view_transact_is_atomic_and_checks_each_call(tree, state):
    alice = tree.as_agent(ALICE)

    def two(view, second):
        view.create_or_replace("/a/t1")
        return view.create_or_replace(second)[0]
    assert alice.transact(two, alice, "/a/t2") == "create"
    assert tree.exists("/a/t1") and tree.exists("/a/t2")
    before = state(tree)
    with pytest.raises(AccessDeniedError):
        alice.transact(two, alice, "/elsewhere")          # the second call is refused
    assert state(tree) == before


def test_acl_methods(tree):
    alice = tree.as_agent(ALICE)
    tree.set_acl("/a", data=acl_for("/a", "acl:Read, acl:Control"), media_type=TTL)
    assert alice.has_acl("/a")
    assert any(p == "<http://www.w3.org/ns/auth/acl#mode>" for _, p, _ in alice.acl("/a"))
    assert alice.set_acl("/a", data=acl_for("/a", "acl:Read, acl:Control, acl:Write"),
                         media_type=TTL) is False
    alice.update_acl("/a", "PREFIX acl: <http://www.w3.org/ns/auth/acl#> "
                           "DELETE DATA { <#a> acl:mode acl:Write }")
    assert "Write" not in alice.modes("/a")
    alice.delete_acl("/a")
    with pytest.raises(ResourceNotExistsError):
        tree.acl("/a")
    with pytest.raises(AclError):
        tree.set_acl("/a", triples=[(f"<{BASE}/a/fcr:acl#x>",
                                     "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
                                     "<http://www.w3.org/ns/auth/acl#Authorization>"),
                                    (f"<{BASE}/a/fcr:acl#x>",
                                     "<http://www.w3.org/ns/auth/acl#accessTo>",
                                     f"<{BASE}/elsewhere>")])


def test_inserts_only():
    assert inserts_only("INSERT DATA { <> <p:x> 1 }")
    assert inserts_only(b"INSERT { <> <p:x> ?o } WHERE { <> <p:y> ?o }")
    assert not inserts_only("DELETE DATA { <> <p:x> 1 }")
    assert not inserts_only("DELETE { <> <p:x> ?o } INSERT { <> <p:x> 2 } WHERE { <> <p:x> ?o }")
    assert not inserts_only("INSERT DATA {")
    assert not inserts_only(b"\xff")


# --- the root ACL from configuration ---------------------------------------------------------

def test_root_acl_from_a_file(repo_factory, tmp_path):
    path = tmp_path / "root.ttl"
    path.write_bytes(acl_for("/", "acl:Read", "acl:agentClass acl:AuthenticatedAgent")
                     .replace(BASE.encode() + b"/", b"./"))
    repo = repo_factory(auth_root_acl=str(path))
    repo.create_or_replace("/x")
    with pytest.raises(AccessDeniedError):
        repo.as_agent(None).get("/x")
    assert repo.as_agent(ALICE).get("/x").uid == "/x"
    acl = repo.acl("/")
    assert (f"<{BASE}/fcr:acl#a>", "<http://www.w3.org/ns/auth/acl#default>",
            f"<{BASE}/>") in acl


@pytest.mark.parametrize("content, message", [
    (None, "Cannot read the root ACL"),
    (b"not turtle at all", "not usable"),
    (b"@prefix acl: <http://www.w3.org/ns/auth/acl#> . <#a> a acl:Authorization ; "
     b"acl:accessTo <http://elsewhere.org/x> .", "its own resource or a resource below it"),
])
def test_bad_root_acl_file_is_a_config_error(repo_factory, tmp_path, content, message):
    path = tmp_path / "root.ttl"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        repo_factory(auth_root_acl=str(path))


# --- the cache and the snapshot --------------------------------------------------------------

def test_acl_generation_cache(tree):
    state = tree.acl_state
    with tree.snapshot() as ctx:
        first = state.generation(ctx.txn)
    tree.create_or_replace("/a/other")        # not an ACL write: the cache stays
    with tree.snapshot() as ctx:
        assert state.generation(ctx.txn) is first
    alice = tree.as_agent(ALICE)
    assert alice.get("/a/b")
    tree.set_acl("/a", data=acl_for("/a", "acl:Write"), media_type=TTL)
    with tree.snapshot() as ctx:
        assert state.generation(ctx.txn) is not first
    with pytest.raises(AccessDeniedError):
        alice.get("/a/b")


def test_a_rolled_back_acl_write_does_not_stay_in_the_cache(tree):
    alice = tree.as_agent(ALICE)
    with pytest.raises(RuntimeError):
        with tree.transaction():
            tree.set_acl("/a", data=acl_for("/a", "acl:Write"), media_type=TTL)
            with pytest.raises(AccessDeniedError):
                alice.get("/a/b")
            raise RuntimeError("roll back")
    assert alice.get("/a/b").uid == "/a/b"


def test_nested_snapshots_share_one_read_transaction(tree):
    with tree.snapshot() as outer:
        with tree.snapshot() as inner:
            assert inner.txn is outer.txn
    with tree.snapshot() as again:
        assert again.txn is not outer.txn


def test_as_user(tree):
    assert tree.as_user(tree.settings.agent) is tree
    other = tree.as_user("clerk")
    _, res = other.create_or_replace("/by-clerk")
    assert [o for _, p, o in res.triples if p == f"<{FCREPO}createdBy>"] == ['"clerk"']
    with other.transaction():
        assert tree.in_transaction and other.in_transaction
    assert not tree.in_transaction


def test_embedded_children_and_inbound_references_come_from_readable_resources(tree):
    tree.create_or_replace("/a/b/open", data=b'<> <http://ex.org/p> "open" .', media_type=TTL)
    tree.create_or_replace("/a/b/closed", data=b'<> <http://ex.org/p> "closed" .',
                           media_type=TTL)
    tree.create_or_replace("/a/ref", data=f"<> <http://ex.org/see> <{BASE}/a/b> .".encode(),
                           media_type=TTL)
    tree.set_acl("/a/b/closed", data=acl_for("/a/b/closed", "acl:Write"), media_type=TTL)
    alice = tree.as_agent(ALICE)
    res = alice.get("/a/b", embed_children=True, incl_inbound=True)
    objects = {o for _, _, o in res.triples}
    assert '"open"' in objects and '"closed"' not in objects
    assert any(p == "<http://ex.org/see>" for _, p, _ in res.triples)
    assert '"closed"' in {o for _, _, o in tree.get("/a/b", embed_children=True).triples}
    tree.set_acl("/a/ref", data=acl_for("/a/ref", "acl:Write"), media_type=TTL)
    res = alice.get("/a/b", incl_inbound=True)
    assert not any(p == "<http://ex.org/see>" for _, p, _ in res.triples)
    assert any(p == "<http://ex.org/see>"
               for _, p, _ in tree.get("/a/b", incl_inbound=True).triples)
