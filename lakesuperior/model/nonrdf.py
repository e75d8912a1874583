"""Binaries (LDP-NRs): the description triples that point at stored content.

The content lives in the content-addressed binary store, under its digest in
the store's algorithm. The resource's graph is its *description* (an RDF
source the client may patch) holding, besides the usual server-managed
triples::

    <res> premis:hasMessageDigest <urn:sha-512:...> ;   # one per known digest
          premis:hasSize "1234"^^xsd:long ;
          ebucore:hasMimeType "image/png" ;
          ebucore:filename "photo.png" .                # client-settable

Order of writes: the file is stored first, then the description in the LMDB
transaction. A transaction that aborts leaves at most an orphan file, which
``Repository.cleanup()`` removes later.
"""
from __future__ import annotations

from lakesuperior.model.context import Context, literal_term
from lakesuperior.model.inputs import BinaryInput
from lakesuperior.model.namespaces import (
    EBUCORE_FILENAME,
    EBUCORE_HAS_MIME_TYPE,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    XSD_LONG,
)
from lakesuperior.model.resource import digest_urn
from lakesuperior.model.uids import res_uri

Triple = tuple[str, str, str]


def content_triples(uid: str, inp: BinaryInput) -> list[Triple]:
    """Server-managed triples describing the content: digests, size, mimetype."""
    res = res_uri(uid)
    info = inp.info
    digests = dict(info.digests or {})
    digests[info.algorithm] = info.digest
    out = [(res, PREMIS_HAS_MESSAGE_DIGEST, digest_urn(a, v)) for a, v in sorted(digests.items())]
    out.append((res, PREMIS_HAS_SIZE, literal_term(str(info.size), XSD_LONG)))
    out.append((res, EBUCORE_HAS_MIME_TYPE, literal_term(inp.mimetype)))
    return out


def user_triples(ctx: Context, uid: str, inp: BinaryInput,
                 old_user: list[Triple] | None = None) -> list[Triple]:
    """The description's client triples: the old ones (on replace), with the
    filename set when the input gives one."""
    res = res_uri(uid)
    user = list(old_user or [])
    if inp.filename is not None:
        user = [t for t in user if not (t[0] == res and t[1] == EBUCORE_FILENAME)]
        user.append((res, EBUCORE_FILENAME, literal_term(inp.filename)))
    return user
