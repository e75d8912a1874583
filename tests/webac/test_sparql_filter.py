"""SPARQL filtered by permission: no row, count or graph name from a resource the
agent may not read, for every query form, through the Python view and
``/query/sparql``; administrators and the common case (only the default root
ACL) see everything, without a filter."""
from __future__ import annotations

import json

import pytest

from lakesuperior import query as queries
from lakesuperior.model.context import Context

from .conftest import ALICE, ANONYMOUS, BOB, ROOT, TTL, grant, put_acl

SECRET = "http://ex.org/secret"
TITLE = "<http://purl.org/dc/terms/title>"


@pytest.fixture
def data(repo):
    """/open (readable by all), /private and its child /private/inner (Alice only)."""
    for uid, title in (("/open", "open"), ("/private", SECRET), ("/private/inner", SECRET)):
        repo.create_or_replace(uid, data=f'<> {TITLE} "{title}" .'.encode(),
                               media_type=TTL, base_uri=ROOT)
    put_acl(repo, "/private", grant("/private", "acl:Read", who=f"acl:agent <{ALICE.webid}>"))
    return repo


def select(view, text):
    return [{str(k): str(v) for k, v in row.items()}
            for row in view.sparql_query(text, base_uri=ROOT).bindings]


def test_select_hides_unreadable_rows(data):
    text = f"SELECT ?s ?o WHERE {{ ?s {TITLE} ?o }}"
    assert {r["o"] for r in select(data.as_agent(BOB), text)} == {"open"}
    assert {r["o"] for r in select(data.as_agent(ALICE), text)} == {"open", SECRET}
    assert len(select(data, text)) == 3


def test_select_by_the_hidden_subject_finds_nothing(data):
    text = f"SELECT ?p ?o WHERE {{ <{ROOT}/private> ?p ?o }}"
    assert select(data.as_agent(BOB), text) == []
    assert select(data.as_agent(ALICE), text)


def test_ask(data):
    text = f'ASK {{ ?s {TITLE} "{SECRET}" }}'
    assert data.as_agent(BOB).sparql_query(text).askAnswer is False
    assert data.as_agent(ALICE).sparql_query(text).askAnswer is True


def test_construct(data):
    text = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
    graph = data.as_agent(ANONYMOUS).sparql_query(text, base_uri=ROOT).graph
    subjects = {str(s) for s in graph.subjects()}
    assert ROOT + "/open" in subjects
    assert not any("private" in s for s in subjects)
    assert SECRET not in {str(o) for o in graph.objects()}


@pytest.mark.parametrize("text", [
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s {TITLE} ?o }}",
    f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s {TITLE} ?o . ?s ?p ?x }}",
    "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }",
])
def test_count(data, text):
    def count(view):
        return int(list(view.sparql_query(text).bindings)[0]["n"])
    everything, alice, bob = count(data), count(data.as_agent(ALICE)), count(data.as_agent(BOB))
    assert everything == alice > bob > 0


def test_graph_names(data):
    text = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    bob = {r["g"] for r in select(data.as_agent(BOB), text)}
    alice = {r["g"] for r in select(data.as_agent(ALICE), text)}
    assert ROOT + "/open" in bob
    assert not any("private" in g for g in bob)
    assert {ROOT + "/private", ROOT + "/private/inner"} <= alice
    named = f"SELECT ?o WHERE {{ GRAPH <{ROOT}/private> {{ ?s ?p ?o }} }}"
    assert select(data.as_agent(BOB), named) == []
    assert select(data.as_agent(ALICE), named)


def test_dataset_of_a_hidden_graph_is_empty(data):
    text = f"SELECT ?o FROM <{ROOT}/private> WHERE {{ ?s {TITLE} ?o }}"
    assert select(data.as_agent(BOB), text) == []
    assert [r["o"] for r in select(data.as_agent(ALICE), text)] == [SECRET]


def test_triple_match_and_term_search(data):
    bob = data.as_agent(BOB)
    assert {o for _, _, o in bob.triple_match(p=TITLE, base_uri=ROOT)} == {'"open"'}
    assert len(data.as_agent(ALICE).triple_match(p=TITLE)) == 3
    assert bob.term_search([(TITLE, "contains", "ex.org")]) == []
    assert data.as_agent(ALICE).term_search([(TITLE, "contains", "ex.org")]) == [
        "/private", "/private/inner"]


def test_no_filter_when_everything_is_readable(repo):
    """The common case: only the default root ACL. The filter is None, so the query
    runs exactly as the trusted repository's (index counts, no per-row checks)."""
    repo.create_or_replace("/x")
    for agent in (ANONYMOUS, BOB):
        with repo.snapshot() as ctx:
            assert repo.access(ctx, agent).graph_filter() is None
    put_acl(repo, "/x", grant("/x", "acl:Read"))
    with repo.snapshot() as ctx:
        assert repo.access(ctx, BOB).graph_filter() is not None


def test_the_filter_sees_the_query_snapshot(data):
    """``graph_filter`` is called with the query's own snapshot."""
    seen: list[Context] = []

    def factory(ctx):
        seen.append(ctx)
        return None
    queries.sparql_query(data, "ASK { ?s ?p ?o }", graph_filter=factory)
    assert len(seen) == 1 and seen[0].txn is not None


def test_http_sparql_is_filtered(client, data, act):
    text = f"SELECT ?o WHERE {{ ?s {TITLE} ?o }}"
    act(BOB)
    r = client.get("/query/sparql", query_string={"query": text},
                   headers={"Accept": "application/sparql-results+json"})
    assert r.status_code == 200
    values = {b["o"]["value"] for b in json.loads(r.data)["results"]["bindings"]}
    assert values == {"open"}
    act(ALICE)
    r = client.get("/query/sparql", query_string={"query": text},
                   headers={"Accept": "application/sparql-results+json"})
    values = {b["o"]["value"] for b in json.loads(r.data)["results"]["bindings"]}
    assert values == {"open", SECRET}
