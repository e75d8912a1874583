"""What the read-only pages (``reads``) show of the staff forms: the actions the
request's agent may take on a resource (buttons for the others are not shown;
the server refuses them anyway)."""
from __future__ import annotations

from typing import Any

from lakesuperior.endpoints import html
from lakesuperior.endpoints.ui.common import Repo, max_body_size, modes
from lakesuperior.endpoints.ui.containers import new_form_id


def ui_context(repo: Repo, uid: str, *, actions: bool = False, versionable: bool = False,
               version: str | None = None) -> dict[str, Any]:
    """The template context ``ui`` of a resource page: the agent's ``modes`` on
    ``uid``, whether its actions (``actions``) and "Make version" (``versionable``)
    belong on the page, the memento shown (``version``), fresh ids for its create
    forms (``form_id``, ``upload_id``) and the largest upload (``max_size`` in
    words, ``max_bytes``)."""
    return {"modes": modes(repo, uid), "actions": actions, "versionable": versionable,
            "version": version, "form_id": new_form_id(), "upload_id": new_form_id(),
            "max_size": html.human_size(max_body_size()), "max_bytes": max_body_size()}
