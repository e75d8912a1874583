"""``lsup-admin export-ocfl`` and ``import-ocfl``: Fedora 6's storage (OCFL) out
and in (docs/ocfl.md). The work is in ``lakesuperior.ocfl``."""
from __future__ import annotations

from datetime import UTC, datetime

import click

from lakesuperior.admin import datadir
from lakesuperior.cli.support import (
    EXIT_PROBLEMS,
    ClickProgress,
    _command,
    _common_options,
    _load_config,
    _open,
    _refuse_if_open,
    _size,
)
from lakesuperior.ocfl.export import export_config, export_ocfl
from lakesuperior.ocfl.imports import import_ocfl
from lakesuperior.ocfl.storage import DIGESTS, OCFL_VERSIONS

__all__ = ["add_ocfl_commands"]


@click.command("export-ocfl")
@_common_options
@click.argument("dest", metavar="DIR")
@click.option("--ocfl-version", type=click.Choice(OCFL_VERSIONS), default="1.1",
              show_default=True,
              help="OCFL version of the storage root: Fedora 6.0-6.2 open only 1.0.")
@click.option("--digest", type=click.Choice(DIGESTS), default="sha512", show_default=True,
              help="Digest algorithm of the inventories.")
@click.option("--since", metavar="DATETIME", default=None,
              help="Add to the earlier export in DIR the new versions of the resources "
                   "changed at or after this ISO 8601 time (UTC unless it has an offset).")
@click.option("--force", is_flag=True,
              help="Export even while another process (a server) has the repository open.")
@click.pass_context
@_command
def export_ocfl_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                        dest: str, ocfl_version: str, digest: str, since: str | None,
                        force: bool) -> None:
    """Write the repository as an OCFL storage root in DIR that Fedora 6 opens as its own.

    One OCFL object per resource (an Archival Group with all its members is one),
    one OCFL version per version of the resource, binaries as their bytes, RDF as
    N-Triples with Fedora's header files. DIR must be new or empty: the export is
    written beside it and renamed into place when complete. With --since, DIR is
    an earlier export and only the objects changed since then get new versions.
    Stop the server first (or --force).
    """
    when = None
    if since is not None:
        try:
            when = datetime.fromisoformat(since.strip().replace("Z", "+00:00"))
        except ValueError:
            raise click.BadParameter(f"{since!r} is not an ISO 8601 date-time (e.g. "
                                     "2024-05-01T12:00:00Z)", param_hint="--since") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
    cfg = _load_config(ctx, config_path, data_dir)
    _refuse_if_open(cfg, force, "export it")
    with _open(export_config(cfg)) as repo:
        report = export_ocfl(repo, dest, ocfl_version=ocfl_version, digest=digest,
                             since=when, progress=ClickProgress())
    unchanged = (f", {report.objects_unchanged:,} objects unchanged"
                 if since is not None else "")
    click.echo(f"Exported {report.objects:,} OCFL objects to {report.path} (OCFL "
               f"{report.ocfl_version}, {report.digest}): {report.resources:,} resources, "
               f"{report.binaries:,} binaries, {report.acls:,} ACLs, {report.tombstones:,} "
               f"tombstones, {report.versions:,} versions; {report.files:,} files "
               f"({_size(report.bytes)}){unchanged}, in {report.seconds:.1f} s.")


@click.command("import-ocfl")
@_common_options
@click.argument("src", metavar="DIR")
@click.option("--force", is_flag=True,
              help="Import even while another process (a server) has the repository open.")
@click.pass_context
@_command
def import_ocfl_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                        src: str, force: bool) -> None:
    """Import the Fedora 6 OCFL storage root in DIR (OCFL 1.0 or 1.1) into the repository.

    Resources, binaries (checked against the inventory's digests), descriptions,
    ACLs, Archival Groups, tombstones and every version at its date; containment
    from each resource's path. Each object is imported whole or not at all: one
    that is broken is reported (with its file) and the objects below it are left
    out; exit code 1 then. An object whose resource exists already is skipped, so
    running the command again resumes an interrupted import. The repository is
    created if there is none. Stop the server first (or --force).
    """
    cfg = _load_config(ctx, config_path, data_dir)
    if datadir.store_exists(cfg):
        _refuse_if_open(cfg, force, "import into it")
    report = import_ocfl(src, cfg, progress=ClickProgress())
    click.echo(f"Imported {report.objects:,} OCFL objects from {report.path}: "
               f"{report.resources:,} resources, {report.binaries:,} binaries, "
               f"{report.acls:,} ACLs, {report.versions:,} versions, {report.tombstones:,} "
               f"tombstones; {report.skipped:,} objects already imported; "
               f"{len(report.failed):,} not imported; in {report.seconds:.1f} s.")
    for oid, why in report.failed:
        click.echo(f"FAILED {oid}: {why}", err=True)
    if not report.ok:
        ctx.exit(EXIT_PROBLEMS)


def add_ocfl_commands(group: click.Group) -> None:
    """Add ``export-ocfl`` and ``import-ocfl`` to ``lsup-admin``."""
    group.add_command(export_ocfl_command)
    group.add_command(import_ocfl_command)


