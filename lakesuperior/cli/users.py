"""``lsup-admin user``: the users of HTTP authentication (``DATA_DIR/users.json``)."""
from __future__ import annotations

import os
import sys

import click

from lakesuperior.admin import datadir
from lakesuperior.auth.users import UserDB, check_name, check_password
from lakesuperior.cli.support import (
    CommandError,
    _command,
    _common_options,
    _load_config,
)

# --- users ----------------------------------------------------------------------------------

@click.group("user")
def user_group() -> None:
    """Manage the users of HTTP authentication (DATA_DIR/users.json)."""


def _users(ctx: click.Context, config_path: str | None, data_dir: str | None) -> UserDB:
    cfg = _load_config(ctx, config_path, data_dir)
    if not datadir.store_exists(cfg):
        raise CommandError(f"No repository in {os.path.abspath(cfg.data_dir)}: name the "
                           "right one with --data-dir or --config, or create it first")
    return UserDB(cfg.data_dir)


def _new_password(from_stdin: bool) -> str:
    """One line of standard input, or the password typed twice without echo."""
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, default="", show_default=False)
        if click.prompt("Repeat the password", hide_input=True, default="",
                        show_default=False) != password:
            raise CommandError("The two passwords differ; nothing was changed")
    return check_password(password)


_STDIN = click.option("--password-stdin", "from_stdin", is_flag=True,
                      help="Read the password from the first line of standard input.")


@user_group.command("add")
@_common_options
@click.argument("name")
@click.option("--admin", is_flag=True, help="An administrator (bypasses access control).")
@_STDIN
@click.pass_context
@_command
def user_add_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                     name: str, admin: bool, from_stdin: bool) -> None:
    """Create the user NAME, asking for its password."""
    users = _users(ctx, config_path, data_dir)
    check_name(name)
    if users.get(name) is not None:
        raise CommandError(f"The user {name!r} exists already")
    users.add(name, _new_password(from_stdin), admin=admin)
    click.echo(f"Created the {'administrator' if admin else 'user'} {name}.")


@user_group.command("passwd")
@_common_options
@click.argument("name")
@_STDIN
@click.pass_context
@_command
def user_passwd_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                        name: str, from_stdin: bool) -> None:
    """Give the user NAME a new password."""
    users = _users(ctx, config_path, data_dir)
    if users.get(name) is None:
        raise CommandError(f"No user {name!r}")
    users.set_password(name, _new_password(from_stdin))
    click.echo(f"Changed the password of {name}.")


@user_group.command("remove")
@_common_options
@click.argument("name")
@click.pass_context
@_command
def user_remove_command(ctx: click.Context, config_path: str | None, data_dir: str | None,
                        name: str) -> None:
    """Remove the user NAME (what it made keeps its name in fcrepo:createdBy)."""
    _users(ctx, config_path, data_dir).remove(name)
    click.echo(f"Removed the user {name}.")


@user_group.command("list")
@_common_options
@click.pass_context
@_command
def user_list_command(ctx: click.Context, config_path: str | None, data_dir: str | None
                      ) -> None:
    """List the users, one per line; administrators are marked "admin"."""
    for user in sorted(_users(ctx, config_path, data_dir).users().values(),
                       key=lambda u: u.name):
        click.echo(f"{user.name}\tadmin" if user.admin else user.name)
