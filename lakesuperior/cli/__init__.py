"""``lsup-admin``: look after a repository without writing code.

Every command takes ``--config FILE`` (or ``LSUP_CONFIG``) and ``--data-dir DIR``
(or ``LSUP_DATA_DIR``), before or after the command name; ``--help`` on each
says what it does. The logic lives in ``lakesuperior.admin``; this module only
parses options, shows progress and prints reports.

Exit codes (the same for every command):

* 0: done, nothing wrong found;
* 1: done, but problems were found or left (failed fixity, broken links,
  migration or backup with failures, a confirmation declined);
* 2: the command could not run: bad usage, unreadable configuration, no
  repository, a store of an unknown format, an unknown uid, an existing
  destination, an unreachable or misbehaving migration source;
* 130: interrupted with Ctrl-C. Nothing is damaged: commands that write
  (bootstrap, backup, restore, migrate, cleanup) build their result aside or
  work one file at a time;
* 141: standard output was closed before everything was written (``| head``):
  the command stops quietly, as Unix tools killed by SIGPIPE do (128 + 13).

A full disk, an unwritable output or any other system error is one ``Error:``
line on stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import sys

import click

from lakesuperior.admin import backup, checks, cleanup, datadir, migrate, moving, stats
from lakesuperior.admin.progress import Progress
from lakesuperior.cli.events import events_group
from lakesuperior.cli.ocfl import add_ocfl_commands
from lakesuperior.cli.support import (
    EXIT_ERROR,
    EXIT_PROBLEMS,
    ClickProgress,
    CommandError,
    _command,
    _common_options,
    _load_config,
    _open,
    _refuse_if_open,
    _silence_stdout,
    _size,
    os_error_message,
)
from lakesuperior.cli.sync import sync_group
from lakesuperior.cli.users import user_group
from lakesuperior.exceptions import LakesuperiorError
from lakesuperior.http.client import parse_auth


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@_common_options
@click.version_option(package_name="lakesuperior", prog_name="lsup-admin")
def cli(config_path: str | None, data_dir: str | None) -> None:
    """Look after a Lakesuperior repository: create, inspect, check, clean, back up,
    restore and migrate it.

    The repository is found from --data-dir, else from the configuration
    (--config / LSUP_CONFIG, LSUP_DATA_DIR), else ./data. Exit codes: 0 all well,
    1 problems found, 2 the command could not run, 130 interrupted.
    """


@cli.command("bootstrap")
@_common_options
@click.option("--yes", "-y", is_flag=True, help="Wipe an existing repository without asking.")
@click.option("--force", is_flag=True,
              help="Wipe it even while another process (a server) has it open.")
@click.pass_context
@_command
def bootstrap_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
              yes: bool, force: bool) -> None:
    """Create a repository with its root container, or wipe and re-create one.

    An existing repository in the data directory is deleted only after a
    confirmation (or with --yes). Only its ldprs/ (store) and ldpnr/
    (binaries) directories are removed. Stop the server first: while another
    process has the repository open, this is refused unless --force.
    """
    cfg = _load_config(ctx, config_path, data_dir)
    where = os.path.abspath(cfg.data_dir)
    exists = datadir.has_data(cfg)
    if exists:
        _refuse_if_open(cfg, force, "wipe it")
    if exists and not yes:
        what = "a repository"
        try:
            with _open(cfg) as repo:
                what = f"a repository of {repo.stats()['resources']} resources"
        except LakesuperiorError:
            what = "a store this version cannot read"
        if not click.confirm(f"{where} holds {what}. Delete everything in it and start "
                             "a new, empty repository?", default=False, err=True):
            click.echo("Nothing was changed.", err=True)
            ctx.exit(EXIT_PROBLEMS)
    report = datadir.bootstrap(cfg, wipe=exists)
    verb = "Wiped and re-created" if report["wiped"] else "Created"
    click.echo(f"{verb} the repository in {where}: it holds the root container /.")


@cli.command("stats")
@_common_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
@_command
def stats_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
          as_json: bool) -> None:
    """Show resources by type, triples, binaries, versions, tombstones and store size."""
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        st = stats.repository_stats(repo)
        st["index_pending"] = repo.index_pending()
    st["data_dir"] = os.path.abspath(cfg.data_dir)
    if as_json:
        click.echo(json.dumps(st, indent=2, sort_keys=True))
        return
    store = st["store"]
    rows: list[tuple[str, str]] = [("Data directory", st["data_dir"]),
                                   ("Resources", f"{st['resources']:,}")]
    rows += [(f"  {name}", f"{n:,}") for name, n in st["by_model"].items()]
    rows += [("Tombstones", f"{st['tombstones']:,}"), ("Versions", f"{st['versions']:,}"),
             ("Binary files", f"{st['binaries']:,} ({_size(st['binary_bytes'])})"),
             ("Unreferenced content files", f"{st['unreferenced_files']:,} "
              f"({_size(st['unreferenced_bytes'])}; cleanup removes them)"),
             ("Triples (all graphs)", f"{store['quads']:,}"),
             ("Graphs", f"{store['graphs']:,}"),
             ("Store size on disk", _size(store["store_bytes"])),
             ("LMDB map size", _size(store["map_size"])),
             ("Store format", str(store["format"])),
             ("Union index: pending writes", f"{st['index_pending']:,}"),
             ("Events retained (last seq)", f"{st['events']['events']:,} "
              f"({st['events']['last_seq']:,})"),
             ("Events waiting for the broker", f"{st['events']['backlog']:,}")]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key:<{width}}  {value}")


@cli.command("check-fixity")
@_common_options
@click.argument("uid", required=False)
@click.option("--all", "check_all", is_flag=True, help="Check every binary.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.pass_context
@_command
def check_fixity_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                 uid: str | None, check_all: bool, as_json: bool) -> None:
    """Re-hash stored binaries against their recorded digests.

    Give the UID of one binary (e.g. /photos/a.jpg), or --all. Every failure
    is reported; the exit code is 1 if any binary failed.
    """
    if bool(uid) == check_all:
        raise click.UsageError("Give either a UID or --all.")
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        report = checks.check_fixity(repo, [uid] if uid else None,
                                     progress=ClickProgress() if check_all else Progress())
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(r) for r in report.results], indent=2))
    else:
        for r in report.results:
            if r.ok:
                if not check_all:
                    click.echo(f"OK    {r.uid}  {r.algorithm}:{r.actual}  ({r.size} bytes)")
            else:
                got = f", found {r.actual}" if r.actual else ""
                click.echo(f"FAIL  {r.uid}  {r.message} (recorded {r.algorithm}:"
                           f"{r.expected or '-'}{got})")
        n, bad = len(report.results), len(report.failures)
        click.echo(f"Checked {n} binar{'y' if n == 1 else 'ies'}: "
                   f"{bad} failed." if bad else
                   f"Checked {n} binar{'y' if n == 1 else 'ies'}: all intact.", err=True)
    if not report.ok:
        ctx.exit(EXIT_PROBLEMS)


@cli.command("check-refint")
@_common_options
@click.option("--output", "-o", metavar="FILE", default=None,
              help="Write the CSV report to FILE instead of standard output.")
@click.pass_context
@_command
def check_refint_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                 output: str | None) -> None:
    """Find links to missing repository resources (and broken containment).

    Prints a CSV report with the columns problem, resource, target. Problems:
    broken_link (resource links to a missing target), dangling_child
    (containment of a missing child), missing_parent, not_contained,
    missing_content (a binary without its content file). Exit code 1 if any.
    """
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        click.echo("Checking links and containment...", err=True)
        report = checks.check_refint(repo)
    rows = checks.integrity_rows(report)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(("problem", "resource", "target"))
    writer.writerows(rows)
    if output:
        with open(output, "w", newline="", encoding="utf-8") as fh:
            fh.write(buf.getvalue())
    else:
        click.echo(buf.getvalue(), nl=False)
    click.echo(f"Checked {report.resources} resources: "
               + (f"{len(rows)} problems." if rows else "no problems."), err=True)
    if rows:
        ctx.exit(EXIT_PROBLEMS)


@cli.command("cleanup")
@_common_options
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@click.option("--min-age", type=click.FloatRange(min=0), default=3600.0, show_default=True,
              metavar="SECONDS",
              help="Leave files younger than this (they may belong to a write in "
                   "progress); use 0 only with the server stopped.")
@click.option("--verbose", "-v", is_flag=True, help="List every file.")
@click.option("--force", is_flag=True,
              help="Allow --min-age 0 while another process (a server) has the "
                   "repository open.")
@click.pass_context
@_command
def cleanup_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
            dry_run: bool, min_age: float, verbose: bool, force: bool) -> None:
    """Remove orphaned binary content and leftover temporary upload files.

    Orphans are content files no resource, tombstone or version refers to any
    more (left by purges and aborted uploads). Says what was removed and how
    much space it freed. --min-age 0 is refused while another process has the
    repository open (it could remove the files of a write in progress), unless
    --force.
    """
    cfg = _load_config(ctx, config_path, data_dir)
    if min_age == 0 and not dry_run:
        _refuse_if_open(cfg, force, "remove files of any age")
    with _open(cfg) as repo:
        report = cleanup.cleanup(repo, dry_run=dry_run, min_age=min_age,
                                 progress=ClickProgress())
    verb = "Would remove" if dry_run else "Removed"
    if verbose:
        for digest, size in report.orphans:
            click.echo(f"{verb.lower()} binary {digest} ({_size(size)})")
        for name, size in report.temp_files:
            click.echo(f"{verb.lower()} temporary file {name} ({_size(size)})")
        for name, size in report.staging_dirs:
            click.echo(f"{verb.lower()} stale staging directory {name} ({_size(size)})")
    staging = (f" and {len(report.staging_dirs)} stale staging directories"
               if report.staging_dirs else "")
    click.echo(f"{verb} {len(report.orphans)} orphan binaries and {len(report.temp_files)} "
               f"temporary files{staging}: {_size(report.bytes_freed)} "
               f"{'would be ' if dry_run else ''}freed.")
    if report.young:
        click.echo(f"Skipped {len(report.young)} files younger than {min_age:g} s "
                   f"({_size(sum(n for _, n in report.young))}): they may belong to writes "
                   "in progress; --min-age sets this grace period.")


@cli.command("index")
@_common_options
@click.pass_context
@_command
def index_command(ctx: click.Context, config_path: str | None, data_dir: str | None) -> None:
    """Bring the union-graph indices (used by SPARQL and inbound links) up to date.

    The background indexer (store.background_index) does this as writes come;
    run it after an ingest with the indexer off, which queries then no longer
    pay for (they read the writes not indexed yet from the graphs).
    """
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        pending = repo.index_pending()
        click.echo(f"Applying {pending:,} pending writes to the union index...", err=True)
        applied = repo.index()
    click.echo(f"Union index up to date ({applied:,} log entries applied).")


@cli.command("backup")
@_common_options
@click.option("--with-binaries", is_flag=True,
              help="With the S3 backend, copy the objects too (default: list them, "
                   "with their digests and sizes, in the manifest).")
@click.argument("dest", metavar="DEST")
@click.pass_context
@_command
def backup_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                   with_binaries: bool, dest: str) -> None:
    """Write a consistent backup of the repository to the new directory DEST.

    Safe while the server runs: the store is copied from one snapshot and the
    binaries it refers to are copied and re-hashed. With the S3 backend the
    objects stay in the bucket and are listed in the manifest (each checked to
    exist), unless --with-binaries copies them. DEST must not exist.
    Restore it with `lsup-admin restore DEST --data-dir NEW_DIR`.
    """
    cfg = _load_config(ctx, config_path, data_dir)
    if os.path.lexists(dest):
        raise CommandError(f"The backup destination {os.path.abspath(dest)} exists "
                           "already: give a new path")
    with _open(cfg) as repo:
        report = backup.backup(repo, dest, with_binaries=with_binaries,
                               progress=ClickProgress())
    c = report.counts
    click.echo(f"Backup written to {report.path}: {c['resources']:,} resources, "
               f"{c['binaries']:,} binaries ({_size(c['binary_bytes'])}), "
               f"{c['versions']:,} versions, {c['tombstones']:,} tombstones; "
               f"{_size(report.store_bytes)} on disk, {report.seconds:.1f} s.")
    if not report.ok:
        for line in report.problems:
            click.echo(line, err=True)
        ctx.exit(EXIT_PROBLEMS)


@cli.command("restore")
@_common_options
@click.argument("src", metavar="SRC")
@click.pass_context
@_command
def restore_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
            src: str) -> None:
    """Restore the backup in SRC into the data directory, and verify it.

    The data directory (--data-dir) must be empty or not exist. The restore is
    built beside it and moved into place only after every binary has been
    re-hashed and the store's counts match the backup's manifest.
    """
    cfg = _load_config(ctx, config_path, data_dir)
    report = backup.restore(src, cfg, progress=ClickProgress())
    c = report.counts
    click.echo(f"Restored {c['resources']:,} resources and {c['binaries']:,} binaries "
               f"into {report.path} in {report.seconds:.1f} s; verified.")
    if not report.ok:
        for problem in report.problems:
            click.echo(f"PROBLEM {problem}", err=True)
        ctx.exit(EXIT_PROBLEMS)


@cli.group("binaries")
def binaries_group() -> None:
    """Where the binary content is kept (binaries.backend)."""


@binaries_group.command("move")
@_common_options
@click.option("--to", "to", type=click.Choice(["s3", "file"]), required=True,
              help="The backend to move the content to.")
@click.option("--remove-source", is_flag=True,
              help="Then remove the moved content from the other backend (only once the "
                   "configuration names the new one).")
@click.pass_context
@_command
def binaries_move_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                          to: str, remove_source: bool) -> None:
    """Copy every binary the repository names into the other backend, verified by digest.

    Safe while the server runs: it keeps reading and writing the configured
    backend. Run it, set binaries.backend to the new backend and restart the
    server, then run it again: it copies only what was written meanwhile
    (content already there is skipped, so an interrupted move resumes).
    --remove-source then removes the moved content from the old backend.
    """
    cfg = _load_config(ctx, config_path, data_dir)
    with _open(cfg) as repo:
        report = moving.move_binaries(repo, to, remove_source=remove_source,
                                      progress=ClickProgress())
    click.echo(f"Copied {report.copied:,} binaries ({_size(report.copied_bytes)}) from "
               f"{report.source} to {report.target}; {report.present:,} were there already"
               + (f"; removed {report.removed:,} from the source" if report.removed else "")
               + ".")
    for digest in report.missing:
        click.echo(f"MISSING {digest}: in neither backend", err=True)
    for digest in report.corrupt:
        click.echo(f"CORRUPT {digest}: the source content does not match its digest; "
                   "not copied", err=True)
    if not report.ok:
        ctx.exit(EXIT_PROBLEMS)


@cli.command("migrate")
@_common_options
@click.argument("src_url", metavar="SRC_URL")
@click.argument("dest_dir", metavar="DEST_DIR")
@click.option("--start", "starts", multiple=True, metavar="PATH",
              help="Where to begin the crawl (a path or URL under SRC_URL; repeatable; "
                   "default: the root).")
@click.option("--list-file", metavar="FILE", default=None,
              help="A file of paths or URLs to begin from, one per line (# comments).")
@click.option("--auth", metavar="USER:PASS", default=None,
              help="HTTP Basic credentials for the source.")
@click.option("--skip-errors", is_flag=True,
              help="Record resources that fail and go on, instead of stopping.")
@click.option("--report", "report_file", metavar="FILE", default=None,
              help="Write skipped and failed resources to FILE as CSV.")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              metavar="SECONDS", help="Time limit of each HTTP request.")
@click.pass_context
@_command
def migrate_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
            src_url: str, dest_dir: str, starts: tuple[str, ...], list_file: str | None,
            auth: str | None, skip_errors: bool, report_file: str | None,
            timeout: float) -> None:
    """Copy an LDP or Fedora repository at SRC_URL into a new repository in DEST_DIR.

    Crawls containment and links between resources, copies every RDF source
    (client triples, interaction model) and binary (content verified against
    the source's digests, media type, file name, description), their versions
    and their ACLs (fcr:acl). Server-managed triples (dates, containment) are
    made anew. An ACL that cannot be copied stops the migration, even with
    --skip-errors. Users are not copied (they are not part of the source's API).
    DEST_DIR must be empty or new; on error (without --skip-errors) or Ctrl-C
    nothing is left in it.
    """
    if data_dir and os.path.abspath(data_dir) != os.path.abspath(dest_dir):
        raise click.UsageError("DEST_DIR is the data directory of the new repository: "
                               "do not give a different --data-dir.")
    try:
        credentials = parse_auth(auth)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--auth") from e
    cfg = _load_config(ctx, config_path, dest_dir)
    report = migrate.migrate(src_url, cfg, start=starts or ("/",), list_file=list_file,
                             auth=credentials, skip_errors=skip_errors, timeout=timeout,
                             progress=ClickProgress())
    click.echo(f"Migrated {report.copied:,} resources from {report.source} into "
               f"{report.dest}: {report.rdf_sources:,} RDF sources, {report.binaries:,} "
               f"binaries ({_size(report.binary_bytes)}), {report.triples:,} triples, "
               f"{report.versions:,} versions, {report.acls:,} ACLs, in {report.seconds:.1f} s. "
               f"Skipped {len(report.skipped)}, failed {len(report.failed)}.")
    for url in report.unverified:
        click.echo(f"UNVERIFIED {url}: the source gave no digest for this binary", err=True)
    for status, url, why in migrate.iter_rows(report):
        click.echo(f"{status.upper():8} {url}: {why}", err=True)
    if report_file:
        with open(report_file, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(("status", "url", "reason"))
            writer.writerows(migrate.iter_rows(report))
    if not report.ok:
        ctx.exit(EXIT_PROBLEMS)


cli.add_command(user_group)
cli.add_command(events_group)
cli.add_command(sync_group)
add_ocfl_commands(cli)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lsup-admin`` console script."""
    try:
        return cli.main(args=argv, prog_name="lsup-admin")
    except OSError as e:         # writing --help or --version to a full disk
        _silence_stdout()
        click.echo(f"Error: {os_error_message(e)}", err=True)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
