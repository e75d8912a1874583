"""The search page (``/search?q=``): literal values of any property, case-insensitive,
never IRIs; results as links with their titles (a binary to its description);
paging; bad input 400; HTML in values and in the search text escaped. And the
SPARQL page: the query kept in its labelled field, results as a table with links."""
from __future__ import annotations

import re

import pytest

from lakesuperior.endpoints.search import PAGE_SIZE
from tests.endpoints.conftest import DC_TITLE, ROOT, put_ttl

HTML = {"Accept": "text/html"}
DESCRIPTION = "<http://purl.org/dc/terms/description>"


def results(page: str) -> list[tuple[str, str]]:
    """(href, text) of each result link."""
    block = re.search(r'<ol class="results"[^>]*>(.*?)</ol>', page, re.S)
    return re.findall(r'<li><a href="([^"]+)">(.*?)</a>', block.group(1)) if block else []


@pytest.fixture
def data(client, repo):
    put_ttl(client, "/rest/lake", f'<> {DC_TITLE} "Lake Superior" .')
    put_ttl(client, "/rest/river", f'<> {DESCRIPTION} "flows into LAKE superior" .')
    put_ttl(client, "/rest/other", f'<> {DC_TITLE} "Mountains" ; '
                                   f'<http://example.org/see> <{ROOT}/lake> .')
    client.put("/rest/map", data=b"png", content_type="image/png")
    client.patch("/rest/map/fcr:metadata", content_type="application/sparql-update",
                 data=f'INSERT DATA {{ <{ROOT}/map> {DC_TITLE} "Superior map" }}')
    repo.index()


def test_search_finds_titles_and_other_values(client, data):
    r = client.get("/search?q=superior")
    assert r.status_code == 200
    assert results(r.get_data(as_text=True)) == [
        (f"{ROOT}/lake", "Lake Superior"),
        (f"{ROOT}/map/fcr:metadata", "Superior map"),          # a binary: its description
        (f"{ROOT}/river", "/river")]                             # no title: the uid


def test_search_matches_literals_not_iris(client, data):
    page = client.get("/search?q=rest/lake").get_data(as_text=True)
    assert results(page) == []
    assert "Nothing found." in page


def test_search_keeps_the_text_and_escapes_html(client, repo):
    put_ttl(client, "/rest/x", f'<> {DC_TITLE} "<b>bold</b> & <script>x</script>" .')
    repo.index()
    page = client.get("/search", query_string={"q": "<script>"}).get_data(as_text=True)
    assert "<script>x" not in page
    assert results(page) == [(f"{ROOT}/x", "&lt;b&gt;bold&lt;/b&gt; &amp; "
                                           "&lt;script&gt;x&lt;/script&gt;")]
    assert 'value="&lt;script&gt;"' in page          # kept in the fields


def test_search_pages(client, repo):
    for i in range(PAGE_SIZE + 5):
        put_ttl(client, f"/rest/r{i:03d}", f'<> {DC_TITLE} "pike {i:03d}" .')
    repo.index()
    first = client.get("/search?q=pike").get_data(as_text=True)
    assert len(results(first)) == PAGE_SIZE and f"({PAGE_SIZE + 5})" in first
    assert "page 1 of 2" in first and "page=2" in first
    second = client.get("/search?q=pike&page=2").get_data(as_text=True)
    assert [t for _, t in results(second)] == [f"pike {i:03d}" for i in range(PAGE_SIZE,
                                                                              PAGE_SIZE + 5)]


def test_search_empty_and_bad_input(client):
    r = client.get("/search")
    assert r.status_code == 200 and "<ol" not in r.get_data(as_text=True)
    r = client.get("/search", query_string={"q": "x" * 501}, headers=HTML)
    assert r.status_code == 400 and "longest accepted is 500" in r.get_data(as_text=True)
    r = client.get("/search?q=x&page=two", headers=HTML)
    assert r.status_code == 400 and "page number" in r.get_data(as_text=True)


def test_search_box_on_every_page(client):
    for path in ("/rest/", "/query/sparql", "/search", "/constraints", "/rest/missing"):
        page = client.get(path, headers=HTML).get_data(as_text=True)
        assert '<form class="search" role="search" method="get" action="/search">' in page
        assert '<label class="visually-hidden" for="site-search">Search</label>' in page
        assert '<a href="/query/sparql">SPARQL</a>' in page
        assert '<a href="/admin/stats">Statistics</a>' in page   # authentication off: admin


def test_sparql_page_keeps_the_query_and_links_iris(client, data):
    query = f'SELECT ?s ?t WHERE {{ ?s {DC_TITLE} ?t FILTER(?t != "<i>") }} ORDER BY ?t'
    r = client.post("/query/sparql", data={"query": query}, headers=HTML)
    assert r.status_code == 200
    page = r.get_data(as_text=True)
    assert '<label for="sparql-query">SPARQL query</label>' in page
    kept = re.search(r'<textarea id="sparql-query"[^>]*>(.*?)</textarea>', page, re.S).group(1)
    assert kept == query.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") \
        .replace('"', "&#34;")
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", page)
    assert len(rows) == 3
    assert f'<a class="iri" href="{ROOT}/lake"' in rows[0][0]
    assert "Lake Superior" in rows[0][1]
