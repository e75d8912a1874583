"""A SPARQL query cannot hold the server: a catastrophic regular expression over a
real gunicorn (authentication on, anonymous client) ends within query_timeout and
a margin while an anonymous GET is served at once; a client running as many
queries as it may is refused with 429 and Retry-After."""
from __future__ import annotations

import base64
import http.client
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import TooManyQueriesError
from lakesuperior.query.slots import QuerySlots
from tests.apps import serving
from tests.servers import lsup_server

CATASTROPHIC = ('SELECT ?x WHERE { BIND("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!" AS ?x) '
                'FILTER(REGEX(?x, "^(a+)+$")) }')
QUERY_TIMEOUT = 5
MARGIN = 3.0
JSON = "application/sparql-results+json"


def _timed(port: int, path: str, headers: dict[str, str]) -> tuple[int, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    finally:
        conn.close()


@pytest.mark.slow
def test_catastrophic_regex_does_not_hold_the_server(tmp_path):
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_QUERY_TIMEOUT": str(QUERY_TIMEOUT),
           "LSUP_STORE_SYNC": "false"}
    path = "/query/sparql?" + urllib.parse.urlencode({"query": CATASTROPHIC})
    with lsup_server(tmp_path, env) as (_proc, port, _log), ThreadPoolExecutor(3) as pool:
        queries = [pool.submit(_timed, port, path, {"Accept": JSON}) for _ in range(2)]
        time.sleep(0.3)
        status, get_time = _timed(port, "/rest/", {})
        results = [q.result() for q in queries]
    assert status == 200
    assert get_time < 2.0, f"an anonymous GET took {get_time:.1f} s during two queries"
    for q_status, q_time in results:
        assert q_status == 200
        assert q_time < QUERY_TIMEOUT + MARGIN, f"a query took {q_time:.1f} s"


@pytest.fixture
def limited(tmp_path):
    yield from serving(Config(data_dir=str(tmp_path / "data"), sync=False,
                              auth_enabled=False, query_max_per_agent=1))


def test_a_client_over_its_queries_gets_429(limited):
    """The test client's one slot taken: its next query is 429 with Retry-After and
    runs nothing; another client's is served; the slot given back, it is served."""
    client = limited.test_client()
    slots = limited.extensions["lakesuperior"].queries
    query = {"query": "ASK { }"}
    with slots.slot("anonymous@127.0.0.1"):
        # auth off: every request is the administrator "admin", keyed by name
        with slots.slot("admin"):
            refused = client.get("/query/sparql", query_string=query,
                                 headers={"Accept": JSON})
            page = client.get("/query/sparql", query_string=query,
                              headers={"Accept": "text/html"})
        assert slots.running("admin") == 0
        served = client.get("/query/sparql", query_string=query, headers={"Accept": JSON})
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert "query_max_per_agent" in refused.get_data(as_text=True)
    assert page.status_code == 429
    assert served.status_code == 200
    assert slots.running("admin") == 0


def test_query_slots_are_per_key_and_bounded():
    slots = QuerySlots(2)
    with slots.slot("a"), slots.slot("a"), slots.slot("b"):
        with pytest.raises(TooManyQueriesError):
            with slots.slot("a"):
                pass
        assert (slots.running("a"), slots.running("b")) == (2, 1)
    assert slots._running == {}
    unbounded = QuerySlots(0)
    with unbounded.slot("a"), unbounded.slot("a"), unbounded.slot("a"):
        pass


def _request(port: int, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read(), time.monotonic() - started
    finally:
        conn.close()


@pytest.mark.slow
def test_a_result_or_a_sort_past_query_max_rows_is_refused(tmp_path):
    """Over 500 triples, the join of two open patterns is 250,000 rows: an anonymous
    query held them all and wrote them out (at 1,800 triples: 6 GB of memory, 98 s,
    2 GB of JSON), and sorted them under ORDER BY past query_timeout. Now both are
    400 past query_max_rows, in well under the time limit, and the server serves on."""
    env = {"LSUP_AUTH_ENABLED": "true", "LSUP_QUERY_TIMEOUT": "30",
           "LSUP_QUERY_MAX_ROWS": "100000", "LSUP_STORE_SYNC": "false"}
    with lsup_server(tmp_path, env) as (_proc, port, _log):
        password = (tmp_path / "data" / "initial-admin-password").read_text().strip()
        admin = "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()
        body = " ".join(f"<> <http://example.org/p{i}> {i} ." for i in range(500)).encode()
        status, _, _ = _request(port, "PUT", "/rest/many", body,
                                {"Content-Type": "text/turtle", "Authorization": admin})
        assert status == 201
        for query in ("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }",
                      "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f LIMIT 3",
                      "CONSTRUCT { ?a ?b ?f } WHERE { ?a ?b ?c . ?d ?e ?f }"):
            path = "/query/sparql?" + urllib.parse.urlencode({"query": query})
            status, text, took = _request(port, "GET", path,
                                          headers={"Accept": JSON + ", text/turtle"})
            assert status == 400, (query, status, len(text), took)
            assert b"query_max_rows" in text and len(text) < 1000
            assert took < 20, (query, took)
        path = "/query/sparql?" + urllib.parse.urlencode(
            {"query": "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } LIMIT 10"})
        status, text, _ = _request(port, "GET", path, headers={"Accept": JSON})
        assert status == 200 and text.count(b'"a":') == 10
        assert _request(port, "GET", "/rest/")[0] == 200


def test_a_patch_past_query_timeout_is_503_and_changes_nothing(tmp_path):
    for app in serving(Config(data_dir=str(tmp_path / "data"), sync=False,
                              auth_enabled=False, query_timeout=0.5)):
        client = app.test_client()
        body = "".join(f'<> <http://ex.org/p{i}> "v{i}" .\n' for i in range(200))
        assert client.put("/rest/x", data=body, content_type="text/turtle").status_code == 201
        before = client.get("/rest/x", headers={"Accept": "application/n-triples"}).data
        r = client.patch("/rest/x", content_type="application/sparql-update",
                         data="INSERT { <> <http://ex.org/q> ?c } "
                              "WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }")
        assert r.status_code == 503, r.get_data(as_text=True)
        assert "query_timeout" in r.get_data(as_text=True)
        assert client.get("/rest/x", headers={"Accept": "application/n-triples"}).data == before
