"""Signing in and out, searching and querying in a real browser, by the accessible
names of the pages (labels, roles, button names); and the basics of accessibility:
every field labelled, headings in order, the sign-in done with the keyboard."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import USERS, basic, sign_in

pytestmark = pytest.mark.slow

TITLE = "http://purl.org/dc/terms/title"
#: Every field without a label, and the heading levels in order (JavaScript).
AUDIT = """() => ({
  unlabelled: [...document.querySelectorAll(
      'input:not([type=hidden]), textarea, select')]
    .filter(e => e.labels.length === 0 && !e.getAttribute('aria-label'))
    .map(e => e.outerHTML),
  headings: [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
    .map(h => Number(h.tagName[1])),
})"""


def audit(page: Page) -> None:
    """No field without a label; one h1 first, then no level skipped."""
    found = page.evaluate(AUDIT)
    assert found["unlabelled"] == [], page.url
    levels = found["headings"]
    assert levels[:1] == [1] and levels.count(1) == 1, (page.url, levels)
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:], strict=False)), (page.url, levels)


@pytest.fixture(scope="module")
def lake(site, browser):
    """A resource titled "Lake <Superior>", made by the administrator over HTTP."""
    context = browser.new_context()
    made = context.request.put(site.root + "lake", headers={
        **basic("root"), "Content-Type": "text/turtle"},
        data=f'<> <{TITLE}> "Lake <Superior>" .')
    assert made.status == 201
    context.close()
    return site.root + "lake"


def test_sign_in_and_out(site, page):
    sign_in(page, site, "alice", "/rest/lake")
    expect(page).to_have_url(site.root + "lake")
    header = page.get_by_role("banner")
    expect(header).to_contain_text("Signed in as alice")
    expect(header.get_by_role("link", name="Statistics")).to_have_count(0)
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(site.root)
    expect(header.get_by_role("link", name="Log in")).to_be_visible()
    expect(header).not_to_contain_text("Signed in")


def test_a_wrong_password_says_so(site, page):
    page.goto(site.url + "/login")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill("not-her-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong user name or password")
    expect(page.get_by_label("User name")).to_have_value("alice")
    expect(page.get_by_label("Password")).to_have_value("")


def test_sign_in_with_the_keyboard(site, page):
    page.goto(site.url + "/login")
    expect(page.get_by_label("User name")).to_be_focused()
    page.keyboard.type("root")
    page.keyboard.press("Tab")
    page.keyboard.type(USERS["root"])
    page.keyboard.press("Enter")
    expect(page.get_by_role("banner")).to_contain_text("Signed in as root")
    expect(page.get_by_role("banner").get_by_role("link", name="Statistics")).to_be_visible()


def test_search_from_the_header(site, page, lake):
    sign_in(page, site, "bob")
    box = page.get_by_role("searchbox", name="Search")
    box.fill("superior")
    box.press("Enter")
    result = page.get_by_role("link", name="Lake <Superior>")
    expect(result).to_be_visible()
    result.click()
    expect(page).to_have_url(lake)
    expect(page.get_by_role("banner")).to_contain_text("Signed in as bob")


def test_run_a_sparql_query(site, page, lake):
    sign_in(page, site, "alice")
    page.get_by_role("banner").get_by_role("link", name="SPARQL").click()
    query = f"SELECT ?s ?t WHERE {{ ?s <{TITLE}> ?t }}"
    field = page.get_by_label("SPARQL query")
    field.fill(query)
    page.get_by_role("button", name="Run query").click()
    table = page.get_by_role("table")
    expect(table.get_by_role("columnheader")).to_have_text(["s", "t"])
    expect(table.get_by_role("link", name=lake)).to_be_visible()
    expect(table.get_by_role("cell", name="Lake <Superior>")).to_be_visible()
    expect(page.get_by_label("SPARQL query")).to_have_value(query)     # kept


def test_pages_label_every_field_and_order_their_headings(site, page, lake):
    sign_in(page, site, "root")
    for path in ("/login", "/rest/", "/rest/lake", "/search?q=lake", "/query/sparql",
                 "/admin/stats"):
        response = page.goto(site.url + path)
        assert response is not None and response.status == 200, path
        audit(page)
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("banner").get_by_role("link", name="Log in")).to_be_visible()
    expect(page).to_have_url(site.root)
