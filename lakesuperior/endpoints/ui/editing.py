"""The "Edit" page of a resource (its own triples as Turtle; the Dublin Core
form) and a binary's "Replace file" form.

A save replaces the resource's client triples (server-managed ones stay) in one
write, if the resource is as the page showed it (the ``etag`` field): a form
sent twice, or after someone else's change, is refused with the text kept.
Turtle that does not parse, or that the repository refuses, comes back in the
field with the error beside it (line and column for a syntax error).
"""
from __future__ import annotations

from typing import Any

from flask import Response, request
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior import rdfio
from lakesuperior.endpoints.errors import PreconditionFailed, status_of
from lakesuperior.endpoints.ui.common import (
    Repo,
    field,
    modes,
    page,
    render,
    repository,
    require,
    see_other,
    target_uid,
    urls,
)
from lakesuperior.exceptions import (
    AccessDeniedError,
    LakesuperiorError,
    RdfParseError,
    ResourceNotExistsError,
    TombstoneError,
)
from lakesuperior.model.literals import literal_term
from lakesuperior.model.namespaces import (
    DCTERMS,
    DEFAULT_NAMESPACES,
    EBUCORE_FILENAME,
    EBUCORE_HAS_MIME_TYPE,
)
from lakesuperior.model.resource import Binary
from lakesuperior.store.terms import literal_parts

#: The Dublin Core form's fields: (name, label, predicate, one value per line).
DC_FIELDS = (("title", "Title", DCTERMS.title, False),
             ("description", "Description", DCTERMS.description, False),
             ("creator", "Creator", DCTERMS.creator, False),
             ("date", "Date", DCTERMS.date, False),
             ("subject", "Subject", DCTERMS.subject, True))


def _literal_values(triples: list[tuple[str, str, str]], subject: str, pred: str) -> list[str]:
    return [literal_parts(o)[0] for s, p, o in triples
            if s == subject and p == pred and o.startswith('"')]


def edit_page(*, turtle: str | None = None, error: str | None = None, status: int = 200,
              dc_error: str | None = None, dc: dict[str, str] | None = None,
              binary_error: str | None = None) -> Response:
    """GET /ui/edit?path=: the resource's own triples as Turtle, the Dublin Core
    form, and for a binary the "Replace file" form. With ``turtle`` / ``dc``: what
    the user sent, shown again beside ``error`` / ``dc_error``."""
    uid = target_uid()
    repo = repository()
    res = repo.get(uid, incl_children=False, children_range=(0, 0), base_uri=urls().base)
    require(repo, uid, "Write")
    iri = page(uid)
    user = res.user_data
    if turtle is None:
        turtle = rdfio.serialize(user, rdfio.TURTLE, namespaces=DEFAULT_NAMESPACES,
                                 base=iri).decode("utf-8")
    subject = f"<{iri}>"
    values = dc if dc is not None else {
        name: "\n".join(_literal_values(user, subject, pred)) if many
        else next(iter(_literal_values(user, subject, pred)), "")
        for name, _label, pred, many in DC_FIELDS}
    binary = None
    if isinstance(res, Binary):
        binary = {"mimetype": res.mimetype or "", "filename": res.filename or ""}
    back = page(uid, "metadata") if res.is_binary else iri
    return render("edit.html", status, uid=uid, title=f"Edit {uid}", turtle=turtle,
                  error=error, dc_error=dc_error, binary_error=binary_error, etag=res.etag,
                  dc_fields=DC_FIELDS, dc=values, binary=binary, back=back,
                  modes=modes(repo, uid))


def _save(uid: str, remove: list[Any], add: list[Any]) -> None:
    """Replace what ``remove`` matches with ``add``, if the resource is still as
    its edit page showed it."""
    repo = repository()
    base = urls().base
    etag = field("etag")

    def write() -> None:
        _check_unchanged(repo, uid, etag, base)
        repo.update_delta(uid, remove, add, base_uri=base)
    repo.transact(write)


def _check_unchanged(repo: Repo, uid: str, etag: str, base: str) -> None:
    """``PreconditionFailed`` if the resource is no longer as the page (``etag``) showed it."""
    if etag and repo.info(uid, base_uri=base).etag != etag:
        raise PreconditionFailed(
            f"{uid} changed since this page was shown (perhaps this form was sent twice, "
            "or someone else saved first): nothing was saved. What you sent is kept "
            "below; open the page again to see the current state.")


def _refusal(error: Exception) -> int:
    """The status of an error the form shows beside its fields (the input's, or a
    stale page's); the request's own errors (no access, nothing there) are raised."""
    if isinstance(error, (AccessDeniedError, ResourceNotExistsError, TombstoneError)) or \
            not isinstance(error, (LakesuperiorError, PreconditionFailed)):
        raise error
    return status_of(error)


def save_turtle() -> BaseResponse:
    """POST /ui/edit: replace the client triples with the field ``turtle``."""
    uid = target_uid()
    text = field("turtle")
    iri = page(uid)
    try:
        triples = rdfio.parse(text.encode("utf-8"), rdfio.TURTLE, iri)
        _save(uid, [(None, None, None)], triples)
    except RdfParseError as e:
        where = f"Line {e.line}, column {e.column}: " if e.line is not None else ""
        return edit_page(turtle=text, status=400,
                         error=f"{where}the Turtle does not parse, so nothing was saved. "
                               f"({e})")
    except (LakesuperiorError, PreconditionFailed) as e:
        return edit_page(turtle=text, status=_refusal(e), error=_said(e))
    return see_other(_back(uid))


def save_dublin_core() -> BaseResponse:
    """POST /ui/describe: set the Dublin Core fields (an empty field removes it)."""
    uid = target_uid()
    subject = f"<{page(uid)}>"
    given = {name: field(name) for name, *_ in DC_FIELDS}
    add = []
    for name, _label, pred, many in DC_FIELDS:
        text = given[name]
        for value in (text.splitlines() if many else [text]):
            if value.strip():
                add.append((subject, pred, literal_term(value.strip())))
    try:
        _save(uid, [(subject, pred, None) for _n, _l, pred, _m in DC_FIELDS], add)
    except (LakesuperiorError, PreconditionFailed) as e:
        return edit_page(dc=given, status=_refusal(e), dc_error=_said(e))
    return see_other(_back(uid))


def _said(error: Exception) -> str:
    """What the form says of a refused save."""
    if isinstance(error, PreconditionFailed):
        return str(error)
    return f"Nothing was saved: {error}"


def _back(uid: str) -> str:
    """The page a save returns to: the resource's (a binary's description page)."""
    return page(uid, "metadata") if repository().binary_uids([uid]) else page(uid)


def save_binary() -> BaseResponse:
    """POST /ui/binary: a new file (field ``file``, optional), media type and file
    name of a binary, in one write."""
    uid = target_uid()
    upload = request.files.get("file")
    mimetype = field("mimetype").strip()
    filename = field("filename").strip()
    repo = repository()
    base = urls().base
    subject = f"<{page(uid)}>"
    etag = field("etag")
    try:
        def write() -> None:
            _check_unchanged(repo, uid, etag, base)
            if upload is not None and upload.filename:
                repo.create_or_replace(uid, stream=upload.stream,
                                       media_type=mimetype or upload.mimetype
                                       or "application/octet-stream",
                                       filename=filename or upload.filename, base_uri=base)
                return
            add = []
            if mimetype:
                add.append((subject, EBUCORE_HAS_MIME_TYPE, literal_term(mimetype)))
            if filename:
                add.append((subject, EBUCORE_FILENAME, literal_term(filename)))
            if add:
                repo.update_delta(uid, None, add, base_uri=base)
        repo.transact(write)
    except (LakesuperiorError, PreconditionFailed) as e:
        return edit_page(status=_refusal(e), binary_error=_said(e))
    finally:
        if upload is not None:
            upload.close()
    return see_other(page(uid, "metadata"))
