"""``<binary>/fcr:fixity``: a fixity check over HTTP, as Fedora 4, 5 and 6 answer it
(Samvera / Hyrax's ``ActiveFedora::FixityService`` calls it).

GET (or HEAD) re-hashes the binary's stored content (``Repository.fixity_check``,
which needs acl:Read) and answers RDF about the binary::

    <bin> premis:hasFixity <bin#fixity-UUID> .
    <bin#fixity-UUID> a premis:Fixity, premis:EventOutcomeDetail ;
        premis:hasMessageDigest <urn:sha-512:...> ;    # computed now
        premis:hasSize "1234"^^xsd:long ;              # bytes read now
        premis:hasEventOutcome "SUCCESS" .             # or "BAD_CHECKSUM"

Only a binary has one: any other resource is 404 (Fedora's answer), a binary
whose content is external (``redirect`` or ``proxy``: nothing stored to check)
409. OPTIONS lists the methods, with the checks of a GET (acl:Read, a binary);
every other method is 405.
"""
from __future__ import annotations

import uuid

from flask import Response, request

from lakesuperior import rdfio
from lakesuperior.endpoints.call import Call, negotiate, tombstone_links
from lakesuperior.endpoints.errors import ConstraintViolation, MethodNotAllowed, NotFound
from lakesuperior.endpoints.representation import (
    constrained_by,
    content_type_of,
    link_value,
    type_links,
)
from lakesuperior.exceptions import IncompatibleLdpTypeError
from lakesuperior.http import mediatypes
from lakesuperior.model.literals import literal_term
from lakesuperior.model.namespaces import (
    DEFAULT_NAMESPACES,
    LDP_RDF_SOURCE,
    LDP_RESOURCE,
    PREMIS,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    RDF_TYPE,
    XSD_LONG,
    bare_iri,
)
from lakesuperior.model.nonrdf import digest_urn
from lakesuperior.rdfio import Triple

__all__ = ["ALLOWED", "SUCCESS", "BAD_CHECKSUM", "serve", "fixity_triples"]

ALLOWED = ("GET", "HEAD", "OPTIONS")
#: The outcomes Fedora writes (``premis:hasEventOutcome``).
SUCCESS = "SUCCESS"
BAD_CHECKSUM = "BAD_CHECKSUM"
FIXITY_OUT = mediatypes.Offers((rdfio.TURTLE, rdfio.JSON_LD, rdfio.N_TRIPLES, rdfio.RDF_XML))


def _headers(call: Call) -> dict[str, str]:
    links = type_links((LDP_RESOURCE, LDP_RDF_SOURCE))
    links += [link_value(call.url(), "describes"), constrained_by(call.urls)]
    return {"Link": ", ".join(links), "Allow": ", ".join(ALLOWED)}


@tombstone_links
def serve(call: Call) -> Response:
    """Answer any method on ``<resource>/fcr:fixity``."""
    method = request.method
    if method == "OPTIONS":
        if not call.repo.info(call.uid, base_uri=call.base).is_binary:   # Read, as a GET
            raise NotFound(f"{call.url()} is not a binary: it has no fcr:fixity")
        response = Response(b"", headers=_headers(call))
        del response.headers["Content-Type"]
        return response
    if method not in ("GET", "HEAD"):
        raise MethodNotAllowed(f"{method} is not allowed on {call.here()}", ALLOWED)
    media_type = negotiate(FIXITY_OUT)
    try:
        result = call.repo.fixity_check(call.uid)
    except IncompatibleLdpTypeError:
        raise NotFound(f"{call.url()} is not a binary: it has no fcr:fixity") from None
    if not result.expected:
        raise ConstraintViolation(f"{call.url()} has no stored content to check: its content "
                                  "is external (redirect or proxy); ask its URL for a "
                                  "digest with Want-Digest")
    triples = fixity_triples(call.url(), result.algorithm, result.actual, result.size,
                             result.ok)
    headers = _headers(call)
    headers["Vary"] = "Accept"
    headers["Cache-Control"] = "no-store"          # a new check on every request
    headers["Content-Type"] = content_type_of(media_type, request.headers.get("Accept"))
    if method == "HEAD":
        return Response(iter(()), headers=headers)
    body = rdfio.serialize(triples, media_type, namespaces=DEFAULT_NAMESPACES)
    return Response(body, headers=headers)


def fixity_triples(binary: str, algorithm: str, actual: str | None, size: int | None,
                   ok: bool) -> list[Triple]:
    """The RDF of one fixity check of the binary at URI ``binary``: the digest
    (``algorithm``, hex ``actual``) and ``size`` computed now (None: the content
    could not be read), and the outcome."""
    subject = f"<{binary}>"
    node = f"<{binary}#fixity-{uuid.uuid4()}>"
    triples = [(subject, PREMIS.hasFixity, node),
               (node, RDF_TYPE, PREMIS.Fixity),
               (node, RDF_TYPE, PREMIS.EventOutcomeDetail)]
    if actual is not None:
        triples.append((node, PREMIS_HAS_MESSAGE_DIGEST, digest_urn(algorithm, actual)))
    if size is not None:
        triples.append((node, PREMIS_HAS_SIZE, literal_term(str(size), bare_iri(XSD_LONG))))
    triples.append((node, PREMIS.hasEventOutcome,
                    literal_term(SUCCESS if ok else BAD_CHECKSUM)))
    return triples
