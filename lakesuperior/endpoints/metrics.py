"""The server's figures for Prometheus (``prometheus_client``), served by
``GET /metrics`` (``endpoints.operations``).

Counted as requests are answered (``Metrics``, one per app, kept by its
``endpoints.operations.Operations`` in ``app.extensions``):

* ``lsup_http_requests_total{method, status}``: requests answered;
* ``lsup_http_request_duration_seconds{method}``: from the request reaching the
  app to the last byte of its answer handed to the server (a histogram);
* ``lsup_write_lock_wait_seconds``: each write's wait for the write lock
  (``store.group``: queued behind a group included; a histogram).

Read from the store at each scrape (``StoreFigures``): ``lsup_store_up`` (1 when
the store can be read), ``lsup_index_lag_writes`` (committed writes the
union-graph indices have not taken in), ``lsup_outbox_backlog_events`` (change
events waiting for the broker; 0 with messaging off), ``lsup_outbox_events``
(events the feed retains) and ``lsup_store_size_bytes`` (the LMDB files).

Gunicorn answers with several worker processes; a scrape reaches one of them.
``lsup-server`` therefore runs prometheus_client's multiprocess mode: it sets
``PROMETHEUS_MULTIPROC_DIR`` to ``DATA_DIR/metrics`` (emptied at each start)
before any worker exists, each worker's counts are kept in files there, and a
scrape sums the files of every worker, live or gone (``multiprocess_dir``). An
app made otherwise (tests, an embedding program) counts in its own registry.
"""
from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, values
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from lakesuperior.exceptions import ConfigError, LakesuperiorError
from lakesuperior.messaging.status import feed_figures
from lakesuperior.repository import Repository

__all__ = ["Metrics", "StoreFigures", "instrument"]

#: Methods counted by name; any other is counted as ``other`` (bounded label values).
METHODS = frozenset(("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"))
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                   60.0)
SCRAPE_TRIES = 5
WAIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


class StoreFigures(Collector):
    """The gauges read from the store at each scrape (module doc)."""

    def __init__(self, repository: Repository):
        self.repository = repository

    def collect(self) -> Iterable[Metric]:
        repo = self.repository
        up = GaugeMetricFamily("lsup_store_up", "1 when the store can be read, else 0")
        try:
            pending = repo.index_pending()
            feed = feed_figures(repo)
            size = repo.disk_size()
        except LakesuperiorError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield GaugeMetricFamily("lsup_index_lag_writes", "Committed writes the union-graph "
                                "indices have not taken in yet", value=pending)
        yield GaugeMetricFamily("lsup_outbox_backlog_events", "Change events waiting for the "
                                "message broker (0 with messaging off)",
                                value=feed["backlog"])
        yield GaugeMetricFamily("lsup_outbox_events", "Change events the feed retains",
                                value=feed["events"])
        yield GaugeMetricFamily("lsup_store_size_bytes", "Bytes of the store's LMDB files",
                                value=size)


class Metrics:
    """The instruments of one app (module doc). ``multiprocess_dir``: the folder of
    prometheus_client's multiprocess mode, which must be the
    ``PROMETHEUS_MULTIPROC_DIR`` of the process before prometheus_client was
    first imported (``lsup-server`` sees to it)."""

    def __init__(self, repository: Repository, multiprocess_dir: str | None = None):
        if multiprocess_dir is not None and not getattr(values.ValueClass, "_multiprocess",
                                                        False):
            raise ConfigError("The metrics of several workers need PROMETHEUS_MULTIPROC_DIR "
                              "set before prometheus_client is imported (lsup-server sets "
                              "it)")
        self.repository = repository
        self.multiprocess_dir = multiprocess_dir
        own = None if multiprocess_dir is not None else CollectorRegistry()
        self.registry = own
        self.requests = Counter("lsup_http_requests", "HTTP requests answered, by method "
                                "and status", ["method", "status"], registry=own)
        self.latency = Histogram("lsup_http_request_duration_seconds", "Seconds from a "
                                 "request reaching the application to the end of its "
                                 "answer", ["method"], buckets=LATENCY_BUCKETS, registry=own)
        self.lock_wait = Histogram("lsup_write_lock_wait_seconds", "Seconds a write waited "
                                   "for the write lock", buckets=WAIT_BUCKETS, registry=own)
        # Each worker's files made now, before it answers: a file another worker is
        # making is empty for an instant, which a scrape cannot read (see exposition).
        self.requests.labels("GET", "200")
        self.latency.labels("GET")
        self.store = StoreFigures(repository)
        if own is not None:
            own.register(self.store)
        repository.write_groups.observe_waits(self.lock_wait.observe)

    def answered(self, method: str, status: str, seconds: float) -> None:
        """Count one answered request."""
        method = method if method in METHODS else "other"
        self.requests.labels(method, status).inc()
        self.latency.labels(method).observe(seconds)

    def exposition(self) -> bytes:
        """Every figure, in Prometheus' text format (all workers' in multiprocess mode)."""
        registry = self.registry
        if registry is None:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=self.multiprocess_dir)
            registry.register(self.store)
        tries = 1
        while True:
            try:
                return generate_latest(registry)
            except struct.error:     # a worker's file made this instant, still empty
                if tries == SCRAPE_TRIES:
                    raise
                tries += 1
                time.sleep(0.02)

    def close(self) -> None:
        self.repository.write_groups.forget_observer(self.lock_wait.observe)


StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def instrument(wsgi_app: WsgiApp, metrics: Metrics) -> WsgiApp:
    """``wsgi_app`` counting each answer in ``metrics`` when its body is closed."""

    def counted(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        start = time.perf_counter()
        method = str(environ.get("REQUEST_METHOD", ""))
        status = ["500"]

        def starting(line: str, headers: list[tuple[str, str]], *exc_info: Any) -> Any:
            status[0] = line.split(" ", 1)[0]
            return start_response(line, headers, *exc_info)

        def done() -> None:
            metrics.answered(method, status[0], time.perf_counter() - start)

        try:
            body = wsgi_app(environ, starting)
        except BaseException:
            done()
            raise
        wrapper = environ.get("wsgi.file_wrapper")
        if isinstance(wrapper, type) and isinstance(body, wrapper):
            # The server sends a file wrapper itself (sendfile): wrapping it would lose
            # that, so the count is hooked on its close() instead.
            closing = getattr(body, "close", None)

            def close() -> None:
                try:
                    if closing is not None:
                        closing()
                finally:
                    done()
            body.close = close  # type: ignore[attr-defined]
            return body
        return _Closing(body, done)

    return counted


class _Closing:
    """A response body whose ``close()`` also calls ``done``."""

    def __init__(self, body: Iterable[bytes], done: Callable[[], None]):
        self.body = body
        self.done = done

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.body)

    def close(self) -> None:
        try:
            closing = getattr(self.body, "close", None)
            if closing is not None:
                closing()
        finally:
            self.done()
