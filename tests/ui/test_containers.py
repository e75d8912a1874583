"""New container and Upload on a container's page (``/ui/create``, ``/ui/upload``)."""
from __future__ import annotations

import io
import re

import pytest

from tests.conftest import store_state

from .conftest import form_field, grant

TITLE = "http://purl.org/dc/terms/title"


def children(repo, uid: str = "/") -> list[str]:
    return sorted(repo.get(uid).children)


def test_create_container_with_title_and_slug(browser, repo):
    root = browser("root")
    page = root.page("/rest/")
    r = root.post("/ui/create", {"path": "/", "title": "Letters", "slug": "letters",
                                 "form_id": form_field(page, "form_id")})
    assert r.status_code == 303 and r.headers["Location"] == "http://localhost/rest/letters"
    shown = root.page("/rest/letters")
    assert "Letters" in shown and f'href="{TITLE}"' in shown
    assert children(repo) == ["/letters"]


def test_a_form_sent_twice_makes_one_container(browser, repo):
    root = browser("root")
    form = {"path": "/", "title": "Once", "form_id": form_field(root.page("/rest/"), "form_id")}
    first = root.post("/ui/create", form)
    assert first.status_code == 303
    before = store_state(repo)
    again = root.post("/ui/create", form)
    assert again.status_code == 409
    text = again.get_data(as_text=True)
    assert "already exists" in text and "sent this form twice" in text
    assert first.headers["Location"] in text            # a link to what the first made
    assert store_state(repo) == before and len(children(repo)) == 1


def test_a_taken_slug_is_refused_not_renamed(browser, repo):
    root = browser("root")
    assert root.post("/ui/create", {"path": "/", "slug": "a"}).status_code == 303
    before = store_state(repo)
    r = root.post("/ui/create", {"path": "/", "slug": "a", "title": "second"})
    assert r.status_code == 409 and "/a already exists" in r.get_data(as_text=True)
    assert store_state(repo) == before


@pytest.mark.parametrize("slug, uid", [("two words", "/two%20words"),
                                       ("caf\u00e9?&#", "/caf%C3%A9%3F&%23")])
def test_odd_characters_in_a_slug_are_encoded(browser, repo, slug, uid):
    r = browser("root").post("/ui/create", {"path": "/", "slug": slug})
    assert r.status_code == 303
    assert children(repo) == [uid]


@pytest.mark.parametrize("slug", ["a/b", "fcr:versions", "..", "x\x01"])
def test_a_slug_no_segment_may_have_is_refused(browser, repo, slug):
    before = store_state(repo)
    r = browser("root").post("/ui/create", {"path": "/", "slug": slug, "title": "t"})
    assert r.status_code == 400
    assert store_state(repo) == before


def test_html_in_a_title_is_text(browser):
    root = browser("root")
    root.post("/ui/create", {"path": "/", "slug": "x", "title": "<script>alert(1)</script>"})
    page = root.page("/rest/x")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    edit = root.page("/ui/edit?path=/x")
    assert "<script>alert" not in edit and "&lt;script&gt;alert(1)&lt;/script&gt;" in edit


def test_upload_makes_a_binary_and_opens_its_description(browser, repo):
    root = browser("root")
    body = b"x" * 300_000
    r = root.post("/ui/upload", {"path": "/", "title": "Scan <1>", "slug": "scan",
                                 "file": (io.BytesIO(body), "scan<1>.tif", "image/tiff")},
                  content_type="multipart/form-data")
    assert r.status_code == 303
    assert r.headers["Location"] == "http://localhost/rest/scan/fcr:metadata"
    res = repo.get("/scan")
    assert res.is_binary and res.mimetype == "image/tiff" and res.filename == "scan<1>.tif"
    with res.content as fh:
        assert fh.read() == body
    page = root.page("/rest/scan/fcr:metadata")
    assert "Scan &lt;1&gt;" in page and "scan&lt;1&gt;.tif" in page
    listing = root.page("/rest/")
    assert 'href="http://localhost/rest/scan/fcr:metadata">scan</a>' in listing
    assert 'href="http://localhost/rest/scan" aria-label="Download scan">Download</a>' in listing


def test_an_rdf_file_uploads_as_a_binary(browser, repo):
    r = browser("root").post("/ui/upload", {"path": "/", "slug": "t", "file": (
        io.BytesIO(b"<> <http://purl.org/dc/terms/title> \"x\" ."), "t.ttl", "text/turtle")},
        content_type="multipart/form-data")
    assert r.status_code == 303 and repo.get("/t").is_binary


def test_upload_sent_twice_makes_one_binary(browser, repo):
    root = browser("root")
    fid = form_field(root.page("/rest/"), "form_id", 1)
    for status in (303, 409):
        r = root.post("/ui/upload", {"path": "/", "form_id": fid, "file": (
            io.BytesIO(b"abc"), "a.txt", "text/plain")}, content_type="multipart/form-data")
        assert r.status_code == status
    assert len(children(repo)) == 1


def test_upload_without_a_file(browser, repo):
    before = store_state(repo)
    r = browser("root").post("/ui/upload", {"path": "/", "title": "t"},
                             content_type="multipart/form-data")
    assert r.status_code == 400 and "Choose a file" in r.get_data(as_text=True)
    assert store_state(repo) == before


def test_upload_over_max_body_size(make_app):
    app = make_app(max_body_size=10_000)
    repo = app.extensions["lakesuperior"].repository
    client = app.test_client()
    before = store_state(repo)
    from .conftest import auth
    r = client.post("/ui/upload", headers=auth("root"), content_type="multipart/form-data",
                    data={"path": "/", "file": (io.BytesIO(b"x" * 20_000), "big.bin",
                                                "application/octet-stream")})
    assert r.status_code == 413
    assert "too large" in r.get_data(as_text=True) and "10000 bytes" in r.get_data(as_text=True)
    assert store_state(repo) == before


def test_forms_shown_only_with_the_right(browser, repo):
    repo.create_or_replace("/c")
    for user in (None, "alice"):
        page = browser(user).page("/rest/c")
        assert "New container" not in page and "Upload" not in page
        assert ">Edit<" not in page and ">Delete<" not in page and ">Access<" not in page
        assert "Make version" not in page
    grant(repo, "/c", "alice", "Append")
    page = browser("alice").page("/rest/c")
    assert "New container" in page and "Upload" in page and ">Edit<" not in page
    grant(repo, "/c", "alice", "Write")
    page = browser("alice").page("/rest/c")
    assert ">Edit<" in page and ">Delete<" in page and "Make version" in page
    assert ">Access<" not in page
    grant(repo, "/c", "alice", "Control")
    assert ">Access<" in browser("alice").page("/rest/c")


def test_the_server_refuses_what_the_page_hides(browser, repo):
    repo.create_or_replace("/c")
    before = store_state(repo)
    for user, status in ((None, 401), ("bob", 403)):
        b = browser(user)
        assert b.post("/ui/create", {"path": "/c", "title": "t"}).status_code == status
        r = b.post("/ui/upload", {"path": "/c", "file": (io.BytesIO(b"a"), "a.txt")},
                   content_type="multipart/form-data")
        assert r.status_code == status
    assert store_state(repo) == before


def test_append_is_enough_to_create(browser, repo):
    repo.create_or_replace("/c")
    grant(repo, "/c", "alice", "Append")
    r = browser("alice").post("/ui/create", {"path": "/c", "slug": "k"})
    assert r.status_code == 303 and children(repo, "/c") == ["/c/k"]


@pytest.mark.parametrize("path", ["", "nope", "/a%2Fb/../.."])
def test_a_form_without_a_resource_path(browser, path):
    r = browser("root").post("/ui/create", {"path": path})
    assert r.status_code in (400, 404)


def test_create_under_a_missing_container(browser, repo):
    before = store_state(repo)
    r = browser("root").post("/ui/create", {"path": "/nope", "title": "t"})
    assert r.status_code == 404
    assert store_state(repo) == before


def test_every_form_carries_the_csrf_field(app, browser, repo):
    """The seam with sign-in (docs/web-ui.md): each form that posts has the
    session's token (the ``csrf_token`` Jinja global of ``endpoints.session``)."""
    repo.create_or_replace("/c")
    repo.create_or_replace("/b", data=b"x", media_type="text/plain")
    vid = repo.create_version("/c")
    repo.create_or_replace("/gone")
    repo.delete("/gone")
    root = browser("root")
    pages = ["/rest/c", "/rest/b/fcr:metadata", "/rest/c/fcr:versions", "/ui/edit?path=/c",
             "/ui/edit?path=/b", "/ui/delete?path=/c", f"/ui/revert?path=/c&version={vid}",
             "/ui/access?path=/c", "/ui/purge?path=/gone"]
    app.jinja_env.globals["csrf_token"] = lambda: "t<ok>"
    for url in pages + ["/ui/tombstone?path=/gone"]:
        page = root.get(url).get_data(as_text=True)
        forms = len(re.findall(r'<form [^>]*method="post"', page))
        assert forms and page.count(
            '<input type="hidden" name="csrf_token" value="t&lt;ok&gt;">') == forms, url
