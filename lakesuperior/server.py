"""``lsup-server``: run the HTTP server under gunicorn.

Settings come from ``etc.defaults/gunicorn.py``, then ``bind``, ``workers`` and
``threads`` from the Lakesuperior configuration (``Config.load()``: YAML,
``LSUP_*`` variables, then the command-line options), then any gunicorn option
in the ``GUNICORN_CMD_ARGS`` environment variable (as gunicorn's own command
line reads it, e.g. ``GUNICORN_CMD_ARGS="--timeout 3600"``). The application is
created in each worker after gunicorn forks, so every worker opens its own LMDB
environment (LMDB handles must not cross a fork).

Before gunicorn starts, the configuration, the address and the store are
checked, so a start-up error is one ``Error:`` line on stderr and exit code 2.
Then, in the master before any worker exists, authentication is prepared: with
``auth.enabled`` and no user yet, the administrator ``admin`` is created with a
random password written to ``DATA_DIR/initial-admin-password`` (mode 0600), and
one log line says where; with ``auth.enabled: false`` a warning is logged.


Each worker counts its requests for ``GET /metrics`` in files of
``DATA_DIR/metrics`` (emptied at each start; prometheus_client's multiprocess
mode, switched on by ``PROMETHEUS_MULTIPROC_DIR``, set here before any worker
exists), so that a scrape answered by any worker sums them all.

With ``messaging.broker_url`` set, each worker runs a publisher thread; the
data directory's lock makes one of them drain the change feed to the broker
(``lakesuperior.messaging``).
With ``store.background_index`` (the default), each worker's repository
watches the store directory's lock; the one that takes it starts the indexer
process that keeps the union-graph indices current
(``lakesuperior.store.indexer_process``; with ``store.indexer_process: false``,
an indexer thread in that worker, ``lakesuperior.store.background``).
"""
from __future__ import annotations

import errno
import logging
import os
import re
import runpy
import shlex
import shutil
import socket
import sys
from importlib import resources
from typing import Any

import click
from gunicorn import glogging
from gunicorn.app.base import BaseApplication
from gunicorn.util import parse_address

from lakesuperior.auth.bearer import BearerAuth
from lakesuperior.auth.users import FIRST_ADMIN, UserDB
from lakesuperior.config import Config
from lakesuperior.exceptions import LakesuperiorError
from lakesuperior.messaging.publisher import PublisherThread
from lakesuperior.repository import Repository
from lakesuperior.store import private
from lakesuperior.worker import ConnectionBoard

EXIT_ERROR = 2
#: What switches prometheus_client to its multiprocess mode, naming the folder.
METRICS_ENV = "PROMETHEUS_MULTIPROC_DIR"


class Server(BaseApplication):
    """Gunicorn application serving ``create_app(config)``."""

    def __init__(self, config: Config, overrides: dict[str, Any] | None = None):
        self.lsup_config = config
        self.overrides = overrides or {}
        #: The workers' figures (``prepare_metrics``); None: each worker counts alone.
        self.metrics_dir: str | None = None
        self.notices: list[tuple[int, str]] = []   #: (logging level, message) logged at start
        #: How many connections each worker holds (``worker.py``: where new ones go).
        self.connection_board = ConnectionBoard()
        super().__init__()

    def load_config(self) -> None:
        path = resources.files("lakesuperior").joinpath("etc.defaults/gunicorn.py")
        for key, value in runpy.run_path(str(path)).items():
            if key in self.cfg.settings and value is not None:
                self.cfg.set(key, value)
        self.cfg.set("bind", [self.lsup_config.server_bind])
        self.cfg.set("workers", self.lsup_config.server_workers)
        self.cfg.set("threads", self.lsup_config.server_threads)
        cmd_args = os.environ.get("GUNICORN_CMD_ARGS")
        if cmd_args:
            parsed = self.cfg.parser().parse_args(shlex.split(cmd_args))
            for key, value in vars(parsed).items():
                if value is not None and key.lower() in self.cfg.settings:
                    self.cfg.set(key.lower(), value)
        for key, value in self.overrides.items():
            self.cfg.set(key, value)
        self.cfg.set("on_starting", self._log_notices)

    def _log_notices(self, arbiter: Any) -> None:
        for level, message in self.notices:
            arbiter.log.log(level, message)

    def load(self):
        from lakesuperior.endpoints.app import create_app
        app = create_app(self.lsup_config, metrics_dir=self.metrics_dir)
        if self.lsup_config.messaging_broker_url:
            # In every worker; the data directory's lock lets one of them publish.
            PublisherThread(app.extensions["lakesuperior"].repository,
                            self.lsup_config).start()
        return app


_ATOM = re.compile(r"%\(([^)]*)\)")
#: The access log atoms built from the request line and the response alone.
_SIMPLE_ATOMS = frozenset("hlrsmUqHbBfaTDMLp")


class AccessLogger(glogging.Logger):
    """Gunicorn's logger, building only the atoms its access log format uses.

    Gunicorn's own builds every atom for every request, with a copy of all the
    request and response headers and of the whole WSGI environ; the default
    format (``etc.defaults/gunicorn.py``) needs five. A format naming headers,
    environ variables, the user or the time gets gunicorn's atoms, unchanged."""

    _format: str | None = None
    _used: frozenset[str] = frozenset()

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any
              ) -> dict[str, Any]:
        fmt = self.cfg.access_log_format
        if fmt != self._format:       # read once per format (a reload may change it)
            self._format, self._used = fmt, frozenset(_ATOM.findall(fmt))
        used = self._used
        if not used <= _SIMPLE_ATOMS:
            return super().atoms(resp, req, environ, request_time)
        status = resp.status
        if isinstance(status, str):
            status = status.split(None, 1)[0]
        sent = getattr(resp, "sent", None)
        seconds, micro = request_time.seconds, request_time.microseconds
        atoms = {
            "h": environ.get("REMOTE_ADDR", "-"), "l": "-",
            "r": f"{environ['REQUEST_METHOD']} {environ['RAW_URI']} "
                 f"{environ['SERVER_PROTOCOL']}",
            "s": status, "m": environ.get("REQUEST_METHOD"), "U": environ.get("PATH_INFO"),
            "q": environ.get("QUERY_STRING"), "H": environ.get("SERVER_PROTOCOL"),
            "b": str(sent) if sent is not None else "-", "B": sent,
            "f": environ.get("HTTP_REFERER", "-"), "a": environ.get("HTTP_USER_AGENT", "-"),
            "T": seconds, "D": seconds * 1000000 + micro,
            "M": seconds * 1000 + micro // 1000, "L": f"{seconds}.{micro:06d}"}
        if "p" in used:
            atoms["p"] = f"<{os.getpid()}>"
        return {k: atoms[k] for k in used}


class StartupError(click.ClickException):
    """The server cannot start: one line on stderr, exit code 2."""

    exit_code = EXIT_ERROR


def check_bind(addresses: list[str]) -> None:
    """Refuse an address that cannot be listened on (taken, not local, bad)."""
    for address in addresses:
        try:
            where = parse_address(address)
        except RuntimeError as e:
            raise StartupError(f"Bad address {address!r}: {e}") from e
        if isinstance(where, (str, int)):      # a Unix socket path or an fd
            continue
        host, port = where
        try:
            infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
            family, kind, proto, _, sockaddr = infos[0]
            with socket.socket(family, kind, proto) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(sockaddr)
        except OSError as e:
            reason = e.strerror or str(e)
            raise StartupError(f"Cannot listen on {address}: {reason.lower()}"
                               + (" (another server is using this port: stop it or "
                                  "choose another with --bind)"
                                  if e.errno == errno.EADDRINUSE else "")) from e


def prepare_auth(config: Config) -> list[tuple[int, str]]:
    """Create the first administrator if authentication is on and there is no user
    (see the module doc); the (level, message) lines to log at start."""
    if not config.auth_enabled:
        return [(logging.WARNING, "Authentication is off (auth.enabled: false): every "
                 "request acts as the administrator; anyone who can reach "
                 f"{config.server_bind} can read and change everything")]
    notices = []
    try:
        BearerAuth(config)                  # a bad auth.jwt key stops the start here
        created = UserDB(config.data_dir).create_first_admin()
    except LakesuperiorError as e:
        raise StartupError(str(e)) from e
    except OSError as e:
        raise StartupError(f"Cannot create the first user in {os.path.abspath(config.data_dir)}"
                           f": {e.strerror or e}") from e
    if created:
        notices.append((logging.WARNING, f"No user yet: created the administrator "
                        f"'{FIRST_ADMIN}'; its password is in {created} (readable only by "
                        "its owner)"))
    if config.auth_proxy_header and not config.auth_trusted_proxies:
        notices.append((logging.WARNING, f"auth.proxy_header {config.auth_proxy_header} is "
                        "ignored: auth.trusted_proxies lists no proxy"))
    return notices


def prepare_metrics(config: Config) -> str:
    """Empty ``DATA_DIR/metrics`` (the figures of an earlier run) and name it to
    prometheus_client in ``PROMETHEUS_MULTIPROC_DIR``, before any worker imports it;
    the folder."""
    path = os.path.abspath(config.metrics_dir)
    try:
        shutil.rmtree(path, ignore_errors=False)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise StartupError(f"Cannot empty {path}: {e.strerror or e}") from e
    private.make_dirs(path)
    os.environ[METRICS_ENV] = path
    return path


def check_store(config: Config) -> None:
    """Open (creating it if new) and close the repository of ``config``, so that a
    store of another format or an unusable data directory stops the start."""
    try:
        Repository(config=config.with_(background_index=False)).close()
    except LakesuperiorError as e:
        raise StartupError(str(e)) from e
    except OSError as e:
        raise StartupError(f"Cannot use the data directory {os.path.abspath(config.data_dir)}"
                           f": {e.strerror or e}") from e


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--bind", "-b", metavar="HOST:PORT", default=None,
              help="Address to listen on (server.bind; LSUP_SERVER_BIND; "
                   "default 127.0.0.1:8000).")
@click.option("--workers", "-w", type=click.IntRange(min=1), default=None,
              help="Worker processes (server.workers; LSUP_SERVER_WORKERS).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads per worker, one request each (server.threads; "
                   "LSUP_SERVER_THREADS).")
@click.option("--data-dir", metavar="DIR", default=None,
              help="Data directory of the repository (data_dir; LSUP_DATA_DIR).")
@click.option("--config", "config_path", metavar="FILE", default=None,
              envvar="LSUP_CONFIG", show_envvar=True, help="YAML configuration file.")
@click.version_option(package_name="lakesuperior", prog_name="lsup-server")
def cli(bind: str | None, workers: int | None, threads: int | None, data_dir: str | None,
        config_path: str | None) -> None:
    """Serve a Lakesuperior repository over HTTP (LDP, Fedora API, SPARQL) with gunicorn.

    Each option overrides its configuration key (YAML file, then LSUP_*
    variables); other gunicorn settings go in GUNICORN_CMD_ARGS. The data
    directory gets a new, empty repository if it has none. Exit codes: 0
    stopped normally, 2 could not start (bad option or configuration, address
    in use, unusable store).
    """
    options: dict[str, Any] = {"server_bind": bind, "server_workers": workers,
                               "server_threads": threads, "data_dir": data_dir}
    overrides = {k: v for k, v in options.items() if v is not None}
    try:
        config = Config.load(config_path, None, **overrides)
    except LakesuperiorError as e:
        raise StartupError(str(e)) from e
    server = Server(config)
    check_bind(server.cfg.bind)
    check_store(config)
    server.notices = prepare_auth(config)
    server.metrics_dir = prepare_metrics(config)
    server.run()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lsup-server`` console script."""
    return cli.main(args=argv, prog_name="lsup-server")


if __name__ == "__main__":
    sys.exit(main())
