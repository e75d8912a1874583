"""The SPARQL 1.1 Protocol endpoint at /query/sparql and its HTML page."""
from __future__ import annotations

import io
import json

import pytest
import rdflib
from rdflib import Literal, URIRef

from lakesuperior import rdfio
from lakesuperior.config import Config
from lakesuperior.endpoints.query import MAX_QUERY_LENGTH
from tests.apps import Client

from .conftest import ROOT, TTL, links, put_ttl

URL = "/query/sparql"
EX = "http://ex.org/"
SELECT = ("PREFIX ex: <http://ex.org/> SELECT ?s ?t ?n WHERE { ?s dcterms:title ?t "
          "OPTIONAL { ?s ex:n ?n } } ORDER BY ?s")
CONSTRUCT = "CONSTRUCT { ?s <http://ex.org/named> ?t } WHERE { ?s dcterms:title ?t }"
JSON = "application/sparql-results+json"
XML = "application/sparql-results+xml"
CONSTRAINED_BY = "http://www.w3.org/ns/ldp#constrainedBy"


@pytest.fixture
def data(client):
    assert put_ttl(client, "/rest/a", '<> <http://purl.org/dc/terms/title> "Alpha"@en ; '
                                      '<http://ex.org/n> 5 .').status_code == 201
    assert put_ttl(client, "/rest/b", '<> <http://purl.org/dc/terms/title> "Beta" ; '
                                      '<http://ex.org/rel> </rest/a> .').status_code == 201
    assert put_ttl(client, "/rest/gone", '<> <http://purl.org/dc/terms/title> "Gone" .'
                   ).status_code == 201
    assert client.delete("/rest/gone").status_code == 204
    return client


def get(client, query, accept=JSON, **params):
    return client.get(URL, query_string={"query": query, **params},
                      headers={"Accept": accept} if accept else {})


def select_rows(response):
    result = rdflib.query.Result.parse(io.BytesIO(response.data), format="json")
    return [tuple(r) for r in result]


# --- results by Accept ---------------------------------------------------------------------

def test_get_select_json(data):
    r = get(data, SELECT)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == JSON
    assert "Accept" in r.headers["Vary"]
    doc = json.loads(r.data)
    assert doc["head"]["vars"] == ["s", "t", "n"]
    assert select_rows(r) == [(URIRef(f"{ROOT}/a"), Literal("Alpha", lang="en"), Literal(5)),
                              (URIRef(f"{ROOT}/b"), Literal("Beta"), None)]


def test_default_format_is_json(data):
    for accept in (None, "*/*", "application/*"):
        r = get(data, SELECT, accept=accept)
        assert r.status_code == 200 and r.headers["Content-Type"] == JSON


@pytest.mark.parametrize("accept, ctype, parser", [
    (XML, XML + "; charset=utf-8", "xml"),
    ("text/csv", "text/csv; charset=utf-8", "csv"),
    ("text/tab-separated-values", "text/tab-separated-values; charset=utf-8", "tsv"),
    ("text/csv;q=0.5, application/sparql-results+xml", XML + "; charset=utf-8", "xml"),
])
def test_select_formats(data, accept, ctype, parser):
    r = get(data, SELECT, accept=accept)
    assert r.status_code == 200 and r.headers["Content-Type"] == ctype
    result = rdflib.query.Result.parse(io.BytesIO(r.data), format=parser)
    got = [tuple("" if v is None else str(v) for v in row) for row in result]
    assert got == [(f"{ROOT}/a", "Alpha", "5"), (f"{ROOT}/b", "Beta", "")]


def test_ask(data):
    r = get(data, "ASK { <a> ?p ?o }")
    assert r.status_code == 200 and json.loads(r.data) == {"head": {}, "boolean": True}
    r = get(data, "ASK { <gone> ?p ?o }", accept=XML)
    assert b"<boolean>false</boolean>" in r.data


@pytest.mark.parametrize("accept, media_type", [
    (None, TTL), (TTL, TTL), ("application/n-triples", "application/n-triples"),
    ("application/ld+json", "application/ld+json"),
    ("application/rdf+xml", "application/rdf+xml"),
])
def test_construct_formats(data, accept, media_type):
    r = get(data, CONSTRUCT, accept=accept)
    assert r.status_code == 200
    assert r.headers["Content-Type"].split(";")[0] == media_type
    triples = set(rdfio.parse(r.data, media_type, ROOT + "/"))
    assert triples == {(f"<{ROOT}/a>", f"<{EX}named>", '"Alpha"@en'),
                       (f"<{ROOT}/b>", f"<{EX}named>", '"Beta"')}


def test_describe(data):
    r = get(data, "DESCRIBE <b>", accept="application/n-triples")
    assert r.status_code == 200
    triples = set(rdfio.parse(r.data, "application/n-triples", ROOT + "/"))
    assert (f"<{ROOT}/b>", f"<{EX}rel>", f"<{ROOT}/a>") in triples
    assert all(t[0] == f"<{ROOT}/b>" for t in triples)


def test_public_uris_follow_the_request_host(data):
    r = data.get(URL, query_string={"query": "SELECT ?o WHERE { <b> <http://ex.org/rel> ?o }"},
                 headers={"Accept": JSON, "Host": "repo.example:8080"})
    assert select_rows(r) == [(URIRef("http://repo.example:8080/rest/a"),)]
    r = data.get(URL, query_string={"query": "ASK { ?s ?p ?o }"}, headers={"Host": "bad host"})
    assert r.status_code == 400


def test_nothing_internal_or_deleted(data):
    r = get(data, "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", accept="text/csv")
    body = r.data.decode()
    assert r.status_code == 200 and f"{ROOT}/a" in body
    assert "info:" not in body and "Gone" not in body


# --- how the query is sent ----------------------------------------------------------------------

def test_post_form(data):
    r = data.post(URL, data={"query": SELECT}, headers={"Accept": JSON})
    assert r.status_code == 200 and len(select_rows(r)) == 2


def test_post_query_body(data):
    r = data.post(URL, data=SELECT.encode(), content_type="application/sparql-query",
                  headers={"Accept": JSON})
    assert r.status_code == 200 and len(select_rows(r)) == 2
    r = data.post(URL, data=SELECT.encode(), content_type="application/sparql-query; charset=utf-8")
    assert r.status_code == 200


def test_dataset_parameters(data):
    q = "SELECT ?t WHERE { ?s dcterms:title ?t }"
    r = get(data, q, **{"default-graph-uri": f"{ROOT}/b"})
    assert select_rows(r) == [(Literal("Beta"),)]
    r = data.post(URL, data={"query": "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
                             "named-graph-uri": [f"{ROOT}/a", f"{ROOT}/gone"]},
                  headers={"Accept": JSON})
    assert {row[0] for row in select_rows(r)} == {URIRef(f"{ROOT}/a")}
    r = data.post(URL + f"?default-graph-uri={ROOT}/a", data=q.encode(),
                  content_type="application/sparql-query", headers={"Accept": JSON})
    assert select_rows(r) == [(Literal("Alpha", lang="en"),)]


def test_head(data):
    r = data.head(URL, query_string={"query": "ASK { ?s ?p ?o }"})
    assert r.status_code == 200 and r.data == b""


# --- errors --------------------------------------------------------------------------------------

def assert_error(r, status, *words):
    assert r.status_code == status, r.data
    text = r.data.decode()
    for word in words:
        assert word in text, text
    if 400 <= status < 500:
        assert any(link.has_rel(CONSTRAINED_BY) for link in links(r))


def test_syntax_error(data):
    r = get(data, "SELEC ?s WHERE { ?s ?p ?o }", accept=JSON + ", text/plain;q=0.1")
    assert_error(r, 400, "syntax error", "SELEC")
    r = get(data, "SELECT ?s WHERE { ?s nope:p ?o }")
    assert_error(r, 400, "nope")


def test_missing_or_repeated_query(data):
    assert_error(data.get(URL, headers={"Accept": JSON}), 400, "No query")
    assert_error(data.post(URL, data={"x": "1"}), 400, "No query")
    r = data.get(URL + "?query=ASK{}&query=ASK{}", headers={"Accept": JSON})
    assert_error(r, 400, "one 'query'")
    r = data.post(URL + "?query=ASK{}", data={"query": "ASK {}"})
    assert_error(r, 400, "body")


def test_unknown_format(data):
    assert_error(get(data, SELECT, accept="image/png"), 406, "application/sparql-results+json")
    assert_error(get(data, CONSTRUCT, accept="text/csv"), 406, "text/turtle")
    assert_error(get(data, SELECT, accept=TTL), 406, "text/csv")


@pytest.mark.parametrize("send", [
    lambda c: c.get(URL, query_string={"update": "INSERT DATA { <a> <b> <c> }"}),
    lambda c: c.post(URL, data={"update": "DELETE WHERE { ?s ?p ?o }"}),
    lambda c: c.post(URL, data=b"DROP ALL", content_type="application/sparql-update"),
    lambda c: c.get(URL, query_string={"query": "INSERT DATA { <a> <http://ex.org/p> 1 }"}),
    lambda c: c.post(URL, data=b"CLEAR DEFAULT", content_type="application/sparql-query"),
])
def test_updates_refused(data, repo, send):
    before = repo.triple_match()
    assert_error(send(data), 400, "writes go through the LDP API")
    assert repo.triple_match() == before


def test_unsupported_body(data):
    r = data.post(URL, data=b"ASK {}", content_type="text/plain")
    assert_error(r, 415, "application/sparql-query")
    r = data.post(URL, data=b"\xff\xfe", content_type="application/sparql-query")
    assert_error(r, 400, "UTF-8")


def test_overlong_query(data):
    big = "ASK { ?s ?p ?o } #" + "x" * MAX_QUERY_LENGTH
    assert_error(get(data, big), 413, str(MAX_QUERY_LENGTH))
    r = data.post(URL, data=big.encode(), content_type="application/sparql-query")
    assert_error(r, 413, str(MAX_QUERY_LENGTH))
    r = data.post(URL, data={"query": big})
    assert_error(r, 413)


def test_methods(data):
    r = data.put(URL, data=b"x")
    assert r.status_code == 405 and set(r.headers["Allow"].replace(" ", "").split(",")) >= {
        "GET", "POST", "HEAD"}
    assert data.get("/query/nothing").status_code == 404


@pytest.fixture
def slow_client(tmp_path):
    from tests.apps import build_app
    app = build_app(Config(data_dir=str(tmp_path / "slow"), sync=False, query_timeout=0.3,
                            auth_enabled=False))
    app.test_client_class = Client
    repo = app.extensions["lakesuperior"].repository
    with repo.transaction():
        for i in range(120):
            repo.create_or_replace(f"/r{i}", data=" ".join(
                f"<> <http://ex.org/p{j}> {i * 10 + j} ." for j in range(10)).encode(),
                media_type=TTL)
    yield app.test_client()
    app.extensions["lakesuperior"].close()


def test_timeout(slow_client):
    q = "SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
    r = get(slow_client, q, accept=JSON + ", text/plain;q=0.5")
    assert r.status_code == 503
    assert "time limit of 0.3 s" in r.data.decode()
    r = get(slow_client, "ASK { ?s ?p ?o }")
    assert r.status_code == 200 and json.loads(r.data)["boolean"] is True


# --- the HTML page -----------------------------------------------------------------------------

HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_html_form(data):
    r = data.get(URL, headers={"Accept": HTML})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
    page = r.data.decode()
    assert "<form" in page and 'name="query"' in page and "lsup.css" in page
    assert "cdn" not in page.lower() and "https://" not in page


def test_html_results(data):
    r = data.post(URL, data={"query": SELECT}, headers={"Accept": HTML})
    page = r.data.decode()
    assert r.status_code == 200
    assert '<table class="results">' in page and "2 rows" in page
    assert f'href="{ROOT}/a"' in page and "Alpha" in page and "Beta" in page
    assert 'class="unbound"' in page           # ?n of b
    r = data.get(URL, query_string={"query": CONSTRUCT}, headers={"Accept": HTML})
    assert r.status_code == 200 and "CONSTRUCT result" in r.data.decode()
    r = data.get(URL, query_string={"query": "ASK { <a> ?p ?o }"}, headers={"Accept": HTML})
    assert "true" in r.data.decode()


def test_html_errors(data, slow_client):
    r = data.post(URL, data={"query": "SELEC nothing <script>alert(1)</script>"},
                  headers={"Accept": HTML})
    page = r.data.decode()
    assert r.status_code == 400 and "syntax error" in page
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert any(link.has_rel(CONSTRAINED_BY) for link in links(r))
    r = data.post(URL, data={"update": "DROP ALL"}, headers={"Accept": HTML})
    assert r.status_code == 400 and "LDP API" in r.data.decode()
    r = get(slow_client, "SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
            accept=HTML)
    assert r.status_code == 503 and "time limit" in r.data.decode()


def test_html_shows_a_limited_number_of_rows(data, monkeypatch):
    from lakesuperior.endpoints import query as endpoint
    monkeypatch.setattr(endpoint, "HTML_ROWS", 3)
    r = data.get(URL, query_string={"query": "SELECT * WHERE { ?s ?p ?o }"},
                 headers={"Accept": HTML})
    page = r.data.decode()
    assert "first 3 shown" in page and page.count("<tr>") == 1 + 3
