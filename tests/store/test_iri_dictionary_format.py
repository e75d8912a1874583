"""Format 4: the IRI dictionary lives in ``rec`` beside the records (``term_key``:
the IRI's id, then ``b"i"``), so a new resource's record and name share a leaf;
a format-3 store (``terms`` table) is upgraded in place when opened for writing
(docs/storage.md).

``fixtures/format3`` is a compacted copy of a format-3 store made by Lakesuperior
at commit 3e8264e (main before format 4), with 8-bit hashes so that IRIs collide:
40 graphs of a literal, a blank node, a language-tagged literal and an IRI, their
containment in ``<info:root>``, a namespace binding and two outbox entries;
``fixtures/format3.json`` holds its graphs and IRI count as that version read them.
"""
from __future__ import annotations

import json
import os
import shutil

import lmdb
import pytest

from lakesuperior.exceptions import StoreFormatError
from lakesuperior.store.quadstore import FORMAT_VERSION, QuadStore

HERE = os.path.dirname(__file__)
P = "<info:p>"
CONTAINS = "<http://www.w3.org/ns/ldp#contains>"


def _format3(tmp_path) -> tuple[str, dict]:
    path = str(tmp_path / "store")
    os.makedirs(os.path.join(path, "index"))
    lmdb.open(os.path.join(path, "index")).close()   # an empty index: rebuilt on use
    shutil.copy(os.path.join(HERE, "fixtures", "format3", "data.mdb"), path)
    with open(os.path.join(HERE, "fixtures", "format3.json")) as fh:
        expect = json.load(fh)
    expect["graphs"] = {g: sorted(tuple(t) for t in ts) for g, ts in expect["graphs"].items()}
    return path, expect


def _tables(path: str) -> dict[bytes, dict[bytes, bytes]]:
    env = lmdb.open(path, max_dbs=16, readonly=True, lock=False)
    try:
        with env.begin() as txn:
            names = [k for k, _ in txn.cursor()]
            return {n: dict(txn.cursor(db=env.open_db(n, txn=txn, create=False)))
                    for n in names if n != b"gx" and n != b"collide"}
    finally:
        env.close()


def _graphs(st: QuadStore) -> dict:
    with st.read() as txn:
        return {g: sorted(txn.triples(g)) for g in txn.graphs()}


def test_format_3_store_is_upgraded_in_place_when_opened_for_writing(tmp_path):
    path, expect = _format3(tmp_path)
    old = _tables(path)
    assert old[b"meta"][b"format"] == b"3" and len(old[b"terms"]) == expect["iris"]
    with QuadStore(path, hash_bits=8) as st:
        assert st.stats()["format"] == FORMAT_VERSION == 4
        assert _graphs(st) == expect["graphs"]
        with st.read() as txn:
            assert txn.stats()["iris"] == expect["iris"]
            assert txn.stats()["records"] == 40
            assert txn.count("<info:root>", CONTAINS, None, "<info:root>") == 40
            assert sorted(txn.match(None, P, '"7"@en')) == [("_:b", P, '"7"@en', "<info:r7>")]
            assert dict(txn.namespaces())["ex"] == "http://example.org/"
            assert [e for _, e in txn.outbox()] == [b"event-1", b"event-2"]
        with st.write() as txn:          # old and new IRIs side by side, collisions kept
            txn.add_graph("<info:r3>", [("<info:r3>", P, "<info:o99>")])
            txn.add_graph("<info:new>", [("<info:new>", P, "<info:o1>")])
        st.index()
        with st.read() as txn:
            assert sorted(txn.match(None, P, "<info:o1>")) == [
                ("<info:new>", P, "<info:o1>", "<info:new>")]
            assert txn.triples("<info:r3>") == [("<info:r3>", P, "<info:o99>")]
            assert txn.stats()["iris"] == expect["iris"] + 2
    new = _tables(path)
    assert b"terms" not in new                   # the table is gone
    moved = {k[:8]: v for k, v in new[b"rec"].items() if len(k) == 9}
    assert {k: v for k, v in moved.items() if k in old[b"terms"]} == old[b"terms"]
    assert all(k[8:] == b"i" for k in new[b"rec"] if len(k) == 9)
    with QuadStore(path, readonly=True) as st:
        graphs = _graphs(st)
        assert graphs["<info:r7>"] == expect["graphs"]["<info:r7>"]
        assert len(graphs) == len(expect["graphs"]) + 1


def test_format_3_store_read_only_is_refused(tmp_path):
    path, _ = _format3(tmp_path)
    with pytest.raises(StoreFormatError, match="format 3 and is opened read-only: open it "
                                               "once for writing"):
        QuadStore(path, readonly=True)
    assert _tables(path)[b"meta"][b"format"] == b"3"    # untouched


def test_a_graph_name_is_stored_right_after_its_record(tmp_path):
    with QuadStore(str(tmp_path / "s")) as st:
        for i in range(50):
            g = f"<info:g{i}>"
            with st.write() as txn:
                txn.add_graph(g, [(g, P, f'"{i}"')])
    keys = sorted(_tables(str(tmp_path / "s"))[b"rec"])
    records = [k for k in keys if len(k) == 8]
    assert len(records) == 50
    for k in records:               # every graph's name is the next key
        assert keys[keys.index(k) + 1] == k + b"i"
