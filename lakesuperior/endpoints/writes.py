"""POST, PUT, PATCH and DELETE.

Each request writes in one transaction: ``call.checked_write`` reads the
current state, checks the preconditions and runs the write in one
``Repository.transact`` (or, with nothing to check, the single write of one
``Repository`` call), so a refused request changes nothing; its commit may be
shared with other requests' writes (group commit). Request bodies are
read before the write lock is taken: binaries received into the binary store
(stored under the lock by a rename), RDF parsed (``bodies``).

RDF bodies may carry server-managed triples back unchanged (a GET-modify-PUT
round trip): with no ``Prefer: handling`` the repository's ``tolerant``
handling drops those and refuses real changes (LDP 4.2.4.1, 4.2.4.3);
``Prefer: handling=lenient`` drops them all, ``handling=strict`` refuses them all.
"""
from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from flask import Response, request

from lakesuperior import rdfio
from lakesuperior.endpoints import bodies, versioning
from lakesuperior.endpoints.bodies import RdfBody, is_rdf
from lakesuperior.endpoints.call import (
    Call,
    checked_write,
    header_values,
    no_content,
    request_links,
    tombstone_links,
)
from lakesuperior.endpoints.errors import AclLinkRefused, BadRequest, MethodNotAllowed
from lakesuperior.endpoints.paths import PathError, Target, slug_segment
from lakesuperior.endpoints.representation import (
    SPARQL_UPDATE,
    allowed_methods,
    write_headers,
)
from lakesuperior.exceptions import (
    ExternalContentError,
    IncompatibleLdpTypeError,
    UnsupportedMediaTypeError,
)
from lakesuperior.http import headers as hdr
from lakesuperior.http.headers import Link
from lakesuperior.model import archival, interaction
from lakesuperior.model.external import EXTERNAL_CONTENT_REL, check_handling
from lakesuperior.model.uids import child_uid
from lakesuperior.rdfio import Triple
from lakesuperior.store.binaries import Upload


def post(call: Call) -> Response:
    target = call.target
    if target.kind == "timemap":
        return versioning.post_version(call)
    if target.kind == "tombstone":
        return _resurrect(call)
    if target.kind != "resource":
        raise MethodNotAllowed(f"POST is not allowed on {call.here()}",
                               allowed_methods(None, target))
    return _create(call)


def _created(call: Call, res: Any) -> Response:
    """201 with the new resource's ``Location`` (also its body) and the ``Link``
    values a GET of it gives (``representation.write_headers``)."""
    location = call.url(res.uid)
    headers = _written(call, res, created=True)
    headers["Location"] = location
    return Response(location + "\n", status=201, headers=headers,
                    content_type="text/plain; charset=utf-8")


def _written(call: Call, res: Any, target: Target | None = None, *,
             created: bool = False) -> dict[str, str]:
    """The headers of a write's response (``representation.write_headers``), and
    the links lenient referential integrity dropped (``dropped_headers``)."""
    headers = write_headers(call.urls, res, target, call.handling, created=created)
    headers.update(dropped_headers(res.dropped))
    return headers


#: Most missing resources ``Lakesuperior-Dropped-Links`` names.
MAX_DROPPED_SHOWN = 100


def dropped_headers(dropped: Sequence[Triple]) -> dict[str, str]:
    """What lenient referential integrity dropped from a write's input:
    ``Lakesuperior-Dropped-Links``, the missing resources the dropped triples
    linked to (distinct, at most ``MAX_DROPPED_SHOWN``, as ``<uri>`` values), and
    ``Lakesuperior-Dropped-Triples``, how many triples were dropped. None when
    nothing was dropped."""
    if not dropped:
        return {}
    targets = list(dict.fromkeys(o for _s, _p, o in dropped))[:MAX_DROPPED_SHOWN]
    return {"Lakesuperior-Dropped-Links": ", ".join(quote(t, safe=_URI_SAFE) for t in targets),
            "Lakesuperior-Dropped-Triples": str(len(dropped))}


#: Characters a URI keeps as they are in a header (the rest is percent-encoded).
_URI_SAFE = "<>:/?#[]@!$&'()*+,;=%~"


def refuse_acl_link() -> None:
    """``AclLinkRefused`` (400) for a request with ``Link: <...>; rel="acl"``: a
    resource's ACL is ``<resource>/fcr:acl``, created there (Fedora API 5.3; Fedora 6
    refuses such a create the same way)."""
    if any(link.has_rel("acl") for link in request_links()):
        raise AclLinkRefused("A request cannot choose a resource's ACL with Link: <...>; "
                             "rel=\"acl\": the ACL of a resource is <resource>/fcr:acl; "
                             "write the resource, then PUT its ACL there")


@tombstone_links
def _create(call: Call) -> Response:
    refuse_acl_link()
    bodies.check_size()
    external = external_link()
    model = bodies.requested_model()
    group = versioning.archival_group_requested()
    media_type = bodies.media_type()
    slug_header = request.headers.get("Slug")
    slug = hdr.parse_slug(slug_header)
    segment = None
    if slug is not None:
        try:
            segment = slug_segment(slug)
        except PathError as e:
            raise BadRequest(f"Unusable Slug {slug_header!r}: {e}") from None
    if external is not None:
        return _created(call, _write_external(call, external, model, post=True, segment=segment))
    if model == interaction.NON_RDF_SOURCE or (model is None and not is_rdf(media_type) and (
            media_type is not None or bodies.has_body())):
        if group:
            raise archival.not_for_binary(None)
        return _created(call, _create_binary(call, segment, model, media_type))
    return _created(call, _create_rdf(call, segment, model, media_type, group))


def _create_binary(call: Call, segment: str | None, model: str | None,
                   media_type: str | None) -> Any:
    digests = bodies.upload_digests()
    filename = bodies.filename()
    # A conditional POST holds the write lock while it checks: receive the body first.
    stream: Upload | bodies.LimitedBody = (
        bodies.receive() if call.conditions else bodies.LimitedBody())
    try:
        return checked_write(call, "POST", lambda _: call.repo.create(
            call.uid, stream=stream, slug=segment, media_type=media_type,
            interaction_model=model, digests=digests, filename=filename, base_uri=call.base),
            read=False)
    finally:
        if isinstance(stream, Upload):
            stream.close()


def _create_rdf(call: Call, segment: str | None, model: str | None,
                media_type: str | None, group: bool = False) -> Any:
    data = bodies.read() if bodies.has_body() else b""
    body = None
    # The body is parsed against a fresh IRI, its ``<>``. Without a slug it is the
    # new resource's (a minted uid); with one, the repository moves ``<>`` to the
    # uid the resource gets, and a link to the slug's URI stays a link (taken or not).
    fresh = str(uuid.uuid4())
    base = (call.url(child_uid(call.uid, segment)) + "-" + uuid.uuid4().hex if segment
            else call.url(child_uid(call.uid, fresh)))
    if data.strip():
        if media_type is None:
            raise UnsupportedMediaTypeError("A request body needs a Content-Type")
        body = RdfBody(data, media_type, base)
    return checked_write(call, "POST", lambda _: call.repo.create(
        call.uid, slug=segment or fresh, triples=body.triples() if body is not None else [],
        resolved_against=base, interaction_model=model, handling=call.handling or "tolerant",
        base_uri=call.base, archival_group=group), read=False)


@tombstone_links
def _resurrect(call: Call) -> Response:
    call.repo.resurrect(call.uid)
    location = call.url()
    return Response(location + "\n", status=201, content_type="text/plain; charset=utf-8",
                    headers={"Location": location, "Link": call.constrained_by})


@tombstone_links
def put(call: Call) -> Response:
    if "Content-Range" in request.headers:
        raise BadRequest("A PUT with Content-Range (a partial update) is not supported: send "
                         "the whole representation (RFC 7231 section 4.3.4)")
    target = call.target
    if target.kind == "metadata":
        return _put_description(call)
    if target.kind != "resource":
        raise MethodNotAllowed(f"PUT is not allowed on {call.here()}",
                               allowed_methods(None, target))
    refuse_acl_link()
    bodies.check_size()
    external = external_link()
    model = bodies.requested_model()
    if external is not None:
        action, res = _write_external(call, external, model)
        return _created(call, res) if action == "create" else no_content(_written(call, res))
    group = versioning.archival_group_requested()
    media_type = bodies.media_type()
    rdf_body = is_rdf(media_type)
    spool = None
    data = b""
    body = None
    too_large = None
    if not rdf_body and (bodies.has_body() or model == interaction.NON_RDF_SOURCE):
        spool = bodies.receive()   # binary, or a body we will refuse
    elif bodies.has_body():
        too_large = bodies.whole_too_large()
        if too_large is not None:
            spool = bodies.receive()   # a binary's new content, else refused (413)
        else:
            data = bodies.read()
            if model != interaction.NON_RDF_SOURCE and data.strip() and media_type is not None:
                body = bodies.put_body(data, media_type, call.url())
    try:
        action, res = _put_resource(call, model, media_type, spool, data, body, group,
                                    too_large)
    finally:
        if spool is not None:
            spool.close()
    return _created(call, res) if action == "create" else no_content(_written(call, res))


def external_link() -> Link | None:
    """The request's ``Link: <URL>; rel="...fcrepo#ExternalContent"`` (Fedora API
    3.9), or None. ``ExternalContentError`` (400) for a malformed one, several,
    one without a supported ``handling``, or one sent with a body."""
    values = header_values("Link")
    links = [link for link in request_links() if link.has_rel(EXTERNAL_CONTENT_REL)]
    if not links:
        if any(EXTERNAL_CONTENT_REL.lower() in v.lower() for v in values):
            raise ExternalContentError(
                "Malformed external content Link: send Link: <URL>; rel=\""
                f"{EXTERNAL_CONTENT_REL}\"; handling=\"copy|redirect|proxy\"")
        return None
    if len(links) > 1:
        raise ExternalContentError(f"{len(links)} external content Links: a binary has one")
    link = links[0]
    check_handling(link.params.get("handling"))
    if bodies.has_body():
        raise ExternalContentError("A request with an external content Link has no body: "
                                   "the content is at the Link's URL")
    return link


def _write_external(call: Call, link: Link, model: str | None, *, post: bool = False,
                    segment: str | None = None) -> Any:
    """PUT, or POST (``segment``: the slug, None: none), of a
    binary whose content is at ``link``'s URL. The Link's ``type`` is its media
    type; a ``Content-Type`` of the request is ignored (Fedora API 3.9)."""
    if model not in (None, interaction.NON_RDF_SOURCE):
        raise ExternalContentError(f"External content makes a binary (ldp:NonRDFSource), "
                                   f"not a {interaction.model_name(model)}")
    kwargs: dict[str, Any] = dict(
        external=link.uri, external_handling=link.params["handling"],
        media_type=link.params.get("type") or None, interaction_model=interaction.NON_RDF_SOURCE,
        digests=bodies.upload_digests(), filename=bodies.filename(), base_uri=call.base)
    if not post:
        return checked_write(call, "PUT", lambda _: call.repo.create_or_replace(call.uid, **kwargs),
                             read=False, missing_ok=True)
    return checked_write(call, "POST", lambda _: call.repo.create(call.uid, slug=segment, **kwargs),
                         read=False)


def _put_resource(call: Call, model: str | None, media_type: str | None, spool: Upload | None,
                  data: bytes, body: RdfBody | None, group: bool = False,
                  too_large: Exception | None = None) -> tuple[str, Any]:
    """The write of a PUT on a resource, on its current state read once. A binary
    keeps its model (an RDF body is its new content); an RDF source cannot take
    a non-RDF body. ``too_large``: an RDF body past ``max_rdf_body_size``
    (spooled), raised unless it is a binary's content."""

    def write(current: Any) -> tuple[str, Any]:
        if too_large is not None and model != interaction.NON_RDF_SOURCE and not (
                current is not None and current.is_binary):
            raise too_large
        im = model
        if current is not None:
            interaction.check_change(call.uid, current.interaction_model, im, name=call.url())
            im = interaction.NON_RDF_SOURCE if current.is_binary else None
            if not current.is_binary and spool is not None:
                raise UnsupportedMediaTypeError(
                    f"{call.url()} is an RDF source: its body must be RDF "
                    f"({', '.join(sorted(rdfio.PARSEABLE))}), not "
                    f"{media_type or 'content without a Content-Type'}")
        kwargs: dict[str, Any] = dict(interaction_model=im,
                                      handling=call.handling or "tolerant",
                                      base_uri=call.base, archival_group=group)
        if im == interaction.NON_RDF_SOURCE or (im is None and spool is not None):
            if group:
                raise archival.not_for_binary(call.uid)
            content: dict[str, Any] = {"stream": spool} if spool is not None else {"data": data}
            kwargs.update(content, media_type=media_type, digests=bodies.upload_digests(),
                          filename=bodies.filename())
        elif body is not None:
            kwargs.update(triples=body.triples())
        return call.repo.create_or_replace(call.uid, current=current, **kwargs)
    return checked_write(call, "PUT", write, missing_ok=True, own_triples=True)


def _put_description(call: Call) -> Response:
    """PUT on ``<binary>/fcr:metadata``: replace the client triples of the description.

    Relative IRIs resolve against the request URI; the description's own URI
    stands for the binary, the subject of its triples (as in its GET)."""
    bodies.check_size()
    if bodies.requested_model() not in (None, interaction.RDF_SOURCE):
        raise IncompatibleLdpTypeError(call.uid, "A binary description is an ldp:RDFSource")
    media_type = bodies.media_type()
    if not is_rdf(media_type):
        raise UnsupportedMediaTypeError(
            f"The description of a binary is RDF ({', '.join(sorted(rdfio.PARSEABLE))}), "
            f"not {media_type or 'content without a Content-Type'}")
    here = call.url(kind="metadata")
    triples = _rebase(rdfio.parse(bodies.read(), media_type, here), here, call.url())
    res = checked_write(call, "PUT", lambda _: call.repo.update_delta(
        call.uid, [(None, None, None)], triples, handling=call.handling or "tolerant",
        base_uri=call.base))
    return no_content(_written(call, res, call.target))


@tombstone_links
def patch(call: Call) -> Response:
    target = call.target
    if target.kind not in ("resource", "metadata"):
        raise MethodNotAllowed(f"PATCH is not allowed on {call.here()}",
                               allowed_methods(None, target))
    bodies.check_size()
    media_type = bodies.media_type()
    if media_type is None or rdfio.normalize_media_type(media_type) != SPARQL_UPDATE:
        raise UnsupportedMediaTypeError(f"PATCH takes {SPARQL_UPDATE}, not "
                                        f"{media_type or 'a body without Content-Type'}")
    body = bodies.read()

    def patchable(current: Any) -> None:
        if target.kind == "resource" and current.is_binary:
            raise UnsupportedMediaTypeError(
                f"{call.url()} is a binary: its content cannot be patched; PATCH its "
                f"description at {call.url(kind='metadata')}")

    res = checked_write(call, "PATCH", lambda _: call.repo.update(
        call.uid, body, handling=call.handling or "strict", base_uri=call.base), check=patchable)
    return no_content(_written(call, res, target))


@tombstone_links
def delete(call: Call) -> Response:
    target = call.target
    if target.kind == "tombstone":
        call.repo.forget(call.uid)
        return no_content()
    if target.kind == "memento":
        return versioning.delete_memento(call)
    if target.kind != "resource":
        raise MethodNotAllowed(f"DELETE is not allowed on {call.here()}",
                               allowed_methods(None, target))
    if call.uid == "/":
        raise MethodNotAllowed("The root container cannot be deleted",
                               ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"])
    checked_write(call, "DELETE", lambda _: call.repo.delete(call.uid, soft=True), read=False)
    return no_content()


def _rebase(triples: list[Triple], old: str, new: str) -> list[Triple]:
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
