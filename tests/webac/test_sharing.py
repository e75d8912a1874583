"""``auth.sharing`` (an ACL as grants; grant, revoke, adopt) and
``Repository.effective_acl`` (the ACL that decides for a resource; Control only)."""
from __future__ import annotations

import pytest

from lakesuperior.auth import sharing
from lakesuperior.auth.access import Access
from lakesuperior.auth.agents import Agent
from lakesuperior.auth.sharing import EVERYONE, SIGNED_IN, Grant, Grantee
from lakesuperior.exceptions import AccessDeniedError, TombstoneError

BASE = "http://test.example/rest"
ACL = "http://www.w3.org/ns/auth/acl#"
RES = f"<{BASE}/a>"
DOC = f"{BASE}/a/fcr:acl"
ALICE = Grantee("user", "<http://example.org/people/alice>")
BOB = Grantee("user", "<http://example.org/people/bob>")


def shared_node() -> list[tuple[str, str, str]]:
    """One authorization giving Alice and Bob Read and Write on /a and below."""
    n = f"<{DOC}#both>"
    return [(n, "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{ACL}Authorization>"),
            (n, f"<{ACL}agent>", ALICE.term), (n, f"<{ACL}agent>", BOB.term),
            (n, f"<{ACL}mode>", f"<{ACL}Read>"), (n, f"<{ACL}mode>", f"<{ACL}Write>"),
            (n, f"<{ACL}accessTo>", RES), (n, f"<{ACL}default>", RES)]


def test_grants_of_an_acl():
    found = set(sharing.grants(shared_node(), RES))
    assert found == {Grant(w, m, True) for w in (ALICE, BOB) for m in ("Read", "Write")}


def test_grant_adds_once():
    g = Grant(EVERYONE, "Read", False)
    once = sharing.grant([], DOC, RES, g)
    assert sharing.grants(once, RES) == [g]
    assert sharing.grant(once, DOC, RES, g) == once


def test_revoke_leaves_the_other_grantee_and_modes():
    left = sharing.revoke(shared_node(), DOC, RES, BOB, "Write")
    assert set(sharing.grants(left, RES)) == {Grant(ALICE, "Read", True),
                                              Grant(ALICE, "Write", True),
                                              Grant(BOB, "Read", True)}
    gone = sharing.revoke(sharing.revoke(left, DOC, RES, BOB, "Read"), DOC, RES, ALICE, "Read")
    assert set(sharing.grants(gone, RES)) == {Grant(ALICE, "Write", True)}


def test_a_node_without_grantees_is_dropped():
    only = sharing.grant([], DOC, RES, Grant(SIGNED_IN, "Append", True))
    assert sharing.revoke(only, DOC, RES, SIGNED_IN, "Append") == []


def test_adopt_keeps_inherited_rules_for_here_and_below():
    root = f"<{BASE}/>"
    n = f"<{BASE}/fcr:acl#r>"
    inherited = [(n, "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
                  f"<{ACL}Authorization>"), (n, f"<{ACL}agentClass>", EVERYONE.term),
                 (n, f"<{ACL}mode>", f"<{ACL}Read>"), (n, f"<{ACL}accessTo>", root),
                 (n, f"<{ACL}default>", root)]
    own = sharing.adopt(inherited, DOC, RES)
    assert sharing.grants(own, RES) == [Grant(EVERYONE, "Read", True)]
    assert all(t[0].startswith(f"<{DOC}#") for t in own)


@pytest.fixture
def repo(repo_factory):
    repo = repo_factory()
    repo.create_or_replace("/a")
    repo.create_or_replace("/a/b")
    return repo


def test_effective_acl_names_its_source(repo):
    source, triples = repo.effective_acl("/a/b")
    assert source == "/" and f"<{ACL}Authorization>" in {o for _s, _p, o in triples}
    repo.set_acl("/a", triples=sharing.grant([], DOC, RES, Grant(ALICE, "Control", True)))
    assert repo.effective_acl("/a")[0] == "/a"
    assert repo.effective_acl("/a/b")[0] == "/a"
    with repo.snapshot() as ctx:     # the same answer as the decisions
        assert Access(ctx, repo.acl_state, Agent()).controlling("/a/b") == "/a"


def test_an_ancestors_own_rules_are_not_shown(repo):
    own = sharing.grant([], DOC, RES, Grant(ALICE, "Control", True))
    repo.set_acl("/a", triples=sharing.grant(own, DOC, RES, Grant(BOB, "Write", False)))
    source, triples = repo.effective_acl("/a/b")
    assert source == "/a"
    assert sharing.grants(triples, f"<{BASE}/a/b>", inherited=True) == [
        Grant(ALICE, "Control", True)]
    assert BOB.term not in {o for _s, _p, o in triples}


def test_no_acl_reaches(repo):
    repo.set_acl("/", triples=[])
    assert repo.effective_acl("/a") == (None, [])


def test_effective_acl_needs_control(repo):
    alice = repo.as_agent(ALICE.term[1:-1])
    with pytest.raises(AccessDeniedError):
        alice.effective_acl("/a")
    repo.set_acl("/a", triples=sharing.grant([], DOC, RES, Grant(ALICE, "Control", True)))
    assert alice.effective_acl("/a/b")[0] == "/a"


def test_effective_acl_of_a_tombstone(repo):
    repo.delete("/a")
    with pytest.raises(TombstoneError):
        repo.effective_acl("/a")
