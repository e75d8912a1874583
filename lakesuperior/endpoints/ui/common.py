"""What the staff forms share: the resource a form names, the repository as the
request's agent may use it, the modes it has there, public URLs, and answers
(303 See Other back to a page; a page that says what went wrong).

A form names its resource in the field ``path``: its uid (``/a/b``). Every
write goes through ``access.request_repository``, the agent view the LDP
endpoints use: Web Access Control decides, whatever the page offered.
"""
from __future__ import annotations

from typing import Any

from flask import Response, current_app, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior.auth.access import ALL_MODES
from lakesuperior.auth.agent_view import AgentView
from lakesuperior.endpoints import html
from lakesuperior.endpoints.access import request_repository
from lakesuperior.endpoints.call import base_path, public_root
from lakesuperior.endpoints.errors import BadRequest
from lakesuperior.endpoints.paths import Kind, Urls
from lakesuperior.exceptions import InvalidResourceError
from lakesuperior.model.uids import normalize_uid
from lakesuperior.repository import Repository

__all__ = ["repository", "field", "target_uid", "urls", "page", "see_other", "modes",
           "require", "render", "problem", "max_body_size", "Repo"]

Repo = Repository | AgentView


def repository() -> Repo:
    """The repository as the request's agent may use it (WebAC enforced)."""
    return request_repository()


def field(name: str, default: str = "") -> str:
    """A form field (``default`` when absent)."""
    return request.form.get(name, default)


def target_uid(name: str = "path") -> str:
    """The uid a form or query names in ``name`` (400 when absent or not a path)."""
    value = request.values.get(name, "")
    if not value.startswith("/"):
        raise BadRequest(f"The form names no resource: the field {name!r} must be a path "
                         f"such as /collections/a, not {value!r:.80}")
    try:
        return normalize_uid(value)
    except InvalidResourceError as e:
        raise BadRequest(f"{value!r:.80} is not a resource path: {e}") from None


def urls() -> Urls:
    """The public URLs of the request's LDP endpoint (``http.base_path``)."""
    return Urls(public_root(), base_path())


def page(uid: str, kind: Kind = "resource", version: str | None = None,
         description: bool = False) -> str:
    """The public URL of a resource's page (a binary's: its description page)."""
    return urls().url(uid, kind, version, description)


def see_other(url: str) -> BaseResponse:
    """303 See Other to ``url`` (POST/redirect/GET: a reload does not post again)."""
    return redirect(url, code=303)


def modes(repo: Repo, uid: str) -> frozenset[str]:
    """The modes the request's agent has on ``uid`` (what its pages offer)."""
    if isinstance(repo, AgentView):
        return repo.modes(uid)
    return ALL_MODES


def require(repo: Repo, uid: str, mode: str) -> None:
    """``AccessDeniedError`` unless the agent has ``mode`` on ``uid``: a page that
    leads to a write is not shown to whom the write would be refused."""
    if isinstance(repo, AgentView):
        repo.require(uid, mode)


def render(template: str, status: int = 200, **context: Any) -> Response:
    """An HTML page of the staff forms."""
    base = urls().base
    uid = context.get("uid")
    context.setdefault("root_url", base + "/")
    if uid is not None:
        context.setdefault("crumbs", html.breadcrumbs(base, uid))
    body = render_template(template, **context)
    return Response(body, status=status, content_type="text/html; charset=utf-8")


def problem(status: int, title: str, message: str, **context: Any) -> Response:
    """A page that says what went wrong (nothing was written), with links back."""
    return render("notice.html", status, title=title, message=message, **context)


def max_body_size() -> int:
    """``max_body_size``: the largest request body the server reads."""
    return int(current_app.extensions["lakesuperior"].config.max_body_size)
