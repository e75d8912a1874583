"""``lsup-admin sync``: read replicas kept in step with the change feed (docs/replicas.md)."""
from __future__ import annotations

import json
import signal
import threading
from typing import Any

import click

from lakesuperior.cli.support import (
    EXIT_PROBLEMS,
    _command,
    _common_options,
    _load_config,
    _open,
)
from lakesuperior.exceptions import ReplicaError
from lakesuperior.replicas.graphs import agent_for
from lakesuperior.replicas.replica import Replica
from lakesuperior.replicas.runner import Outcome, Runner
from lakesuperior.replicas.status import replica_status
from lakesuperior.replicas.targets import GraphStore, Quads, SparqlUpdate, make_target


@click.group("sync")
def sync_group() -> None:
    """Keep external SPARQL stores in step with the repository (docs/replicas.md)."""


@sync_group.command("sparql")
@_common_options
@click.argument("urls", nargs=-1, metavar="[URL]...")
@click.option("--update-url", "update_urls", multiple=True, metavar="URL",
              help="A target written by SPARQL Update at URL (for a store with no Graph "
                   "Store endpoint); may be repeated.")
@click.option("--quads-url", "quads_urls", multiple=True, metavar="URL",
              help="A target whose Graph Store endpoint at URL also loads N-Quads into "
                   "the dataset by POST (Oxigraph: /store): each batch's graphs deleted, "
                   "then loaded in one request, several times cheaper for the store; "
                   "may be repeated.")
@click.option("--query-url", metavar="URL", default=None,
              help="The SPARQL query endpoint of the (one) target: a reindex then also "
                   "deletes the graphs the repository no longer has.")
@click.option("--follow", "mode", flag_value="follow",
              help="Keep going: follow the feed until stopped (SIGTERM, Ctrl-C).")
@click.option("--once", "mode", flag_value="once", default=True,
              help="Catch up and exit (the default).")
@click.option("--reindex", is_flag=True,
              help="Rebuild each target from the current state first, then catch up.")
@click.option("--readable-by", metavar="AGENT", default="",
              help="Copy only what AGENT may read: a user name, a WebID, or 'anonymous'.")
@click.pass_context
@_command
def sync_sparql_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                        urls: tuple[str, ...], update_urls: tuple[str, ...],
                        quads_urls: tuple[str, ...], query_url: str | None, mode: str,
                        reindex: bool, readable_by: str) -> None:
    """Copy every changed resource's graph to SPARQL stores, in commit order.

    Each URL is a store's Graph Store Protocol endpoint (Oxigraph: /store,
    Fuseki: /DATASET/data); --update-url names a SPARQL Update endpoint instead,
    --quads-url a Graph Store endpoint that also loads N-Quads (the fastest way
    into Oxigraph). A resource's named graph (its IRI) is replaced whole; deleted and purged
    resources lose theirs. Each target's checkpoint is kept in the data
    directory, moved only once the target acknowledged. Credentials come from
    the configuration (replicas.user / replicas.password, or replicas.token),
    never from the command line. Exit code 1 if a target could not be brought
    up to date (its error is printed and kept for 'sync status').
    """
    targets = ([(u, GraphStore.protocol) for u in urls]
               + [(u, Quads.protocol) for u in quads_urls]
               + [(u, SparqlUpdate.protocol) for u in update_urls])
    if not targets:
        raise click.UsageError("Give at least one target: a Graph Store URL, --quads-url "
                               "or --update-url.")
    if len({u for u, _ in targets}) < len(targets):
        raise click.UsageError("A target is given twice.")
    if query_url and len(targets) != 1:
        raise click.UsageError("--query-url is for one target: run one command per target.")
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        agent = agent_for(readable_by, cfg) if readable_by else None
        try:
            replicas = [Replica(repo, make_target(u, p, cfg), readable_by=readable_by,
                                agent=agent, batch=cfg.replicas_batch, query_url=query_url)
                        for u, p in targets]
        except ReplicaError as e:
            raise click.BadParameter(str(e), param_hint="URL") from e
        runner = Runner(replicas, reindex=reindex,
                        notify=lambda msg: click.echo(msg, err=True))
        if mode == "follow":
            outcomes = _follow(runner)
        else:
            outcomes = runner.once()
    failed = _report(outcomes.values())
    if failed:
        ctx.exit(EXIT_PROBLEMS)


def _follow(runner: Runner) -> dict[str, Outcome]:
    """``runner.follow`` until SIGTERM or Ctrl-C (each stops it cleanly)."""
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        return runner.follow(stop)
    except KeyboardInterrupt:        # the runner stopped its threads
        return runner.outcomes
    finally:
        signal.signal(signal.SIGTERM, previous)


def _report(outcomes: Any) -> bool:
    """Print one line per target; True if any failed."""
    failed = False
    for out in outcomes:
        done = []
        if out.reindex is not None:
            r = out.reindex
            done.append(f"reindexed {r.written:,} resources"
                        + (f", deleted {r.stale_deleted:,} stale graphs" if r.stale_checked
                           else " (stale graphs not checked: no --query-url)"))
        done.append(f"{out.events:,} events applied")
        if out.error and not out.done:
            failed = True
            click.echo(f"{out.url}: {', '.join(done)}; FAILED: {out.error}", err=True)
        else:
            click.echo(f"{out.url}: {', '.join(done)}")
    return failed


@sync_group.command("status")
@_common_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
@_command
def sync_status_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                        as_json: bool) -> None:
    """Show each target's checkpoint, lag (events, seconds) and last error."""
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        rows = replica_status(repo)
    if as_json:
        click.echo(json.dumps(rows, indent=2, sort_keys=True))
        return
    if not rows:
        click.echo("No target has been synced from this repository (lsup-admin sync sparql).")
        return
    for row in rows:
        state = "running" if row["running"] else "stopped"
        click.echo(f"{row['target']}  ({row['protocol']}, {state})")
        lines = [("Applied up to", f"seq {row['seq']:,} of {row['feed_seq']:,}"),
                 ("Lag", f"{row['lag_events']:,} events, {row['lag_seconds']:.1f} s"),
                 ("Filter", row["readable_by"] or "none (everything)"),
                 ("Last applied", row["applied_at"] or "never")]
        if not row["filled"]:
            lines.append(("Filled", "no: the next run fills it from the current state"))
        if row["gap"]:
            lines.append(("Feed", "the events after its checkpoint are gone (retention): "
                                  "run lsup-admin sync sparql --reindex"))
        if row["last_error"]:
            lines.append(("Last error", f"{row['last_error']} ({row['last_error_at']})"))
        for key, value in lines:
            click.echo(f"  {key:<13} {value}")
    if any(r["gap"] or r["last_error"] for r in rows):
        ctx.exit(EXIT_PROBLEMS)
