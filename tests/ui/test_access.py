"""The Access page: the effective ACL in words; Grant and Revoke (Control only)."""
from __future__ import annotations

import re

from tests.conftest import store_state

from .conftest import grant

PUT_TTL = {"Content-Type": "text/turtle"}


def summary(page: str) -> str:
    return re.search(r'<p class="summary" id="access-summary">(.*?)</p>', page).group(1)


def test_the_root_acl_in_words(browser, repo):
    page = browser("root").page("/ui/access?path=/")
    assert summary(page) == "Everyone may read."
    assert "inherits" not in page


def test_an_inherited_acl_says_where_from(browser, repo):
    repo.create_or_replace("/collections")
    repo.create_or_replace("/collections/a")
    grant(repo, "/collections", "alice", "Write", "Control")
    page = browser("alice").page("/ui/access?path=/collections/a")
    assert summary(page) == ("Everyone may read; alice may write and control; "
                             "inherited from /collections.")
    assert 'href="/ui/access?path=/collections"' in page


def test_grant_and_revoke_change_what_another_user_may_do(browser, repo, client):
    repo.create_or_replace("/c")
    grant(repo, "/c", "alice", "Control")
    bob = browser("bob")
    bob_put = {**bob.headers, **PUT_TTL}
    assert client.put("/rest/c/x", headers=bob_put).status_code == 403
    alice = browser("alice")
    r = alice.post("/ui/access/grant", {"path": "/c", "who": "user", "name": "bob",
                                        "mode": "Write", "below": "yes"})
    assert r.status_code == 303 and r.headers["Location"] == "/ui/access?path=/c"
    page = alice.page("/ui/access?path=/c")
    assert "bob may write" in summary(page)
    assert 'aria-label="Revoke Write from bob"' in page
    assert client.put("/rest/c/x", headers=bob_put).status_code == 201
    again = alice.post("/ui/access/grant", {"path": "/c", "who": "user", "name": "bob",
                                            "mode": "Write", "below": "yes"})
    assert again.status_code == 303                          # sent twice: the same ACL
    assert len(re.findall("Revoke Write from bob", alice.page("/ui/access?path=/c"))) == 1
    r = alice.post("/ui/access/revoke", {"path": "/c", "kind": "user",
                                         "term": "<info:fedora/local-user#bob>",
                                         "mode": "Write"})
    assert r.status_code == 303
    assert "bob" not in summary(alice.page("/ui/access?path=/c"))
    assert client.put("/rest/c/y", headers=bob_put).status_code == 403
    assert "alice may control" in summary(alice.page("/ui/access?path=/c"))


def test_first_change_keeps_what_was_inherited(browser, repo, client):
    repo.create_or_replace("/c")
    repo.create_or_replace("/c/d")
    grant(repo, "/c", "alice", "Control")
    r = browser("alice").post("/ui/access/grant", {"path": "/c/d", "who": "signed-in",
                                                   "mode": "Append"})
    assert r.status_code == 303
    assert repo.has_acl("/c/d")
    page = browser("alice").page("/ui/access?path=/c/d")
    assert summary(page) == ("Everyone may read; signed-in users may append to; "
                             "alice may control.")
    assert "here only" in page                   # the grant without "below"
    anon = client.get("/rest/c/d", headers={"Accept": "text/turtle"})
    assert anon.status_code == 200                       # everyone still reads


def test_everyone_and_groups(browser, repo):
    repo.create_or_replace("/c")
    repo.create_or_replace("/staff", data=(
        b'@prefix vcard: <http://www.w3.org/2006/vcard/ns#> .\n'
        b'<#team> a vcard:Group ; vcard:hasMember <info:fedora/local-user#bob> .'),
        media_type="text/turtle")
    root = browser("root")
    assert root.post("/ui/access/grant", {"path": "/c", "who": "group",
                                          "name": "/staff#team", "mode": "Write",
                                          "below": "yes"}).status_code == 303
    assert root.post("/ui/access/revoke", {"path": "/c", "kind": "class",
                                           "term": "<http://xmlns.com/foaf/0.1/Agent>",
                                           "mode": "Read"}).status_code == 303
    page = root.page("/ui/access?path=/c")
    assert summary(page) == "group /staff#team may write."
    r = browser("bob").client.put("/rest/c/z", headers={**browser("bob").headers, **PUT_TTL})
    assert r.status_code == 201
    assert browser(None).get("/rest/c").status_code == 401     # nobody else reads now


def test_a_name_with_html_is_text(browser, repo):
    repo.create_or_replace("/c")
    root = browser("root")
    root.post("/ui/access/grant", {"path": "/c", "who": "user", "name": "<b>eve</b>",
                                   "mode": "Read"})
    page = root.page("/ui/access?path=/c")
    assert "<b>eve" not in page and "&lt;b&gt;eve&lt;/b&gt; may read" in page


def test_access_needs_control(browser, repo):
    repo.create_or_replace("/c")
    grant(repo, "/c", "alice", "Write")
    before = store_state(repo)
    for user, status in ((None, 401), ("bob", 403), ("alice", 403)):
        b = browser(user)
        assert b.get("/ui/access?path=/c").status_code == status
        assert b.post("/ui/access/grant", {"path": "/c", "who": "everyone",
                                           "mode": "Write"}).status_code == status
        assert b.post("/ui/access/revoke", {"path": "/c", "kind": "class",
                                            "term": "<http://xmlns.com/foaf/0.1/Agent>",
                                            "mode": "Read"}).status_code == status
    assert store_state(repo) == before


def test_bad_grant_forms(browser, repo):
    repo.create_or_replace("/c")
    root = browser("root")
    before = store_state(repo)
    for form in ({"who": "user", "name": "", "mode": "Read"},
                 {"who": "robots", "mode": "Read"},
                 {"who": "everyone", "mode": "Destroy"}):
        assert root.post("/ui/access/grant", {"path": "/c", **form}).status_code == 400
    assert root.post("/ui/access/grant", {"path": "/c", "who": "group",
                                          "name": "http://elsewhere.example/g",
                                          "mode": "Read"}).status_code in (400, 409)
    assert root.post("/ui/access/revoke", {"path": "/c", "kind": "user", "term": "bob",
                                           "mode": "Read"}).status_code == 400
    assert root.get("/ui/access?path=/nope").status_code == 404
    assert store_state(repo) == before
