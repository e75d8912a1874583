"""The Flask app on a real repository, for the tests that speak HTTP without the wire
(``tests/servers.py`` starts a real gunicorn for those that need it)."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from flask import Flask
from flask.testing import FlaskClient

from lakesuperior.config import Config
from lakesuperior.endpoints.app import create_app


class Client(FlaskClient):
    """A test client that reads every response whole (and closes it), like a real one."""

    def open(self, *args, **kwargs):
        kwargs.setdefault("buffered", True)
        return super().open(*args, **kwargs)


def build_app(config: Config, **kwargs) -> Flask:
    """The app on ``config``, in testing mode, with ``Client`` as its test client; the
    caller closes it (``close_app``). Its indexer runs as a thread: a process per
    app would cost each test a Python start (the servers of ``tests/servers.py``,
    and tests/store/test_indexer_process.py, test the process). ``kwargs`` go to
    ``create_app``."""
    app = create_app(dataclasses.replace(config, indexer_process=False), **kwargs)
    app.testing = True
    app.test_client_class = Client
    return app


def close_app(app: Flask) -> None:
    """Close the repository the app opened."""
    app.extensions["lakesuperior"].close()


def serving(config: Config) -> Iterator[Flask]:
    """``yield from serving(config)`` in a fixture: the app, closed afterwards."""
    app = build_app(config)
    try:
        yield app
    finally:
        close_app(app)
