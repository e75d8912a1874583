"""POST, PUT, PATCH and DELETE.

Each request writes in one transaction: the precondition check, the write and
the checks after it run in ``Repository.transaction()`` (or in the single
write of one ``Repository`` call), so a refused request changes nothing.
Request bodies of binaries are read before the write lock is taken.

RDF bodies may carry server-managed triples back unchanged (a GET-modify-PUT
round trip): with no ``Prefer: handling`` the repository's ``tolerant``
handling drops those and refuses real changes (LDP 4.2.4.1, 4.2.4.3);
``Prefer: handling=lenient`` drops them all, ``handling=strict`` refuses them all.
"""
from __future__ import annotations

import shutil
import tempfile
from typing import Any, BinaryIO

from flask import Response, current_app, request

from lakesuperior import headers as hdr
from lakesuperior import rdfio
from lakesuperior.endpoints.context import (
    CHUNK,
    SPARQL_UPDATE,
    Call,
    advertised_types,
    allowed_methods,
    check_preconditions,
    conditional,
    etag_of,
    is_weak,
    link_value,
    modified_of,
    no_content,
    tombstone_links,
    type_links,
)
from lakesuperior.endpoints.errors import (
    BadRequest,
    ConstraintViolation,
    MethodNotAllowed,
    NotFound,
)
from lakesuperior.endpoints.paths import PathError, Target, slug_segment
from lakesuperior.exceptions import (
    ChecksumValidationError,
    IncompatibleLdpTypeError,
    InvalidDigestError,
    PayloadTooLargeError,
    UnsupportedDigestError,
    UnsupportedMediaTypeError,
)
from lakesuperior.model import interaction
from lakesuperior.store.binaries import is_supported, normalize_digest

_SPOOL_MEMORY = 1 << 20


def post(call: Call) -> Response:
    target = call.target
    if target.kind == "timemap":
        return post_version(call)
    if target.kind == "tombstone":
        return _resurrect(call)
    if target.kind != "resource":
        raise MethodNotAllowed(f"POST is not allowed on {call.here()}",
                               allowed_methods(None, target))
    return _create(call)


@tombstone_links
def _create(call: Call) -> Response:
    _check_size()
    model = _requested_model()
    media_type = _media_type()
    slug_header = request.headers.get("Slug")
    slug = hdr.parse_slug(slug_header)
    segment = None
    if slug is not None:
        try:
            segment = slug_segment(slug)
        except PathError as e:
            raise BadRequest(f"Unusable Slug {slug_header!r}: {e}") from None
    binary = model == interaction.NON_RDF_SOURCE or (
        model is None and not _is_rdf(media_type) and (media_type is not None or _has_body()))
    repo = call.repo
    im = model
    guarded = conditional()

    def check_parent() -> None:
        if conditional():
            parent = repo.info(call.uid, base_uri=call.base)
            etag = etag_of(parent, call.target)
            check_preconditions("POST", exists=True, etag=etag,
                                last_modified=modified_of(parent), weak=is_weak(etag))

    if binary:
        digests = _upload_digests()
        filename = hdr.parse_content_disposition(request.headers.get("Content-Disposition"))
        kwargs = dict(slug=segment, media_type=media_type, interaction_model=im,
                      digests=digests, filename=filename, base_uri=call.base)
        if guarded:
            with _spool() as spool, repo.transaction():
                check_parent()
                res = repo.create(call.uid, stream=spool, **kwargs)
        else:
            res = repo.create(call.uid, stream=request.stream, **kwargs)
    else:
        body = request.get_data() if _has_body() else b""
        res = _create_rdf(call, body, media_type, segment, im, guarded, check_parent)
    headers = _write_headers(call, res)
    location = call.url(res.uid)
    headers["Location"] = location
    return Response(location + "\n", status=201, headers=headers,
                    content_type="text/plain; charset=utf-8")


def _create_rdf(call: Call, body: bytes, media_type: str | None, segment: str | None,
                im: str | None, guarded: bool, check_parent) -> Any:
    repo = call.repo
    if not body.strip():
        body, media_type = b"", None
    elif media_type is None:
        raise UnsupportedMediaTypeError("A request body needs a Content-Type")

    def attempt():
        return repo.create(call.uid, slug=segment, data=body or None, media_type=media_type,
                           interaction_model=im, handling=call.handling or "tolerant",
                           base_uri=call.base)

    if guarded:
        with repo.transaction():
            check_parent()
            return attempt()
    return attempt()


@tombstone_links
def _resurrect(call: Call) -> Response:
    call.repo.resurrect(call.uid)
    location = call.url()
    return Response(location + "\n", status=201, content_type="text/plain; charset=utf-8",
                    headers={"Location": location, "Link": call.constrained_by})


@tombstone_links
def post_version(call: Call) -> Response:
    """POST to a TimeMap: snapshot the current state (Fedora API 4.3.3)."""
    if "Memento-Datetime" in request.headers:
        raise ConstraintViolation(
            "Creating a memento with a Memento-Datetime and a body is not supported: POST "
            "without Memento-Datetime (and without a body) to snapshot the current state")
    label = hdr.parse_slug(request.headers.get("Slug"))
    repo = call.repo
    with repo.transaction():
        if call.target.description:
            res = repo.info(call.uid)
            if not res.is_binary:
                raise NotFound(f"{call.url()} is not a binary: it has no fcr:metadata")
        vid = repo.create_version(call.uid, label=label)
    location = call.url(kind="memento", version=vid, description=call.target.description)
    return Response(location + "\n", status=201, content_type="text/plain; charset=utf-8",
                    headers={"Location": location, "Link": call.constrained_by})


@tombstone_links
def put(call: Call) -> Response:
    target = call.target
    if target.kind == "metadata":
        return _put_description(call)
    if target.kind != "resource":
        raise MethodNotAllowed(f"PUT is not allowed on {call.here()}",
                               allowed_methods(None, target))
    _check_size()
    model = _requested_model()
    media_type = _media_type()
    repo = call.repo
    uid = call.uid
    rdf_body = _is_rdf(media_type)
    has_body = _has_body()
    spool = None
    if not rdf_body and (has_body or model == interaction.NON_RDF_SOURCE):
        spool = _spool()   # binary, or a body we will refuse: read it before the lock
        body = b""
    else:
        body = request.get_data() if has_body else b""
    filename = hdr.parse_content_disposition(request.headers.get("Content-Disposition"))

    def attempt():
        nonlocal spool
        with repo.transaction():
            exists = repo.exists(uid)
            current = repo.info(uid, base_uri=call.base) if exists else None
            if current is not None:
                etag = etag_of(current, target)
                check_preconditions("PUT", exists=True, etag=etag,
                                    last_modified=modified_of(current),
                                    weak=is_weak(etag))
            else:
                check_preconditions("PUT", exists=False, etag=None, last_modified=None,
                                    weak=False)
            im = model
            if current is not None:
                interaction.check_change(uid, current.interaction_model, im, name=call.url())
                im = None               # a current type: keep the model
                if current.is_binary:
                    im = interaction.NON_RDF_SOURCE
                if not current.is_binary and im is None and spool is not None:
                    raise UnsupportedMediaTypeError(
                        f"{call.url()} is an RDF source: its body must be RDF "
                        f"({', '.join(sorted(rdfio.PARSEABLE))}), not "
                        f"{media_type or 'content without a Content-Type'}")
            binary = im == interaction.NON_RDF_SOURCE or (im is None and spool is not None)
            kwargs: dict[str, Any] = dict(interaction_model=im,
                                          handling=call.handling or "tolerant",
                                          base_uri=call.base)
            if binary:
                if spool is None:
                    spool = _bytes_stream(body)
                kwargs.update(stream=spool, media_type=media_type,
                              digests=_upload_digests(), filename=filename)
            elif body.strip():
                if media_type is None:
                    raise UnsupportedMediaTypeError("A request body needs a Content-Type")
                kwargs.update(data=body, media_type=media_type)
            action, res = repo.create_or_replace(uid, **kwargs)
            return action, res

    try:
        action, res = attempt()
    finally:
        if spool is not None:
            spool.close()
    headers = _write_headers(call, res)
    if action == "create":
        location = call.url()
        headers["Location"] = location
        return Response(location + "\n", status=201, headers=headers,
                        content_type="text/plain; charset=utf-8")
    return no_content(headers)


def _put_description(call: Call) -> Response:
    """PUT on ``<binary>/fcr:metadata``: replace the client triples of the description.

    Relative IRIs resolve against the request URI; the description's own URI
    stands for the binary, the subject of its triples (as in its GET)."""
    _check_size()
    if _requested_model() not in (None, interaction.RDF_SOURCE):
        raise IncompatibleLdpTypeError(call.uid, "A binary description is an ldp:RDFSource")
    media_type = _media_type()
    if not _is_rdf(media_type):
        raise UnsupportedMediaTypeError(
            f"The description of a binary is RDF ({', '.join(sorted(rdfio.PARSEABLE))}), "
            f"not {media_type or 'content without a Content-Type'}")
    body = request.get_data()
    binary = call.url()
    triples = _rebase(rdfio.parse(body, media_type, call.url(kind="metadata")),
                      call.url(kind="metadata"), binary)
    repo = call.repo
    with repo.transaction():
        current = repo.get(call.uid, base_uri=call.base)
        if not current.is_binary:
            raise NotFound(f"{call.url()} is not a binary: it has no fcr:metadata")
        etag = etag_of(current, call.target)
        check_preconditions("PUT", exists=True, etag=etag,
                            last_modified=modified_of(current), weak=True)
        res = repo.update_delta(call.uid, [(None, None, None)], triples,
                                handling=call.handling or "tolerant", base_uri=call.base)
    return no_content(_write_headers(call, res, call.target))


@tombstone_links
def patch(call: Call) -> Response:
    target = call.target
    if target.kind not in ("resource", "metadata"):
        raise MethodNotAllowed(f"PATCH is not allowed on {call.here()}",
                               allowed_methods(None, target))
    _check_size()
    media_type = _media_type()
    if media_type is None or rdfio.normalize_media_type(media_type) != SPARQL_UPDATE:
        raise UnsupportedMediaTypeError(f"PATCH takes {SPARQL_UPDATE}, not "
                                        f"{media_type or 'a body without Content-Type'}")
    body = request.get_data()
    repo = call.repo
    with repo.transaction():
        current = repo.info(call.uid, base_uri=call.base)
        if target.kind == "resource" and current.is_binary:
            raise UnsupportedMediaTypeError(
                f"{call.url()} is a binary: its content cannot be patched; PATCH its "
                f"description at {call.url(kind='metadata')}")
        if target.kind == "metadata" and not current.is_binary:
            raise NotFound(f"{call.url()} is not a binary: it has no fcr:metadata")
        etag = etag_of(current, target)
        check_preconditions("PATCH", exists=True, etag=etag,
                            last_modified=modified_of(current), weak=True)
        res = repo.update(call.uid, body, handling=call.handling or "strict",
                          base_uri=call.base)
    return no_content(_write_headers(call, res, target))


@tombstone_links
def delete(call: Call) -> Response:
    target = call.target
    repo = call.repo
    if target.kind == "tombstone":
        repo.forget(call.uid)
        return no_content()
    if target.kind != "resource":
        raise MethodNotAllowed(f"DELETE is not allowed on {call.here()}",
                               allowed_methods(None, target))
    if call.uid == "/":
        raise MethodNotAllowed("The root container cannot be deleted",
                               ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"])
    with repo.transaction():
        if conditional():
            current = repo.info(call.uid, base_uri=call.base)
            etag = etag_of(current, target)
            check_preconditions("DELETE", exists=True, etag=etag,
                                last_modified=modified_of(current), weak=is_weak(etag))
        repo.delete(call.uid, soft=True)
    return no_content()


def _requested_model() -> str | None:
    """The interaction model asked for with ``Link: <...>; rel="type"`` (a term), or None."""
    return interaction.requested_model(
        link.uri for link in hdr.parse_link(request.headers.getlist("Link"))
        if link.has_rel("type"))


def _media_type() -> str | None:
    ctype = request.headers.get("Content-Type")
    if not ctype or not ctype.strip():
        return None
    mtype = rdfio.normalize_media_type(ctype)
    if mtype == "message/external-body":
        raise UnsupportedMediaTypeError("External content (message/external-body) is not "
                                        "supported: send the content in the request body")
    return ctype.strip()


def _is_rdf(media_type: str | None) -> bool:
    return media_type is not None and rdfio.normalize_media_type(media_type) in rdfio.PARSEABLE


def _check_size() -> None:
    length = request.content_length
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if length is not None and limit is not None and length > limit:
        raise PayloadTooLargeError(f"The request body ({length} bytes) is larger than the "
                                   f"limit of {limit} bytes")


def _has_body() -> bool:
    if request.content_length:
        return True
    return request.content_length is None and "chunked" in request.headers.get(
        "Transfer-Encoding", "").lower()


def _upload_digests() -> dict[str, str] | None:
    """The ``Digest`` of an upload (RFC 3230): unsupported algorithms are a 400, a value
    that cannot be a digest of the algorithm a 409 (it cannot match; Fedora API 3.5.1)."""
    header = request.headers.get("Digest")
    if not header:
        return None
    out = {}
    for algo, value in hdr.parse_digest(header).items():
        if not is_supported(algo):
            raise UnsupportedDigestError(f"Unsupported digest algorithm in Digest: {algo!r}; "
                                         "supported: md5, sha, sha-256, sha-512")
        try:
            normalize_digest(algo, value)
        except InvalidDigestError:
            raise ChecksumValidationError(
                msg=f"The {algo} digest {value!r} in the Digest header does not match the "
                    "content (it is not a valid digest of that algorithm)") from None
        out[algo] = value
    return out or None


def _spool() -> BinaryIO:
    """The request body in a temporary file, so that no write lock waits on the network."""
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_MEMORY)
    shutil.copyfileobj(request.stream, spool, CHUNK)
    spool.seek(0)
    return spool


def _bytes_stream(data: bytes) -> BinaryIO:
    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_MEMORY)
    spool.write(data)
    spool.seek(0)
    return spool


def _write_headers(call: Call, res: Any, target: Target | None = None) -> dict[str, str]:
    """Last-Modified and Link headers of a write response (no ETag: the tag of
    the next GET's representation is only known to that GET).

    When the written resource is not the request URI (POST), its links carry an
    ``anchor`` (RFC 8288 section 3.2): their context would be the container."""
    target = target or Target(res.uid)
    headers = {}
    modified = modified_of(res)
    if modified is not None:
        headers["Last-Modified"] = hdr.format_http_date(modified)
    links = type_links(advertised_types(res, target))
    if res.is_binary and target.kind == "resource":
        links.append(link_value(call.url(res.uid, "metadata"), "describedby"))
    if res.uid != call.uid:
        anchor = f'; anchor="{call.url(res.uid)}"'
        links = [link + anchor for link in links]
    links.append(call.constrained_by)
    headers["Link"] = ", ".join(links)
    if call.handling:
        headers["Preference-Applied"] = f"handling={call.handling}"
    return headers


def _rebase(triples: list[tuple[str, str, str]], old: str,
            new: str) -> list[tuple[str, str, str]]:
    """Replace IRI ``old`` (and its hash IRIs) with ``new`` in subjects and objects."""
    exact, hashed = f"<{old}>", f"<{old}#"
    cut = len(hashed) - 1

    def move(term: str) -> str:
        if term == exact:
            return f"<{new}>"
        if term.startswith(hashed):
            return f"<{new}" + term[cut:]
        return term
    return [(move(s), p, move(o)) for s, p, o in triples]
