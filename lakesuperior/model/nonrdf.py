"""Binaries (LDP-NRs): the description triples that point at stored content, and
the digest URNs they name it by.

A description write (PUT or PATCH on ``fcr:metadata``, ``Repository.update`` /
``update_delta`` on a binary) may set ``ebucore:hasMimeType`` (the media type
the content is served as) and ``ebucore:filename`` (its ``Content-Disposition``)
with one literal each; a write that gives neither keeps the current value, as
Fedora 6 does (``DescriptionEdit``).

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

from collections.abc import Iterable
from types import MappingProxyType

from lakesuperior import headers as hdr
from lakesuperior.exceptions import InvalidDescriptionError
from lakesuperior.model.context import Context
from lakesuperior.model.inputs import BinaryInput
from lakesuperior.model.literals import lexical, literal_term
from lakesuperior.model.namespaces import (
    EBUCORE_FILENAME,
    EBUCORE_HAS_MIME_TYPE,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    XSD,
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


#: The description values a client may set, each to one literal.
DESCRIPTION_PREDICATES = frozenset((EBUCORE_HAS_MIME_TYPE, EBUCORE_FILENAME))
_STRING_TYPE = "^^" + str(XSD.string)


class DescriptionEdit:
    """The ``ebucore:hasMimeType`` / ``ebucore:filename`` a description write gives.

    ``split`` takes them (about the binary, internal URIs) out of the triples
    the write removes and adds: they are not ordinary triples. A value the write
    adds replaces the current one; removing one without adding another changes
    nothing (Fedora 6 keeps what a description write does not give).
    """

    __slots__ = ("uid", "res", "mimetype", "filename")

    def __init__(self, uid: str):
        self.uid = uid
        self.res = res_uri(uid)
        self.mimetype: str | None = None   #: the new ``hasMimeType`` literal term
        self.filename: str | None = None   #: the new ``filename`` literal term

    def split(self, removed: Iterable[Triple], added: Iterable[Triple]
              ) -> tuple[list[Triple], list[Triple]]:
        """``removed`` and ``added`` without the binary's description values; the
        added ones are checked and kept (``InvalidDescriptionError``)."""
        res = self.res

        def ours(t: Triple) -> bool:
            return t[0] == res and t[1] in DESCRIPTION_PREDICATES

        given: dict[str, list[str]] = {EBUCORE_HAS_MIME_TYPE: [], EBUCORE_FILENAME: []}
        rest: list[Triple] = []
        for t in added:
            if ours(t):
                if t[2] not in given[t[1]]:
                    given[t[1]].append(t[2])
            else:
                rest.append(t)
        for predicate, values in given.items():
            if values:
                self._set(predicate, values)
        return [t for t in removed if not ours(t)], rest

    def _set(self, predicate: str, values: list[str]) -> None:
        name = "ebucore:hasMimeType" if predicate == EBUCORE_HAS_MIME_TYPE else "ebucore:filename"
        if len(values) > 1:
            raise InvalidDescriptionError(
                self.uid, f"A binary has one {name}, not {len(values)}: "
                          + ", ".join(v[:100] for v in values[:5]))
        term = values[0]
        if term[:1] != '"' or not (term.endswith('"') or term.endswith(_STRING_TYPE)):
            raise InvalidDescriptionError(
                self.uid, f"{name} is a plain string literal, not {term[:200]}")
        value = lexical(term)
        if predicate == EBUCORE_HAS_MIME_TYPE:
            if not (value.isascii() and value.isprintable() and hdr.is_media_type(value)):
                raise InvalidDescriptionError(
                    self.uid, f"Invalid ebucore:hasMimeType {value[:200]!r}: a media type "
                              "is type/subtype, optionally with ; name=value parameters")
            self.mimetype = literal_term(value.strip())
        else:
            self.filename = literal_term(value)

    def apply(self, binary_sm: list[Triple], user: list[Triple]) -> tuple[list[Triple],
                                                                           list[Triple]]:
        """The binary's server-managed content triples and the client triples with
        the new values in place of the old ones."""
        res = self.res
        if self.mimetype is not None:
            binary_sm = [t for t in binary_sm
                         if not (t[0] == res and t[1] == EBUCORE_HAS_MIME_TYPE)]
            binary_sm.append((res, EBUCORE_HAS_MIME_TYPE, self.mimetype))
        if self.filename is not None:
            user = [t for t in user if not (t[0] == res and t[1] == EBUCORE_FILENAME)]
            user.append((res, EBUCORE_FILENAME, self.filename))
        return binary_sm, user
