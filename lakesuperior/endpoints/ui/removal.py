"""Deleting, restoring and purging: "Delete" (asks first), the tombstone page
with "Restore" and "Purge" (which asks again).

A delete leaves a tombstone (``Repository.delete``, soft); "Restore" is
``resurrect``, "Purge" ``forget``. Each is safe to send twice: a second delete
or restore finds the work done and shows the page it leads to; a second purge
says that nothing is there any more.
"""
from __future__ import annotations

from flask import Response, url_for
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior.endpoints.ui.common import (
    modes,
    page,
    problem,
    render,
    repository,
    require,
    see_other,
    target_uid,
)
from lakesuperior.exceptions import ResourceNotExistsError, TombstoneError
from lakesuperior.model.uids import ROOT_UID, parent_uid


def tombstone_url(uid: str) -> str:
    """The tombstone page of ``uid``."""
    return url_for("ui.tombstone", path=uid)


def _missing(uid: str) -> Response:
    parent = parent_uid(uid) or ROOT_UID
    return problem(404, "Not found", f"Nothing is at {uid}: it was purged, or never "
                   "existed.", uid=parent, links=[("Go to " + parent, page(parent))])


def confirm_delete() -> Response:
    """GET /ui/delete?path=: asks before deleting."""
    uid = target_uid()
    repo = repository()
    if uid == ROOT_UID:
        return problem(409, "Not deleted", "The root cannot be deleted.", uid=uid,
                       links=[("Back", page(uid))])
    res = repo.info(uid)
    require(repo, uid, "Write")
    return render("confirm.html", uid=uid, title=f"Delete {uid}?", action="delete",
                  button="Delete", back=page(uid, "metadata") if res.is_binary else page(uid),
                  message=f"Delete {uid} and everything below it? It leaves a tombstone: "
                          "someone with Write access can restore it until it is purged.")


def delete() -> BaseResponse:
    """POST /ui/delete: soft delete, then the tombstone page."""
    uid = target_uid()
    repo = repository()
    try:
        repo.delete(uid)
    except TombstoneError as e:      # deleted already (this form sent twice?)
        return see_other(tombstone_url(e.top or uid))
    except ResourceNotExistsError:
        return _missing(uid)
    return see_other(tombstone_url(uid))


def tombstone() -> BaseResponse:
    """GET /ui/tombstone?path=: what was deleted, with "Restore" and "Purge"."""
    uid = target_uid()
    repo = repository()
    try:
        repo.exists(uid)
    except TombstoneError as e:
        top = e.top or uid
        return render("tombstone.html", status=410, uid=uid, top=top, when=e.ts,
                      title=f"{uid} was deleted", top_url=tombstone_url(top),
                      modes=modes(repo, top))
    except ResourceNotExistsError:
        return _missing(uid)
    if not repo.exists(uid):
        return _missing(uid)
    return see_other(page(uid))     # restored meanwhile


def restore() -> BaseResponse:
    """POST /ui/restore: bring a deleted resource back (and what was below it)."""
    uid = target_uid()
    repo = repository()
    try:
        if repo.exists(uid):         # restored already
            return see_other(page(uid))
    except TombstoneError:
        pass
    else:
        return _missing(uid)
    repo.resurrect(uid)
    return see_other(page(uid))


def confirm_purge() -> Response:
    """GET /ui/purge?path=: asks again before purging."""
    uid = target_uid()
    repo = repository()
    try:
        repo.exists(uid)
    except TombstoneError:
        require(repo, uid, "Write")
    else:
        return _missing(uid)
    return render("confirm.html", uid=uid, title=f"Purge {uid}?", action="purge",
                  button="Purge", back=tombstone_url(uid),
                  message=f"Purge {uid} for good? Everything that was deleted with it and "
                          "all their versions are removed; this cannot be undone.")


def purge() -> BaseResponse:
    """POST /ui/purge: remove a tombstone and all under it, then the parent's page."""
    uid = target_uid()
    repo = repository()
    try:
        repo.forget(uid)
    except ResourceNotExistsError:
        return _missing(uid)
    return see_other(page(parent_uid(uid) or ROOT_UID))
