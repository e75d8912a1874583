"""SPARQL over the rdflib adapter (``LmdbStore``) compared with rdflib's in-memory
Dataset, with rdflib's evaluator alone and with the native fast path
(``lakesuperior.query.fast_path``, joins in ``lakesuperior.query.joins``)."""
from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal

import pytest
import rdflib
from rdflib import RDF, XSD, BNode, Dataset, Graph, Literal, Namespace
from rdflib.plugins.sparql import CUSTOM_EVALS
from rdflib.store import Store

from lakesuperior.query import disable_sparql_fast_path, enable_sparql_fast_path, fast_path, joins
from lakesuperior.store.rdflib_store import LmdbStore

# rdflib 7.6 warns about its own use of these inside Dataset and the SPARQL engine.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:Dataset.default_context is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Dataset.contexts is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning"),
]

EX = Namespace("http://ex.org/")


@pytest.fixture(autouse=True, scope="module")
def _plugin():
    rdflib.plugin.register("Lakesuperior", Store, "lakesuperior.store.rdflib_store",
                           "LmdbStore")


@pytest.fixture(params=[False, True], ids=["rdflib-eval", "fast-path"])
def fast(request):
    """Run the test with rdflib's evaluator alone, then with the native fast path."""
    if request.param:
        enable_sparql_fast_path()
    try:
        yield request.param
    finally:
        disable_sparql_fast_path()


NAMED = [EX.g0, EX.g1, EX.g2, EX.g3]
WORDS = ["alpha", "beta", "gamma", "delta", "apple", "avocado", "Zeta", "ab\"c"]


def random_quads(seed: int, n: int = 400) -> list[tuple]:
    rng = random.Random(seed)
    res = [EX[f"r{i}"] for i in range(25)] + [BNode(f"b{i}") for i in range(4)]
    classes = [EX.C0, EX.C1, EX.C2]
    preds = [EX.p0, EX.p1, EX.p2]
    lits = ([Literal(w) for w in WORDS] + [Literal(w, lang=rng.choice(["en", "fr", "en-gb"]))
                                            for w in WORDS]
            + [Literal(i) for i in range(-3, 12)] + [Literal(Decimal("2.50")), Literal(7.5)]
            + [Literal(f"2024-01-0{d}", datatype=XSD.date) for d in range(1, 4)])
    out = []
    for _ in range(n):
        s = rng.choice(res)
        kind = rng.random()
        if kind < 0.2:
            p, o = RDF.type, rng.choice(classes)
        elif kind < 0.6:
            p, o = rng.choice(preds), rng.choice(res)
        else:
            p, o = rng.choice([EX.label, EX.value, EX.p0]), rng.choice(lits)
        g = rng.choice(NAMED + [None, None])
        out.append((s, p, o, g))
    out += [(s, p, o, EX.g3) for s, p, o, g in out[:40]]   # triples in two graphs
    return out


def load(dataset: Dataset, quads: list[tuple]) -> None:
    for s, p, o, g in quads:
        dataset.add((s, p, o) if g is None else (s, p, o, g))


PREFIX = "PREFIX ex: <http://ex.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
QUERIES = [
    # basic graph patterns of 1-4 patterns
    "SELECT * WHERE { ?s ?p ?o }",
    "SELECT ?s ?o WHERE { ?s ex:p0 ?o }",
    "SELECT * WHERE { ?s a ex:C0 }",
    "SELECT * WHERE { ex:r1 ?p ?o }",
    "SELECT * WHERE { ?s ?p ex:r2 }",
    "SELECT * WHERE { ?s ?p ?s }",
    "SELECT * WHERE { ?s ex:p0 ?o . ?o ex:p1 ?z }",
    "SELECT * WHERE { ?s ex:p0 ?o . ?o ex:p1 ?z . ?z ex:p2 ?w }",
    "SELECT * WHERE { ?s a ex:C0 . ?s ex:p0 ?o . ?s ex:label ?l . ?o a ?t }",
    "SELECT * WHERE { ?s a ex:C1 . ?x a ex:C2 }",
    "SELECT * WHERE { ?s ex:label ?l . ?l ?p ?o }",
    "SELECT * WHERE { ?s ex:p0 _:x . _:x ex:p1 ?z }",
    "SELECT * WHERE { ?s ?p ?o . ?o ?p ?z }",
    "SELECT ?s WHERE { ?s ex:value 3 }",
    'SELECT ?s WHERE { ?s ex:label "alpha"@en }',
    # OPTIONAL, UNION, MINUS, EXISTS, VALUES, BIND
    "SELECT * WHERE { ?s a ex:C0 OPTIONAL { ?s ex:label ?l } }",
    "SELECT * WHERE { ?s a ex:C0 OPTIONAL { ?s ex:p0 ?o . ?o ex:label ?l } }",
    "SELECT * WHERE { { ?s a ex:C0 } UNION { ?s ex:p1 ?o } }",
    "SELECT * WHERE { ?s a ex:C1 MINUS { ?s ex:p0 ?o } }",
    "SELECT * WHERE { ?s a ex:C1 FILTER NOT EXISTS { ?s ex:label ?l } }",
    "SELECT * WHERE { VALUES ?s { ex:r1 ex:r2 ex:r3 } ?s ?p ?o }",
    "SELECT * WHERE { ?s ex:value ?v BIND (?v * 2 AS ?w) ?x ex:value ?w }",
    # FILTER
    'SELECT * WHERE { ?s ex:label ?l FILTER regex(str(?l), "^a") }',
    'SELECT * WHERE { ?s ?p ?l FILTER (lang(?l) = "en") }',
    'SELECT * WHERE { ?s ?p ?l FILTER langMatches(lang(?l), "en") }',
    "SELECT * WHERE { ?s ?p ?v FILTER (datatype(?v) = xsd:integer) }",
    "SELECT * WHERE { ?s ex:value ?v FILTER (?v > 5) }",
    "SELECT * WHERE { ?s ex:value ?v FILTER (?v >= 2.5 && ?v < 8) }",
    "SELECT * WHERE { ?s ?p ?o FILTER isBlank(?s) }",
    # GRAPH
    "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }",
    "SELECT * WHERE { GRAPH ?g { ?s ex:p0 ?o . ?o ex:p1 ?z } }",
    "SELECT * WHERE { GRAPH ex:g1 { ?s ?p ?o } }",
    "SELECT * WHERE { GRAPH ?g { ?s a ex:C0 } GRAPH ?h { ?s ex:label ?l } }",
    "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
    "SELECT * WHERE { ?s a ex:C0 GRAPH ?g { ?s ex:p0 ?o } }",
    "SELECT * WHERE { GRAPH ?g { ?s ?p ?o FILTER (?p = ex:label) } }",
    "SELECT DISTINCT ?g WHERE { GRAPH ?g { } }",
    # aggregates
    "SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o }",
    "SELECT (COUNT(?s) AS ?c) WHERE { ?s a ex:C0 }",
    "SELECT (COUNT(DISTINCT ?s) AS ?c) (COUNT(?o) AS ?d) WHERE { ?s ex:p0 ?o }",
    "SELECT (COUNT(DISTINCT *) AS ?c) WHERE { ?s ex:p0 ?o . ?o ?q ?z }",
    "SELECT (COUNT(*) AS ?c) WHERE { ?s a ex:Nothing }",
    "SELECT (COUNT(*) AS ?c) WHERE { ?s ex:value ?v FILTER (?v > 3) }",
    "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s HAVING (COUNT(?o) > 3)",
    "SELECT ?p (SUM(?v) AS ?t) (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) WHERE "
    "{ ?s ?p ?v FILTER isNumeric(?v) } GROUP BY ?p",
    "SELECT ?t (AVG(?v) AS ?a) WHERE { ?s a ?t . ?s ex:value ?v FILTER isNumeric(?v) } "
    "GROUP BY ?t",
    # modifiers
    "SELECT DISTINCT ?s WHERE { ?s ?p ?o }",
    "SELECT DISTINCT ?p ?o WHERE { ?s ?p ?o }",
    # property paths
    "SELECT * WHERE { ?s ex:p0/ex:p1 ?o }",
    "SELECT * WHERE { ?s ex:p0+ ?o }",
    "SELECT * WHERE { ex:r1 ex:p0* ?o }",
    "SELECT * WHERE { ?s ^ex:p0 ?o }",
    "SELECT * WHERE { ?s ex:p0|ex:p1 ?o }",
    "SELECT * WHERE { ?s a ex:C0 . ?s (ex:p0|ex:p2)/ex:label ?l }",
    "SELECT * WHERE { ?s !(ex:p0|rdf:type) ?o }",
    "SELECT * WHERE { ?o a ex:C1 . ?s ex:p0+ ?o . ?s ex:label ?l }",
    "SELECT * WHERE { GRAPH ?g { ?s a ?t . ?s ex:p0+ ?o } }",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s a ex:C0 . ?s ex:p0* ?o }",
]
ORDERED = [
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o LIMIT 15 OFFSET 5",
    "SELECT DISTINCT ?s WHERE { ?s ex:p0 ?o } ORDER BY DESC(?s) LIMIT 5",
    "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s ORDER BY DESC(?n) ?s LIMIT 4",
    "SELECT ?v WHERE { ?s ex:value ?v FILTER isNumeric(?v) } ORDER BY ?v ?s",
]
ASKS = [
    "ASK { ?s a ex:C0 }",
    "ASK { ?s a ex:Nothing }",
    "ASK { ?s ex:p0 ?o . ?o ex:p1 ?z }",
    "ASK { GRAPH ex:g2 { ?s ?p ?o } }",
]
CONSTRUCTS = [
    "CONSTRUCT { ?s ex:linked ?z } WHERE { ?s ex:p0 ?o . ?o ex:p1 ?z }",
    "CONSTRUCT WHERE { ?s a ex:C1 }",
    "CONSTRUCT { ?s ex:in ?g } WHERE { GRAPH ?g { ?s a ?t } }",
]


class Reference(Dataset):
    """rdflib's in-memory Dataset that keeps its answers: it never changes, and each
    query is asked of it twice (once per evaluator of this store, ``fast``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.answers: dict[tuple[str, str], rdflib.query.Result] = {}

    def query(self, query, **kwargs):
        key = (str(query), repr(sorted(kwargs.items(), key=repr)))
        if key not in self.answers:
            result = super().query(query, **kwargs)
            if result.type == "SELECT":
                _ = result.bindings      # read once: the answer can be read again
            self.answers[key] = result
        return self.answers[key]


@pytest.fixture(scope="module", params=[False, True], ids=["default-graph", "default-union"])
def pair(request, tmp_path_factory):
    """(this store, rdflib Memory) Datasets holding the same random quads (queries only)."""
    quads = random_quads(seed=7)
    ours = Dataset(store=LmdbStore(str(tmp_path_factory.mktemp("pair")), sync=False),
                   default_union=request.param)
    load(ours, quads[:200])
    ours.commit()
    load(ours, quads[200:])          # half committed, half in the open write
    mem = Reference(default_union=request.param)
    load(mem, quads)
    yield ours, mem
    ours.close()


def rows(result) -> Counter:
    return Counter(tuple(row) for row in result)


@pytest.mark.parametrize("query", QUERIES)
def test_sparql_select(pair, fast, query):
    ours, mem = pair
    got, want = rows(ours.query(PREFIX + query)), rows(mem.query(PREFIX + query))
    assert got == want


def test_sparql_reduced(pair, fast):
    ours, mem = pair
    q = PREFIX + "SELECT REDUCED ?t WHERE { ?s a ?t }"
    assert set(rows(ours.query(q))) == set(rows(mem.query(q)))


@pytest.mark.parametrize("query", ORDERED)
def test_sparql_ordered(pair, fast, query):
    ours, mem = pair
    assert list(ours.query(PREFIX + query)) == list(mem.query(PREFIX + query))


@pytest.mark.parametrize("query", ASKS)
def test_sparql_ask(pair, fast, query):
    ours, mem = pair
    assert ours.query(PREFIX + query).askAnswer == mem.query(PREFIX + query).askAnswer


@pytest.mark.parametrize("query", CONSTRUCTS)
def test_sparql_construct(pair, fast, query):
    ours, mem = pair
    got = set(ours.query(PREFIX + query).graph)
    assert got == set(mem.query(PREFIX + query).graph) and got


def test_sparql_init_bindings(pair, fast):
    ours, mem = pair
    q = PREFIX + "SELECT ?o ?z WHERE { ?s ex:p0 ?o . OPTIONAL { ?o ex:p1 ?z } }"
    for s in (EX.r1, EX.r2, BNode("b0")):
        assert rows(ours.query(q, initBindings={"s": s})) == rows(
            mem.query(q, initBindings={"s": s}))


@pytest.fixture(scope="module")
def references() -> dict[int, Reference]:
    """Seed -> the ``Reference`` of ``random_quads(seed, n=600)`` (union default
    graph), made once for both evaluators."""
    return {}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sparql_random_data(tmp_path, fast, seed, references):
    """Other random data sets, union default graph, the joins the fast path chooses."""
    quads = random_quads(seed, n=600)
    ours = Dataset(store="Lakesuperior", default_union=True)
    ours.open(str(tmp_path / "store"), create=True)
    load(ours, quads)
    ours.commit()
    if seed not in references:
        references[seed] = Reference(default_union=True)
        load(references[seed], quads)
    mem = references[seed]
    try:
        for query in QUERIES[:15] + QUERIES[29:45]:
            assert rows(ours.query(PREFIX + query)) == rows(mem.query(PREFIX + query)), query
    finally:
        ours.close()


def test_fast_path_join_strategies(tmp_path, monkeypatch):
    """Hash joins (many keys) and nested loops (few) give the same answers."""
    ours = Dataset(store="Lakesuperior", default_union=True)
    ours.open(str(tmp_path / "store"), create=True)
    mem = Dataset(default_union=True)
    quads = [(EX[f"s{i}"], RDF.type, EX.C, EX[f"g{i % 7}"]) for i in range(300)]
    quads += [(EX[f"s{i}"], EX.p, Literal(i % 13), EX[f"g{i % 5}"]) for i in range(0, 300, 2)]
    quads += [(EX[f"s{i}"], EX.p, Literal(i % 13), EX.g0) for i in range(0, 300, 4)]
    for d in (ours, mem):
        load(d, quads)
    ours.commit()
    queries = ["SELECT * WHERE { ?s a ex:C . ?s ex:p ?v }",
               "SELECT * WHERE { ?s ex:p ?v . ?t ex:p ?v . ?t a ex:C }",
               "SELECT * WHERE { GRAPH ?g { ?s a ex:C . ?s ex:p ?v } }",
               "SELECT (COUNT(*) AS ?n) WHERE { ?s a ex:C . ?s ex:p ?v }"]
    enable_sparql_fast_path()
    try:
        for limit in (1000, 3):
            monkeypatch.setattr(joins, "_NESTED_LOOP_MAX", limit)
            for q in queries:
                assert rows(ours.query(PREFIX + q)) == rows(mem.query(PREFIX + q)), (limit, q)
    finally:
        disable_sparql_fast_path()
        ours.close()


def test_fast_path_is_taken(pair, monkeypatch):
    """With the fast path, these queries never reach rdflib's per-pattern triples()."""
    ours, mem = pair

    def refuse(*args, **kwargs):
        raise AssertionError("triples() called")

    queries = ["SELECT * WHERE { ?s ex:p0 ?o . ?o ex:p1 ?z }",
               "SELECT * WHERE { GRAPH ?g { ?s ex:p0 ?o . ?o ex:p1 ?z } }",
               "SELECT (COUNT(DISTINCT ?s) AS ?c) WHERE { ?s a ?t . ?s ex:p0 ?o }",
               "SELECT * WHERE { ?s a ex:C0 OPTIONAL { ?s ex:label ?l } FILTER (?s != ex:r1) }"]
    want = [rows(mem.query(PREFIX + q)) for q in queries]
    enable_sparql_fast_path()
    monkeypatch.setattr(LmdbStore, "triples", refuse)
    try:
        assert [rows(ours.query(PREFIX + q)) for q in queries] == want
    finally:
        disable_sparql_fast_path()
    with pytest.raises(AssertionError, match="triples"):
        _ = ours.query(PREFIX + queries[0]).bindings


def test_fast_path_streams(pair, monkeypatch):
    """A consumer that stops early (LIMIT, ASK) stops the joins early."""
    ours, mem = pair
    calls = []
    real = joins._Stage.match

    def counting(self, key, table):
        calls.append(key)
        return real(self, key, table)

    monkeypatch.setattr(joins._Stage, "match", counting)
    monkeypatch.setattr(joins, "_CHUNK", 1)
    q = PREFIX + "SELECT * WHERE { ?s ?p ?o . ?o ?q ?z . ?z ?r ?w }"
    enable_sparql_fast_path()
    try:
        assert len(ours.query(q + " LIMIT 2")) == 2
        few = len(calls)
        assert rows(ours.query(q)) == rows(mem.query(q))
        assert few < len(calls) / 10
        assert ours.query(PREFIX + "ASK { ?s ?p ?o . ?o ?q ?z }").askAnswer
    finally:
        disable_sparql_fast_path()


def test_fast_path_leaves_other_stores_alone(fast):
    mem = Dataset()
    mem.add((EX.a, EX.p, EX.b))
    assert list(mem.query("SELECT ?o WHERE { ?s ?p ?o }")) == [(EX.b,)]
    g = Graph()
    g.add((EX.a, EX.p, EX.b))
    assert list(g.query("SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o }")) == [(Literal(1),)]


def test_fast_path_counts_one_pattern_with_the_store(tmp_path, monkeypatch):
    """COUNT over one pattern is one ``count(..., distinct=True)`` of the store."""
    ds = Dataset(store=LmdbStore(str(tmp_path / "s"), sync=False), default_union=True)
    mem = Dataset(default_union=True)
    for d in (ds, mem):
        for i in range(30):
            d.graph(EX[f"g{i % 4}"]).add((EX[f"s{i}"], RDF.type, EX.C))
            d.graph(EX[f"g{(i + 1) % 4}"]).add((EX[f"s{i}"], RDF.type, EX.C))  # twice
            d.graph(EX.g0).add((EX[f"s{i}"], EX.p, Literal(i % 7)))
    ds.commit()
    ds.store.gc()
    calls = []
    monkeypatch.setattr(fast_path, "solve", lambda *a: calls.append(a) or pytest.fail())
    queries = [
        "SELECT (COUNT(?s) AS ?c) WHERE { ?s a ex:C }",
        "SELECT (COUNT(*) AS ?c) (COUNT(DISTINCT ?s) AS ?d) WHERE { ?s a ex:C }",
        "SELECT (COUNT(*) AS ?c) WHERE { ?s ?p ?o }",
        "SELECT (COUNT(?o) AS ?c) WHERE { ?s ex:p ?o }",
    ]
    enable_sparql_fast_path()
    try:
        for q in queries:
            want = rows(mem.query(PREFIX + q))
            assert rows(ds.query(PREFIX + q)) == want, q
        assert not calls
        # not one distinct count: joined as usual
        monkeypatch.undo()
        q = PREFIX + "SELECT (COUNT(DISTINCT ?o) AS ?c) WHERE { ?s ex:p ?o }"
        assert rows(ds.query(q)) == rows(mem.query(q)) == Counter({(Literal(7),): 1})
    finally:
        disable_sparql_fast_path()
        ds.close()


def test_fast_path_checkpoint_stops_a_query(pair):
    """A store whose ``checkpoint()`` raises stops the fast path between batches."""
    ours, _ = pair
    seen = []

    class Stop(Exception):
        pass

    def checkpoint():
        seen.append(1)
        if len(seen) > 3:
            raise Stop

    ours.store.checkpoint = checkpoint
    enable_sparql_fast_path()
    try:
        with pytest.raises(Stop):
            _ = ours.query(
                PREFIX + "SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f }").bindings
        seen.clear()
        with pytest.raises(Stop):
            list(ours.query(PREFIX + "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }"))
    finally:
        del ours.store.checkpoint
        disable_sparql_fast_path()


def test_fast_path_cross_product_in_bounded_pieces(pair, monkeypatch):
    """A join with nothing shared never builds one huge list of rows."""
    ours, mem = pair
    sizes = []
    real = joins._Stage.__call__

    def measured(self, rows):
        out = real(self, rows)
        sizes.append(len(out))
        return out

    monkeypatch.setattr(joins._Stage, "__call__", measured)
    monkeypatch.setattr(joins, "_CHUNK", 500)
    q = PREFIX + "SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f }"
    n = len(set(mem.triples((None, None, None))))
    enable_sparql_fast_path()
    try:
        # every pair of the default graph's triples (rdflib's own count of the
        # n * n rows takes seconds)
        assert [int(row[0]) for row in ours.query(q)] == [n * n]
    finally:
        disable_sparql_fast_path()
    assert max(sizes[1:]) <= max(n * 64, 500 + n)


def test_switching_the_fast_path_never_resizes_custom_evals():
    """rdflib iterates CUSTOM_EVALS in every evaluation, in every thread: a key
    added or removed under one fails it (dictionary changed size)."""
    fast_path.register_view_eval()
    size = len(CUSTOM_EVALS)
    for _ in range(2):
        enable_sparql_fast_path()
        assert len(CUSTOM_EVALS) == size
        assert CUSTOM_EVALS[fast_path._STORE_KEY] is fast_path.native_eval
        disable_sparql_fast_path()
        assert len(CUSTOM_EVALS) == size
        with pytest.raises(NotImplementedError):
            CUSTOM_EVALS[fast_path._STORE_KEY](None, None)
