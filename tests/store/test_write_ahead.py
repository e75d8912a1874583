"""The main data file is kept written past LMDB's last page (``StoreEnv.write_ahead``):
with ``sync`` on, a commit's new pages land in blocks the file already has, so its
fsync flushes data only. The zeros are no part of the store, and a disk without
room for them leaves the file as it was."""
from __future__ import annotations

import os

from lakesuperior.store.env import WRITE_AHEAD_MAX, WRITE_AHEAD_MIN
from lakesuperior.store.quadstore import QuadStore

from .smallfs import small_filesystem

P = "<http://ex.org/p>"


def _graph(i: int) -> tuple[str, list[tuple[str, str, str]]]:
    g = f"<http://ex.org/g{i}>"
    return g, [(g, P, f'"{i} {"x" * 60} {j}"') for j in range(100)]


def _file(store: QuadStore) -> tuple[int, int, int]:
    """(bytes LMDB uses, file size, bytes allocated) of the main data file."""
    used = store.table_stats()["main"]["file_pages"] * store.table_stats()["main"]["page_size"]
    st = os.stat(os.path.join(store.path, "data.mdb"))
    return used, st.st_size, st.st_blocks * 512


def test_data_file_written_ahead_with_sync_on(tmp_path):
    store = QuadStore(str(tmp_path / "s"))
    try:
        for i in range(40):
            used, _, _ = _file(store)             # the last commit's pages
            ahead = min(max(used >> 4, WRITE_AHEAD_MIN), WRITE_AHEAD_MAX)
            with store.write() as txn:
                _, size, allocated = _file(store)
                assert size >= used + ahead // 2  # room for this commit's new pages
                assert allocated >= size          # written, not a hole
                txn.add_graph(*_graph(i))
            assert _file(store)[1] == size        # the commit wrote inside the file
        with store.read() as txn:
            assert len(txn.triples("<http://ex.org/g39>")) == 100
    finally:
        store.close()
    store = QuadStore(str(tmp_path / "s"))      # the zeros past the last page are no data
    try:
        with store.read() as txn:
            assert sorted(txn.graphs()) == sorted(_graph(i)[0] for i in range(40))
            assert sorted(txn.triples("<http://ex.org/g7>")) == sorted(_graph(7)[1])
        assert store.table_stats()["main"]["file_pages"] * 4096 < os.stat(
            os.path.join(store.path, "data.mdb")).st_size
    finally:
        store.close()


def test_no_write_ahead_with_sync_off(tmp_path):
    store = QuadStore(str(tmp_path / "s"), sync=False)
    try:
        for i in range(5):
            with store.write() as txn:
                txn.add_graph(*_graph(i))
        used, size, _ = _file(store)
        assert size < used + WRITE_AHEAD_MIN // 2
    finally:
        store.close()


def test_read_only_open_writes_nothing_ahead(tmp_path):
    store = QuadStore(str(tmp_path / "s"), sync=False)
    with store.write() as txn:
        txn.add_graph(*_graph(0))
    store.close()
    before = os.stat(tmp_path / "s" / "data.mdb").st_size
    ro = QuadStore(str(tmp_path / "s"), readonly=True)
    try:
        with ro.read() as txn:
            assert len(txn.triples(_graph(0)[0])) == 100
    finally:
        ro.close()
    assert os.stat(tmp_path / "s" / "data.mdb").st_size == before


def test_no_room_for_the_zeros_leaves_the_file_and_the_write_fits(tmp_path):
    """On a disk with room for a commit but not for the zeros ahead: the commit is
    kept, the file keeps no partial zeros, and the disk's last room is not taken."""
    with small_filesystem(tmp_path / "fs", "2m") as fs:
        store = QuadStore(os.path.join(fs, "store"))
        try:
            free = os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize
            with open(os.path.join(fs, "filler"), "wb") as fh:
                fh.write(b"\0" * max(free - (96 << 10), 0))
            for i in range(4):
                # each commit tries the zeros again (the file is short of them)
                with store.write() as txn:
                    txn.add_graph(*_graph(i))
            with store.read() as txn:
                assert len(txn.triples(_graph(3)[0])) == 100
            used, size, _ = _file(store)
            assert size == used           # the zeros were given back, none left partly
        finally:
            store.close()
