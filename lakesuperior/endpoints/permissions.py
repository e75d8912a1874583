"""Permission before validation: a write is checked for the mode it needs before
the request is judged.

Fedora 6 decides a request's permission in a filter, before its resources run
(``WebACFilter``); so here a write by an agent without the mode it needs is
refused (401 or 403) before its body, media type, interaction model, links or
method are judged (400, 405, 409, 415). The modes are those of the
``Repository`` call the write makes (``auth.agent_view``), which checks them
again in its own transaction: this check only comes first.

Modes: on ``fcr:acl``, Control for every write; a POST on a resource, Append
on a container or RDF source, Write on a binary or what does not exist; a PUT
of a resource, Write, or Append on the container of a new one; a PATCH of a
resource or ``fcr:metadata``, Write, or Append for a SPARQL Update that only
inserts; any other write, Write. The body of a PATCH is read (and parsed) only for
an agent that has Append there without Write: one with neither is refused before
it is read, so that an anonymous update costs no parse.
"""
from __future__ import annotations

from flask import request

from lakesuperior import rdfio
from lakesuperior.auth.agent_view import AgentView
from lakesuperior.endpoints import bodies
from lakesuperior.endpoints.call import Call
from lakesuperior.endpoints.representation import SPARQL_UPDATE

__all__ = ["WRITES", "check_write"]

WRITES = frozenset(("POST", "PUT", "PATCH", "DELETE"))


def check_write(call: Call) -> None:
    """``AccessDeniedError`` if the request is a write its agent may not make (nothing
    for reads and administrators)."""
    view = call.repo
    method = request.method
    if method not in WRITES or not isinstance(view, AgentView):
        return
    kind, uid = call.target.kind, call.uid
    if kind == "acl":
        view.require(uid, "Control")
    elif kind == "resource" and method == "POST":
        view.require_create(uid)
    elif kind == "resource" and method == "PUT":
        view.require_put(uid)
    elif kind in ("resource", "metadata") and method == "PATCH":
        view.require(uid, "Write", "Append")     # neither: refused before the body is read
        view.require_update(uid, _sparql_update())
    else:
        view.require(uid, "Write")


def _sparql_update() -> bytes | None:
    """The body of a request that says it is a SPARQL Update, else None."""
    ctype = request.headers.get("Content-Type")
    if not ctype or rdfio.normalize_media_type(ctype) != SPARQL_UPDATE:
        return None
    bodies.check_size()
    return bodies.read()
