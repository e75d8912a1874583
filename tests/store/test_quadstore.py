"""The quad store: patterns, transactions, processes, growth, format, bad input."""
import itertools
import os
import random
import subprocess
import sys
import textwrap

import lmdb
import pytest

from lakesuperior.exceptions import StoreError, StoreFormatError, TermError
from lakesuperior.store.quadstore import FORMAT_VERSION, QuadStore
from lakesuperior.store.terms import literal

G1, G2, G3 = "<http://ex.org/g1>", "<http://ex.org/g2>", "<http://ex.org/g3>"
P = "<http://ex.org/p>"
CONTAINS = "<http://www.w3.org/ns/ldp#contains>"

TRICKY = [
    literal("plain"), literal("x", lang="en"), literal("1", datatype="http://www.w3.org/2001/XMLSchema#integer"),
    literal('quotes " and \\ backslash'), literal("new\nline\r\n\ttab"),
    literal("Ελληνικά ᚠᚢᚦ émoji 😀 ∑"), literal("x" * 200_000), literal(""),
    literal("\x00\x01\x7f control"), "_:b1", "<http://ex.org/é?q=1#frag>",
]


def random_quads(rng, n, graphs=5, iris=30, literals=30):
    iri = [f"<http://ex.org/r{i}>" for i in range(iris)]
    lit = [literal(f"v{i}", lang="en" if i % 3 == 0 else None) for i in range(literals)]
    bn = [f"_:b{i}" for i in range(5)]
    preds = [f"<http://ex.org/p{i}>" for i in range(6)]
    gs = [f"<http://ex.org/g{i}>" for i in range(graphs)]
    out = set()
    while len(out) < n:
        s = rng.choice(iri + bn)
        o = rng.choice(iri + lit + bn)
        out.add((s, rng.choice(preds), o, rng.choice(gs)))
    return sorted(out)


def brute(quads, s, p, o, g):
    return {q for q in quads
            if all(v is None or v == q[i] for i, v in enumerate((s, p, o, g)))}


def all_patterns(quads, rng, n=6):
    """Patterns for every bound/unbound combination, from existing and missing terms."""
    for mask in itertools.product((False, True), repeat=4):
        for q in rng.sample(quads, n) + [("<http://ex.org/none>", "<http://ex.org/none>",
                                          '"none"', "<http://ex.org/none>")]:
            yield tuple(v if bound else None for v, bound in zip(q, mask, strict=False))


def test_round_trip_tricky_terms(store):
    triples = [(G1, P, t) for t in TRICKY] + [("_:b1", P, G2), (G1, "<http://ex.org/é>", G3)]
    with store.write() as txn:
        txn.add_graph(G1, triples)
    with store.read() as txn:
        assert sorted(txn.triples(G1)) == sorted(triples)
    # The one-by-one path keeps the same terms.
    with store.write() as txn:
        assert txn.add([(G2, P, t, G2) for t in TRICKY]) == len(TRICKY)
    with store.read() as txn:
        assert sorted(t[2] for t in txn.triples(G2)) == sorted(TRICKY)


@pytest.mark.parametrize("hash_bits", [62, 7])
def test_every_pattern_matches_brute_force(tmp_path, hash_bits):
    """Random data; with hash_bits=7 nearly every term collides with another."""
    rng = random.Random(hash_bits)
    st = QuadStore(str(tmp_path / "s"), hash_bits=hash_bits)
    quads = random_quads(rng, 400)
    by_graph = {}
    for q in quads[:250]:
        by_graph.setdefault(q[3], []).append(q[:3])
    with st.write() as txn:
        for g, triples in by_graph.items():
            txn.add_graph(g, triples)
    with st.write() as txn:
        txn.add(quads[250:])
    # Remove some, through several patterns.
    removed = set()
    with st.write() as txn:
        for q in rng.sample(quads, 20):
            removed |= brute(quads, q[0], None, q[2], None)
            txn.remove(q[0], None, q[2], None)
        g_q = quads[5]
        removed |= brute(quads, None, g_q[1], None, g_q[3])
        txn.remove(None, g_q[1], None, g_q[3])
    live = [q for q in quads if q not in removed]
    for pattern in all_patterns(live, rng):
        with st.read() as txn:
            got = list(txn.match(*pattern))
            assert len(got) == len(set(got)), pattern
            assert set(got) == brute(live, *pattern), pattern
            assert txn.count(*pattern) == len(got), pattern
    with st.read() as txn:
        assert set(txn.graphs()) == {q[3] for q in live}
        assert txn.graph_count() == len({q[3] for q in live})
    st.close()


def test_forced_collision_is_resolved_deterministically(tmp_path):
    """With 6-bit hashes, 42 IRIs and 40 literals must share ids; all stay distinct."""
    triples = [(f"<http://ex.org/s{i}>", P, literal(f"value {i}")) for i in range(40)]
    for run in range(2):
        st = QuadStore(str(tmp_path / f"s{run}"), hash_bits=6)
        with st.write() as txn:
            txn.add_graph(G1, triples)
        with st.read() as txn:
            assert sorted(txn.triples(G1)) == sorted(triples)
            for s, p, o in triples:
                assert list(txn.match(s, None, None, G1)) == [(s, p, o, G1)]
                assert list(txn.match(None, None, o, None)) == [(s, p, o, G1)]
        st.close()
    with lmdb.open(str(tmp_path / "s0"), max_dbs=16, readonly=True, lock=False) as env:
        rec = env.open_db(b"rec", create=False)
        collide = env.open_db(b"collide", create=False, dupsort=True)
        with env.begin() as txn:
            first = {k: v for k, v in txn.cursor(db=rec) if len(k) == 9}   # the IRIs
            assert len(first) >= 41
            assert txn.stat(collide)["entries"] > 0       # collisions were recorded
    with lmdb.open(str(tmp_path / "s1"), max_dbs=16, readonly=True, lock=False) as env:
        rec = env.open_db(b"rec", create=False)
        with env.begin() as txn:
            assert {k: v for k, v in txn.cursor(db=rec) if len(k) == 9} == first


def test_full_id_space_is_a_clear_error(tmp_path):
    st = QuadStore(str(tmp_path / "s"), hash_bits=4)      # 16 ids per kind
    with pytest.raises(StoreError, match="id space is full"):
        with st.write() as txn:
            txn.add_graph(G1, [(f"<http://ex.org/s{i}>", P, G2) for i in range(20)])
    with st.read() as txn:
        assert not txn.has_graph(G1)
    st.close()


def test_containment_count_and_list(store):
    children = [f"<http://ex.org/g1/c{i}>" for i in range(3000)]
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("parent"))])
    for i in range(0, 3000, 500):
        with store.write() as txn:
            assert txn.add([(G1, CONTAINS, c, G1) for c in children[i:i + 500]]) == 500
    with store.write() as txn:
        assert txn.add([(G1, CONTAINS, children[0], G1)]) == 0   # duplicate
    with store.read() as txn:
        assert txn.count(G1, CONTAINS, None, G1) == 3000
        assert {q[2] for q in txn.match(G1, CONTAINS, None, G1)} == set(children)
        assert len(txn.triples(G1)) == 3001
    with store.write() as txn:
        assert txn.remove(G1, CONTAINS, children[7], G1) == 1
    with store.read() as txn:
        assert txn.count(G1, CONTAINS, None, G1) == 2999
        assert txn.count(None, CONTAINS, None, None) == 2999


def test_add_graph_replaces_and_remove_graph(store):
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("a")), (G1, P, literal("b"))])
        txn.add([(G1, CONTAINS, G2, G1)])
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("c"))])
    with store.read() as txn:
        assert txn.triples(G1) == [(G1, P, literal("c"))]
        assert list(txn.match(None, None, literal("a"), None)) == []
        assert list(txn.match(None, P, None, None)) == [(G1, P, literal("c"), G1)]
    with store.write() as txn:
        assert txn.remove_graph(G1) == 1
        assert txn.remove_graph(G1) == 0
        assert txn.remove_graph("<http://ex.org/never>") == 0
    with store.read() as txn:
        assert txn.triples(G1) == [] and not txn.has_graph(G1)
        assert list(txn.graphs()) == []
        assert list(txn.match()) == []


def test_write_reads_its_own_writes_over_the_union(store):
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("a"))])
    with store.write() as txn:
        txn.add_graph(G2, [(G2, P, literal("a"))])
        txn.remove(G1, P, None, G1)
        assert set(txn.match(None, None, literal("a"), None)) == {(G2, P, literal("a"), G2)}
        assert txn.count(None, P, None, None) == 1


def test_abort_leaves_nothing(store):
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("kept"))])
    with pytest.raises(RuntimeError):
        with store.write() as txn:
            txn.add_graph(G2, [(G2, P, literal("lost"))])
            txn.add([(G1, CONTAINS, G2, G1)])
            txn.bind("lost", "http://lost/")
            txn.remove_graph(G1)
            raise RuntimeError("boom")
    with store.read() as txn:
        assert txn.triples(G1) == [(G1, P, literal("kept"))]
        assert txn.triples(G2) == []
        assert txn.namespaces() == {}
        assert list(txn.match(None, None, literal("lost"), None)) == []
    # A failing add in the middle aborts the whole transaction too.
    with pytest.raises(TermError):
        with store.write() as txn:
            txn.add_graph(G3, [(G3, P, literal("x"))])
            txn.add([(G3, P, "not a term", G3)])
    with store.read() as txn:
        assert not txn.has_graph(G3)


def test_reader_keeps_its_snapshot(store):
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("v1"))])
    reader = store.read()
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("v2"))])
        txn.add_graph(G2, [(G2, P, literal("new"))])
    assert reader.triples(G1) == [(G1, P, literal("v1"))]
    assert not reader.has_graph(G2)
    reader.abort()
    with store.read() as txn:
        assert txn.triples(G1) == [(G1, P, literal("v2"))]
    with pytest.raises(StoreError, match="ended"):
        reader.triples(G1)


def test_second_process_reads_committed_data(store, tmp_path):
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("from parent"))])
    script = textwrap.dedent(f"""
        from lakesuperior.store.quadstore import QuadStore
        st = QuadStore({store.path!r})
        with st.read() as txn:
            print(txn.triples({G1!r})[0][2])
        with st.write() as txn:
            txn.add_graph({G2!r}, [({G2!r}, {P!r}, '"from child"')])
        with st.read() as txn:
            print(len(list(txn.match(None, {P!r}, None, None))))
        st.close()
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=str(tmp_path)).stdout.split("\n")
    assert out[0] == '"from parent"'
    assert out[1] == "2"
    with store.read() as txn:
        assert txn.triples(G2) == [(G2, P, literal("from child"))]
        assert {q[3] for q in txn.match(None, P, None, None)} == {G1, G2}


def test_reopen_after_close(tmp_path):
    path = str(tmp_path / "s")
    st = QuadStore(path)
    with st.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("persisted"))])
        txn.bind("ex", "http://ex.org/")
    st.close()
    with pytest.raises(StoreError, match="closed"):
        st.read()
    st = QuadStore(path)
    with st.read() as txn:
        assert txn.triples(G1) == [(G1, P, literal("persisted"))]
        assert txn.namespaces() == {"ex": "http://ex.org/"}
        assert list(txn.match(None, P, None, None)) == [(G1, P, literal("persisted"), G1)]
    st.close()


def test_index_rebuilt_when_lost(tmp_path):
    path = str(tmp_path / "s")
    with QuadStore(path) as st:
        with st.write() as txn:
            txn.add_graph(G1, [(G1, P, literal("x"))])
        assert st.pending() == 1
        assert st.index() == 1
        assert st.pending() == 0
    for name in os.listdir(os.path.join(path, "index")):
        os.remove(os.path.join(path, "index", name))
    with QuadStore(path) as st:
        with st.read() as txn:
            assert list(txn.match(None, None, literal("x"), None)) == [(G1, P, literal("x"), G1)]


def test_map_grows(tmp_path):
    st = QuadStore(str(tmp_path / "s"), map_size=256 * 1024)
    big = literal("y" * 5000)
    for i in range(300):
        g = f"<http://ex.org/g{i}>"
        with st.write() as txn:
            txn.add_graph(g, [(g, P, literal(f"{i} {big}"))])
    with st.read() as txn:
        assert txn.graph_count() == 300
    assert st.stats()["map_size"] > 256 * 1024
    st.close()


def test_newer_format_is_refused(tmp_path):
    path = str(tmp_path / "s")
    QuadStore(path).close()
    with lmdb.open(path, max_dbs=16) as env:
        meta = env.open_db(b"meta")
        with env.begin(write=True) as txn:
            txn.put(b"format", str(FORMAT_VERSION + 1).encode(), db=meta)
    with pytest.raises(StoreFormatError, match="Upgrade Lakesuperior"):
        QuadStore(path)


def test_foreign_data_is_refused(tmp_path):
    path = str(tmp_path / "s")
    with lmdb.open(path, max_dbs=16) as env:
        rec = env.open_db(b"rec")
        with env.begin(write=True) as txn:
            txn.put(b"12345678", b"whatever", db=rec)
    with pytest.raises(StoreFormatError, match="no format version"):
        QuadStore(path)


def test_hash_bits_must_match(tmp_path):
    path = str(tmp_path / "s")
    QuadStore(path, hash_bits=16).close()
    with pytest.raises(StoreError, match="16-bit"):
        QuadStore(path, hash_bits=20)
    with pytest.raises(StoreError):
        QuadStore(str(tmp_path / "t"), hash_bits=99)


@pytest.mark.parametrize("quad,msg", [
    (("<http://a>", P, '"x"'), "quad must be"),
    ((literal("s"), P, '"x"', G1), "literal cannot be a subject"),
    (("<http://a>", '"p"', '"x"', G1), "predicate must be an IRI"),
    (("<http://a>", "_:p", '"x"', G1), "predicate must be an IRI"),
    (("<http://a>", P, '"x"', '"g"'), "graph name must be an IRI"),
    (("<http://a>", P, 42, G1), "must be a str"),
    (("<http://a b>", P, '"x"', G1), "not allowed in an IRI"),
    (("<http://a>", P, '"unterminated', G1), "Unterminated"),
])
def test_bad_input_is_refused(store, quad, msg):
    with pytest.raises(TermError, match=msg):
        with store.write() as txn:
            txn.add([quad])
    with store.read() as txn:
        assert list(txn.match()) == []


def test_bad_patterns_and_triples(store):
    with store.read() as txn:
        with pytest.raises(TermError):
            list(txn.match(s=literal("x")))
        with pytest.raises(TermError):
            txn.count(p="_:b")
        with pytest.raises(TermError):
            txn.triples('"g"')
    with pytest.raises(TermError, match="triple must be"):
        with store.write() as txn:
            txn.add_graph(G1, [(G1, P)])


def test_namespaces(store):
    with store.write() as txn:
        txn.bind("ex", "http://ex.org/")
        txn.bind("ex", "http://other.org/", override=False)
        txn.bind("dc", "http://purl.org/dc/terms/")
    with store.read() as txn:
        assert txn.namespace("ex") == "http://ex.org/"
        assert txn.prefix("http://purl.org/dc/terms/") == "dc"
        assert txn.namespace("nope") is None and txn.prefix("http://nope/") is None
    with store.write() as txn:
        txn.bind("ex", "http://other.org/")
        txn.unbind("dc")
    with store.read() as txn:
        assert txn.namespaces() == {"ex": "http://other.org/"}
        assert txn.prefix("http://ex.org/") is None
    with pytest.raises(TermError):
        with store.write() as txn:
            txn.bind("bad", "not a namespace")


def test_stats_copy_and_disk_size(store, tmp_path):
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("a")), (G1, P, G2)])
        txn.add([(G1, CONTAINS, G3, G1)])
    stats = store.stats()
    assert stats["quads"] == 3 and stats["graphs"] == 1 and stats["format"] == FORMAT_VERSION
    assert store.disk_size() == stats["store_bytes"] > 0
    dest = str(tmp_path / "copy")
    store.copy(dest)
    with QuadStore(dest) as copy:
        with copy.read() as txn:
            assert sorted(txn.triples(G1)) == sorted(
                [(G1, P, literal("a")), (G1, P, G2), (G1, CONTAINS, G3)])
    with pytest.raises(StoreError, match="exists"):
        store.copy(dest)


def test_read_only_store(tmp_path):
    path = str(tmp_path / "s")
    with QuadStore(path) as st:
        with st.write() as txn:
            txn.add_graph(G1, [(G1, P, literal("a"))])
        st.index()
    with QuadStore(path, readonly=True) as ro:
        with ro.read() as txn:
            assert txn.triples(G1) == [(G1, P, literal("a"))]
            assert list(txn.match(None, P, None, None)) == [(G1, P, literal("a"), G1)]
        with pytest.raises(StoreError, match="read-only"):
            ro.write()
    with pytest.raises(StoreError):
        QuadStore(str(tmp_path / "missing"), readonly=True)


def test_store_used_after_fork_is_refused(store):
    pid = os.fork()
    if pid == 0:  # child: must not use the parent's environment
        try:
            store.read()
        except StoreError:
            os._exit(0)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_no_reader_slots_leak(store):
    with store.write() as txn:
        txn.add_graph(G1, [(G1, P, literal("a"))])
    for _ in range(2000):        # far more than max_readers
        with store.read() as txn:
            txn.triples(G1)
            list(txn.match(None, P, None, None))
    with store.read() as txn:
        assert txn.triples(G1)


def test_distinct_count_over_the_union(store):
    a_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    container = "<http://www.w3.org/ns/ldp#Container>"
    with store.write() as txn:
        for g in (G1, G2):   # the same triple in two graphs
            txn.add_graph(g, [(G1, a_type, container), (g, P, literal("x"))])
        txn.add_graph(G3, [(G3, a_type, container)])
    with store.read() as txn:
        assert txn.count(None, a_type, container) == 3
        assert txn.count(None, a_type, container, distinct=True) == 2
        assert txn.count(None, a_type, None, distinct=True) == 2
        assert txn.count(G1, a_type, None, distinct=True) == 1
        assert txn.count(None, P, literal("x"), distinct=True) == 2
        assert txn.count(None, None, literal("x"), distinct=True) == 2
        assert txn.count(None, a_type, container, G1, distinct=True) == 1


def test_count_by_graph_prefix(store):
    """``graph_prefix`` counts only the quads of graphs whose name starts with it,
    on the index for IRI patterns and by scan otherwise; a write transaction's own
    changes count too."""
    a_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    container = "<http://www.w3.org/ns/ldp#Container>"
    res, other = "<http://ex.org/res/", "<http://ex.org/other/"
    rng = random.Random(3)
    quads = set()
    with store.write() as txn:
        for i in range(60):
            g = f"{res if i % 3 else other}{i}>"
            subject = f"<http://ex.org/s{rng.randrange(25)}>"
            triples = [(subject, a_type, container), (subject, P, literal(f"v{i % 4}")),
                       (subject, P, f"<http://ex.org/s{rng.randrange(25)}>")]
            txn.add_graph(g, triples)
            quads.update((s, p, o, g) for s, p, o in triples)

    def brute_count(s, p, o, distinct, prefix):
        hits = [q for q in brute(quads, s, p, o, None) if q[3].startswith(prefix)]
        return len({q[:3] for q in hits}) if distinct else len(hits)

    patterns = [(None, a_type, container), (None, a_type, None), (None, P, None),
                (None, None, container), ("<http://ex.org/s3>", a_type, None),
                (None, P, literal("v1")), (None, None, "<http://ex.org/s7>")]
    for distinct in (False, True):
        for prefix in (res, other, "<http://nowhere/"):
            with store.read() as txn:
                for s, p, o in patterns:
                    assert txn.count(s, p, o, None, distinct=distinct, graph_prefix=prefix) \
                        == brute_count(s, p, o, distinct, prefix), (s, p, o, prefix)
    with store.read() as txn:
        assert txn.count(None, None, None, f"{res}1>", graph_prefix=res) == 3
        assert txn.count(None, None, None, f"{res}1>", graph_prefix=other) == 0
    with store.write() as txn:   # uncommitted changes are counted by scan
        txn.add_graph(f"{res}new>", [("<http://ex.org/new>", a_type, container)])
        assert txn.count(None, a_type, container, None, distinct=True, graph_prefix=res) \
            == brute_count(None, a_type, container, True, res) + 1


def test_empty_prefix_and_rdflib_terms(store):
    with store.write() as txn:
        txn.bind("", "http://ex.org/default#")
    with store.read() as txn:
        assert txn.namespace("") == "http://ex.org/default#"
        assert txn.prefix("http://ex.org/default#") == ""
        assert txn.namespaces() == {"": "http://ex.org/default#"}
    from rdflib import URIRef
    with store.read() as txn:
        with pytest.raises(TermError, match="from_rdflib"):
            list(txn.match(s=URIRef("http://ex.org/a")))
    with pytest.raises(TermError, match="from_rdflib"):
        with store.write() as txn:
            txn.add([(URIRef("http://ex.org/a"), P, G1, G1)])


def test_subject_patterns_inside_large_graphs(store):
    triples = [(f"<http://ex.org/s{i % 50}>", f"<http://ex.org/p{i % 7}>", literal(str(i)))
               for i in range(2000)]
    with store.write() as txn:
        txn.add_graph(G1, triples)
    with store.read() as txn:
        got = set(txn.match("<http://ex.org/s3>", None, None, G1))
        assert got == {(*t, G1) for t in triples if t[0] == "<http://ex.org/s3>"}
        got = set(txn.match("<http://ex.org/s3>", "<http://ex.org/p3>", None, None))
        assert got == {(*t, G1) for t in triples
                       if t[0] == "<http://ex.org/s3>" and t[1] == "<http://ex.org/p3>"}


def test_set_value_replaces_the_objects_of_a_subject_and_predicate(store):
    s, q = "<http://ex.org/s>", "<http://ex.org/q>"
    with store.write() as txn:
        txn.add_graph(G1, [(s, P, literal("a")), (s, P, literal("b")), (s, q, literal("x"))])
        txn.add([(s, P, "<http://ex.org/o1>", G1)])      # one by one (not in the record)
        assert txn.set_value(s, P, literal("c"), G1) == 4   # three removed, one added
        assert sorted(txn.triples(G1)) == sorted([(s, P, literal("c")), (s, q, literal("x"))])
    before = store.index_state()[1]
    with store.write() as txn:
        assert txn.set_value(s, P, literal("c"), G1) == 0   # already so: nothing written
        assert txn.set_value(s, P, "<http://ex.org/o2>", G1) == 2
        assert txn.set_value(s, P, "<http://ex.org/o3>", G1) == 2   # IRI to IRI
        assert txn.set_value(s, q, literal("y"), G2) == 1   # a new graph
    assert store.index_state()[1] == before + 3        # one log entry per change
    store.index()
    with store.read() as txn:
        assert sorted(txn.triples(G1)) == sorted([(s, P, "<http://ex.org/o3>"),
                                                  (s, q, literal("x"))])
        assert txn.triples(G2) == [(s, q, literal("y"))]
        assert sorted(txn.match(s, P, None, None)) == [(s, P, "<http://ex.org/o3>", G1)]
        assert txn.count(None, None, literal("c"), None) == 0


@pytest.mark.parametrize("quad", [
    (None, P, literal("v"), G1), ("<http://ex.org/s>", None, literal("v"), G1),
    ("<http://ex.org/s>", P, None, G1), ("<http://ex.org/s>", P, literal("v"), None),
    (literal("v"), P, literal("v"), G1), ("<http://ex.org/s>", literal("p"), literal("v"), G1),
    ("<http://ex.org/s>", P, "not a term", G1),
])
def test_set_value_refuses_bad_terms_and_changes_nothing(store, quad):
    with store.write() as txn:
        txn.add_graph(G1, [("<http://ex.org/s>", P, literal("a"))])
    with pytest.raises(TermError):
        with store.write() as txn:
            txn.set_value(*quad)
    with store.read() as txn:
        assert txn.triples(G1) == [("<http://ex.org/s>", P, literal("a"))]
