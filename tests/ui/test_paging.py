"""A container's page reads one page of its children, however many it has."""
from __future__ import annotations

import re

import pytest

from lakesuperior.endpoints import html
from lakesuperior.model import resource

pytestmark = pytest.mark.slow

N = html.SORT_LIMIT + 500      # more than the page sorts whole


@pytest.fixture
def big(repo):
    with repo.transaction():
        repo.create_or_replace("/big")
        for i in range(N):
            repo.create_or_replace(f"/big/k{i:05d}")
    return repo


@pytest.fixture
def reads(monkeypatch):
    """How many children each ``load`` read."""
    seen: list[tuple[int, int]] = []
    original = resource.read_children

    def spy(txn, uid, children_range):
        children, total = original(txn, uid, children_range)
        seen.append((len(children), total))
        return children, total
    monkeypatch.setattr(resource, "read_children", spy)
    return seen


def names(page: str) -> list[str]:
    return re.findall(r'<li><a href="http://localhost/rest/big/(k\d+)">', page)


def test_the_first_page_reads_a_bounded_number_of_children(browser, big, reads):
    page = browser("root").page("/rest/big")
    assert reads == [(html.SORT_LIMIT + 1, N)]
    assert f"({N})" in page and f"page 1 of {-(-N // html.PAGE_SIZE)}" in page
    shown = names(page)
    assert len(shown) == html.PAGE_SIZE and shown == sorted(shown)


def test_pages_of_a_large_container_show_each_child_once(browser, big):
    pages = -(-N // html.PAGE_SIZE)
    seen = []
    for p in range(1, pages + 1):
        seen.extend(names(browser("root").page(f"/rest/big?page={p}")))
    assert sorted(seen) == [f"k{i:05d}" for i in range(N)]


def test_a_small_container_is_sorted_across_pages(browser, repo):
    repo.create_or_replace("/s")
    for i in (5, 3, 9, 1):
        repo.create_or_replace(f"/s/n{i}")
    page = browser("root").page("/rest/s")
    assert re.findall(r'rest/s/(n\d)">', page) == ["n1", "n3", "n5", "n9"]


@pytest.mark.parametrize("number", ["99999999999999999999", str(10**18), "-5", "x", "9" * 5000])
def test_a_page_number_past_any_container_is_its_last_page(browser, repo, number):
    """Before, a number past ``sys.maxsize`` was a 500 (the slice of the children)."""
    repo.create_or_replace("/s")
    repo.create_or_replace("/s/n1")
    page = browser("root").page(f"/rest/s?page={number}")
    assert re.findall(r'rest/s/(n\d)">', page) == ["n1"]


def test_children_range_reads_only_those(big):
    res = big.get("/big", children_range=(10, 20))
    assert len(res.children) == 10 and res.child_count == N
    everything = big.get("/big")
    assert everything.child_count == N
    assert res.children == everything.children[10:20]


def test_rdf_representations_still_list_every_child(client, big):
    r = client.get("/rest/big", headers={"Accept": "application/n-triples",
                                         "Authorization": browser_auth()})
    assert r.data.count(b"ldp#contains") == N


def browser_auth() -> str:
    from .conftest import auth
    return auth("root")["Authorization"]
