"""``lsup-server``: run the HTTP server under gunicorn.

The application is created in each worker after gunicorn forks, so every
worker opens its own LMDB environment (LMDB handles must not cross a fork).
"""
from __future__ import annotations

import runpy
import sys
from importlib import resources

from gunicorn.app.base import BaseApplication

from lakesuperior.config import Config


class Server(BaseApplication):
    """Gunicorn application whose settings come from ``etc.defaults/gunicorn.py``."""

    def __init__(self, config: Config, overrides: dict | None = None):
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
