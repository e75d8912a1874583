"""The HTML view in a real browser: what an administrator and a stranger see."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.slow


def test_the_root_page_names_the_repository(site, signed_in):
    page = signed_in("root")
    response = page.goto(site.root)
    assert response is not None and response.status == 200
    expect(page.get_by_text("Signed in as root")).to_be_visible()
    expect(page.get_by_role("link", name="Lakesuperior")).to_be_visible()
    expect(page.get_by_role("heading", level=1)).to_be_visible()


def test_a_stranger_reads_the_root_and_may_not_write(site, page):
    response = page.goto(site.root)       # the default ACL lets everyone read
    assert response is not None and response.status == 200
    refused = page.request.put(site.root + "by-a-stranger", data="",
                               headers={"Content-Type": "text/turtle"})
    assert refused.status == 401
