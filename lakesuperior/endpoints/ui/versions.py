"""Versions: "Make version" and "Revert to this version" (asks first).

A version is ``Repository.create_version`` (a kept copy of the current state,
named by its date); a revert is ``revert_to_version``, which keeps the state it
replaces as a version too, so a revert sent twice loses nothing.
"""
from __future__ import annotations

from datetime import UTC, datetime

from flask import Response, request
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior.endpoints.ui.common import (
    field,
    page,
    render,
    repository,
    require,
    see_other,
    target_uid,
)
from lakesuperior.model.versions import check_version_id


def version_date(version_id: str) -> str:
    """A version id (yyyyMMddHHmmss, UTC) as a date people read."""
    when = datetime.strptime(version_id, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def _back(uid: str) -> str:
    return page(uid, "metadata") if repository().binary_uids([uid]) else page(uid)


def make_version() -> BaseResponse:
    """POST /ui/version: a version of the current state (optional ``label``)."""
    uid = target_uid()
    label = field("label").strip() or None
    repository().create_version(uid, label=label)
    return see_other(_back(uid))


def _version() -> str:
    return check_version_id(request.values.get("version", ""))


def confirm_revert() -> Response:
    """GET /ui/revert?path=&version=: asks before reverting."""
    uid = target_uid()
    vid = _version()
    repo = repository()
    repo.get_version(uid, vid)          # 404 for a version that is not there
    require(repo, uid, "Write")
    return render("confirm.html", uid=uid, title=f"Revert {uid}?", action="revert",
                  button="Revert to this version", back=page(uid, "memento", vid),
                  extra={"version": vid},
                  message=f"Revert {uid} to its version of {version_date(vid)}? Its "
                          "current state is kept as a version first.")


def revert() -> BaseResponse:
    """POST /ui/revert: the version's state becomes the current one."""
    uid = target_uid()
    vid = _version()
    repository().revert_to_version(uid, vid)
    return see_other(_back(uid))
