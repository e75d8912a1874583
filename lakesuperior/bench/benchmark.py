"""``lsup-benchmark``: the ingest benchmark of WORKLOAD.md, through Python or HTTP.

Creates ``--count`` children of one container (``--parent``), by PUT
(client-minted ``<parent>/<uuid4>``) or POST (server-minted), each a fresh
synthetic graph of ``--graph-size`` triples about itself (see
``lakesuperior.bench.workload``) or, with ``--resource-type binary|both``, a
binary of ``--binary-size`` random bytes (``both`` alternates). Only the
request (or API call) is timed, not making its body. Meanwhile it samples the
union index's lag behind the last commit (``index_lag``, ``lakesuperior.bench.lag``).
Then measures the first ``SELECT (COUNT(?s) AS ?c) WHERE { ?s a ldp:Container }``
right after the ingest (``first_query_s``: the index may still be behind), and
the container: a Turtle GET with all its ``ldp:contains``, a retrieval through
the Python API, and the same count once the union index is current.

Two doors (``lakesuperior.bench.targets``), one script:

* ``--mode python``: the ``Repository`` in this process, on ``--data-dir`` (a
  temporary directory, removed afterwards, if not given);
* ``--mode http --endpoint URL``: plain LDP over HTTP (PUT/POST Turtle,
  container creation by PUT with ``Link: <ldp:BasicContainer>; rel="type"``),
  so it runs unchanged against Lakesuperior or Fedora
  (``--endpoint http://127.0.0.1:8080/rest/ --auth fedoraAdmin:fedoraAdmin``).
  ``--data-dir`` (the server's, when it is ours and local) adds the store size
  and the Python retrieval time; ``--sparql URL`` names the SPARQL endpoint
  (default: ``/query/sparql`` on the endpoint's host, if it answers).

With ``--transaction N`` (HTTP), every N requests run in one Fedora 6 HTTP
transaction (``fcr:tx``, ``Atomic-ID``): opening one is not timed, each commit
is timed apart (``commit_ms``); the request latencies are those inside it.

With ``--gets N``, then times N GETs of a resource ``--get-depth`` levels
below the root by ``--get-clients`` concurrent clients, optionally with an ACL
at each level and as the anonymous agent (``lakesuperior.bench.reads``).

With ``--clients N``, N concurrent clients share the ingest (``lakesuperior.bench.clients``:
HTTP clients are processes with a keep-alive connection each, Python clients threads);
``requests_per_s`` is then the requests over the wall time of that phase.

Prints one line of text (two with ``--gets``); ``--output FILE.json`` writes the figures (keys as in
WORKLOAD.md, plus a few more), ``--plot FILE.png`` the latency curve (needs
matplotlib: ``pip install 'lakesuperior[bench]'``; ``lakesuperior.bench.figures``).
Ctrl-C stops the run and reports what ran.
"""
from __future__ import annotations

import gc
import importlib.util
import random
import sys
import time
import uuid
from typing import Any

import click

from lakesuperior.bench import clients
from lakesuperior.bench.figures import machine, plot, summarize, summary_line, write_json
from lakesuperior.bench.lag import LagSampler
from lakesuperior.bench.memory import memory_figures
from lakesuperior.bench.reads import read_phase, reads_line
from lakesuperior.bench.targets import (
    OCTETS,
    TURTLE,
    HttpTarget,
    Options,
    PythonTarget,
    child_path,
)
from lakesuperior.bench.workload import GRAPH_SIZE, random_bytes, workload_turtle
from lakesuperior.exceptions import BenchmarkError, LakesuperiorError
from lakesuperior.http.client import parse_auth

__all__ = ["main", "command", "run"]


def _parent_path(path: str) -> str:
    return "/" + path.strip().strip("/")


def _ratio(last: float | None, first: float | None) -> float | None:
    return round(last / first, 3) if last is not None and first else None


# --- the run -----------------------------------------------------------------------------------

def run(opts: Options, progress: Any = None, echo: Any = None) -> dict[str, Any]:
    """Run the benchmark; returns the result (the JSON document).

    ``progress``: an object with ``update(n)`` and optionally ``finish()``, or None.
    Ctrl-C stops the ingest (or the post-run measurements) and returns what ran,
    with ``"interrupted": true``.
    """
    if opts.count < 1:
        raise BenchmarkError("--count must be at least 1")
    if opts.graph_size < 4:
        raise BenchmarkError("--graph-size must be at least 4")
    if opts.transaction and opts.mode != "http":
        raise BenchmarkError("--transaction groups HTTP requests: it needs --mode http")
    if opts.transaction and opts.clients > 1:
        raise BenchmarkError("--transaction is for one client: it cannot go with --clients")
    parent = _parent_path(opts.parent)
    rng = random.Random(opts.seed)
    target: Any = PythonTarget(opts) if opts.mode == "python" else HttpTarget(opts)
    latencies: list[float] = []
    commits: list[float] = []     # --transaction: each commit, timed apart
    kinds = {"rdf": ("rdf",), "binary": ("binary",), "both": ("rdf", "binary")}[
        opts.resource_type]
    n_rdf = 0
    interrupted = False
    error = None
    post: dict[str, Any] = {"container_get_s": None, "python_retrieval_s": None,
                            "sparql_count_s": None, "first_query_s": None}
    wall = 0.0
    concurrent_wall: float | None = None   # --clients: the concurrent phase's wall time
    lag = None
    reads = None
    memory = None
    try:
        internal = target.prepare(parent, opts.delete_container)
        gc.collect()
        sampler = LagSampler(target.index_state).start()
        wall0 = time.perf_counter()
        try:
            if opts.clients > 1:
                outcome = _concurrent(opts, target, parent, internal)
                latencies, n_rdf = outcome.latencies_ms, outcome.rdf
                interrupted, error = outcome.interrupted, outcome.error
                concurrent_wall = outcome.wall_s
                if progress is not None:
                    progress.update(outcome.count)
            for i in range(opts.count if opts.clients == 1 else 0):
                if opts.transaction and i % opts.transaction == 0:
                    target.begin()
                kind = kinds[i % len(kinds)]
                if kind == "rdf":
                    body, ctype = workload_turtle(rng, internal, opts.graph_size), TURTLE
                else:
                    body, ctype = random_bytes(rng, opts.binary_size), OCTETS
                if opts.method == "put":
                    path = child_path(parent, str(uuid.uuid4()))
                    t0 = time.perf_counter()
                    target.put(path, body, ctype)
                else:
                    t0 = time.perf_counter()
                    target.post(parent, body, ctype)
                latencies.append((time.perf_counter() - t0) * 1000)
                n_rdf += kind == "rdf"
                if opts.transaction and ((i + 1) % opts.transaction == 0
                                         or i + 1 == opts.count):
                    t0 = time.perf_counter()
                    target.commit()
                    commits.append((time.perf_counter() - t0) * 1000)
                if progress is not None:
                    progress.update(1)
        except KeyboardInterrupt:
            interrupted = True
        except BenchmarkError as e:
            error = str(e)
        wall = time.perf_counter() - wall0 if concurrent_wall is None else concurrent_wall
        lag = sampler.stop()
        target.release_store()
        memory_ingest = memory_figures(opts.mode, target.data_dir)
        if progress is not None and hasattr(progress, "finish"):
            progress.finish()
        if opts.post_run and not interrupted and not error:
            if echo:
                echo("Measuring the container (GET, Python retrieval, SPARQL count)...")
            try:
                target.post_run(parent, post, opts.sparql_count)
            except KeyboardInterrupt:
                interrupted = True
        if opts.gets and not interrupted and not error:
            if echo:
                echo(f"Timing {opts.gets} GETs ({opts.get_clients} client(s))...")
            try:
                reads = read_phase(opts, target)
            except KeyboardInterrupt:
                interrupted = True
            except BenchmarkError as e:
                error = str(e)
        lmdb_bytes, binary_bytes = target.sizes()
        pending = target.index_pending()
        memory = memory_figures(opts.mode, target.data_dir)
    finally:
        target.close()
    done = len(latencies)
    triples = n_rdf * opts.graph_size
    store_bytes = None if lmdb_bytes is None else lmdb_bytes + (binary_bytes or 0)
    lat = summarize(latencies)
    request_s = sum(latencies) / 1000
    result: dict[str, Any] = {
        "mode": opts.mode, "method": opts.method, "count": done, "graph_size": opts.graph_size,
        "latency_ms": lat,
        "wall_s": round(wall, 3),
        "clients": opts.clients,
        "requests_per_s": (round(done / wall, 1) if wall else None) if opts.clients > 1
        else (round(done / request_s, 1) if request_s else None),
        "store_bytes": store_bytes,
        "bytes_per_triple": round(lmdb_bytes / triples, 1) if lmdb_bytes and triples else None,
        "post_run": post,
        "reads": reads,
        "memory": memory,
        "memory_after_ingest": memory_ingest,
        "machine": machine(),
        # more than WORKLOAD.md asks:
        "requested_count": opts.count, "resource_type": opts.resource_type,
        "binary_size": opts.binary_size if opts.resource_type != "rdf" else None,
        "parent": parent, "endpoint": opts.endpoint, "seed": opts.seed,
        "triples": triples, "lmdb_bytes": lmdb_bytes, "binary_bytes": binary_bytes,
        "request_time_s": round(request_s, 3),
        "last_first_ratio": _ratio(lat["last_1k_median"], lat["first_1k_median"]),
        "index_pending": pending, "index_lag": lag, "sync": target.sync,
        "versioning_auto": target.versioning_auto,
        "transaction": opts.transaction or None,
        "commit_ms": summarize(commits) if opts.transaction else None,
        "interrupted": interrupted, "error": error,
        "latencies_ms": [round(x, 4) for x in latencies],
    }
    return result


def _concurrent(opts: Options, target: Any, parent: str, internal: list[str]
                ) -> clients.Outcome:
    """The ingest by ``opts.clients`` concurrent clients (``bench.clients``)."""
    job = clients.Job(op=opts.method, path=parent,
                      endpoint=opts.endpoint if opts.mode == "http" else None,
                      auth=opts.auth, internal=tuple(internal), graph_size=opts.graph_size,
                      resource_type=opts.resource_type, binary_size=opts.binary_size,
                      seed=opts.seed, timeout=opts.timeout)
    return clients.run(job, opts.clients, count=opts.count,
                       target=target if opts.mode == "python" else None)


# --- the command -----------------------------------------------------------------------------

class _Bar:
    """A click progress bar on stderr, opened on the first update."""

    def __init__(self, length: int, label: str):
        self.bar = click.progressbar(length=length, label=label, file=sys.stderr,
                                     show_pos=True, update_min_steps=max(1, length // 500))
        self.open = False

    def update(self, n: int) -> None:
        if not self.open:
            self.bar.__enter__()
            self.open = True
        self.bar.update(n)

    def finish(self) -> None:
        if self.open:
            self.bar.__exit__(None, None, None)
            self.open = False


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--mode", type=click.Choice(["python", "http"]), default="python",
              show_default=True, help="Through the Python API in-process, or over HTTP.")
@click.option("--endpoint", metavar="URL", help="LDP root for --mode http, e.g. "
              "http://127.0.0.1:8000/rest/ or Fedora's http://127.0.0.1:8080/rest/.")
@click.option("--auth", metavar="USER:PASS", help="HTTP Basic credentials (--mode http).")
@click.option("--count", "-n", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Resources to create.")
@click.option("--parent", default="/bench", show_default=True,
              help="Path of the container the resources go into (created if missing).")
@click.option("--method", type=click.Choice(["put", "post"]), default="put",
              show_default=True, help="PUT to <parent>/<uuid4>, or POST to the parent.")
@click.option("--graph-size", type=click.IntRange(min=4), default=GRAPH_SIZE,
              show_default=True, help="Triples per RDF resource.")
@click.option("--resource-type", type=click.Choice(["rdf", "binary", "both"]), default="rdf",
              show_default=True, help="RDF sources, binaries, or both alternately.")
@click.option("--binary-size", type=click.IntRange(min=0), default=4096, show_default=True,
              help="Bytes of each binary.")
@click.option("--delete-container", is_flag=True,
              help="Delete the parent container (and its tombstone) before the run.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed of the random graphs.")
@click.option("--data-dir", metavar="DIR", help="python: repository directory (default: a "
              "temporary one, removed after). http: the server's data directory, to measure "
              "store size and Python retrieval (our server only).")
@click.option("--config", metavar="FILE", envvar="LSUP_CONFIG", show_envvar=True,
              help="Lakesuperior configuration (python mode, and http with --data-dir).")
@click.option("--sparql", metavar="URL", help="SPARQL endpoint for the post-run count "
              "(http; default: /query/sparql on the endpoint's host, if it answers).")
@click.option("--no-post-run", is_flag=True, help="Skip the post-run measurements.")
@click.option("--no-sparql", is_flag=True, help="Post-run: skip the SPARQL counts (the "
              "first, right after the ingest, and the one once the union index is current) "
              "and the union-index catch-up.")
@click.option("--gets", type=click.IntRange(min=0), default=0, show_default=True,
              help="After the ingest, time this many GETs of one resource (0: none).")
@click.option("--get-depth", type=click.IntRange(min=1, max=50), default=4, show_default=True,
              help="How many levels below the root the GET target is.")
@click.option("--get-clients", type=click.IntRange(min=1, max=256), default=None,
              help="Concurrent clients (threads) making the GETs  [default: --clients].")
@click.option("--acl-each-level", is_flag=True, help="Give each level of the GET path an "
              "ACL (everyone may read): needs Control, e.g. an administrator's --auth.")
@click.option("--get-anonymous", is_flag=True, help="Make the GETs without credentials "
              "(WebAC decides; an administrator bypasses it).")
@click.option("--transaction", type=click.IntRange(min=0), default=0, show_default=True,
              metavar="N", help="http: group every N requests in one HTTP transaction "
              "(fcr:tx); each commit is timed apart (commit_ms), the requests as usual.")
@click.option("--clients", type=click.IntRange(min=1, max=256), default=1, show_default=True,
              metavar="N", help="Concurrent clients of the ingest, each with its own "
              "keep-alive connection (http: a process each; python: a thread each); they "
              "share the --count requests.")
@click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
              help="Seconds to wait for each HTTP response.")
@click.option("--output", "-o", metavar="FILE.json", help="Write the results as JSON.")
@click.option("--plot", "plot_file", metavar="FILE.png",
              help="Plot ms per request (needs matplotlib).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def command(mode: str, endpoint: str | None, auth: str | None, count: int, parent: str,
            method: str, graph_size: int, resource_type: str, binary_size: int,
            delete_container: bool, seed: int, data_dir: str | None, config: str | None,
            sparql: str | None, no_post_run: bool, no_sparql: bool, gets: int,
            get_depth: int, get_clients: int | None, acl_each_level: bool,
            get_anonymous: bool, transaction: int, clients: int, timeout: float, output: str | None,
            plot_file: str | None, quiet: bool) -> None:
    """Time the creation of COUNT resources in one container (WORKLOAD.md), then
    the container's retrieval and a SPARQL count; print one line, optionally
    write JSON and a plot."""
    if mode == "http" and not endpoint:
        raise click.UsageError("--mode http needs --endpoint URL")
    if plot_file and importlib.util.find_spec("matplotlib") is None:
        raise click.UsageError("--plot needs matplotlib: pip install 'lakesuperior[bench]' "
                               "(or pip install matplotlib)")
    try:
        credentials = parse_auth(auth)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--auth") from e
    opts = Options(mode=mode, endpoint=endpoint, auth=credentials, data_dir=data_dir,
                   config=config, count=count, parent=parent, method=method,
                   graph_size=graph_size, resource_type=resource_type,
                   binary_size=binary_size, delete_container=delete_container, seed=seed,
                   sparql=sparql, post_run=not no_post_run, sparql_count=not no_sparql,
                   timeout=timeout, gets=gets, get_depth=get_depth,
                   get_clients=clients if get_clients is None else get_clients, clients=clients,
                   acl_each_level=acl_each_level, get_anonymous=get_anonymous,
                   transaction=transaction)

    def echo(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    bar = None if quiet else _Bar(count, f"{mode} {method}")
    try:
        res = run(opts, progress=bar, echo=echo)
    except LakesuperiorError as e:
        raise click.ClickException(str(e)) from e
    write_json(output, res)
    if plot_file and res["count"]:
        plot(res, plot_file)
    click.echo(summary_line(res))
    if res["reads"]:
        click.echo(reads_line(res["reads"]))
    if res["error"]:
        click.echo(f"Stopped: {res['error']}", err=True)
        sys.exit(1)
    if res["interrupted"]:
        sys.exit(130)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lsup-benchmark`` console script."""
    return command.main(args=argv, prog_name="lsup-benchmark")


if __name__ == "__main__":
    sys.exit(main())
