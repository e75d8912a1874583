"""What every ``lsup-admin`` command shares: options, configuration loading, error
handling and exit codes, progress, and the check that a repository is not open
elsewhere (``lakesuperior.cli`` has the commands)."""
from __future__ import annotations

import fcntl
import functools
import os
import stat
import sys
from collections.abc import Callable
from typing import Any

import click
import lmdb

from lakesuperior.admin import datadir
from lakesuperior.admin.progress import Progress
from lakesuperior.config import Config
from lakesuperior.exceptions import LakesuperiorError
from lakesuperior.repository import Repository
from lakesuperior.store import private

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


class CommandError(click.ClickException):
    """A command that cannot run: message on stderr, exit code 2."""

    exit_code = EXIT_ERROR


# --- options shared by every command ---------------------------------------------------

def _common_options(fn: Callable) -> Callable:
    fn = click.option("--data-dir", "data_dir", metavar="DIR", default=None,
                      help="Data directory of the repository (default: from the "
                           "configuration; env LSUP_DATA_DIR).")(fn)
    fn = click.option("--config", "config_path", metavar="FILE", default=None,
                      envvar="LSUP_CONFIG", show_envvar=True,
                      help="YAML configuration file.")(fn)
    return fn


def _load_config(ctx: click.Context, config_path: str | None, data_dir: str | None) -> Config:
    """The configuration: the command's options, else the group's, else the environment.
    A command runs no background indexer (``index`` applies the log itself; the
    others are short and read the unindexed writes from the graphs)."""
    root = ctx.find_root().params
    path = config_path or root.get("config_path")
    ddir = data_dir or root.get("data_dir")
    extra: dict[str, Any] = {"data_dir": ddir} if ddir else {}
    try:
        cfg = Config.load(path, None, background_index=False, **extra)
    except LakesuperiorError as e:
        raise CommandError(str(e)) from e
    warn_if_exposed(cfg.data_dir)
    return cfg


def warn_if_exposed(data_dir: str) -> None:
    """A warning on standard error when users other than the owner may read the
    data directory or what is directly in it (``store.private.exposed``)."""
    found = private.exposed(data_dir)
    if not found:
        return
    shown = ", ".join(f"{p} ({stat.filemode(os.lstat(p).st_mode)})" for p in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    click.echo(f"Warning: other users of this machine can read the data directory: "
               f"{shown}{more}. It holds every resource whatever its access control, "
               f"the password hashes and the administrator's first password; make it "
               f"private: chmod -R go= {data_dir} (docs/deployment.md)", err=True)


def _command(fn: Callable) -> Callable:
    """Turn library errors into exit code 2 and Ctrl-C into exit code 130."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("\nInterrupted: stopped before finishing; nothing was damaged.",
                       err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except LakesuperiorError as e:
            raise CommandError(str(e)) from e
        except BrokenPipeError:
            _silence_stdout()
            raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None
        except OSError as e:
            raise CommandError(os_error_message(e)) from e
    return wrapper


def os_error_message(e: OSError) -> str:
    """``No space left on device: /path`` (both paths of a copy), without ``[Errno n]``."""
    what = e.strerror or str(e)
    if e.filename is not None and e.filename2 is not None:
        return f"{what}: {e.filename} -> {e.filename2}"
    if e.filename is not None:
        return f"{what}: {e.filename}"
    return what


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that nothing more is written to a
    closed pipe (nor flushed into one at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class ClickProgress(Progress):
    """Progress bars on stderr (a running count when the total is unknown)."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.label = ""
        self.count = 0
        self.tty = sys.stderr.isatty()

    def start(self, label: str, total: int | None = None) -> None:
        self.finish()
        self.label, self.count = label, 0
        if total:
            self.bar = click.progressbar(length=total, label=label, file=sys.stderr,
                                         show_pos=True, update_min_steps=max(1, total // 500))
            self.bar.__enter__()
        else:
            click.echo(f"{label}...", err=True)

    def advance(self, n: int = 1) -> None:
        self.count += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.tty:
            click.echo(f"\r{self.label}: {self.count}", nl=False, err=True)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
        elif self.count and self.tty:
            click.echo(err=True)
        self.count = 0


def _size(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


def _open(cfg: Config) -> Repository:
    return datadir.open_repository(cfg)


# --- is the repository open in another process? ----------------------------------------

def _environments(cfg: Config) -> list[str]:
    """The LMDB environments of the store that exist (data and lock file)."""
    paths = (cfg.store_dir, os.path.join(cfg.store_dir, "index"))
    return [p for p in paths if all(os.path.isfile(os.path.join(p, name))
                                    for name in ("data.mdb", "lock.mdb"))]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reader_pids(path: str) -> set[int]:
    """Live pids in the reader table of the environment at ``path``."""
    try:
        env = lmdb.open(path, readonly=True, create=False, lock=True, max_dbs=16)
    except lmdb.Error:
        return set()
    try:
        table = env.readers()
    finally:
        env.close()
    pids = set()
    for line in table.splitlines()[1:]:
        first = line.split()[:1]
        if first and first[0].isdigit():
            pids.add(int(first[0]))
    return {pid for pid in pids if pid != os.getpid() and _alive(pid)}


def _locked_elsewhere(path: str) -> bool:
    """Whether another process holds LMDB's lock on ``path``/lock.mdb: every
    process with the environment open does. Call it while this process does not
    have the environment open (closing the probe drops this process's locks)."""
    try:
        fd = os.open(os.path.join(path, "lock.mdb"), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
    except OSError:
        return True
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, 0)
        return False
    finally:
        os.close(fd)


def open_elsewhere(cfg: Config) -> list[int] | None:
    """``None`` if no other process has the repository's store open, else the
    pids known to have it (LMDB's reader table; may be empty when only the lock
    tells). Creates nothing."""
    envs = _environments(cfg)
    locked = any(_locked_elsewhere(p) for p in envs)
    pids = sorted(set().union(*(_reader_pids(p) for p in envs)))
    return pids if locked or pids else None


def _refuse_if_open(cfg: Config, force: bool, doing: str) -> None:
    """A destructive command stops while another process (a server) has the
    repository open, unless ``--force``."""
    if force:
        return
    pids = open_elsewhere(cfg)
    if pids is None:
        return
    who = f" (pid {', '.join(map(str, pids))})" if pids else ""
    raise CommandError(f"The repository in {os.path.abspath(cfg.data_dir)} is open in "
                       f"another process{who}, probably a running lsup-server: stop it "
                       f"first, or give --force to {doing} anyway. Nothing was changed.")


# --- the group ------------------------------------------------------------------------------
