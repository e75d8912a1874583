"""SPARQL Update and update_delta."""
from __future__ import annotations

import time

import pytest
from rdflib import Literal, URIRef

from lakesuperior.exceptions import (
    RefIntViolationError,
    ResourceNotExistsError,
    ServerManagedTermError,
    SingleSubjectError,
    SparqlError,
)
from lakesuperior.model.namespaces import FCREPO, LDP, RDF_TYPE

BASE = "http://test.example/rest"
TTL = "text/turtle"
EX = "http://ex.org/"


def pub(uid):
    return f"<{BASE}{uid}>"


@pytest.fixture
def doc(repo):
    repo.create_or_replace(
        "/d", media_type=TTL,
        data=b'@prefix ex: <http://ex.org/> . <> ex:title "Old" ; ex:tag "a", "b" ; '
             b'ex:part <#p> ; ex:author [ ex:name "Ann" ] . <#p> ex:n 1 .')
    return repo


def user(repo, uid="/d"):
    return sorted(repo.get(uid).user_data)


def test_insert_delete_data(doc):
    res = doc.update("/d", 'PREFIX ex: <http://ex.org/> '
                           'DELETE DATA { <> ex:title "Old" } ; '
                           'INSERT DATA { <> ex:title "New" . <#p> ex:n 2 }')
    triples = set(res.user_data)
    assert (pub("/d"), f"<{EX}title>", '"New"') in triples
    assert (pub("/d"), f"<{EX}title>", '"Old"') not in triples
    assert (pub("/d#p"), f"<{EX}n>", '"2"^^<http://www.w3.org/2001/XMLSchema#integer>') in triples
    assert sorted(res.user_data) == user(doc)


def test_delete_insert_where(doc):
    doc.update("/d", 'PREFIX ex: <http://ex.org/> '
                     'DELETE { <> ex:tag ?t } INSERT { <> ex:label ?t } WHERE { <> ex:tag ?t }')
    triples = set(doc.get("/d").user_data)
    assert not any(t[1] == f"<{EX}tag>" for t in triples)
    assert {t[2] for t in triples if t[1] == f"<{EX}label>"} == {'"a"', '"b"'}


def test_delete_where_with_blank_nodes(doc):
    doc.update("/d", 'PREFIX ex: <http://ex.org/> DELETE WHERE { <> ex:author ?a . ?a ex:name ?n }')
    assert not any(t[0].startswith("_:") or t[2].startswith("_:") for t in user(doc))
    doc.update("/d", 'PREFIX ex: <http://ex.org/> INSERT DATA { <> ex:author [ ex:name "Bo" ] }')
    bnodes = [t for t in user(doc) if t[0].startswith("_:")]
    assert [t[1:] for t in bnodes] == [(f"<{EX}name>", '"Bo"')]


def test_untouched_blank_nodes_survive(doc):
    before = [t for t in user(doc) if t[2].startswith("_:") or t[0].startswith("_:")]
    doc.update("/d", 'INSERT DATA { <> <http://ex.org/x> "y" }')
    after = [t for t in user(doc) if t[2].startswith("_:") or t[0].startswith("_:")]
    assert before == after and len(before) == 2


def test_update_refuses_server_managed(doc, state):
    before = state(doc)
    for text in ['INSERT DATA { <> <http://fedora.info/definitions/v4/repository#created> "x" }',
                 'INSERT DATA { <> a <http://www.w3.org/ns/ldp#DirectContainer> }',
                 'DELETE WHERE { <> a <http://www.w3.org/ns/ldp#BasicContainer> }',
                 'DELETE WHERE { <> ?p ?o }']:
        with pytest.raises(ServerManagedTermError):
            doc.update("/d", text)
    assert state(doc) == before
    # lenient: the server-managed part is ignored, the rest applies
    res = doc.update("/d", 'INSERT DATA { <> a <http://www.w3.org/ns/ldp#DirectContainer> ; '
                           '<http://ex.org/ok> "yes" }', handling="lenient")
    assert LDP.DirectContainer not in res.ldp_types
    assert (pub("/d"), f"<{EX}ok>", '"yes"') in res.user_data
    res = doc.update("/d", 'DELETE WHERE { <> ?p ?o }', handling="lenient")
    assert res.user_data == [t for t in res.user_data if not t[0] == pub("/d")]
    assert (pub("/d"), RDF_TYPE, LDP.BasicContainer) in res.metadata


@pytest.mark.parametrize("text, message", [
    ("INSERT DATA { <> <http://ex.org/p> ", "syntax"),
    ("SELECT * WHERE { ?s ?p ?o }", "syntax"),
    ("", "empty"),
    ("LOAD <http://example.org/data.ttl>", "not supported"),
    ("CLEAR ALL", "not supported"),
    ("DROP GRAPH <http://g>", "not supported"),
    ("INSERT DATA { GRAPH <http://g> { <> <http://ex.org/p> 1 } }", "graph"),
    ("WITH <http://g> DELETE { <> <http://ex.org/p> ?o } WHERE { <> <http://ex.org/p> ?o }",
     "WITH"),
    ("DELETE { <> <http://ex.org/p> ?o } WHERE { SERVICE <http://remote/sparql> "
     "{ <> <http://ex.org/p> ?o } }", "SERVICE"),
    ("INSERT DATA { <> undeclared:p 1 }", ""),
])
def test_update_errors(doc, state, text, message):
    before = state(doc)
    with pytest.raises(SparqlError) as e:
        doc.update("/d", text)
    assert message.lower() in str(e.value).lower()
    assert state(doc) == before


def test_update_single_subject_and_refint(repo_factory, state):
    repo = repo_factory(referential_integrity="strict")
    repo.create_or_replace("/d")
    before = state(repo)
    with pytest.raises(SingleSubjectError):
        repo.update("/d", 'INSERT DATA { <http://other.org/x> <http://ex.org/p> 1 }')
    with pytest.raises(RefIntViolationError):
        repo.update("/d", 'INSERT DATA { <> <http://ex.org/p> </rest/missing> }')
    assert state(repo) == before
    repo.update("/d", 'INSERT DATA { <> <http://ex.org/p> </rest/> }')
    assert (pub("/d"), f"<{EX}p>", pub("/")) in repo.get("/d").user_data


def test_update_missing(repo):
    with pytest.raises(ResourceNotExistsError):
        repo.update("/missing", 'INSERT DATA { <> <http://ex.org/p> 1 }')


# --- update_delta -----------------------------------------------------------------------------

def test_update_delta(doc):
    res = doc.update_delta(
        "/d",
        remove=[(None, f"<{EX}tag>", None), (pub("/d"), f"<{EX}title>", '"Old"')],
        add=[(pub("/d"), f"<{EX}title>", '"Fresh"'), ("<>", f"<{EX}self>", "<#p>")])
    triples = set(res.user_data)
    assert not any(t[1] == f"<{EX}tag>" for t in triples)
    assert (pub("/d"), f"<{EX}title>", '"Fresh"') in triples
    assert (pub("/d"), f"<{EX}self>", pub("/d#p")) in triples
    assert sorted(res.user_data) == user(doc)


def test_update_delta_rdflib_terms(doc):
    me = URIRef(BASE + "/d")
    doc.update_delta("/d", remove=[(me, URIRef(EX + "title"), None)],
                     add=[(me, URIRef(EX + "title"), Literal("Rdflib", lang="en"))])
    assert (pub("/d"), f"<{EX}title>", '"Rdflib"@en') in doc.get("/d").user_data


def test_update_delta_wildcards_skip_server_managed(doc, state):
    res = doc.update_delta("/d", remove=[(None, None, None)], add=None)
    assert res.user_data == []
    assert (pub("/d"), RDF_TYPE, LDP.BasicContainer) in res.metadata
    assert res.created
    before = state(doc)
    with pytest.raises(ServerManagedTermError):
        doc.update_delta("/d", remove=[(None, FCREPO.created, None)], add=None)
    with pytest.raises(ServerManagedTermError):
        doc.update_delta("/d", remove=None, add=[("<>", FCREPO.created, '"x"')])
    assert state(doc) == before


@pytest.mark.parametrize("update", [
    "DELETE DATA { <> <http://www.w3.org/ns/ldp#contains> <c/x> }",
    "DELETE WHERE { <> <http://www.w3.org/ns/ldp#contains> ?c }",
    "DELETE { <> <http://www.w3.org/ns/ldp#contains> ?c } WHERE { <> ?p ?c }",
])
def test_deleting_containment_is_refused(repo, state, update):
    """Fedora API 3.7: containment changes only by creating and deleting resources."""
    repo.create_or_replace("/c/x")
    before = state(repo)
    with pytest.raises(ServerManagedTermError, match="contains"):
        repo.update("/c", update)
    assert state(repo) == before
    repo.update("/c", update, handling="lenient")       # lenient: ignored
    assert repo.get("/c").children == ["/c/x"]


def test_a_large_update_is_parsed_before_its_write(doc, monkeypatch):
    """An INSERT DATA of 2,000 triples is applied whole, in about the time of its
    parse (the translation of its data took 29 s: rdflib plans it as a query), and
    it is parsed before the write, which a long parse would otherwise hold."""
    from lakesuperior.model import sparql_update
    from lakesuperior.rdf.sparql_parser import parse_update
    text = "INSERT DATA {\n" + "".join(f'<> <http://ex.org/v{i % 50}> "v{i}" .\n'
                                       for i in range(2000)) + "}"
    t0 = time.perf_counter()
    parse_update(text)
    parse_time = time.perf_counter() - t0
    real, in_write = sparql_update.parse, []
    monkeypatch.setattr(sparql_update, "parse",
                        lambda *a: in_write.append(doc.in_transaction) or real(*a))
    t0 = time.perf_counter()
    doc.update("/d", text)
    assert time.perf_counter() - t0 < 4 * parse_time + 1      # about 1.2 times here
    assert in_write == [False]
    values = {t[2] for t in doc.get("/d").user_data if t[1].startswith("<http://ex.org/v")}
    assert values == {f'"v{i}"' for i in range(2000)}


CROSS = ("INSERT { <> <http://ex.org/q> ?c } "
         "WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }")


def test_an_expensive_where_stops_at_the_time_limit(repo_factory):
    """A WHERE joining four open patterns over 200 triples (1.6 billion rows) held
    the repository's write, every writer waiting, for hours: it stops at
    ``query_timeout`` and changes nothing; an ordinary one runs."""
    from lakesuperior.exceptions import QueryTimeoutError
    repo = repo_factory(query_timeout=0.5)
    repo.create_or_replace("/x", media_type=TTL, data="".join(
        f'<> <http://ex.org/p{i}> "v{i}" .\n' for i in range(200)).encode())
    before = user(repo, "/x")
    t0 = time.monotonic()
    with pytest.raises(QueryTimeoutError, match="time limit of 0.5 s"):
        repo.update("/x", CROSS)
    assert time.monotonic() - t0 < 10                     # loose: a busy machine
    assert user(repo, "/x") == before
    repo.update("/x", 'DELETE { <> <http://ex.org/p1> ?v } INSERT { <> <http://ex.org/q> ?v } '
                      'WHERE { <> <http://ex.org/p1> ?v }')
    assert (pub("/x"), "<http://ex.org/q>", '"v1"') in user(repo, "/x")


def test_a_long_update_parse_stops_at_the_time_limit(repo_factory):
    """An update's parse counts against ``query_timeout`` too, as a query's (``1+1+...``
    of 100,000 characters: 37 s of parse, holding the parser every query needs)."""
    from lakesuperior.exceptions import QueryTimeoutError
    repo = repo_factory(query_timeout=0.5)
    repo.create_or_replace("/x", data=b"", media_type=TTL)
    long = ("INSERT { <> <http://ex.org/n> ?x } WHERE { BIND(" + "+".join(["1"] * 20000)
            + " AS ?x) }")
    t0 = time.monotonic()
    with pytest.raises(QueryTimeoutError, match="time limit"):
        repo.update("/x", long)
    assert time.monotonic() - t0 < 10                     # the whole parse: 31 s
    assert user(repo, "/x") == []


def test_an_acl_update_stops_at_the_time_limit(repo_factory):
    from lakesuperior.exceptions import QueryTimeoutError
    repo = repo_factory(query_timeout=0.5)
    repo.create_or_replace("/x", data=b"", media_type=TTL)
    acl = ("@prefix acl: <http://www.w3.org/ns/auth/acl#> .\n"
           + "".join(f"<#r{i}> a acl:Authorization ; acl:agent \"u{i}\" ; acl:mode acl:Read ; "
                     f"acl:accessTo <{BASE}/x> .\n" for i in range(30)))
    repo.set_acl("/x", data=acl.encode(), media_type=TTL)
    before = sorted(repo.acl("/x"))
    with pytest.raises(QueryTimeoutError):
        repo.update_acl("/x", "INSERT { <#r0> <http://ex.org/q> ?c } "
                              "WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }")
    assert sorted(repo.acl("/x")) == before
