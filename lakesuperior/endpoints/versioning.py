"""Writes on versions: POST to a TimeMap, DELETE of a memento, and the Archival
Group type of a new resource.

* ``POST <resource>/fcr:versions`` without ``Memento-Datetime``: a version of the
  current state now (Fedora API 4.3.3). With ``Memento-Datetime`` (an HTTP-date,
  not in the future): a version dated then, whose state is the body (RDF for an
  RDF source, content with its ``Content-Type`` for a binary) or, without a body,
  the current state; 409 if the resource has a version at that second.
* ``DELETE <resource>/fcr:versions/<id>``: the version is removed (204).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flask import Response, request

from lakesuperior import rdfio
from lakesuperior.endpoints import bodies
from lakesuperior.endpoints.bodies import RdfBody, is_rdf
from lakesuperior.endpoints.call import (
    Call,
    checked_write,
    no_content,
    request_links,
    tombstone_links,
)
from lakesuperior.exceptions import InvalidVersionError, UnsupportedMediaTypeError
from lakesuperior.http import headers as hdr
from lakesuperior.model import archival
from lakesuperior.store.binaries import Upload


def type_links() -> Iterator[str]:
    """The bare IRIs of the request's ``rel="type"`` links."""
    return (link.uri for link in request_links() if link.has_rel("type"))


def archival_group_requested() -> bool:
    """Whether the request asks for an Archival Group (``model.archival.requested``:
    an unsupported type is refused)."""
    return archival.requested(type_links())


@tombstone_links
def post_version(call: Call) -> Response:
    """POST to a TimeMap (the request's preconditions do not apply: they would
    be the TimeMap's)."""
    header = request.headers.get("Memento-Datetime")
    if header is None:
        label = hdr.parse_slug(request.headers.get("Slug"))
        vid = checked_write(call, None, lambda _: call.repo.create_version(call.uid, label=label),
                            read=call.target.description)
    else:
        vid = _import(call, header)
    location = call.url(kind="memento", version=vid, description=call.target.description)
    return Response(location + "\n", status=201, content_type="text/plain; charset=utf-8",
                    headers={"Location": location, "Link": call.constrained_by})


def _import(call: Call, header: str) -> str:
    """A version with a client's ``Memento-Datetime`` (``header``)."""
    when = hdr.parse_http_date(header)
    if when is None:
        raise InvalidVersionError(call.uid, f"Memento-Datetime is not an HTTP date: "
                                            f"{header[:100]!r} (expected e.g. 'Sat, 01 Jan "
                                            "2000 00:00:00 GMT')")
    bodies.check_size()
    media_type = bodies.media_type()
    current = call.repo.info(call.uid, base_uri=call.base)
    call.check_described(current)
    if call.target.description and bodies.has_body():
        raise UnsupportedMediaTypeError(
            f"A version of a binary's description is made with the binary's: POST its "
            f"content to {call.url()}/fcr:versions")
    kwargs: dict[str, Any] = {"base_uri": call.base}
    spool: Upload | None = None
    try:
        if bodies.has_body() and current.is_binary:
            if media_type is None:
                raise UnsupportedMediaTypeError("A version of a binary needs the "
                                                "Content-Type of its content")
            spool = bodies.receive()
            kwargs.update(stream=spool, media_type=media_type,
                          digests=bodies.upload_digests(), filename=bodies.filename())
        elif bodies.has_body():
            if not is_rdf(media_type):
                raise UnsupportedMediaTypeError(
                    f"A version of an RDF source is RDF "
                    f"({', '.join(sorted(rdfio.PARSEABLE))}), not "
                    f"{media_type or 'a body without Content-Type'}")
            kwargs["triples"] = RdfBody(bodies.read(), media_type, call.url()).triples()
        return call.repo.import_version(call.uid, when, **kwargs)
    finally:
        if spool is not None:
            spool.close()


@tombstone_links
def delete_memento(call: Call) -> Response:
    """DELETE of a memento: the version is removed; the resource is unchanged."""
    call.repo.delete_version(call.uid, call.target.version or "")
    return no_content()
