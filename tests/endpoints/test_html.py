"""The read-only HTML view."""
from __future__ import annotations

from .conftest import post_ttl, put_ttl

HTML = {"Accept": "text/html"}


def test_container_page(client):
    put_ttl(client, "/rest/c", '<> <http://purl.org/dc/terms/title> "<script>alert(1)</script>" ; '
                               '<http://purl.org/dc/terms/relation> <http://example.org/x> .')
    for i in range(105):
        post_ttl(client, "/rest/c", "", Slug=f"k{i:03d}")
    r = client.get("/rest/c", headers=HTML)
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/html; charset=utf-8"
    page = r.get_data(as_text=True)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="http://example.org/x"' in page
    assert "dcterms:title" in page and "ldp:BasicContainer" in page
    assert 'href="http://localhost/rest/c/k000"' in page
    assert "k104" not in page and "page 1 of 2" in page
    assert "(105)" in page
    page2 = client.get("/rest/c?page=2", headers=HTML).get_data(as_text=True)
    assert "k104" in page2 and "k000" not in page2
    assert client.get("/rest/c?page=zz", headers=HTML).status_code == 200
    assert 'href="http://localhost/rest/"' in page   # breadcrumbs
    assert "/static/lsup.css" in page
    assert "http" not in page.split("<body>")[0].replace("http-equiv", "").split("lsup.css")[0] \
        .replace('href="/static/', "")


def test_binary_page(client):
    client.post("/rest/", data=b"hello", content_type="text/plain",
                headers={"Slug": "bin", "Content-Disposition": 'attachment; filename="h.txt"'})
    page = client.get("/rest/bin/fcr:metadata", headers=HTML).get_data(as_text=True)
    assert 'href="http://localhost/rest/bin"' in page and "Download" in page
    assert "h.txt" in page and "5 bytes" in page
    # a browser on the binary itself gets the content
    r = client.get("/rest/bin", headers=HTML)
    assert r.data == b"hello"


def test_versions_on_page(client):
    put_ttl(client, "/rest/a")
    loc = client.post("/rest/a/fcr:versions", headers={"Slug": "v-one"}).headers["Location"]
    page = client.get("/rest/a", headers=HTML).get_data(as_text=True)
    assert f'href="{loc}"' in page and "v-one" in page
    tm = client.get("/rest/a/fcr:versions", headers=HTML).get_data(as_text=True)
    assert f'href="{loc}"' in tm
    m = client.get(loc, headers=HTML).get_data(as_text=True)
    assert "memento of" in m


def test_pages_are_not_cached(client):
    """A page shows what its agent may do: never kept, never a 304 from an ETag."""
    put_ttl(client, "/rest/a")
    r = client.get("/rest/a", headers=HTML)
    assert r.headers["Cache-Control"] == "no-store"
    again = client.get("/rest/a", headers={**HTML, "If-None-Match": r.headers["ETag"]})
    assert again.status_code == 200
    turtle = client.get("/rest/a", headers={"If-None-Match": r.headers["ETag"]})
    assert turtle.status_code == 304


def test_static_css(client):
    r = client.get("/static/lsup.css")
    assert r.status_code == 200 and b"--lake" in r.data
    assert b"http" not in r.data   # no external assets


def test_only_web_iris_become_links(client):
    """A ``javascript:`` (or ``data:``, ``file:``) IRI in a graph is shown as text: a
    link would run it in the repository's origin when clicked."""
    put_ttl(client, "/rest/x", '<> <http://example.org/p> <javascript:alert(document.cookie)>, '
                               '<JavaScript:alert(2)>, <data:text/html,x>, <file:///etc/passwd>, '
                               '<https://example.org/ok>, <urn:isbn:123> .')
    page = client.get("/rest/x", headers=HTML).get_data(as_text=True)
    assert 'href="https://example.org/ok"' in page
    for iri in ("javascript:alert(document.cookie)", "JavaScript:alert(2)",
                "data:text/html,x", "file:///etc/passwd", "urn:isbn:123"):
        assert f'href="{iri}' not in page and f'title="{iri}' not in page
        assert f'<span class="iri">{iri}</span>' in page


def test_timemap_page_heads_every_version(make_app, app_config, clock):
    """Each memento of a TimeMap page has its heading, the first one too."""
    import re
    client = make_app(clock=clock, **app_config).test_client()
    put_ttl(client, "/rest/t", '<> <http://purl.org/dc/terms/title> "t" .')
    first = client.post("/rest/t/fcr:versions").headers["Location"]
    clock.advance()
    second = client.post("/rest/t/fcr:versions").headers["Location"]
    page = client.get("/rest/t/fcr:versions", headers=HTML).get_data(as_text=True)
    headed = re.findall(r'<h3><a class="iri" href="([^"]+)"', page)
    assert headed == [first, second]


def test_binary_child_links_to_its_description(client):
    """A binary in a container's listing opens its description page, not a download."""
    put_ttl(client, "/rest/c")
    client.put("/rest/c/bin", data=b"hello", content_type="text/plain")
    put_ttl(client, "/rest/c/rdf")
    page = client.get("/rest/c", headers=HTML).get_data(as_text=True)
    assert 'href="http://localhost/rest/c/bin/fcr:metadata">bin</a>' in page
    # the content: a separate Download link
    listing = page.split('class="children"')[1]
    assert listing.count('href="http://localhost/rest/c/bin"') == 1
    assert '<a class="download" href="http://localhost/rest/c/bin"' in listing
    assert 'href="http://localhost/rest/c/rdf"' in page
    desc = client.get("/rest/c/bin/fcr:metadata", headers=HTML)
    assert desc.status_code == 200 and "Download" in desc.get_data(as_text=True)
