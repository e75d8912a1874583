"""The resident pages of the store's LMDB maps stay bounded in a process
(``store.resident_map_limit``, issue 15 deliverable 6): measured in page counts
from ``/proc``, never by a clock."""
from __future__ import annotations

import mmap
import os
import sys
from contextlib import contextmanager

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError
from lakesuperior.store.residency import MapTrimmer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

BIG = '"' + "x" * 3000 + '"'


def _fill(repo, n: int = 300) -> None:
    with repo.transaction():
        for i in range(n):
            repo.create_or_replace(f"/r{i}", data=f"<> <http://ex.org/p> {BIG} .".encode(),
                                   media_type="text/turtle")


def _read_all(repo, n: int = 300) -> list:
    return [repo.get(f"/r{i}").user_data for i in range(n)]


def _maps_resident_bytes(files: tuple[str, ...]) -> int:
    """Resident bytes of this process's mappings of ``files`` (``/proc/self/smaps``):
    the store's maps alone, not the code pages a first call may bring in."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            head = line.split(None, 1)[0]
            if not head.endswith(":"):               # a mapping's first line
                inside = line.rstrip("\n").endswith(files)
            elif inside and head == "Rss:":
                total += int(line.split()[1]) << 10
    return total


def test_trim_drops_the_maps_pages_and_reads_go_on(repo_factory):
    # No indexer thread: one applying the log beside the trim maps index pages
    # back in between the trim and the count.
    repo = repo_factory(resident_map_limit=0, background_index=False)
    _fill(repo)
    trimmer = MapTrimmer(repo.config.store_dir, 1 << 20)
    before = _read_all(repo)
    resident = _maps_resident_bytes(trimmer.files)
    assert resident >= 512 << 10                     # the reads mapped the records in
    assert trimmer.trim() >= 1
    assert _maps_resident_bytes(trimmer.files) < resident - (512 << 10)
    assert _read_all(repo) == before


def test_tick_trims_past_the_limit_only(repo_factory):
    repo = repo_factory(resident_map_limit=0)
    _fill(repo)
    _read_all(repo)
    never = MapTrimmer(repo.config.store_dir, 0, every=1)
    high = MapTrimmer(repo.config.store_dir, 1 << 45, every=1)
    low = MapTrimmer(repo.config.store_dir, 1, every=3)
    for _ in range(6):
        never.tick()
        high.tick()
        low.tick()
    assert never.trims == 0 and high.trims == 0 and low.trims == 2


def test_repository_keeps_its_maps_under_the_limit(repo_factory):
    repo = repo_factory(resident_map_limit=1)
    assert repo.map_trimmer.limit == 1
    _fill(repo, 50)
    for _ in range(3):
        _read_all(repo, 50)
    assert repo.map_trimmer.trims >= 1


def test_resident_map_limit_configuration(monkeypatch):
    assert Config.load(environ={}).resident_map_limit == 64 << 20
    env = {"LSUP_STORE_RESIDENT_MAP_LIMIT": "0"}
    assert Config.load(environ=env).resident_map_limit == 0
    with pytest.raises(ConfigError, match="resident_map_limit"):
        Config.load(environ={"LSUP_STORE_RESIDENT_MAP_LIMIT": "-1"})


def test_the_background_indexer_checks_after_each_batch(repo_factory):
    repo = repo_factory(resident_map_limit=1, background_index=False)
    _fill(repo, 40)
    from lakesuperior.store.background import IndexerThread
    batches = []
    thread = IndexerThread(repo.store, idle_poll=0.01,
                           after_batch=lambda: batches.append(repo.map_trimmer.check()))
    thread.start()
    try:
        for _ in range(6000):            # the thread applies the log, then idles
            if not repo.store.pending():
                break
            thread.stop_event.wait(0.01)
    finally:
        thread.stop()
    assert batches and thread.applied >= 40


# -- one call, one batch: the trimmer looks inside them (``StoreEnv.mapped``) --------

G = "<http://ex.org/g>"
CONTAINS = "<http://www.w3.org/ns/ldp#contains>"
LIT_P = "<http://ex.org/lit>"


def _store_with_children(path, n: int) -> None:
    from lakesuperior.store.quadstore import QuadStore
    with QuadStore(path, sync=False) as st:
        with st.write() as txn:
            txn.add_graph(G, [(G, "<http://ex.org/p>", '"own"')])
            txn.add([(G, CONTAINS, f"<http://ex.org/g/c{i}>", G) for i in range(n)])


def test_the_store_owns_the_trimmer_and_the_repository_uses_it(repo_factory):
    repo = repo_factory(resident_map_limit=5 << 20)
    assert repo.map_trimmer is repo.store.map_trimmer
    assert repo.store.map_trimmer.limit == 5 << 20
    from lakesuperior.store.quadstore import QuadStore
    with QuadStore(repo.config.store_dir + "-other", sync=False) as st:
        assert st.map_trimmer.limit == 0          # a bare store: no bound unless asked


def test_one_long_listing_makes_the_trimmer_look(tmp_path):
    from lakesuperior.store.quadstore import QuadStore
    from lakesuperior.store.residency import CHECK_STEPS
    path = str(tmp_path / "s")
    _store_with_children(path, 3 * CHECK_STEPS)
    for limit, trims in ((1, 3), (0, 0), (1 << 45, 0)):
        with QuadStore(path, iri_cache=10, resident_map_limit=limit) as st:
            with st.read() as txn:
                assert len(txn.objects(G, CONTAINS, G)) == 3 * CHECK_STEPS   # one call
            assert st.map_trimmer.trims == trims, limit


def test_the_cached_part_of_a_listing_maps_nothing_new(tmp_path):
    from lakesuperior.store.quadstore import QuadStore
    from lakesuperior.store.residency import CHECK_STEPS
    path = str(tmp_path / "s")
    _store_with_children(path, 2 * CHECK_STEPS)
    with QuadStore(path, resident_map_limit=1) as st:
        with st.read() as txn:
            txn.objects(G, CONTAINS, G)            # read from terms: the trimmer looks
            trims = st.map_trimmer.trims
            assert trims >= 1
            txn.objects(G, CONTAINS, G)            # all from the IRI cache
        assert st.map_trimmer.trims == trims


def test_an_index_batch_makes_the_trimmer_look_and_indexes_the_same(tmp_path):
    from lakesuperior.store.quadstore import QuadStore
    n = 40
    quads = [(f"<http://ex.org/r{i}>", LIT_P, f'"v{i} {j}"', f"<http://ex.org/r{i}>")
             for i in range(n) for j in range(30)]
    results = []
    for limit in (0, 1):
        with QuadStore(str(tmp_path / f"s{limit}"), sync=False,
                       resident_map_limit=limit) as st:
            for i in range(n):
                with st.write() as txn:
                    txn.add(quads[i * 30:(i + 1) * 30])
            assert st.index() == n
            # 2,440 rows put, 256 at a time: the trimmer looked inside the batch
            assert st.map_trimmer.trims >= 2 if limit else st.map_trimmer.trims == 0
            with st.read() as txn:
                results.append((txn.count(None, LIT_P, None, None),
                                sorted(txn.match(None, LIT_P, '"v7 3"', None)),
                                txn.count(None, None, None, None)))
    assert results[0] == results[1] == (n * 30, [quads[7 * 30 + 3]], n * 30)


# -- where the maps are: found once, again after a remap; statm kept open ---------

@contextmanager
def _counting_finds(tmp_path, monkeypatch):
    """A small store's path and trimmer (any excess trims), and a list that gets
    one item each time the trimmer reads ``/proc/self/maps``."""
    from lakesuperior.store.quadstore import QuadStore
    path = str(tmp_path / "s")
    _store_with_children(path, 10)
    with QuadStore(path, resident_map_limit=1) as st:
        trimmer, found = st.map_trimmer, []
        real = trimmer._find_maps
        monkeypatch.setattr(trimmer, "_find_maps", lambda: found.append(1) or real())
        yield path, trimmer, found


def test_the_maps_are_found_once_and_again_after_a_remap(tmp_path, monkeypatch):
    with _counting_finds(tmp_path, monkeypatch) as (_path, trimmer, found):
        assert trimmer.trim() == 2 and trimmer.trim() == 2     # main and index maps
        assert len(found) == 1
        with trimmer.remapping():
            pass
        assert trimmer.trim() == 2 and len(found) == 2


def test_a_map_that_grows_is_trimmed_where_it_is_now(tmp_path):
    from lakesuperior.store.quadstore import QuadStore
    path = str(tmp_path / "s")
    quads = [(f"<http://ex.org/r{i}>", LIT_P, BIG, f"<http://ex.org/r{i}>") for i in range(300)]
    with QuadStore(path, sync=False, map_size=1 << 20, resident_map_limit=1) as st:
        st.map_trimmer.trim()
        first = st.map_trimmer._ranges
        for i in range(0, 300, 30):             # about 1 MB of literals: the map grows
            with st.write() as txn:
                txn.add(quads[i:i + 30])
            with st.read() as txn:
                assert txn.count(None, LIT_P, None, None) == i + 30
        assert st.map_trimmer.trim() == 2
        now = st.map_trimmer._ranges
        assert now is not None and sum(n for _, n in now) > sum(n for _, n in first)
        with st.read() as txn:
            assert sorted(txn.match(None, LIT_P, None, None)) == sorted(quads)
        st.map_trimmer.trim()
    assert st.map_trimmer._ranges is None      # closed: forgotten, nothing to trim
    assert st.map_trimmer.trim() == 0


def test_statm_is_read_through_a_descriptor_of_this_process(tmp_path):
    trimmer = MapTrimmer(str(tmp_path), 1)
    shared = trimmer.resident_shared_bytes()
    assert shared > 0
    assert trimmer._statm is not None and trimmer._statm[0] == os.getpid()
    pid = os.fork()
    if pid == 0:                                # the child opens its own
        ok = trimmer.resident_shared_bytes() > 0 and trimmer._statm[0] == os.getpid()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    trimmer.close()
    assert trimmer._statm is None
    assert trimmer.resident_shared_bytes() > 0   # reopened when needed
    trimmer.close()


def test_maps_of_the_files_mapped_twice_are_found_every_time(tmp_path, monkeypatch):
    with _counting_finds(tmp_path, monkeypatch) as (path, trimmer, found):
        with open(os.path.join(path, "data.mdb"), "rb") as fh:   # a second map of main
            other = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
            try:
                assert trimmer.trim() == 3 and trimmer.trim() == 3
                assert len(found) == 2           # not kept: it is not told of that map's end
            finally:
                other.close()
        assert trimmer.trim() == 2 and trimmer.trim() == 2 and len(found) == 3
