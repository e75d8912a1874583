"""Binaries (LDP-NRs): the description triples that point at stored content, and
the digest URNs they name it by.

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

from types import MappingProxyType

from lakesuperior.model.context import Context
from lakesuperior.model.inputs import BinaryInput
from lakesuperior.model.literals import literal_term
from lakesuperior.model.namespaces import (
    EBUCORE_FILENAME,
    EBUCORE_HAS_MIME_TYPE,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    XSD_LONG,
    bare_iri,
)
from lakesuperior.model.uids import res_uri
from lakesuperior.rdfio import Triple

_XSD_LONG_IRI = bare_iri(XSD_LONG)
_URN_NAMES = MappingProxyType({"sha512": "sha-512", "sha256": "sha-256", "sha1": "sha1",
                               "md5": "md5"})
_URN_ALGOS = MappingProxyType({v: k for k, v in _URN_NAMES.items()})


def digest_urn(algorithm: str, hexdigest: str) -> str:
    """``<urn:sha-512:...>`` (the form Fedora writes)."""
    return f"<urn:{_URN_NAMES[algorithm]}:{hexdigest}>"


def parse_digest_urn(term: str) -> tuple[str | None, str]:
    """``(hashlib algorithm name, hex)`` of a digest URN term; ``(None, "")`` for
    anything else."""
    if term.startswith("<urn:") and term.endswith(">"):
        name, _, value = term[5:-1].partition(":")
        algo = _URN_ALGOS.get(name.lower())
        if algo:
            return algo, value
    return None, ""


def content_triples(uid: str, inp: BinaryInput) -> list[Triple]:
    """Server-managed triples describing the content: digests, size, mimetype."""
    res = res_uri(uid)
    info = inp.info
    digests = dict(info.digests or {})
    digests[info.algorithm] = info.digest
    out = [(res, PREMIS_HAS_MESSAGE_DIGEST, digest_urn(a, v)) for a, v in sorted(digests.items())]
    out.append((res, PREMIS_HAS_SIZE, literal_term(str(info.size), _XSD_LONG_IRI)))
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
