"""The forms of a container's page: "New container" and "Upload".

Each form carries a ``form_id`` (a uuid the page made): without a slug it names
the new resource, so a form sent twice finds its resource made and says so
instead of making a second one; with a slug, a taken slug is refused the same
way (the repository would otherwise mint another name). The check and the
creation are one write: a refused create writes nothing.
"""
from __future__ import annotations

import re
import uuid
from typing import Any

from flask import request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response as BaseResponse

from lakesuperior.endpoints.paths import slug_segment
from lakesuperior.endpoints.ui.common import (
    Repo,
    field,
    max_body_size,
    page,
    problem,
    repository,
    see_other,
    target_uid,
    urls,
)
from lakesuperior.exceptions import PayloadTooLargeError, ResourceExistsError
from lakesuperior.model.interaction import NON_RDF_SOURCE
from lakesuperior.model.literals import literal_term
from lakesuperior.model.namespaces import DCTERMS
from lakesuperior.model.uids import check_slug, child_uid

_FORM_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def new_form_id() -> str:
    """A fresh ``form_id`` for a page's create forms."""
    return str(uuid.uuid4())


def _segment() -> str | None:
    """The new resource's name: the slug (percent-encoded as an LDP ``Slug`` is),
    else the form's ``form_id``; None for neither (the repository mints one)."""
    slug = field("slug").strip()
    if slug:
        return check_slug(slug_segment(slug))
    form_id = field("form_id")
    return form_id if _FORM_ID.fullmatch(form_id) else None


def _create_once(repo: Repo, parent: str, segment: str | None, make: Any) -> Any:
    """``make()`` (a create under ``parent``) in one write, refused
    (``ResourceExistsError``, nothing written) when ``segment`` is taken."""
    def write() -> Any:
        res = make()
        if segment is not None and res.uid != child_uid(parent, check_slug(segment)):
            raise ResourceExistsError(child_uid(parent, segment))
        return res
    return repo.transact(write)


def _exists_page(parent: str, error: ResourceExistsError) -> BaseResponse:
    uid = error.uid or parent
    return problem(409, "Already there",
                   f"{uid} already exists, so nothing was created. If you sent this form "
                   "twice, the first time made it.", uid=parent,
                   links=[("Open " + uid, page(uid)), ("Back to " + parent, page(parent))])


def _title_triples(iri: str) -> list[tuple[str, str, str]]:
    title = field("title").strip()
    return [(f"<{iri}>", DCTERMS.title, literal_term(title))] if title else []


def create_container() -> BaseResponse:
    """POST /ui/create: a basic container under ``path`` (title, optional slug)."""
    parent = target_uid()
    segment = _segment()
    repo = repository()
    fresh = f"{page(parent).rstrip('/')}/{uuid.uuid4()}"   # stands for <> until created
    triples = _title_triples(fresh)
    try:
        res = _create_once(repo, parent, segment, lambda: repo.create(
            parent, slug=segment, triples=triples, resolved_against=fresh,
            base_uri=urls().base))
    except ResourceExistsError as e:
        return _exists_page(parent, e)
    return see_other(page(res.uid))


def upload() -> BaseResponse:
    """POST /ui/upload: a binary under ``path`` from the file field ``file`` (spooled
    to a temporary file by the form parser, then streamed to the binary store),
    with an optional title on its description."""
    limit = max_body_size()
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(limit)
    try:
        upload = request.files.get("file")
    except RequestEntityTooLarge:
        raise _too_large(limit) from None
    parent = target_uid()
    if upload is None or not upload.filename:
        return problem(400, "No file", "Choose a file to upload: the form came without one, "
                       "so nothing was created.", uid=parent,
                       links=[("Back to " + parent, page(parent))])
    segment = _segment()
    repo = repository()
    base = urls().base

    def make() -> Any:
        res = repo.create(parent, slug=segment, stream=upload.stream,
                          media_type=upload.mimetype or "application/octet-stream",
                          interaction_model=NON_RDF_SOURCE, filename=upload.filename,
                          base_uri=base)
        title = _title_triples(page(res.uid))
        if title:
            repo.update_delta(res.uid, None, title, base_uri=base)
        return res
    try:
        res = _create_once(repo, parent, segment, make)
    except ResourceExistsError as e:
        return _exists_page(parent, e)
    finally:
        upload.close()
    return see_other(page(res.uid, "metadata"))


def _too_large(limit: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(f"The file is too large: this server takes requests of at "
                                f"most {limit} bytes (max_body_size). Nothing was uploaded.")
