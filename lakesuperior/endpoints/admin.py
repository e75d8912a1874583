"""Admin pages: repository statistics and a fixity check over HTTP, for
administrators only (401 without credentials, 403 for other users)."""
from __future__ import annotations

import dataclasses

from flask import Blueprint, Response, current_app, jsonify, render_template, request

from lakesuperior.admin.stats import repository_stats
from lakesuperior.endpoints.authn import require_admin
from lakesuperior.endpoints.errors import NotAcceptable
from lakesuperior.http import mediatypes
from lakesuperior.repository import Repository

bp = Blueprint("admin", __name__)
bp.before_request(require_admin)

_OFFERED = mediatypes.Offers(("application/json", "text/html"))


def _repository() -> Repository:
    return current_app.extensions["lakesuperior"].repository


@bp.get("/stats")
def stats() -> Response:
    """The figures of ``lsup-admin stats``: JSON, or HTML when asked for."""
    best = mediatypes.negotiate(request.headers.get("Accept"), _OFFERED)
    if best is None:
        raise NotAcceptable("None of the media types in Accept can be served: "
                            f"/admin/stats is available as {' or '.join(_OFFERED)}")
    data = repository_stats(_repository())
    if best == "text/html":
        return Response(render_template("admin_stats.html", stats=data),
                        mimetype="text/html")
    return jsonify(data)


@bp.get("/fixity/<path:uid>")
def fixity(uid: str) -> Response:
    """Re-hash one binary against its recorded digest (200 either way; ``ok``
    says whether it still matches). Unknown or non-binary resources are errors."""
    result = _repository().fixity_check("/" + uid)
    return jsonify(dataclasses.asdict(result))
