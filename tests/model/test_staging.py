"""``model.staging``: the journal of a transaction, read by several processes, and
which staged requests a write runs again."""
from __future__ import annotations

import io
import os

import pytest

from lakesuperior.endpoints.tx.staging import (
    OPEN,
    Operation,
    Received,
    Staging,
    load_parsed,
    open_part,
)


def make(root, **kw) -> Staging:
    kw = {"lifetime": 180.0, "max_open": 5, "max_operations": 50, "max_bytes": 1 << 20, **kw}
    return Staging(str(root), **kw)


def op(uid: str, method: str = "PUT") -> Operation:
    return Operation(method, uid, "http://localhost", [("Content-Type", "text/turtle")], [uid],
                     "admin", "2024-01-01T00:00:00+00:00")


def stage(staging: Staging, tx_id: str, uid: str, body: bytes = b"<> a <x:T> .",
          touched=None, parsed=None) -> None:
    info = staging.get(tx_id)
    staging.stage(info, op(uid), Received(None, len(body), body),
                  touched if touched is not None else {uid: None}, parsed)


@pytest.fixture
def pair(tmp_path):
    """Two processes' views of one staging directory (two gunicorn workers)."""
    a, b = make(tmp_path / "tx"), make(tmp_path / "tx")
    yield a, b
    a.close()
    b.close()


def test_staging_two_processes_read_each_others_appends(pair):
    a, b = pair
    tx = a.open("admin").id
    stage(a, tx, "/c/1", touched={"/c/1": None, "/c": "e1"})
    stage(b, tx, "/c/2", touched={"/c/2": None, "/c": "e2"})   # b reads a's record first
    stage(a, tx, "/c/3")                                      # a reads only b's new record
    for staging in (a, b):
        info = staging.get(tx)
        assert info.operations == 3
        assert info.touched == {"/c/1": None, "/c": "e1", "/c/2": None, "/c/3": None}
        ops = staging.operations(info)
        assert [o.uids for o in ops] == [["/c/1"], ["/c/2"], ["/c/3"]]
        assert [open_body(o) for o in ops] == [b"<> a <x:T> ."] * 3


def open_body(o: Operation) -> bytes:
    assert o.body is not None
    with open_part(o.body) as fh:
        return fh.read(o.body[2])


def test_staging_near_finds_the_branch_only(pair):
    a, b = pair
    tx = a.open("admin").id
    for uid in ("/a", "/a/b", "/c", "/a/b/c/d", "/ab"):
        stage(a, tx, uid)
    info = b.get(tx)

    def near(uid):
        return [o.uids[0] for o in b.operations(info, uid)]
    assert near("/a/b/c") == ["/a", "/a/b", "/a/b/c/d"]
    assert near("/a") == ["/a", "/a/b", "/a/b/c/d"]
    assert near("/c/x") == ["/c"]
    assert near("/zz") == []
    assert near("/") == ["/a", "/a/b", "/c", "/a/b/c/d", "/ab"]


def test_staging_a_killed_append_is_dropped(pair):
    a, b = pair
    tx = a.open("admin").id
    stage(a, tx, "/x", parsed=[("<s>", "<p>", '"o"')])
    path = os.path.join(a.root, tx)
    for name in ("journal", "data"):   # a worker killed half-way through an append
        with open(os.path.join(path, name), "ab") as fh:
            fh.write(b'{"touched": {"/y"')
    info = b.get(tx)
    assert info.operations == 1 and set(info.touched) == {"/x"}
    stage(b, tx, "/z")
    info = a.get(tx)
    assert [o.uids for o in a.operations(info)] == [["/x"], ["/z"]]
    assert [open_body(o) for o in a.operations(info)] == [b"<> a <x:T> ."] * 2
    assert load_parsed(a.operations(info)[0]) == [("<s>", "<p>", '"o"')]


def test_staging_empty_body_and_no_triples(pair):
    a, _ = pair
    tx = a.open("admin").id
    stage(a, tx, "/e", body=b"", parsed=[])
    (o,) = a.operations(a.get(tx))
    assert open_body(o) == b""
    assert load_parsed(o) == []


def test_staging_a_large_body_gets_its_own_file(tmp_path):
    staging = make(tmp_path / "tx", max_bytes=4 << 20)
    info = staging.open("admin")
    big = os.urandom((1 << 20) + 1)
    with staging.receive(info, io.BytesIO(big)) as received:
        assert received.data is None and received.size == len(big)
        staging.stage(info, op("/big"), received, {"/big": None})
    files = os.listdir(os.path.join(staging.root, info.id))
    assert len([f for f in files if f.endswith(".body")]) == 1
    (o,) = staging.operations(staging.get(info.id))
    assert open_body(o) == big
    with staging.receive(info, io.BytesIO(big)):   # not staged: its file goes
        pass
    assert len([f for f in os.listdir(os.path.join(staging.root, info.id))
                if f.endswith(".body")]) == 1
    staging.finish(info, "rolled back")
    assert os.listdir(os.path.join(staging.root, info.id)) == ["meta.json"]
    staging.close()


def test_staging_sweeps_from_a_lookup(tmp_path):
    now = [1000.0]
    staging = make(tmp_path / "tx", clock=lambda: now[0])
    old = staging.open("admin").id
    stage(staging, old, "/a")
    now[0] += 100
    young = staging.open("admin").id
    now[0] += 90     # ``old`` has expired; nobody looks at it
    assert staging.get(young).state == OPEN
    assert os.listdir(os.path.join(staging.root, old)) == ["meta.json"]
    assert staging.lookup(old).state == "expired"
    staging.close()
