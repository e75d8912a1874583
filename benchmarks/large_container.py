"""Large-container benchmark (issue 15, deliverable 5).

Builds (or reuses, with ``--data-dir``) a container ``/bench`` with ``--count``
small children, written straight through ``Repository`` in transactions of
2,000 (the children's content does not matter here), then times, median of
``--repeat`` runs each:

* ``get_children_s``: ``Repository.get("/bench").children`` (Python retrieval);
* ``get_turtle_s``: ``Repository.get("/bench").serialize("text/turtle")``;
* ``http_turtle_s``: ``GET /rest/bench`` (Turtle) through the Flask app, in
  process (no socket: what the server does for the request);
* ``http_html_first_s``: ``GET /rest/bench`` as HTML, the staff page with its
  first page of children, the same way;
* ``replace_s`` / ``patch_s``: a PUT-like replace and a SPARQL Update of the
  container's own triples (these must not grow with the children);
* ``memory``: this process's resident-set figures at the end (``peak_rss_bytes``).

Prints one line and writes JSON (``--output``)::

    python benchmarks/large_container.py --count 20000 --data-dir /tmp/c20k
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

from lakesuperior import Repository
from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.memory import process_memory
from lakesuperior.endpoints.app import create_app

BATCH = 2000


def _median(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 5)


def build(repo: Repository, count: int) -> int:
    """Add children until ``/bench`` has ``count``; return how many it has."""
    if not repo.exists("/bench"):
        repo.create_or_replace("/bench", data=b'<> <http://ex.org/p> "0" .',
                               media_type="text/turtle")
    have = len(repo.get("/bench").children)
    for start in range(have, count, BATCH):
        with repo.transaction():
            for i in range(start, min(count, start + BATCH)):
                repo.create_or_replace(f"/bench/c{i:07d}", data=b'<> <http://ex.org/p> "x" .',
                                       media_type="text/turtle")
    return max(have, count)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--data-dir", help="repository directory, kept (default: a temporary one)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--output", help="write the results as JSON")
    opts = ap.parse_args(argv)
    tmp = None if opts.data_dir else tempfile.mkdtemp(prefix="lsup-container-")
    path = opts.data_dir or os.path.join(tmp or "", "repo")
    repo = Repository(path, sync=False, auth_enabled=False)
    try:
        t0 = time.perf_counter()
        n = build(repo, opts.count)
        built = time.perf_counter() - t0
        repo.store.index()
        counter = iter(range(1 << 30))
        out = {
            "children": n, "build_s": round(built, 2),
            "get_children_s": _median(lambda: len(repo.get("/bench").children), opts.repeat),
            "get_turtle_s": _median(lambda: repo.get("/bench").serialize("text/turtle"),
                                    opts.repeat),
            "replace_s": _median(lambda: repo.create_or_replace(
                "/bench", data=f'<> <http://ex.org/p> "{next(counter)}" .'.encode(),
                media_type="text/turtle"), opts.repeat),
            "patch_s": _median(lambda: repo.update(
                "/bench", f'INSERT DATA {{ <> <http://ex.org/q> "{next(counter)}" }}'),
                opts.repeat),
        }
        app = create_app(repository=repo)
        client = app.test_client()

        def http_get() -> None:
            resp = client.get("/rest/bench", headers={"Accept": "text/turtle"}, buffered=True)
            if resp.status_code != 200:
                raise SystemExit(f"GET /rest/bench: {resp.status_code}")

        out["http_turtle_s"] = _median(http_get, opts.repeat)

        def html_page() -> None:    # the staff page: its first page of children
            resp = client.get("/rest/bench", headers={"Accept": "text/html"}, buffered=True)
            if resp.status_code != 200 or b"Children" not in resp.data:
                raise SystemExit(f"GET /rest/bench as HTML: {resp.status_code}")

        out["http_html_first_s"] = _median(html_page, opts.repeat)
        out["turtle_bytes"] = len(repo.get("/bench").serialize("text/turtle"))
        out["memory"] = process_memory()     # peak_rss_bytes: the build and the reads
        out["machine"] = machine()
    finally:
        repo.close()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"large_container n={out['children']} | get+children {out['get_children_s']} s | "
          f"get+Turtle {out['get_turtle_s']} s | HTTP GET (in process) "
          f"{out['http_turtle_s']} s | HTML page 1 {out['http_html_first_s']} s | "
          f"replace {out['replace_s']} s | "
          f"PATCH {out['patch_s']} s | peak RSS "
          f"{(out['memory'] or {}).get('peak_rss_bytes', 0) >> 20} MB")
    write_json(opts.output, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
