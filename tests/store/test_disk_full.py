"""A full disk: a clear ``DiskFullError`` (an ``InsufficientStorageError``), nothing kept.

On a real small file system (a tmpfs, skipped where mounting is not permitted)
and, for binaries, with the file writes failing with ``ENOSPC`` / ``EDQUOT``.
"""
from __future__ import annotations

import errno
import os

import pytest

from lakesuperior import exceptions as exc
from lakesuperior.store import binaries as binmod
from lakesuperior.store.binaries import BinaryStore
from lakesuperior.store.quadstore import QuadStore

from .smallfs import small_filesystem

P = "<http://ex.org/p>"
G = "<http://ex.org/g>"


def _leftovers(store: BinaryStore) -> list[str]:
    return sorted(os.listdir(os.path.join(store.root, "tmp")))


def _full_disk(monkeypatch, code):
    """The binary store's file writes fail as on a full disk (or over quota)."""
    def write(self, data):
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(binmod._FileSink, "write", write)


@pytest.mark.parametrize("code, word", [(errno.ENOSPC, "full"), (errno.EDQUOT, "quota")])
def test_binary_write_failing_for_room_is_disk_full(tmp_path, monkeypatch, code, word):
    store = BinaryStore(tmp_path / "bin")
    _full_disk(monkeypatch, code)
    with pytest.raises(exc.DiskFullError, match=word) as info:
        store.put(b"x" * 100)
    assert isinstance(info.value, exc.InsufficientStorageError)
    assert str(tmp_path) not in str(info.value)          # no host path in the message
    monkeypatch.undo()
    assert list(store) == [] and _leftovers(store) == []


def test_other_write_errors_stay_what_they_are(tmp_path, monkeypatch):
    store = BinaryStore(tmp_path / "bin")
    _full_disk(monkeypatch, errno.EIO)
    with pytest.raises(OSError) as info:
        store.put(b"x" * 100)
    assert not isinstance(info.value, exc.LakesuperiorError)
    monkeypatch.undo()
    assert list(store) == [] and _leftovers(store) == []


def test_binary_bigger_than_a_real_small_disk(tmp_path):
    with small_filesystem(tmp_path / "fs", "2m") as fs:
        store = BinaryStore(os.path.join(fs, "bin"))
        with pytest.raises(exc.DiskFullError, match="binary store is full"):
            store.put(os.urandom(4 << 20))
        assert list(store) == [] and _leftovers(store) == []
        info = store.put(b"small")                        # the room is back
        assert list(store) == [info.digest]


def test_store_commit_on_a_real_small_disk(tmp_path):
    """LMDB's commit fails on the full disk (a short write: EIO): DiskFullError,
    the store keeps what it had and stays usable."""
    with small_filesystem(tmp_path / "fs", "3m") as fs:
        st = QuadStore(os.path.join(fs, "store"))
        try:
            with st.write() as txn:
                txn.add_graph(G, [("<http://ex.org/a>", P, '"before"')])
            big = [("<http://ex.org/a>", P, f'"{i}{"y" * 1000}"') for i in range(6000)]
            with pytest.raises(exc.DiskFullError, match="disk holding the repository's store"):
                with st.write() as txn:
                    txn.add_graph("<http://ex.org/big>", big)
            with st.read() as txn:
                assert sorted(txn.graphs()) == [G]
                assert txn.triples(G) == [("<http://ex.org/a>", P, '"before"')]
            with st.write() as txn:                       # a small write still fits
                txn.add_graph(G, [("<http://ex.org/a>", P, '"after"')])
            with st.read() as txn:
                assert txn.triples(G) == [("<http://ex.org/a>", P, '"after"')]
        finally:
            st.close()


def test_index_catch_up_on_a_real_full_disk(tmp_path):
    """The union index cannot take in a committed write for want of room: a
    DiskFullError that says the write is kept, and it is."""
    with small_filesystem(tmp_path / "fs", "3m") as fs:
        st = QuadStore(os.path.join(fs, "store"), sync=False)
        try:
            rows = [("<http://ex.org/a>", P, f'"{i}"') for i in range(30000)]
            with st.write() as txn:
                txn.add_graph(G, rows)
            # The index's rows are compact: leave them less room than they need.
            free = os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize
            with open(os.path.join(fs, "filler"), "wb") as fh:
                fh.write(b"\0" * max(free - (200 << 10), 0))
            with pytest.raises(exc.DiskFullError, match="index is full.*they are kept"):
                st.index()
            with st.read() as txn:
                assert len(txn.triples(G)) == 30000
        finally:
            st.close()
