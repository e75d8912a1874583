"""The store's caches shared by the threads of a process: several readers at once
keep them within their bounds and answer as one reader would."""
from __future__ import annotations

import threading

from lakesuperior.store.quadstore import QuadStore

P = "<http://ex.org/contains>"
THREADS = 8


def _together(work, n: int = THREADS) -> list:
    """Run ``work(i)`` in ``n`` threads released at once; their results, in order."""
    barrier = threading.Barrier(n)
    out: list = [None] * n
    errors: list = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            out[i] = work(i)
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return out


def test_iri_cache_stays_within_its_bound_under_concurrent_listings(tmp_path):
    limit, children = 1000, 900
    qs = QuadStore(str(tmp_path / "s"), sync=False, iri_cache=limit)
    try:
        with qs.write() as w:
            for t in range(THREADS):
                g = f"<http://ex.org/g{t}>"
                w.add([(g, P, f"<http://ex.org/g{t}/child{i}>", g) for i in range(children)])
            w.commit()
        for _ in range(5):
            qs._forget_cache()

            def listing(t: int) -> int:
                with qs.read() as r:
                    return len(r.objects(f"<http://ex.org/g{t}>", P, f"<http://ex.org/g{t}>"))
            assert _together(listing) == [children] * THREADS
            assert qs.iri_cache_size() <= limit
    finally:
        qs.close()


def test_graph_prefix_counts_are_right_from_concurrent_readers(tmp_path):
    """The answers by graph number to "is this graph's name under the prefix" are
    one table per store, learned and grown by the readers that meet new graphs."""
    qs = QuadStore(str(tmp_path / "s"), sync=False)
    try:
        with qs.write() as w:
            for i in range(3000):
                kind = "a" if i % 3 else "b"
                g = f"<info:{kind}/{i}>"
                w.add([(g, P, f"<urn:x:{i % 50}>", g)])
            w.commit()
        qs.index()
        for _ in range(3):      # each time with a new table: the store opened again
            qs.close()
            qs = QuadStore(str(tmp_path / "s"), sync=False)

            def count(t: int, store: QuadStore = qs) -> int:
                with store.read() as r:
                    return r.count(p=P, distinct=True,
                                   graph_prefix="<info:a/" if t % 2 else "<info:b/")
            assert _together(count) == [1000, 2000] * (THREADS // 2)
    finally:
        qs.close()
