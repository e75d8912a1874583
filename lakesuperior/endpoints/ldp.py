"""The LDP 1.0 / Fedora API 1.0 endpoint, mounted at ``/rest`` and ``/ldp``.

One view serves every path under the prefix. The path names a resource, its
description (``fcr:metadata``), its TimeMap (``fcr:versions``), a memento
(``fcr:versions/<id>``), its tombstone (``fcr:tombstone``), its access
control list (``fcr:acl``, served by ``acl``) or a fixity check of a binary
(``fcr:fixity``, served by ``fixity``); see ``paths``.

Every request works on the repository as its agent may use it
(``access.request_repository``: Web Access Control is enforced there); a
write is checked for the mode it needs before anything else is judged
(``permissions``).

Every request works in one read snapshot (a single ``Repository`` read) or one
write transaction (``Repository.transact`` around the precondition check
and the write, its commit shared with concurrent requests' writes). Public
URIs are the request's own host URL root plus the prefix plus the uid, passed
to the repository as ``base_uri``.

The work is in ``reads`` (GET, HEAD, OPTIONS) and ``writes`` (POST, PUT, PATCH,
DELETE), on the ``call.Call`` of the request. What the headers say is decided by
pure functions (``representation``, ``preconditions``, ``lakesuperior.http.headers``);
errors become responses in ``errors``: nothing here maps an exception to a status.
"""
from __future__ import annotations

from flask import Blueprint, Response, request
from flask.typing import ResponseReturnValue
from flask.views import MethodView

from lakesuperior.endpoints import acl, fixity, permissions, reads, tx, writes
from lakesuperior.endpoints.call import Call

bp = Blueprint("ldp", __name__)

METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")


class LdpView(MethodView):
    """Every LDP method on every path below the prefix."""

    provide_automatic_options = False

    def dispatch_request(self, **kwargs: str) -> ResponseReturnValue:
        if tx.ATOMIC_ID in request.headers:
            return tx.within(self._serve)
        return self._serve()

    def _serve(self) -> ResponseReturnValue:
        call = Call()
        permissions.check_write(call)
        if call.target.kind == "acl":
            return acl.serve(call)
        if call.target.kind == "fixity":
            return fixity.serve(call)
        return super().dispatch_request(call=call)

    def get(self, call: Call) -> Response:
        return reads.read(call, head=False)

    def head(self, call: Call) -> Response:
        return reads.read(call, head=True)

    def options(self, call: Call) -> Response:
        return reads.options(call)

    def post(self, call: Call) -> Response:
        return writes.post(call)

    def put(self, call: Call) -> Response:
        return writes.put(call)

    def patch(self, call: Call) -> Response:
        return writes.patch(call)

    def delete(self, call: Call) -> Response:
        return writes.delete(call)


_view = LdpView.as_view("resource")
bp.add_url_rule("/", view_func=_view, defaults={"path": ""}, methods=METHODS,
                strict_slashes=False)
bp.add_url_rule("/<path:path>", view_func=_view, methods=METHODS)
