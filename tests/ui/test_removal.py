"""Delete (asks first), the tombstone page, Restore and Purge (asks again)."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import TombstoneError
from tests.conftest import store_state

from .conftest import grant


@pytest.fixture
def tree(repo):
    repo.create_or_replace("/c")
    repo.create_or_replace("/c/d")


def test_delete_asks_first(browser, repo, tree):
    before = store_state(repo)
    page = browser("root").page("/ui/delete?path=/c")
    assert "Delete /c and everything below it?" in page
    assert '<button type="submit" class="danger">Delete</button>' in page
    assert 'href="http://localhost/rest/c">Cancel</a>' in page
    assert store_state(repo) == before


def test_delete_restore(browser, repo, tree):
    root = browser("root")
    r = root.post("/ui/delete", {"path": "/c"})
    assert r.status_code == 303 and r.headers["Location"] == "/ui/tombstone?path=/c"
    with pytest.raises(TombstoneError):
        repo.exists("/c")
    again = root.post("/ui/delete", {"path": "/c"})       # sent twice: no harm
    assert again.status_code == 303 and again.headers["Location"] == "/ui/tombstone?path=/c"
    gone = root.get("/rest/c/d")                          # its page links to the tombstone's
    assert gone.status_code == 410
    assert '<a href="/ui/tombstone?path=/c">Restore or purge it</a>' in gone.get_data(as_text=True)
    r = root.get("/ui/tombstone?path=/c")
    assert r.status_code == 410
    page = r.get_data(as_text=True)
    assert "/c was deleted" in page and ">Restore</button>" in page and ">Purge</a>" in page
    r = root.get("/ui/tombstone?path=/c/d")                # deleted with its parent
    assert r.status_code == 410 and 'href="/ui/tombstone?path=/c"' in r.get_data(as_text=True)
    r = root.post("/ui/restore", {"path": "/c"})
    assert r.status_code == 303 and r.headers["Location"] == "http://localhost/rest/c"
    assert repo.exists("/c") and repo.exists("/c/d")
    again = root.post("/ui/restore", {"path": "/c"})
    assert again.status_code == 303 and again.headers["Location"] == "http://localhost/rest/c"
    assert root.get("/ui/tombstone?path=/c").status_code == 303     # not deleted: its page


def test_purge_asks_again(browser, repo, tree):
    root = browser("root")
    root.post("/ui/delete", {"path": "/c"})
    before = store_state(repo)
    page = root.page("/ui/purge?path=/c")
    assert "cannot be undone" in page and ">Purge</button>" in page
    assert store_state(repo) == before
    r = root.post("/ui/purge", {"path": "/c"})
    assert r.status_code == 303 and r.headers["Location"] == "http://localhost/rest/"
    assert not repo.exists("/c")
    again = root.post("/ui/purge", {"path": "/c"})
    assert again.status_code == 404 and "Nothing is at /c" in again.get_data(as_text=True)
    assert root.get("/ui/tombstone?path=/c").status_code == 404
    assert root.get("/ui/purge?path=/c").status_code == 404


def test_purge_of_a_live_resource_is_refused(browser, repo, tree):
    before = store_state(repo)
    assert browser("root").get("/ui/purge?path=/c").status_code == 404
    assert browser("root").post("/ui/purge", {"path": "/c"}).status_code in (404, 409)
    assert store_state(repo) == before


def test_the_root_is_not_deleted(browser, repo):
    before = store_state(repo)
    assert browser("root").get("/ui/delete?path=/").status_code == 409
    assert browser("root").post("/ui/delete", {"path": "/"}).status_code in (400, 405, 409)
    assert store_state(repo) == before


def test_delete_of_a_missing_resource(browser, repo):
    r = browser("root").post("/ui/delete", {"path": "/nope"})
    assert r.status_code == 404 and "Nothing is at /nope" in r.get_data(as_text=True)
    assert browser("root").get("/ui/delete?path=/nope").status_code == 404


def test_without_write_nothing_is_offered_or_done(browser, repo, tree):
    for user, status in ((None, 401), ("bob", 403)):
        b = browser(user)
        assert b.get("/ui/delete?path=/c").status_code == status
        assert b.post("/ui/delete", {"path": "/c"}).status_code == status
    assert repo.exists("/c")
    browser("root").post("/ui/delete", {"path": "/c"})
    before = store_state(repo)
    page = browser("bob").get("/ui/tombstone?path=/c").get_data(as_text=True)
    assert ">Restore<" not in page and ">Purge<" not in page and "needs Write" in page
    for url in ("/ui/restore", "/ui/purge"):
        assert browser("bob").post(url, {"path": "/c"}).status_code == 403
    assert browser("bob").get("/ui/purge?path=/c").status_code == 403
    assert store_state(repo) == before
    with pytest.raises(TombstoneError):
        repo.exists("/c")


def test_write_on_the_tree_lets_a_user_delete_and_restore(browser, repo, tree):
    grant(repo, "/c", "alice", "Write")
    alice = browser("alice")
    assert alice.post("/ui/delete", {"path": "/c"}).status_code == 303
    assert alice.post("/ui/restore", {"path": "/c"}).status_code == 303
    assert repo.exists("/c/d")

