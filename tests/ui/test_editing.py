"""The Edit page: Turtle, the Dublin Core form, a binary's file and details."""
from __future__ import annotations

import html
import io

from tests.conftest import store_state

from .conftest import form_field, grant

TITLE = "<http://purl.org/dc/terms/title>"
TTL = b'<> <http://purl.org/dc/terms/title> "Old" ; <http://purl.org/dc/terms/subject> "a" .'


def titles(repo, uid: str) -> list[str]:
    return sorted(o for _s, p, o in repo.get(uid).triples if p == TITLE)


def setup_c(repo) -> None:
    repo.create_or_replace("/c", data=TTL, media_type="text/turtle")


def test_edit_page_shows_the_user_triples(browser, repo):
    setup_c(repo)
    page = browser("root").page("/ui/edit?path=/c")
    assert '<label for="turtle">Turtle</label>' in page
    assert "dcterms:title" in page and "&#34;Old&#34;" in page
    assert "fcrepo:created" not in page           # server-managed triples are not shown
    assert 'value="Old"' in page                   # the Dublin Core form


def test_save_turtle(browser, repo):
    setup_c(repo)
    root = browser("root")
    etag = form_field(root.page("/ui/edit?path=/c"), "etag")
    r = root.post("/ui/edit", {"path": "/c", "etag": etag,
                               "turtle": '<> <http://purl.org/dc/terms/title> "New" .'})
    assert r.status_code == 303 and r.headers["Location"] == "http://localhost/rest/c"
    assert titles(repo, "/c") == ['"New"']
    assert not [t for t in repo.get("/c").triples if "subject" in t[1]]


def test_a_syntax_error_is_shown_with_the_text_kept(browser, repo):
    setup_c(repo)
    before = store_state(repo)
    text = '<> <http://purl.org/dc/terms/title> "New" .\n<> <http://a> oops <b> .'
    r = browser("root").post("/ui/edit", {"path": "/c", "turtle": text})
    assert r.status_code == 400
    page = r.get_data(as_text=True)
    assert "Line 2, column" in page and 'role="alert"' in page
    assert html.escape(text) in page.replace("&#34;", "&quot;").replace("&#39;", "&#x27;")
    assert store_state(repo) == before


def test_server_managed_triples_are_refused_in_the_form(browser, repo):
    setup_c(repo)
    before = store_state(repo)
    text = '<> <http://fedora.info/definitions/v4/repository#created> "2000-01-01" .'
    r = browser("root").post("/ui/edit", {"path": "/c", "turtle": text})
    assert r.status_code == 409 and "Nothing was saved" in r.get_data(as_text=True)
    assert "repository#created" in r.get_data(as_text=True)
    assert store_state(repo) == before


def test_a_stale_form_is_refused_with_the_text_kept(browser, repo):
    setup_c(repo)
    root = browser("root")
    form = {"path": "/c", "etag": form_field(root.page("/ui/edit?path=/c"), "etag"),
            "turtle": '<> <http://purl.org/dc/terms/title> "Mine" .'}
    assert root.post("/ui/edit", form).status_code == 303
    before = store_state(repo)
    form["turtle"] = '<> <http://purl.org/dc/terms/title> "Twice" .'
    r = root.post("/ui/edit", form)                # sent again with the old etag
    assert r.status_code == 412
    page = r.get_data(as_text=True)
    assert "changed since this page was shown" in page and "Twice" in page
    assert store_state(repo) == before


def test_dublin_core_form(browser, repo):
    setup_c(repo)
    root = browser("root")
    r = root.post("/ui/describe", {"path": "/c", "title": "T <b>", "description": "",
                                   "creator": "Ann", "date": "1901", "subject": "x\ny\n"})
    assert r.status_code == 303
    res = repo.get("/c")
    values = sorted((p.rsplit("/", 1)[1][:-1], o) for _s, p, o in res.triples
                    if "purl.org/dc/terms" in p)
    assert values == [("creator", '"Ann"'), ("date", '"1901"'), ("subject", '"x"'),
                      ("subject", '"y"'), ("title", '"T <b>"')]
    page = root.page("/ui/edit?path=/c")
    assert 'value="T &lt;b&gt;"' in page


def test_edit_needs_write(browser, repo):
    setup_c(repo)
    before = store_state(repo)
    for user, status in ((None, 401), ("bob", 403)):
        b = browser(user)
        assert b.post("/ui/edit", {"path": "/c", "turtle": ""}).status_code == status
        assert b.post("/ui/describe", {"path": "/c", "title": "x"}).status_code == status
    assert store_state(repo) == before
    grant(repo, "/c", "bob", "Write")
    assert browser("bob").post("/ui/describe", {"path": "/c", "title": "x"}).status_code == 303


def test_edit_of_a_missing_resource(browser, repo):
    b = browser("root")
    assert b.get("/ui/edit?path=/nope").status_code == 404
    assert b.post("/ui/edit", {"path": "/nope", "turtle": ""}).status_code == 404
    assert b.get("/ui/edit").status_code == 400


def upload(repo) -> None:
    repo.create_or_replace("/b", data=b"one", media_type="text/plain", filename="one.txt")


def test_binary_edit_page(browser, repo):
    upload(repo)
    page = browser("root").page("/ui/edit?path=/b")
    assert "Replace file" in page and 'value="text/plain"' in page and 'value="one.txt"' in page
    assert 'href="http://localhost/rest/b/fcr:metadata"' in page


def test_replace_file(browser, repo):
    upload(repo)
    r = browser("root").post("/ui/binary", {"path": "/b", "file": (
        io.BytesIO(b"<svg/>"), "two.svg", "image/svg+xml")}, content_type="multipart/form-data")
    assert r.status_code == 303 and r.headers["Location"].endswith("/b/fcr:metadata")
    res = repo.get("/b")
    assert (res.mimetype, res.filename) == ("image/svg+xml", "two.svg")
    with res.content as fh:
        assert fh.read() == b"<svg/>"


def test_media_type_and_file_name(browser, repo):
    upload(repo)
    r = browser("root").post("/ui/binary", {"path": "/b", "mimetype": "text/markdown",
                                            "filename": "<x>.md"})
    assert r.status_code == 303
    res = repo.get("/b")
    assert (res.mimetype, res.filename) == ("text/markdown", "<x>.md")
    page = browser("root").page("/rest/b/fcr:metadata")
    assert "&lt;x&gt;.md" in page and "<x>.md" not in page


def test_a_bad_media_type_is_refused(browser, repo):
    upload(repo)
    before = store_state(repo)
    r = browser("root").post("/ui/binary", {"path": "/b", "mimetype": "not a type"})
    assert r.status_code == 400 and "Nothing was saved" in r.get_data(as_text=True)
    assert store_state(repo) == before
