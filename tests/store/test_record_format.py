"""Format 3: the compact graph record, the upgrade of format-2 stores, the
bounded IRI cache and the compacting copy (docs/storage.md)."""
import os
import random
import struct

import lmdb
import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError, StoreError, StoreFormatError
from lakesuperior.store.quadstore import FORMAT_VERSION, QuadStore
from lakesuperior.store.records import Record, upgrade_record_v2

G = "<info:g>"
P = "<info:p>"
CONTAINS = "<http://www.w3.org/ns/ldp#contains>"


def lit(i: int) -> str:
    return f'"literal {i}"'


def graphs(store: QuadStore) -> dict:
    with store.read() as txn:
        return {g: sorted(txn.triples(g)) for g in txn.graphs()}


def raw_records(path: str) -> dict[bytes, bytes]:
    env = lmdb.open(path, max_dbs=16, readonly=True)
    try:
        with env.begin() as txn:
            return {k: v for k, v in txn.cursor(db=env.open_db(b"rec", txn=txn, create=False))
                    if len(k) == 8}      # records (the 9-byte keys are IRIs' strings)
    finally:
        env.close()


def written(tmp_path, triples) -> tuple[Record, QuadStore]:
    """Graph G written with ``triples`` in a new store: its raw record, and the
    store opened again."""
    path = str(tmp_path / "store")
    with QuadStore(path) as st:
        with st.write() as txn:
            txn.add_graph(G, triples)
    (data,) = raw_records(path).values()
    return Record(data), QuadStore(path)


def v2_record(rec: Record) -> bytes:
    """The format-2 encoding of a record (u32 n_terms, u32 n_triples, local ids
    u64, string ends u32, padding to 8, (s, p, o) u64 triples, strings)."""
    local = sorted(rec.local_terms().items())
    ends, pos = [], 0
    for _tid, data in local:
        pos += len(data)
        ends.append(pos)
    head = struct.pack(f"<II{len(local)}Q{len(local)}I", len(local), len(rec),
                       *[t for t, _ in local], *ends)
    head += b"\0" * (-len(head) % 8)
    triples = b"".join(struct.pack("<3Q", *t) for t in rec.triple_ids())
    return head + triples + b"".join(d for _, d in local)


@pytest.mark.parametrize("n_literals, width, ends_width", [(3, 1, 2), (300, 2, 2),
                                                           (70_000, 4, 4)])
def test_record_index_width_follows_the_number_of_terms(tmp_path, n_literals, width,
                                                        ends_width):
    triples = [(G, P, lit(i)) for i in range(n_literals)] + [(G, P, "<info:o>")]
    rec, store = written(tmp_path, triples)
    assert rec.n_triples == n_literals + 1 and rec.n_subjects == 1
    assert rec.n_iris == 3 and rec.n_terms == n_literals + 3
    assert rec.data[16] == width and rec.data[17] == ends_width
    with store.read() as txn:
        assert sorted(txn.triples(G)) == sorted(triples)
        assert txn.count(G, P, lit(n_literals - 1), G) == 1
        assert txn.count(G, P, '"absent"', G) == 0
    store.close()


def test_record_with_many_subjects_blank_nodes_and_a_large_string_area(tmp_path):
    big = '"' + "x" * 70_000 + '"'
    triples = ([(f"<info:s{i}>", P, lit(i)) for i in range(40)]
               + [("_:b1", P, "_:b2"), ("_:b2", "<info:q>", big), (G, P, "_:b1")])
    rec, store = written(tmp_path, triples)
    assert rec.n_subjects == 43 and rec.data[17] == 4     # u32 string ends
    with store.read() as txn:
        assert sorted(txn.triples(G)) == sorted(triples)
        assert list(txn.match("<info:s7>", None, None, G)) == [("<info:s7>", P, lit(7), G)]
        assert list(txn.match(None, "<info:q>", None, G)) == [("_:b2", "<info:q>", big, G)]
    with store.write() as txn:       # a triple removed from the middle of a run
        assert txn.remove("<info:s7>", P, lit(7), G) == 1
        txn.add([("<info:s41>", P, lit(41), G)])
    with store.read() as txn:
        assert len(txn.triples(G)) == len(triples)
        assert ("<info:s7>", P, lit(7)) not in txn.triples(G)
    store.close()


def test_record_smaller_than_format_2(tmp_path):
    triples = [(G, f"<info:p{i}>", lit(i)) for i in range(100)] + [
        (G, f"<info:q{i}>", f"<info:o{i % 5}>") for i in range(100)]
    rec, store = written(tmp_path, triples)
    store.close()
    assert len(rec.data) < 0.7 * len(v2_record(rec))


@pytest.mark.parametrize("data", [b"", b"\0" * 17, b"\1\0\0\0" + b"\0" * 12 + b"\1\2",
                                  b"\5\0\0\0\1\0\0\0\0\0\0\0\1\0\0\0\1\2"])
def test_corrupt_record_is_a_store_error(data):
    with pytest.raises(StoreError, match="Corrupt graph record"):
        Record(data)


def test_a_term_index_out_of_range_is_a_store_error(tmp_path):
    triples = [(G, P, f"<info:o{i}>") for i in range(3)]
    rec, store = written(tmp_path, triples)
    store.close()
    path = str(tmp_path / "store")
    (key,) = raw_records(path)
    # width 1, one subject, no local terms: the pairs follow the ids, the subject
    # and its run's end; the last byte of the last pair is its object's index.
    last_object = 18 + 8 * rec.n_terms + 1 + 4 + 2 * len(triples) - 1
    data = bytearray(rec.data)
    data[last_object] = 0xFE
    env = lmdb.open(path, max_dbs=16)
    with env.begin(write=True) as txn:
        txn.put(key, bytes(data), db=env.open_db(b"rec", txn=txn, create=False))
    env.close()
    with QuadStore(path) as st, st.read() as txn:
        with pytest.raises(StoreError, match="Corrupt graph record"):
            txn.triples(G)


def test_corrupt_v2_record_is_a_store_error():
    with pytest.raises(StoreError, match="Corrupt format-2 graph record"):
        upgrade_record_v2(b"\2\0\0\0\5\0\0\0")


def make_format_2(path: str) -> dict:
    """A store as format 2 wrote it: its records in the old layout, meta.format 2."""
    with QuadStore(path) as st:
        with st.write() as txn:
            txn.add_graph(G, [(G, P, lit(1)), (G, P, "_:b"), ("_:b", P, lit(2)),
                              (G, "<info:q>", "<info:o>")])
            txn.add_graph("<info:h>", [("<info:h>", P, '"x"@en')])
            txn.add([(G, CONTAINS, "<info:c>", G)])
        before = graphs(st)
    env = lmdb.open(path, max_dbs=16)
    with env.begin(write=True) as txn:
        rec = env.open_db(b"rec", txn=txn)
        terms = env.open_db(b"terms", txn=txn)       # format 2's IRI dictionary
        for key, value in list(txn.cursor(db=rec)):
            if len(key) == 8:
                txn.put(key, v2_record(Record(value)), db=rec)
            else:
                txn.delete(key, db=rec)
                txn.put(key[:8], value, db=terms)
        txn.put(b"format", b"2", db=env.open_db(b"meta", txn=txn))
    env.close()
    return before


def test_format_2_store_read_only_is_refused(tmp_path):
    path = str(tmp_path / "store")
    make_format_2(path)
    with pytest.raises(StoreFormatError, match="format 2 and is opened read-only: open it "
                                               "once for writing"):
        QuadStore(path, readonly=True)


def test_format_2_store_is_upgraded_in_place_when_opened_for_writing(tmp_path):
    path = str(tmp_path / "store")
    before = make_format_2(path)
    with QuadStore(path) as st:
        assert st.stats()["format"] == FORMAT_VERSION == 4
        assert graphs(st) == before
        with st.read() as txn:
            assert txn.count(G, CONTAINS, None, G) == 1
            assert sorted(txn.match(None, P, lit(2))) == [("_:b", P, lit(2), G)]
        with st.write() as txn:
            txn.add([(G, P, lit(3), G)])
    with QuadStore(path, readonly=True) as st:
        assert len(graphs(st)[G]) == len(before[G]) + 1
    for data in raw_records(path).values():
        Record(data)          # every record is in the new layout


def test_iri_cache_is_bounded(tmp_path):
    with QuadStore(str(tmp_path / "store"), iri_cache=10) as st:
        assert st.iri_cache == 10
        for i in range(30):
            with st.write() as txn:
                txn.add_graph(f"<info:g{i}>", [(f"<info:g{i}>", P, f"<info:o{i}>")])
            assert st.iri_cache_size() <= 10
        with st.read() as txn:
            assert len(list(txn.graphs())) == 30
            assert txn.triples("<info:g3>") == [("<info:g3>", P, "<info:o3>")]
        assert 0 < st.iri_cache_size() <= 10
    with pytest.raises(StoreError, match="iri_cache must be positive"):
        QuadStore(str(tmp_path / "other"), iri_cache=0)


def test_iri_cache_configuration():
    assert Config.load(environ={}).iri_cache == 100_000
    assert Config.load(environ={"LSUP_STORE_IRI_CACHE": "50"}).iri_cache == 50
    with pytest.raises(ConfigError, match="iri_cache must be positive"):
        Config.load(environ={"LSUP_STORE_IRI_CACHE": "0"})


def test_compacting_copy_has_the_same_content_and_no_free_pages(store, tmp_path):
    for i in range(60):
        g = f"<info:r{i}>"
        with store.write() as txn:
            txn.add_graph(g, [(g, P, f'"{"v" * 3000} {i}"')] + [(g, P, lit(j)) for j in range(50)])
            txn.add([(G, CONTAINS, g, G)])
            txn.bind(f"p{i % 3}", f"http://example.org/{i % 3}#")
    with store.write() as txn:
        for i in range(0, 60, 2):
            txn.remove_graph(f"<info:r{i}>")
    store.copy(str(tmp_path / "page"), compact=False)
    store.copy(str(tmp_path / "compact"))
    size = {name: os.path.getsize(tmp_path / name / "data.mdb") for name in ("page", "compact")}
    assert size["compact"] < size["page"]
    with QuadStore(str(tmp_path / "compact")) as copy:
        assert graphs(copy) == graphs(store)
        with copy.read() as txn:
            assert txn.count(G, CONTAINS, None, G) == 60
            copied = dict(txn.namespaces())
    with store.read() as txn:
        assert copied == dict(txn.namespaces()) and len(copied) == 3


def test_table_stats_account_for_every_page(store):
    for i in range(20):
        g = f"<info:r{i}>"
        with store.write() as txn:
            txn.add_graph(g, [(g, P, f'"{"v" * 5000} {i}"')])
            txn.add([(G, CONTAINS, g, G)])
    store.index()
    stats = store.table_stats()
    main = stats["main"]
    assert main["page_size"] == 4096
    assert main["tables"]["rec"]["entries"] == 20 + 23    # and the IRIs: 20 graphs, G, P, CONTAINS
    assert "terms" not in main["tables"]
    assert main["tables"]["rec"]["overflow_pages"] == 40      # 5 KB: two pages each
    assert main["tables"]["gx"]["entries"] == 20
    used = sum(t["bytes"] for t in main["tables"].values()) // 4096
    assert 0 <= main["free_pages"] < main["file_pages"] and used < main["file_pages"]
    assert stats["index"]["tables"] and stats["index"]["file_pages"] > 0


ESCAPE_PIECES = ["a", "é", "ᚠ", '\\"', "\\\\", "\\n", "\\t", "\\b", "\\f", "\\r", "\\u0000",
                 "\\u001F", "\\u007F", "\\uFFFE", "\\uFFFF", "\\u0041", "\\u001f", "\\u0008",
                 "\\U0000001F", "\\x", "\\", '"', "\x7f", "\n", "\\u00", "\\u12", "\ufffe"]


def test_written_literals_with_escapes_are_canonical_or_refused(store):
    """The write path's fast check of literals (escapes already canonical pass
    as they are) agrees with ``terms.canonical`` on every combination."""
    from lakesuperior.exceptions import TermError
    from lakesuperior.store.terms import canonical
    rng = random.Random(5)
    cases = ['"' + "".join(rng.choices(ESCAPE_PIECES, k=rng.randint(1, 4))) + '"'
             for _ in range(3000)] + ['"' + p + '"' for p in ESCAPE_PIECES]
    for term in cases:
        try:
            expected = canonical(term)
        except TermError:
            with pytest.raises(TermError):
                with store.write() as txn:
                    txn.add_graph(G, [(G, P, term)])
            continue
        with store.write() as txn:
            txn.add_graph(G, [(G, P, term)])
        with store.read() as txn:
            assert txn.triples(G) == [(G, P, expected)], term


def test_record_triples_by_index_and_by_subject_and_predicate(tmp_path):
    subjects = [f"<info:s{i}>" for i in range(7)]
    preds = [f"<info:p{j}>" for j in range(5)]
    triples = [(s, p, lit(i * 10 + j)) for i, s in enumerate(subjects)
               for j, p in enumerate(preds) if (i + j) % 3] + [("_:b", P, G)]
    rec, store = written(tmp_path, triples)
    ids = rec.triple_ids()
    assert [rec[i] for i in range(len(rec))] == ids == sorted(ids)
    assert rec[-1] == ids[-1]
    with pytest.raises(IndexError):
        rec[len(rec)]
    for s_id in {t[0] for t in ids}:
        assert rec.triple_ids_for(s_id) == [t for t in ids if t[0] == s_id]
        for p_id in {t[1] for t in ids} | {1, 2**62 - 1}:
            assert rec.triple_ids_for(s_id, p_id) == [t for t in ids if t[:2] == (s_id, p_id)]
    assert rec.triple_ids_for(12345) == []
    with store.read() as txn:
        for s in subjects:
            for p in preds:
                assert sorted(txn.match(s, p, None, G)) == sorted(
                    (ts, tp, to, G) for ts, tp, to in triples if (ts, tp) == (s, p))
    store.close()
