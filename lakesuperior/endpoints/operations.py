"""Operational pages: ``GET /health`` and ``GET /metrics``.

``/health`` (anyone; JSON, never cached) is 200 when this worker's store can be
read and the union-graph indexer keeps up, else 503 with the reason. The
indexer keeps up unless writes wait while it has taken in nothing for
``health.index_stall`` seconds (``IndexWatch``; not checked with
``store.background_index`` off, when nothing indexes until ``lsup-admin
index``). The reasons are fixed sentences with counts: no path, no exception
text (those go to the log).

``/metrics`` is the Prometheus text format of ``endpoints.metrics``, for
administrators, and for the client addresses of ``metrics.allowed`` without
credentials; anyone else gets 401 (anonymous) or 403.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Flask, Response, current_app, request
from prometheus_client import CONTENT_TYPE_LATEST

from lakesuperior.config import Config
from lakesuperior.endpoints import authn
from lakesuperior.endpoints.metrics import Metrics, instrument
from lakesuperior.exceptions import AccessDeniedError
from lakesuperior.repository import Repository

__all__ = ["bp", "IndexWatch", "Operations", "EXTENSION", "register"]

bp = Blueprint("operations", __name__)
EXTENSION = "lakesuperior.operations"


class IndexWatch:
    """Whether the union-graph indexer keeps up: the time it last took in a write,
    or last had nothing to take in, per app (thread-safe)."""

    def __init__(self, stall: float, clock: Callable[[], float] = time.monotonic):
        self.stall = stall
        self.clock = clock
        self._lock = threading.Lock()
        self._applied: int | None = None
        self._since = 0.0

    def check(self, applied: int, last: int) -> str | None:
        """None if the indexer keeps up given ``(applied, last)`` now, else why not."""
        now = self.clock()
        pending = last - applied
        with self._lock:
            if applied != self._applied or pending <= 0:
                self._applied, self._since = applied, now
            idle = now - self._since
        if pending > 0 and idle >= self.stall:
            return (f"the indexer has taken in no write for {int(idle)} s while "
                    f"{pending} wait")
        return None


class Operations:
    """What the operational pages of one app keep (``app.extensions[EXTENSION]``)."""

    def __init__(self, config: Config, repository: Repository,
                 metrics_dir: str | None = None):
        self.repository = repository
        self.background_index = config.background_index
        self.index = IndexWatch(config.health_index_stall)
        self.metrics_allowed = authn.networks(config.metrics_allowed)
        self.metrics = Metrics(repository, metrics_dir)

    def close(self) -> None:
        self.metrics.close()


def register(app: Flask, config: Config, repository: Repository,
             metrics_dir: str | None = None) -> Operations:
    """``/health`` and ``/metrics`` on ``app``, its requests counted (``metrics_dir``:
    see ``endpoints.metrics``)."""
    ops = Operations(config, repository, metrics_dir)
    app.extensions[EXTENSION] = ops
    app.wsgi_app = instrument(app.wsgi_app, ops.metrics)  # type: ignore[method-assign,assignment]
    app.register_blueprint(bp)
    return ops


def _ops() -> Operations:
    return current_app.extensions[EXTENSION]


@bp.get("/health")
def health() -> Response:
    ops = _ops()
    repo = ops.repository
    body: dict[str, Any] = {"status": "ok"}
    try:
        applied, last = repo.index_state()
        repo.feed_state()
    except Exception as e:        # whatever broke, the answer says only that
        current_app.logger.warning("Health check: the store cannot be read: %r", e)
        return _health(503, {"status": "unavailable", "reason": "the store cannot be read"})
    body["store"] = "ok"
    if not ops.background_index:
        body["indexer"] = {"status": "off", "pending": last - applied}
        return _health(200, body)
    reason = ops.index.check(applied, last)
    body["indexer"] = {"status": "ok" if reason is None else "behind",
                       "pending": last - applied}
    if reason is not None:
        body.update(status="unavailable", reason=reason)
        return _health(503, body)
    return _health(200, body)


def _health(status: int, body: dict[str, Any]) -> Response:
    return Response(json.dumps(body) + "\n", status=status, content_type="application/json",
                    headers={"Cache-Control": "no-store"})


@bp.get("/metrics")
def metrics() -> Response:
    ops = _ops()
    agent = authn.request_agent()
    auth: authn.Authenticator | None = current_app.extensions.get(authn.EXTENSION)
    address = (auth.client_address(request.headers, request.remote_addr)
               if auth is not None else request.remote_addr)
    if not agent.admin and not authn.address_in(address, ops.metrics_allowed):
        raise AccessDeniedError(None, "Read", agent.authenticated,
                                "The metrics are for administrators, and for the addresses "
                                "of metrics.allowed")
    return Response(ops.metrics.exposition(), content_type=CONTENT_TYPE_LATEST,
                    headers={"Cache-Control": "no-store"})
