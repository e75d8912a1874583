"""``Reader.objects``: a container's children as one list (issue 15, deliverable 5),
the streamed containment listing of ``match``, and how both use the IRI cache."""
import lmdb
import pytest

from lakesuperior.exceptions import StoreError, TermError
from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.terms import literal, term_id

G = "<http://ex.org/g>"
P = "<http://ex.org/p>"
CONTAINS = "<http://www.w3.org/ns/ldp#contains>"


def _children(n):
    return [f"<http://ex.org/g/c{i}>" for i in range(n)]


def _container(store, n, extra=()):
    with store.write() as txn:
        txn.add_graph(G, [(G, P, literal("own")), (G, P, "<http://ex.org/x>"), *extra])
        txn.add([(G, CONTAINS, c, G) for c in _children(n)])


def test_objects_gives_the_record_and_the_run(store):
    _container(store, 300, extra=[("_:b", P, literal("blank's"))])
    with store.read() as txn:
        kids = txn.objects(G, CONTAINS, G)
        assert sorted(kids) == sorted(_children(300))
        assert kids == [q[2] for q in txn.match(G, CONTAINS, None, G)]
        assert kids == sorted(kids, key=term_id)      # id order: one pass over terms
        assert sorted(txn.objects(G, P, G)) == sorted([literal("own"), "<http://ex.org/x>"])
        assert txn.objects("_:b", P, G) == [literal("blank's")]


def test_objects_of_what_is_not_there_is_empty(store):
    _container(store, 3)
    with store.read() as txn:
        assert txn.objects("<http://ex.org/none>", CONTAINS, G) == []
        assert txn.objects(G, "<http://ex.org/none>", G) == []
        assert txn.objects(G, CONTAINS, "<http://ex.org/none>") == []
        assert txn.objects(G, CONTAINS, "<http://ex.org/g/c0>") == []


@pytest.mark.parametrize(("s", "p", "g", "msg"), [
    (None, CONTAINS, G, "needs a subject"),
    (G, None, G, "needs a subject"),
    (G, CONTAINS, None, "needs a subject"),
    (G, '"p"', G, "predicate must be an IRI"),
    (G, CONTAINS, "_:g", "graph name must be an IRI"),
    ('"s"', CONTAINS, G, "literal cannot be a subject"),
    (G, "<http://a b>", G, "not allowed in an IRI"),
])
def test_objects_refuses_bad_terms(store, s, p, g, msg):
    with store.read() as txn:
        with pytest.raises(TermError, match=msg):
            txn.objects(s, p, g)


def test_objects_after_the_transaction_ended(store):
    _container(store, 3)
    txn = store.read()
    txn.abort()
    with pytest.raises(StoreError, match="ended"):
        txn.objects(G, CONTAINS, G)


def test_a_write_lists_its_own_children_and_caches_none_of_them(tmp_path):
    with QuadStore(str(tmp_path / "s"), iri_cache=1000) as st:
        _container(st, 2)
        with st.read() as txn:
            assert len(txn.objects(G, CONTAINS, G)) == 2
        cached = st.iri_cache_size()
        txn = st.write()
        txn.add([(G, CONTAINS, c, G) for c in _children(50)])
        assert sorted(txn.objects(G, CONTAINS, G)) == sorted(_children(50))
        assert st.iri_cache_size() == cached       # uncommitted terms are not cached
        txn.abort()
        with st.read() as txn:
            assert len(txn.objects(G, CONTAINS, G)) == 2


def test_a_listing_larger_than_the_cache_fills_it_and_never_empties_it(tmp_path):
    path = str(tmp_path / "s")
    with QuadStore(path) as st:
        _container(st, 500)
    with QuadStore(path, iri_cache=100) as st:
        with st.read() as txn:
            txn.objects(G, P, G)                   # a few IRIs cached first
            before = st.iri_cache_size()
            assert 0 < before < 100
            first = txn.objects(G, CONTAINS, G)
            assert st.iri_cache_size() == 100       # filled up to its bound, not emptied
            assert txn.objects(G, CONTAINS, G) == first
            assert [q[2] for q in txn.match(G, CONTAINS, None, G)] == first
            assert st.iri_cache_size() == 100


def test_the_streamed_listing_goes_past_a_chunk_and_stops_with_its_transaction(store):
    _container(store, 5000)                         # more than one chunk of 4096
    with store.read() as txn:
        assert sorted(q[2] for q in txn.match(G, CONTAINS, None, G)) == sorted(_children(5000))
    txn = store.read()
    quads = txn.match(G, CONTAINS, None, G)
    next(quads)
    txn.abort()
    with pytest.raises(StoreError, match="ended"):
        next(quads)


def test_a_child_without_its_term_is_a_corrupt_store(tmp_path):
    path = str(tmp_path / "s")
    with QuadStore(path) as st:
        _container(st, 3)
    env = lmdb.open(path, max_dbs=16)
    with env.begin(write=True) as txn:
        rec = env.open_db(b"rec", txn=txn, create=False)      # the IRI dictionary (format 4)
        victim = _children(3)[1].encode()
        cur = txn.cursor(db=rec)
        assert any(len(k) == 9 and v == victim and cur.delete() for k, v in cur.iternext())
    env.close()
    with QuadStore(path) as st, st.read() as txn:
        with pytest.raises(StoreError, match="Corrupt store: IRI id"):
            txn.objects(G, CONTAINS, G)


def test_a_full_cache_drops_its_oldest_quarter_not_everything(tmp_path):
    path = str(tmp_path / "s")
    with QuadStore(path) as st:
        _container(st, 500)
        with st.write() as txn:
            txn.add_graph("<http://ex.org/h>", [("<http://ex.org/h>", P, "<http://ex.org/y>")])
    with QuadStore(path, iri_cache=100) as st:
        with st.read() as txn:
            txn.objects(G, CONTAINS, G)
            assert st.iri_cache_size() == 100
            assert txn.triples("<http://ex.org/h>") == [("<http://ex.org/h>", P,
                                                         "<http://ex.org/y>")]
            assert 75 <= st.iri_cache_size() < 100     # new IRIs in, the oldest 25 out
