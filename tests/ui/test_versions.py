"""Versions: the TimeMap page, "Make version", an old version, "Revert to this version"."""
from __future__ import annotations

from tests.conftest import store_state

from .conftest import grant

TITLE = "<http://purl.org/dc/terms/title>"


def title(repo, uid: str) -> list[str]:
    return [o for _s, p, o in repo.get(uid).triples if p == TITLE]


def make(repo) -> str:
    repo.create_or_replace("/c", data=b'<> <http://purl.org/dc/terms/title> "One" .',
                           media_type="text/turtle")
    return repo.create_version("/c")


def test_make_version(browser, repo):
    repo.create_or_replace("/c")
    r = browser("root").post("/ui/version", {"path": "/c", "label": "first <draft>"})
    assert r.status_code == 303 and r.headers["Location"] == "http://localhost/rest/c"
    (v,) = [v for v in repo.versions("/c") if v.label]
    assert v.label == "first <draft>"
    timemap = browser("root").page("/rest/c/fcr:versions")
    date = f"{v.id[:4]}-{v.id[4:6]}-{v.id[6:8]} {v.id[8:10]}:{v.id[10:12]}:{v.id[12:]} UTC"
    assert date in timemap and "first &lt;draft&gt;" in timemap
    assert f'href="http://localhost/rest/c/fcr:versions/{v.id}"' in timemap
    assert ">Make version</button>" in timemap


def test_an_old_version_offers_revert(browser, repo):
    vid = make(repo)
    page = browser("root").page(f"/rest/c/fcr:versions/{vid}")
    assert "One" in page and f'href="/ui/revert?path=/c&amp;version={vid}"' in page
    assert "Revert to this version" in page
    assert "Revert to this version" not in browser("bob").page(f"/rest/c/fcr:versions/{vid}")


def test_revert_asks_first_then_reverts(browser, repo):
    vid = make(repo)
    repo.update_delta("/c", [("<>", TITLE, None)], [("<>", TITLE, '"Two"')])
    before = store_state(repo)
    page = browser("root").page(f"/ui/revert?path=/c&version={vid}")
    assert "current state is kept as a version" in page
    assert '<button type="submit" class="danger">Revert to this version</button>' in page
    assert f'name="version" value="{vid}"' in page
    assert store_state(repo) == before
    r = browser("root").post("/ui/revert", {"path": "/c", "version": vid})
    assert r.status_code == 303 and r.headers["Location"] == "http://localhost/rest/c"
    assert title(repo, "/c") == ['"One"']


def test_revert_of_a_missing_version(browser, repo):
    make(repo)
    b = browser("root")
    assert b.get("/ui/revert?path=/c&version=19990101000000").status_code == 404
    assert b.get("/ui/revert?path=/c&version=nope").status_code == 400
    before = store_state(repo)
    assert b.post("/ui/revert", {"path": "/c", "version": "19990101000000"}).status_code == 404
    assert store_state(repo) == before


def test_versions_need_write(browser, repo):
    vid = make(repo)
    before = store_state(repo)
    for user, status in ((None, 401), ("bob", 403)):
        b = browser(user)
        assert b.post("/ui/version", {"path": "/c"}).status_code == status
        assert b.get(f"/ui/revert?path=/c&version={vid}").status_code == status
        assert b.post("/ui/revert", {"path": "/c", "version": vid}).status_code == status
    assert "Make version" not in browser("bob").page("/rest/c/fcr:versions")
    assert store_state(repo) == before
    grant(repo, "/c", "bob", "Write")
    assert browser("bob").post("/ui/version", {"path": "/c"}).status_code == 303
