"""The staff forms in a real browser: create, upload, edit, versions, sharing,
delete and restore, found by their accessible names (roles, labels, buttons)."""
from __future__ import annotations

import itertools
import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.slow


def new_container(page: Page, site, parent: str, title: str, slug: str) -> None:
    page.goto(site.root + parent)
    form = page.get_by_role("form", name="New container")
    form.get_by_label("Title").fill(title)
    form.get_by_label("Name in the path (optional)").fill(slug)
    form.get_by_role("button", name="Create").click()
    expect(page).to_have_url(site.root + (parent + "/" if parent else "") + slug)


def test_create_upload_and_edit(site, signed_in, tmp_path):
    page = signed_in("root")
    new_container(page, site, "", "Letters <b>1</b>", "letters")
    expect(page.get_by_text("Letters <b>1</b>", exact=True)).to_be_visible()   # text, not markup
    upload = page.get_by_role("form", name="Upload")
    scan = tmp_path / "scan.txt"
    scan.write_bytes(b"a letter\n" * 10_000)
    upload.get_by_label("File").set_input_files(str(scan))
    upload.get_by_label("Title").fill("First letter")
    upload.get_by_role("button", name="Upload").click()
    expect(page).to_have_url(re.compile(r"/rest/letters/[^/]+/fcr:metadata$"))
    expect(page.get_by_role("definition").filter(has_text=re.compile("^scan.txt$"))
           ).to_be_visible()
    expect(page.get_by_role("link", name="Download", exact=True)).to_be_visible()
    page.goto(site.root + "letters")
    expect(page.get_by_role("link", name=re.compile("^Download "))).to_have_count(1)

    page.get_by_role("link", name="Edit", exact=True).click()
    page.get_by_role("form", name="Description").get_by_label("Title").fill("Letters, 1890")
    page.get_by_role("button", name="Save fields").click()
    expect(page).to_have_url(site.root + "letters")
    expect(page.get_by_text("Letters, 1890", exact=True)).to_be_visible()

    page.get_by_role("link", name="Edit", exact=True).click()
    broken = '<> <http://purl.org/dc/terms/title> "x" .\n<> <http://a> oops .'
    page.get_by_label("Turtle").fill(broken)
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("Line 2, column")
    expect(page.get_by_label("Turtle")).to_have_value(broken)


def test_make_and_revert_a_version(site, signed_in):
    page = signed_in("root")
    new_container(page, site, "", "Draft", "versioned")
    page.get_by_role("button", name="Make version").click()
    expect(page).to_have_url(site.root + "versioned")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.get_by_role("form", name="Description").get_by_label("Title").fill("Final")
    page.get_by_role("button", name="Save fields").click()
    expect(page.get_by_text("Final", exact=True)).to_be_visible()
    page.get_by_role("link", name="TimeMap").click()
    page.get_by_role("link", name=re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")).first.click()
    expect(page.get_by_text("Draft", exact=True)).to_be_visible()
    page.get_by_role("link", name="Revert to this version").click()
    page.get_by_role("button", name="Revert to this version").click()
    expect(page).to_have_url(site.root + "versioned")
    expect(page.get_by_text("Draft", exact=True)).to_be_visible()


def test_share_with_another_user(site, signed_in):
    root = signed_in("root")
    new_container(root, site, "", "Shared", "shared")
    bob = signed_in("bob")
    bob.goto(site.root + "shared")
    expect(bob.get_by_role("link", name="Edit", exact=True)).to_have_count(0)
    expect(bob.get_by_role("form", name="New container")).to_have_count(0)

    root.get_by_role("link", name="Access", exact=True).click()
    expect(root.get_by_text("Everyone may read; inherited from /.")).to_be_visible()
    form = root.get_by_role("form", name="Grant access")
    form.get_by_label("A user").check()
    form.get_by_label("User name or group path").fill("bob")
    form.get_by_label("Access", exact=True).select_option("Write")
    form.get_by_role("button", name="Grant").click()
    expect(root.get_by_text("Everyone may read; bob may write.")).to_be_visible()

    bob.reload()
    expect(bob.get_by_role("link", name="Edit", exact=True)).to_be_visible()
    expect(bob.get_by_role("link", name="Access", exact=True)).to_have_count(0)
    new_container(bob, site, "shared", "By bob", "by-bob")
    alice = signed_in("alice")
    alice.goto(site.root + "shared")
    expect(alice.get_by_role("link", name="Edit", exact=True)).to_have_count(0)

    root.get_by_role("button", name="Revoke Write from bob").click()
    expect(root.get_by_text("bob")).to_have_count(0)
    bob.reload()
    expect(bob.get_by_role("link", name="Edit", exact=True)).to_have_count(0)


def test_delete_and_restore(site, signed_in):
    page = signed_in("root")
    new_container(page, site, "", "Doomed", "doomed")
    page.get_by_role("link", name="Delete", exact=True).click()
    expect(page.get_by_text("Delete /doomed and everything below it?")).to_be_visible()
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="/doomed was deleted")).to_be_visible()
    assert page.request.get(site.root + "doomed").status == 410
    page.get_by_role("button", name="Restore").click()
    expect(page).to_have_url(site.root + "doomed")
    expect(page.get_by_text("Doomed", exact=True)).to_be_visible()


UNLABELLED = """() => [...document.querySelectorAll(
    'input:not([type=hidden]), select, textarea, button')].filter(e =>
    !(e.labels && e.labels.length) && !e.getAttribute('aria-label') &&
    !(e.tagName === 'BUTTON' && e.textContent.trim())).map(e => e.outerHTML)"""
HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4')].map(h => +h.tagName[1])"""


def test_every_field_is_labelled_and_headings_go_in_order(site, signed_in):
    page = signed_in("root")
    new_container(page, site, "", "Labels", "labels")
    for url in (site.root + "labels", site.url + "/ui/edit?path=/labels",
                site.url + "/ui/access?path=/labels", site.root + "labels/fcr:versions"):
        page.goto(url)
        assert page.evaluate(UNLABELLED) == [], url
        levels = page.evaluate(HEADINGS)
        pairs = itertools.pairwise(levels)
        assert levels[0] == 1 and all(b - a <= 1 for a, b in pairs), url
    page.goto(site.root + "labels")
    page.keyboard.press("Tab")                # the forms are reached with the keyboard
    for _ in range(60):
        if page.evaluate("() => document.activeElement.id") == "new-title":
            break
        page.keyboard.press("Tab")
    page.keyboard.type("Typed")
    expect(page.get_by_role("form", name="New container").get_by_label("Title")
           ).to_have_value("Typed")
