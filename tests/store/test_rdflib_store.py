"""The rdflib Store adapter: the Store contract, transactions, namespaces, and rdflib's
own dataset tests. SPARQL over it (rdflib's evaluator and the fast path) is tested in
tests/query/test_fast_path.py."""
from __future__ import annotations

import os
from decimal import Decimal

import pytest
import rdflib
from rdflib import XSD, BNode, Dataset, Graph, Literal, Namespace, URIRef
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID, QuotedGraph
from rdflib.plugins.sparql import prepareQuery, prepareUpdate
from rdflib.store import NO_STORE, VALID_STORE, Store, TripleAddedEvent

from lakesuperior.exceptions import StoreError, TermError
from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.rdflib_store import BNODE_GRAPH_PREFIX, DEFAULT_GRAPH, LmdbStore

# rdflib 7.6 warns about its own use of these inside Dataset and the SPARQL engine.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Dataset.default_context is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Dataset.contexts is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning"),
]

EX = Namespace("http://ex.org/")
G1, G2 = EX.g1, EX.g2
TAREK, LIKES, PIZZA = URIRef("urn:example:tarek"), URIRef("urn:example:likes"), \
    URIRef("urn:example:pizza")
CONTEXT1 = URIRef("urn:example:context-1")


@pytest.fixture(autouse=True, scope="module")
def _plugin():
    rdflib.plugin.register("Lakesuperior", Store, "lakesuperior.store.rdflib_store",
                           "LmdbStore")


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "store")


@pytest.fixture
def store(path):
    st = LmdbStore(path)
    yield st
    st.close()


@pytest.fixture
def ds(path):
    d = Dataset(store="Lakesuperior")
    assert d.open(path, create=True) == VALID_STORE
    yield d
    d.close()


def triples_of(store, pattern=(None, None, None), context=None):
    return {t for t, _ in store.triples(pattern, context)}


# --- lifecycle ----------------------------------------------------------------------------

def test_open_close_owned_store(path):
    st = LmdbStore()
    assert st.open(path, create=True) == VALID_STORE
    assert st.open(path) == VALID_STORE            # the same path again: fine
    with pytest.raises(StoreError, match="open on"):
        st.open(path + "-other")
    qs = st.quadstore
    st.close()
    with pytest.raises(StoreError, match="closed"):
        qs.read()                                  # the adapter closed what it opened
    with pytest.raises(StoreError, match="not open"):
        len(st)


def test_open_without_create(tmp_path):
    st = LmdbStore()
    assert st.open(str(tmp_path / "nothing"), create=False) == NO_STORE
    assert not os.path.exists(tmp_path / "nothing")


def test_passed_in_store_stays_open(path):
    qs = QuadStore(path)
    try:
        st = LmdbStore(quadstore=qs)
        st.add((EX.a, EX.p, EX.b), Graph(identifier=G1))
        st.commit()
        st.close()
        with qs.read() as txn:
            assert list(txn.match()) == [("<http://ex.org/a>", "<http://ex.org/p>",
                                          "<http://ex.org/b>", "<http://ex.org/g1>")]
        with pytest.raises(StoreError, match="passed in"):
            st.destroy(path)
        with pytest.raises(StoreError, match="not both"):
            LmdbStore(path, quadstore=qs)
    finally:
        qs.close()


def test_destroy(path):
    st = LmdbStore(path)
    with pytest.raises(StoreError, match="opened"):
        st.destroy(path + "-other")
    st.close()
    st.destroy(path)
    assert not os.path.exists(path)


def test_gc_indexes(store):
    store.add((EX.a, EX.p, EX.b), G1)
    store.commit()
    assert store.quadstore.pending() > 0
    store.gc()
    assert store.quadstore.pending() == 0


# --- the Store contract ---------------------------------------------------------------------

TERMS = [
    EX.a, BNode("b1"), Literal("plain"), Literal("hello", lang="en"),
    Literal("42", datatype=XSD.integer), Literal(Decimal("1.50")), Literal(2.5),
    Literal('quote " backslash \\ newline\n tab\t'), Literal("Ελληνικά ᚠᚢᚦ 😀"),
    Literal(""), Literal("x", datatype=EX.custom), URIRef("http://ex.org/é?q=1#f"),
]


def test_terms_round_trip(store):
    for i, o in enumerate(TERMS):
        store.add((EX.s, EX[f"p{i}"], o), G1)
    store.add((BNode("b1"), EX.p, EX.o), G1)
    got = triples_of(store, context=G1)
    assert got == {(EX.s, EX[f"p{i}"], o) for i, o in enumerate(TERMS)} | {
        (BNode("b1"), EX.p, EX.o)}
    assert type(next(iter(triples_of(store, (None, None, BNode("b1")))))[2]) is BNode
    lit = next(t for t in got if t[1] == EX.p3)[2]
    assert lit.language == "en" and lit == Literal("hello", lang="en")


def test_add_and_triples_every_pattern(store):
    data = {(EX[f"s{i % 3}"], EX[f"p{i % 2}"], Literal(i)) for i in range(12)}
    for t in data:
        store.add(t, G1)
    for s in (None, EX.s0):
        for p in (None, EX.p1):
            for o in (None, Literal(3), Literal(4)):
                want = {t for t in data if s in (None, t[0]) and p in (None, t[1])
                        and o in (None, t[2])}
                assert triples_of(store, (s, p, o), G1) == want
                assert triples_of(store, (s, p, o), G2) == set()


def test_triples_yield_contexts(store):
    g1, g2 = Graph(identifier=G1), Graph(identifier=G2)
    store.add((EX.a, EX.p, EX.b), g1)
    store.add((EX.a, EX.p, EX.b), g2)
    store.add((EX.a, EX.p, EX.c), g2)
    union = {t: {c.identifier for c in cs} for t, cs in store.triples((None, None, None))}
    assert union == {(EX.a, EX.p, EX.b): {G1, G2}, (EX.a, EX.p, EX.c): {G2}}
    [(t, cs)] = list(store.triples((None, None, EX.c), g2))
    assert list(cs) == [g2]                       # the context given, as given


def test_patterns_no_quad_can_match(store):
    store.add((EX.a, EX.p, Literal("x")), G1)
    assert triples_of(store, (Literal("x"), None, None)) == set()     # literal subject
    assert triples_of(store, (None, Literal("x"), None)) == set()     # literal predicate
    assert triples_of(store, (URIRef("relative"), None, None)) == set()
    assert triples_of(store, (None, None, None), URIRef("http://ex.org/none")) == set()


def test_bad_writes(store):
    with pytest.raises(TermError):
        store.add((Literal("x"), EX.p, EX.o), G1)
    with pytest.raises(TermError):
        store.add((EX.s, BNode(), EX.o), G1)
    with pytest.raises(TermError):
        store.add((URIRef("relative"), EX.p, EX.o), G1)
    with pytest.raises(TermError):
        store.addN([(EX.s, EX.p, EX.o, Graph(identifier=G1)), (Literal("x"), EX.p, EX.o, G1)])
    store.commit()
    assert len(store) == 0                        # nothing half-written


def test_formulae_not_supported(store):
    formula = QuotedGraph(store, EX.f)
    with pytest.raises(NotImplementedError, match="formulae"):
        store.add((EX.a, EX.p, EX.b), formula, quoted=True)
    with pytest.raises(NotImplementedError, match="formulae"):
        store.add((EX.a, EX.p, EX.b), formula)
    with pytest.raises(NotImplementedError, match="formulae"):
        store.add((EX.a, EX.p, formula), G1)
    with pytest.raises(NotImplementedError, match="formulae"):
        store.addN([(EX.a, EX.p, EX.b, formula)])
    assert not store.formula_aware


def test_addn_and_len(store):
    g1 = Graph(store, identifier=G1)
    store.addN([(EX.a, EX.p, EX.b, g1), (EX.a, EX.p, EX.c, g1),
                (EX.a, EX.p, EX.b, Graph(identifier=G2)), (EX.a, EX.q, EX.b, G2)])
    assert store.__len__(g1) == 2
    assert store.__len__(G2) == 2
    assert len(store) == 3                        # distinct triples of the union
    assert store.__len__(URIRef("http://ex.org/none")) == 0


def test_events_dispatched(store):
    seen = []
    store.dispatcher.subscribe(TripleAddedEvent, seen.append)
    store.add((EX.a, EX.p, EX.b), G1)
    store.addN([(EX.a, EX.p, EX.c, G1)])
    assert [e.triple for e in seen] == [(EX.a, EX.p, EX.b), (EX.a, EX.p, EX.c)]


def test_remove(store):
    for g in (G1, G2):
        for o in (EX.b, EX.c):
            store.add((EX.a, EX.p, o), g)
        store.add((EX.a, EX.q, Literal("x")), g)
    store.remove((None, None, EX.b), G1)           # one graph
    assert triples_of(store, context=G1) == {(EX.a, EX.p, EX.c), (EX.a, EX.q, Literal("x"))}
    assert store.__len__(G2) == 3
    store.remove((None, EX.q, None))               # all graphs
    assert store.__len__(G1) == 1 and store.__len__(G2) == 2
    store.remove((Literal("x"), None, None))       # cannot match: nothing happens
    store.remove((None, None, None), G2)
    assert len(store) == 1
    store.remove((None, None, None))
    assert len(store) == 0


def test_contexts_and_graph_registration(store):
    store.add((EX.a, EX.p, EX.b), G1)
    store.add((EX.a, EX.p, EX.c), G2)
    store.add_graph(Graph(identifier=EX.empty))
    assert {g.identifier for g in store.contexts()} == {G1, G2, EX.empty}
    assert all(isinstance(g, Graph) and g.store is store for g in store.contexts())
    assert [g.identifier for g in store.contexts((EX.a, EX.p, EX.c))] == [G2]
    assert list(store.contexts((EX.a, EX.p, EX.none))) == []
    assert list(store.contexts((Literal("x"), EX.p, EX.none))) == []
    store.remove_graph(Graph(identifier=G1))
    store.remove_graph(Graph(identifier=EX.empty))
    store.remove_graph(Graph(identifier=EX.unknown))
    assert {g.identifier for g in store.contexts()} == {G2}
    assert store.__len__(G1) == 0


def test_bnode_graph_names(store):
    g = Graph(store, identifier=BNode("gname"))
    g.add((EX.a, EX.p, EX.b))
    assert [c.identifier for c in store.contexts()] == [BNode("gname")]
    store.commit()
    with store.quadstore.read() as txn:
        assert list(txn.graphs()) == [f"<{BNODE_GRAPH_PREFIX}gname>"]


def test_plain_graph_over_store(path):
    g = Graph(store="Lakesuperior")
    g.open(path, create=True)
    g.add((EX.a, EX.p, Literal(1)))
    g.add((EX.a, EX.p, Literal(2)))
    assert len(g) == 2
    assert sorted(g.objects(EX.a, EX.p)) == [Literal(1), Literal(2)]
    assert list(g.query("SELECT (SUM(?v) AS ?t) WHERE { ?s ?p ?v }"))[0][0] == Literal(3)
    g.commit()
    g.close()


# --- transactions ----------------------------------------------------------------------------

def test_read_your_writes_and_rollback(store):
    qs = store.quadstore
    store.add((EX.a, EX.p, EX.b), G1)
    assert triples_of(store) == {(EX.a, EX.p, EX.b)}   # through the open write
    with qs.read() as txn:                             # others do not see it
        assert txn.count() == 0
    store.rollback()
    assert len(store) == 0
    store.rollback()                                   # nothing open: no-op
    store.commit()


def test_commit_persists(path):
    st = LmdbStore(path)
    st.add((EX.a, EX.p, EX.b), G1)
    st.remove((EX.a, EX.p, EX.b), G1)
    st.add((EX.a, EX.p, EX.c), G1)
    st.commit()
    st.add((EX.a, EX.p, EX.d), G1)
    st.close()                                         # rolls back the open write
    st = LmdbStore(path)
    assert triples_of(st) == {(EX.a, EX.p, EX.c)}
    st.add((EX.a, EX.p, EX.d), G1)
    st.close(commit_pending_transaction=True)
    st = LmdbStore(path)
    assert len(st) == 2
    st.close()


def test_writes_wait_for_commit_in_batches(store):
    qs = store.quadstore
    store.addN((EX[f"s{i}"], EX.p, Literal(i), G1) for i in range(60_000))
    store.add((EX.last, EX.p, EX.o), G1)
    assert store.__len__(G1) == 60_001
    store.commit()
    with qs.read() as txn:
        assert txn.count(g="<http://ex.org/g1>") == 60_001


def test_dataset_reopen_persistence(path):
    d = Dataset(store="Lakesuperior")
    d.open(path, create=True)
    d.add((EX.a, EX.p, Literal("default")))
    d.graph(G1).add((EX.a, EX.p, Literal("named")))
    d.commit()
    d.close()
    d = Dataset(store="Lakesuperior")
    assert d.open(path, create=False) == VALID_STORE
    assert set(d.quads()) == {(EX.a, EX.p, Literal("default"), DATASET_DEFAULT_GRAPH_ID),
                              (EX.a, EX.p, Literal("named"), G1)}
    with d.store.quadstore.read() as txn:
        assert set(txn.graphs()) == {DEFAULT_GRAPH, "<http://ex.org/g1>"}
    d.close()


# --- namespaces ---------------------------------------------------------------------------

def test_namespaces(store):
    store.bind("ex", URIRef("http://ex.org/"))
    assert store.namespace("ex") == URIRef("http://ex.org/")
    assert store.prefix(URIRef("http://ex.org/")) == "ex"
    store.bind("ex", URIRef("http://other.org/"), override=False)
    assert store.namespace("ex") == URIRef("http://ex.org/")
    store.bind("ex2", URIRef("http://ex.org/"), override=False)
    assert store.prefix("http://ex.org/") == "ex"
    store.bind("ex", URIRef("http://other.org/"))
    assert store.namespace("ex") == URIRef("http://other.org/")
    assert store.prefix("http://ex.org/") is None
    store.bind("", URIRef("http://default.org/"))
    assert store.namespace("") == URIRef("http://default.org/")
    assert store.prefix(URIRef("http://default.org/")) == ""
    assert dict(store.namespaces()) == {"ex": URIRef("http://other.org/"),
                                        "": URIRef("http://default.org/")}
    assert store.namespace("none") is None and store.prefix("http://none/") is None


def test_namespaces_persist_and_join_the_transaction(path):
    st = LmdbStore(path)
    st.bind("a", URIRef("http://a.org/"))            # no open write: commits at once
    st.add((EX.s, EX.p, EX.o), G1)
    st.bind("b", URIRef("http://b.org/"))            # joins the open write
    st.rollback()
    st.close()
    st = LmdbStore(path)
    assert dict(st.namespaces()) == {"a": URIRef("http://a.org/")}
    st.close()


def test_namespaces_on_read_only_store(path):
    LmdbStore(path).close()
    qs = QuadStore(path, readonly=True)
    try:
        st = LmdbStore(quadstore=qs)
        st.bind("ex", URIRef("http://ex.org/"))
        st.bind("ex", URIRef("http://ex2.org/"))
        assert st.namespace("ex") == URIRef("http://ex2.org/")
        assert st.prefix("http://ex2.org/") == "ex" and st.prefix("http://ex.org/") is None
        assert dict(st.namespaces()) == {"ex": URIRef("http://ex2.org/")}
        g = Dataset(store=st)
        assert g.namespace_manager.store is st
        assert ("owl", URIRef("http://www.w3.org/2002/07/owl#")) in set(st.namespaces())
    finally:
        qs.close()


def test_dataset_namespace_manager(ds):
    ds.bind("ex", EX)
    assert ("ex", URIRef(EX)) in set(ds.namespaces())
    out = ds.graph(G1)
    out.add((EX.a, EX.p, EX.b))
    assert "ex:a" in out.serialize(format="turtle")


# --- Dataset behaviour --------------------------------------------------------------------------

def test_dataset_union_and_default(path):
    d = Dataset(store="Lakesuperior")
    d.open(path, create=True)
    d.add((EX.a, EX.p, EX.b))
    d.add((EX.a, EX.p, EX.c, G1))
    assert set(d.triples((None, None, None))) == {(EX.a, EX.p, EX.b)}   # default graph
    u = Dataset(store=d.store, default_union=True)
    assert set(u.triples((None, None, None))) == {(EX.a, EX.p, EX.b), (EX.a, EX.p, EX.c)}
    assert len(u) == 2
    assert set(u.graph(G1).triples((None, None, None))) == {(EX.a, EX.p, EX.c)}
    # A dataset given as a context: its union, or its default graph.
    assert triples_of(d.store, context=u) == {(EX.a, EX.p, EX.b), (EX.a, EX.p, EX.c)}
    assert triples_of(d.store, context=d) == {(EX.a, EX.p, EX.b)}
    d.close()


def test_dataset_remove_graph_and_contexts(ds):
    ds.graph(G1).add((EX.a, EX.p, EX.b))
    ds.add((EX.a, EX.p, EX.c))
    assert {g.identifier for g in ds.graphs()} == {G1, DATASET_DEFAULT_GRAPH_ID}
    assert {g.identifier for g in ds.graphs((EX.a, EX.p, EX.b))} >= {G1}
    ds.remove_graph(G1)
    assert {g.identifier for g in ds.graphs()} == {DATASET_DEFAULT_GRAPH_ID}
    assert (EX.a, EX.p, EX.c) in ds


def test_parse_and_serialize(ds):
    from rdflib.compare import isomorphic
    data = """@prefix ex: <http://ex.org/> .
        ex:g1 { ex:a ex:p "x"@en , 1 , "two words" . _:b ex:q ex:a . }
        { ex:d ex:p ex:e , _:c . }"""
    ds.parse(data=data, format="trig")
    ds.commit()
    mem = Dataset()
    mem.parse(data=data, format="trig")
    assert isomorphic(ds.graph(G1), mem.graph(G1))
    assert isomorphic(ds.default_graph, mem.default_graph)
    back = Dataset()
    back.parse(data=ds.serialize(format="trig"), format="trig")
    assert isomorphic(back.graph(G1), mem.graph(G1)) and len(back.graph(G1)) == 4


# --- rdflib's test/test_dataset/test_dataset.py, over this store ---------------------------

@pytest.fixture
def get_dataset(path):
    dataset = Dataset(store="Lakesuperior")
    dataset.open(path, create=True)
    yield "Lakesuperior", dataset
    dataset.close()
    dataset.destroy(path)
    assert not os.path.exists(path)


def test_graph_aware(get_dataset):
    store, dataset = get_dataset
    g1 = dataset.graph(CONTEXT1)
    assert set(x.identifier for x in dataset.contexts()) == {CONTEXT1, DATASET_DEFAULT_GRAPH_ID}
    assert len(g1) == 0
    g1.add((TAREK, LIKES, PIZZA))
    assert set(x.identifier for x in dataset.contexts()) == {CONTEXT1, DATASET_DEFAULT_GRAPH_ID}
    assert len(g1) == 1
    g1.remove((TAREK, LIKES, PIZZA))
    assert len(g1) == 0
    assert set(x.identifier for x in dataset.contexts()) == {CONTEXT1, DATASET_DEFAULT_GRAPH_ID}
    dataset.remove_graph(CONTEXT1)
    assert set(x.identifier for x in dataset.contexts()) == {DATASET_DEFAULT_GRAPH_ID}


def test_default_graph(get_dataset):
    store, dataset = get_dataset
    dataset.add((TAREK, LIKES, PIZZA))
    assert len(dataset) == 1
    assert list(dataset.contexts()) == [dataset.default_context]
    dataset.remove_graph(DATASET_DEFAULT_GRAPH_ID)
    assert len(dataset) == 0
    assert set(dataset.contexts()) == {dataset.default_context}


def test_not_union(get_dataset):
    store, dataset = get_dataset
    subgraph1 = dataset.graph(CONTEXT1)
    subgraph1.add((TAREK, LIKES, PIZZA))
    assert list(dataset.objects(TAREK, None)) == []
    assert list(subgraph1.objects(TAREK, None)) == [PIZZA]


def test_iter(get_dataset):
    store, d = get_dataset
    uri_a, uri_b = URIRef("https://example.com/a"), URIRef("https://example.com/b")
    uri_c, uri_d = URIRef("https://example.com/c"), URIRef("https://example.com/d")
    d.graph(URIRef("https://example.com/subgraph1"))
    d.add((uri_a, uri_b, uri_c, URIRef("https://example.com/subgraph1")))
    d.add((uri_a, uri_b, uri_c, URIRef("https://example.com/subgraph1")))
    d.graph(URIRef("https://example.com/g2"))
    d.add((uri_a, uri_b, uri_c, URIRef("https://example.com/g2")))
    d.add((uri_a, uri_b, uri_d, URIRef("https://example.com/subgraph1")))
    i_trad = sum(1 for _ in d.quads((None, None, None)))
    i_new = sum(1 for _ in d)
    assert i_new == i_trad == 3


def test_subgraph_without_identifier(get_dataset):
    store, dataset = get_dataset
    genid_prefix = URIRef("https://rdflib.github.io/.well-known/genid/rdflib/")
    assert "genid" not in dict(dataset.namespace_manager.namespaces())
    subgraph = dataset.graph()
    subgraph.add((EX.subject, EX.predicate, EX.object))
    assert dict(dataset.namespace_manager.namespaces())["genid"] == genid_prefix
    assert f"{subgraph.identifier}".startswith(genid_prefix)
    assert len(dataset.graph(subgraph.identifier)) == 1


# -- SPARQL through the adapter's query() / update() (rdf.sparql_parser's lock) ---

SPARQL_CASES = (
    "SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?s ?o",
    "SELECT ?g ?s WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g ?s",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    "ASK { ?s ?p 2 }",
)


@pytest.mark.parametrize("kind", ["union", "dataset", "graph"])
@pytest.mark.parametrize("query", SPARQL_CASES)
def test_query_answers_as_rdflib_does(path, kind, query):
    def build(store, where=None):
        if kind == "graph":
            g = Graph(store=store, identifier=G1)
            if where:
                g.open(where, create=True)
            g.add((EX.a, EX.p, Literal(1)))
            g.add((EX.b, EX.p, Literal(2)))
            return g
        d = Dataset(store=store, default_union=kind == "union")
        if where:
            d.open(where, create=True)
        d.add((EX.a, EX.p, Literal(1)))               # the default graph
        d.graph(G1).add((EX.b, EX.p, Literal(2)))
        d.graph(G2).add((EX.c, EX.p, Literal(3)))
        return d

    ours, mem = build("Lakesuperior", path), build("Memory")
    if kind == "graph" and "GRAPH" in query:
        with pytest.raises(Exception, match="graph"):
            ours.query(query)
        return
    got, want = ours.query(query), mem.query(query)
    if got.type == "ASK":
        assert got.askAnswer == want.askAnswer
    else:
        assert list(got) == list(want)
    ours.close()


def test_update_and_prepared_query_through_the_adapter(ds):
    ds.update("INSERT DATA { GRAPH <http://ex.org/g1> { <urn:a> <urn:p> 1 } }")
    ds.update(prepareUpdate("INSERT DATA { GRAPH <http://ex.org/g2> { <urn:b> <urn:p> 2 } }"))
    ds.commit()
    assert len(ds.graph(G1)) == 1 and len(ds.graph(G2)) == 1
    prepared = prepareQuery("SELECT ?g WHERE { GRAPH ?g { ?s <urn:p> ?o } } ORDER BY ?g")
    assert [r[0] for r in ds.query(prepared)] == [G1, G2]
    with pytest.raises(Exception, match="Expected"):
        ds.query("SELECT ?s WHERE {")
    with pytest.raises(Exception, match="Expected"):
        ds.update(b"INSERT DATA { <urn:a> }")
