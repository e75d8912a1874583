"""The Flask application factory.

``create_app(config)`` opens the repository (in the serving process: under
gunicorn, in each worker after the fork) and keeps it in
``app.extensions["lakesuperior"]``. The LDP blueprint is mounted twice, at
``http.base_path`` (``/rest`` by default, as Fedora clients expect; the
``rest`` blueprint) and ``/ldp``; the constraints document is at
``/constraints``; HTTP transactions at ``<base_path>/fcr:tx`` (``tx``); signing
in and out at ``/login`` and ``/logout`` (``session``); the search page at
``/search``; ``/health`` and ``/metrics`` (``operations``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from inspect import iscoroutinefunction
from typing import Any

from flask import Flask, Response, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior import rdfio
from lakesuperior.config import Config
from lakesuperior.endpoints import authn, errors, operations, origins, paths, session, tx
from lakesuperior.endpoints import constraints as doc
from lakesuperior.endpoints.admin import bp as admin_bp
from lakesuperior.endpoints.body_cache import BodyCache
from lakesuperior.endpoints.call import LDP_ALIAS
from lakesuperior.endpoints.changes import bp as changes_bp
from lakesuperior.endpoints.ldp import bp as ldp_bp
from lakesuperior.endpoints.operations import Operations
from lakesuperior.endpoints.query import bp as query_bp
from lakesuperior.endpoints.search import bp as search_bp
from lakesuperior.endpoints.tx.staging import Staging
from lakesuperior.endpoints.ui import bp as ui_bp
from lakesuperior.http import mediatypes
from lakesuperior.model.namespaces import RDFS_NS
from lakesuperior.query.slots import QuerySlots
from lakesuperior.repository import Repository
from lakesuperior.version import __version__

#: Most functions whose kind ``LsupFlask.ensure_sync`` remembers.
SYNC_MEMO = 4096


class LsupFlask(Flask):
    """Flask, asking ``inspect`` once per function whether it is a coroutine
    function. Flask asks for every hook and view of every request (about 6% of
    the CPU of a GET); the answer never changes for a function."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.sync_known: dict[Any, bool] = {}   #: function (of a method: its ``__func__``) -> sync

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        key = getattr(func, "__func__", func)
        sync = self.sync_known.get(key)
        if sync is None:
            sync = not iscoroutinefunction(func)
            if len(self.sync_known) < SYNC_MEMO:
                self.sync_known[key] = sync
        return func if sync else self.async_to_sync(func)


@dataclass
class State:
    """What the app keeps in ``app.extensions["lakesuperior"]``."""

    config: Config
    repository: Repository
    staging: Staging     #: the staged requests of HTTP transactions (``fcr:tx``)
    owned: bool = True   #: whether ``close()`` closes the repository
    #: SPARQL queries running per client (``query_max_per_agent``)
    queries: QuerySlots = field(default_factory=lambda: QuerySlots(0))
    #: ``/health`` and ``/metrics``
    operations: Operations | None = None
    #: the RDF answers to GETs of an unchanged store (``http.body_cache``)
    bodies: BodyCache = field(default_factory=lambda: BodyCache(0))

    def close(self) -> None:
        self.staging.close()
        if self.operations is not None:
            self.operations.close()
        if self.owned:
            self.repository.close()


def create_app(config: Config | None = None, *, repository: Repository | None = None,
               metrics_dir: str | None = None) -> Flask:
    """Build the WSGI app on ``config`` (``Config.load()`` if None).

    ``repository``: an open ``Repository`` to serve instead of opening one from
    ``config`` (the caller keeps ownership). ``metrics_dir``: the folder where the
    workers of one server keep their figures (``endpoints.metrics``; lsup-server's).
    """
    config = config or Config.load()
    authenticator = authn.Authenticator(config)    # a bad auth setting fails before the store opens
    owned = repository is None
    if repository is None:
        repository = Repository.from_config(config)
    app = LsupFlask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_size
    app.config["JSON_SORT_KEYS"] = False
    app.url_map.merge_slashes = False
    staging = Staging(repository.config.staging_dir,
                      lifetime=config.transactions_lifetime,
                      max_open=config.transactions_max_open,
                      max_operations=config.transactions_max_operations,
                      max_bytes=config.transactions_max_bytes,
                      max_per_agent=config.transactions_max_per_agent,
                      max_lifetime=config.transactions_max_lifetime)
    state = State(config, repository, staging, owned, QuerySlots(config.query_max_per_agent),
                  bodies=BodyCache(config.http_body_cache))
    app.extensions["lakesuperior"] = state
    errors.register(app)
    app.before_request(_check_path)
    origins.register(app, config)     # before authentication: refused unauthenticated
    authn.register(app, authenticator)
    session.register(app)             # after authentication: the CSRF check
    state.operations = operations.register(app, config, repository, metrics_dir)
    prefixes = endpoint_prefixes(config)
    tx.register(app, prefixes)
    for name, prefix in prefixes.items():
        app.register_blueprint(ldp_bp, url_prefix=prefix, name=name)
    app.register_blueprint(query_bp, url_prefix="/query")
    app.register_blueprint(admin_bp, url_prefix="/admin")
    app.register_blueprint(changes_bp, url_prefix="/changes")
    app.register_blueprint(ui_bp, url_prefix="/ui")
    app.register_blueprint(search_bp)

    @app.get("/", endpoint="root_redirect")
    def root_redirect() -> BaseResponse:
        return redirect(request.script_root + config.http_base_path + "/", code=302)

    @app.route("/constraints", endpoint="constraints", methods=["GET", "HEAD"])
    def constraints() -> Response:
        return _constraints()

    @app.context_processor
    def _globals() -> dict[str, Any]:
        return {"version": __version__}

    return app


def endpoint_prefixes(config: Config) -> dict[str, str]:
    """Blueprint name -> URL prefix of the LDP endpoint: ``rest`` at
    ``http.base_path``, ``ldp`` at ``/ldp`` (unless that is the base path)."""
    prefixes = {"rest": config.http_base_path}
    if config.http_base_path != LDP_ALIAS:
        prefixes["ldp"] = LDP_ALIAS
    return prefixes


def _check_path() -> None:
    """400 for control characters and empty segments in any path (before routing
    answers 404 for some)."""
    environ = request.environ
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    path = raw.split("?", 1)[0] if raw else environ.get("PATH_INFO", "")
    paths.check_controls(path)
    paths.check_empty_segments(path)


#: What the constraints document is served as.
_CONSTRAINTS_OUT = mediatypes.Offers((rdfio.TURTLE, "text/html", rdfio.JSON_LD, rdfio.N_TRIPLES,
                               rdfio.RDF_XML, "text/plain"))


def _constraints() -> Response:
    offered = _CONSTRAINTS_OUT
    media_type = mediatypes.negotiate(request.headers.get("Accept"), offered)
    if media_type is None:
        raise errors.NotAcceptable(f"The constraints document is available as "
                                   f"{', '.join(offered)}")
    if media_type == "text/html":
        body: str | bytes = render_template("constraints.html", sections=doc.SECTIONS)
        ctype = "text/html; charset=utf-8"
    elif media_type == "text/plain":
        body = "".join(f"{title}\n{'=' * len(title)}\n{text}\n\n"
                       for _, title, text in doc.SECTIONS)
        ctype = "text/plain; charset=utf-8"
    else:
        url = errors.constraints_url()
        body = rdfio.serialize(doc.triples(url), media_type,
                               namespaces={"rdfs": RDFS_NS})
        ctype = media_type + ("" if media_type == rdfio.JSON_LD else "; charset=utf-8")
    return Response(body, content_type=ctype, headers={"Vary": "Accept"})
