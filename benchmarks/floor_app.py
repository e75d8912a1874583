"""The request floor: a bare Flask app served exactly as ``lsup-server`` serves the
repository (the same gunicorn settings, workers, threads and worker class).

It answers the benchmark's requests without doing their work: a PUT or POST reads
the body and answers 201 with a ``Location``, a GET or HEAD answers one fixed
200-triple Turtle body (a workload graph). What a request costs here is what HTTP,
gunicorn and Flask cost on this machine: ``benchmarks/compare.py`` states the
server's figures as ratios to it. Run it with::

    python benchmarks/floor_app.py --bind 127.0.0.1:8090
"""
from __future__ import annotations

import random
import uuid

import click
from flask import Flask, Response, request

from lakesuperior.bench.workload import workload_turtle
from lakesuperior.config import Config
from lakesuperior.server import Server

__all__ = ["floor_app", "FloorServer", "main"]

TURTLE = "text/turtle"


def floor_app() -> Flask:
    """The bare app: every path under ``/rest`` takes PUT/POST and answers GET/HEAD."""
    app = Flask("lakesuperior-floor")
    body = workload_turtle(random.Random(0), [f"http://127.0.0.1/rest/refs/r{i}" for i in range(5)])

    @app.route("/rest/", defaults={"path": ""}, methods=["GET", "HEAD", "PUT", "POST"])
    @app.route("/rest/<path:path>", methods=["GET", "HEAD", "PUT", "POST"])
    def any_path(path: str) -> Response:
        if request.method in ("PUT", "POST"):
            request.get_data()
            where = request.base_url if request.method == "PUT" else \
                request.base_url.rstrip("/") + "/" + str(uuid.uuid4())
            return Response(status=201, headers={"Location": where})
        return Response(body, status=200, content_type=TURTLE)

    return app


class FloorServer(Server):
    """``lsup-server``'s gunicorn application, serving ``floor_app()`` instead."""

    def load(self) -> Flask:
        return floor_app()


@click.command()
@click.option("--bind", default="127.0.0.1:8090", show_default=True,
              help="Address to listen on (loopback).")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: lsup-server's).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads per worker (default: lsup-server's).")
def main(bind: str, workers: int | None, threads: int | None) -> None:
    """Serve the request floor on BIND with lsup-server's gunicorn settings."""
    config = Config().with_(server_bind=bind,
                            **{k: v for k, v in (("server_workers", workers),
                                                 ("server_threads", threads)) if v})
    FloorServer(config).run()


if __name__ == "__main__":
    main()
