"""``<resource>/fcr:acl``: the access control list of a resource (Fedora API 1.0
section 5, WebAC).

An ACL is an RDF source holding ``acl:Authorization`` nodes (hash URIs of the
ACL document, ``<#readers>``). GET / HEAD read it (404 when the resource has
none; the root always has one: the stored one, else the configured default);
PUT creates (201) or replaces (204) it from an RDF body; PATCH applies a SPARQL
Update (204); DELETE removes it (204; the root's falls back to the default).
Every method, OPTIONS included, needs acl:Control on the resource (the ACL of
an ACL is its resource's), which ``Repository.as_agent`` checks; the views only
speak HTTP.
"""
from __future__ import annotations

import hashlib

from flask import Response, request

from lakesuperior import rdfio
from lakesuperior.endpoints import bodies
from lakesuperior.endpoints.bodies import is_rdf
from lakesuperior.endpoints.call import Call, negotiate, no_content, tombstone_links
from lakesuperior.endpoints.errors import MethodNotAllowed
from lakesuperior.endpoints.representation import (
    SPARQL_UPDATE,
    constrained_by,
    content_type_of,
    link_value,
    type_links,
)
from lakesuperior.exceptions import UnsupportedMediaTypeError
from lakesuperior.http import mediatypes
from lakesuperior.model.namespaces import (
    ACL_NS,
    DEFAULT_NAMESPACES,
    FOAF_NS,
    LDP_RDF_SOURCE,
    LDP_RESOURCE,
    VCARD_NS,
)

__all__ = ["ALLOWED", "serve"]

ALLOWED = ("GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE")
ACL_OUT = mediatypes.Offers((rdfio.TURTLE, rdfio.JSON_LD, rdfio.N_TRIPLES, rdfio.RDF_XML))
_NAMESPACES = {**DEFAULT_NAMESPACES, "acl": ACL_NS, "foaf": FOAF_NS, "vcard": VCARD_NS}


def _headers(call: Call) -> dict[str, str]:
    links = type_links((LDP_RESOURCE, LDP_RDF_SOURCE))
    links.append(link_value(call.url(), "describes"))
    links.append(constrained_by(call.urls))
    return {"Link": ", ".join(links), "Allow": ", ".join(ALLOWED),
            "Accept-Patch": SPARQL_UPDATE}


@tombstone_links
def serve(call: Call) -> Response:
    """Answer any method on ``<resource>/fcr:acl``."""
    method = request.method
    if method in ("GET", "HEAD"):
        return _read(call, method == "HEAD")
    if method == "OPTIONS":
        call.repo.effective_acl(call.uid)    # Control, on a live resource (as a GET)
        response = Response(b"", headers=_headers(call))
        del response.headers["Content-Type"]
        return response
    if method == "PUT":
        return _put(call)
    if method == "PATCH":
        return _patch(call)
    if method == "DELETE":
        call.repo.delete_acl(call.uid)
        return no_content({"Link": constrained_by(call.urls)})
    raise MethodNotAllowed(f"{method} is not allowed on {call.here()}", ALLOWED)


def _read(call: Call, head: bool) -> Response:
    triples = call.repo.acl(call.uid, base_uri=call.base)
    media_type = negotiate(ACL_OUT)
    body = rdfio.serialize(triples, media_type, namespaces=_NAMESPACES)
    headers = _headers(call)
    headers["ETag"] = '"' + hashlib.sha1(body if isinstance(body, bytes) else body.encode(),
                                         usedforsecurity=False).hexdigest() + '"'
    headers["Vary"] = "Accept"
    headers["Content-Type"] = content_type_of(media_type, request.headers.get("Accept"))
    if call.not_modified("GET", headers["ETag"], None):
        response = Response(status=304, headers={k: headers[k] for k in ("ETag", "Link")})
        del response.headers["Content-Type"]
        return response
    return Response(iter(()) if head else body, headers=headers)


def _put(call: Call) -> Response:
    bodies.check_size()
    media_type = bodies.media_type()
    if not is_rdf(media_type):
        raise UnsupportedMediaTypeError(
            f"An ACL is RDF ({', '.join(sorted(rdfio.PARSEABLE))}), not "
            f"{media_type or 'a body without Content-Type'}")
    created = call.repo.set_acl(call.uid, data=bodies.read(), media_type=media_type,
                                base_uri=call.base)
    if not created:
        return no_content({"Link": constrained_by(call.urls)})
    location = call.here()
    return Response(location + "\n", status=201, content_type="text/plain; charset=utf-8",
                    headers={"Location": location, "Link": constrained_by(call.urls)})


def _patch(call: Call) -> Response:
    bodies.check_size()
    media_type = bodies.media_type()
    if media_type is None or rdfio.normalize_media_type(media_type) != SPARQL_UPDATE:
        raise UnsupportedMediaTypeError(f"PATCH takes {SPARQL_UPDATE}, not "
                                        f"{media_type or 'a body without Content-Type'}")
    call.repo.update_acl(call.uid, bodies.read(), base_uri=call.base)
    return no_content({"Link": constrained_by(call.urls)})
