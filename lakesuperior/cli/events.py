"""``lsup-admin events``: the change feed and its broker (docs/events.md)."""
from __future__ import annotations

import json

import click

from lakesuperior.cli.support import (
    CommandError,
    _command,
    _common_options,
    _load_config,
    _open,
)
from lakesuperior.messaging.replay import parse_since, replay
from lakesuperior.messaging.status import events_status


@click.group("events")
def events_group() -> None:
    """The change feed and its broker (docs/events.md)."""


@events_group.command("status")
@_common_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
@_command
def events_status_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                          as_json: bool) -> None:
    """Show the backlog, the last published event and the broker's state."""
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        st = events_status(repo, cfg)
    if as_json:
        click.echo(json.dumps(st, indent=2, sort_keys=True))
        return
    rows = [("Messaging", st["messaging"] + (f" ({st['destination']})"
                                             if st["destination"] else "")),
            ("Broker", st["broker"]), ("Events retained", f"{st['events']:,}"),
            ("Last event", f"seq {st['last_seq']:,}"),
            ("Last published", f"seq {st['published']:,}"
             + (f" at {st['last_published_at']}" if st["last_published_at"] else "")),
            ("Backlog", f"{st['backlog']:,}")]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key:<{width}}  {value}")


@events_group.command("replay")
@_common_options
@click.option("--since", required=True, metavar="SEQ|DATETIME",
              help="Events after this seq, or at or after this ISO 8601 time "
                   "(UTC unless it has an offset).")
@click.pass_context
@_command
def events_replay_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                          since: str) -> None:
    """Publish retained events again (with their original ids), e.g. to rebuild an index."""
    try:
        start = parse_since(since)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--since") from e
    cfg = _load_config(ctx, config_path, data_dir)
    if not cfg.messaging_broker_url:
        raise CommandError("No broker is configured (messaging.broker_url, "
                           "LSUP_MESSAGING_BROKER_URL)")
    with _open(cfg) as repo:
        sent = replay(repo, cfg, start)
    click.echo(f"Replayed {sent:,} events to {cfg.messaging_destination}.")
