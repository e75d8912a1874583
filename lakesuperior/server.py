"""``lsup-server``: run the HTTP server under gunicorn.

Settings come from ``etc.defaults/gunicorn.py``, then ``bind`` and ``workers``
from the Lakesuperior configuration (``Config.load()``), then any gunicorn
option in the ``GUNICORN_CMD_ARGS`` environment variable (as gunicorn's own
command line reads it, e.g. ``GUNICORN_CMD_ARGS="--timeout 3600"``). The
application is created in each worker after gunicorn forks, so every worker
opens its own LMDB environment (LMDB handles must not cross a fork).
"""
from __future__ import annotations

import os
import runpy
import shlex
import sys
from importlib import resources
from typing import Any

from gunicorn.app.base import BaseApplication

from lakesuperior.config import Config


class Server(BaseApplication):
    """Gunicorn application serving ``create_app(config)``."""

    def __init__(self, config: Config, overrides: dict[str, Any] | None = None):
        self.lsup_config = config
        self.overrides = overrides or {}
        super().__init__()

    def load_config(self) -> None:
        path = resources.files("lakesuperior").joinpath("etc.defaults/gunicorn.py")
        for key, value in runpy.run_path(str(path)).items():
            if key in self.cfg.settings and value is not None:
                self.cfg.set(key, value)
        self.cfg.set("bind", [self.lsup_config.server_bind])
        self.cfg.set("workers", self.lsup_config.server_workers)
        cmd_args = os.environ.get("GUNICORN_CMD_ARGS")
        if cmd_args:
            parsed = self.cfg.parser().parse_args(shlex.split(cmd_args))
            for key, value in vars(parsed).items():
                if value is not None and key.lower() in self.cfg.settings:
                    self.cfg.set(key.lower(), value)
        for key, value in self.overrides.items():
            self.cfg.set(key, value)

    def load(self):
        from lakesuperior.endpoints.app import create_app
        return create_app(self.lsup_config)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``lsup-server`` console script."""
    config = Config.load()
    Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
