"""What a client sends to create or replace a resource, read before the write.

``read_input`` turns the API's ``graph`` / ``data`` / ``stream`` /
``media_type`` / ``interaction_model`` arguments into an ``RdfInput`` (triples
of canonical strings, public URIs, relative IRIs resolved against the
resource) or a ``BinaryInput`` (content already in the binary store). Parsing
and file writes happen here, outside the store's write transaction.
"""
from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from lakesuperior import rdfio
from lakesuperior.exceptions import (
    ChecksumValidationError,
    IncompatibleLdpTypeError,
    InvalidResourceError,
    InvalidTripleError,
    TermError,
    UnsupportedMediaTypeError,
)
from lakesuperior.model.interaction import NON_RDF_SOURCE, normalize_interaction_model
from lakesuperior.rdfio import Triple

DEFAULT_MIMETYPE = "application/octet-stream"
_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


@dataclass
class RdfInput:
    """RDF for an RDF source: public-URI triples, relative IRIs resolved.
    ``canonical``: every term is known to be canonical (parsed by ``rdfio`` or
    built from an rdflib Graph), so the store need not re-validate them.
    ``base``: the IRI relative IRIs were resolved against, which stands for the
    resource (``<>``); None: the resource's own public IRI. ``distinct``: no
    triple is listed twice (``rdfio.Parsed.distinct``)."""

    triples: list[Triple] = field(default_factory=list)
    model: str | None = None
    canonical: bool = False
    base: str | None = None
    distinct: bool = False

    is_binary = False

    def rebased(self, old_iri: str, new_iri: str) -> RdfInput:
        """The same triples with ``old_iri`` (and its hash IRIs), which stood for the
        resource, moved to ``new_iri``; every other IRI is data and stays."""
        old_t, new_t = "<" + old_iri, "<" + new_iri
        n = len(old_t)

        def move(term: str) -> str:
            if term.startswith(old_t) and term[n:n + 1] in (">", "#"):
                return new_t + term[n:]
            return term

        return RdfInput([(move(s), p, move(o)) for s, p, o in self.triples], self.model,
                        self.canonical, new_iri)


@dataclass
class BinaryInput:
    """Content for a NonRDFSource, already stored under its digest; or, with
    ``external`` (a ``model.external.ExternalRef`` to redirect or proxy to), not
    stored at all (``info`` None, ``size`` the source's if it told)."""

    info: Any                      # store.binaries.BinaryInfo
    mimetype: str = DEFAULT_MIMETYPE
    filename: str | None = None
    model: str = NON_RDF_SOURCE
    external: Any = None
    size: int | None = None

    is_binary = True

    def rebased(self, old_iri: str, new_iri: str) -> BinaryInput:
        return self


def read_input(base_iri: str, *, graph: Any = None, data: bytes | None = None,
               media_type: str | None = None, stream: Any = None,
               interaction_model: Any = None, binaries: Any = None,
               digests: Mapping[str, str] | None = None, filename: str | None = None,
               uid: str | None = None,
               triples: Iterable[Triple] | None = None) -> RdfInput | BinaryInput:
    """Turn the API's input arguments into an ``RdfInput`` or ``BinaryInput``.

    * ``interaction_model=ldp:NonRDFSource`` makes ``data`` / ``stream`` a binary
      whatever its media type;
    * ``graph`` (an rdflib Graph) is RDF;
    * ``triples`` are RDF the caller parsed (term strings, relative IRIs already
      resolved against ``base_iri``); the store validates them unless they are the
      ``rdfio.Parsed`` list that ``rdfio.parse`` returns;
    * ``data`` / ``stream`` with an RDF media type (``rdfio.PARSEABLE``) are parsed;
      with any other media type (or none) they are a binary's content;
    * nothing at all is an empty RDF source.

    ``digests`` (algorithm -> hex or base64) are checked against a binary's
    content; a mismatch raises ``ChecksumValidationError`` and nothing is kept.
    """
    model = normalize_interaction_model(interaction_model)
    given = [name for name, v in (("graph", graph), ("data", data), ("stream", stream),
                                  ("triples", triples)) if v is not None]
    if len(given) > 1:
        raise InvalidResourceError(uid, f"Give one of graph, triples, data or stream, not "
                                        f"{' and '.join(given)}")
    _check_types(uid, graph, triples, digests)
    _check_content(uid, data, stream, media_type)
    body = data if data is not None else stream
    if isinstance(body, str):
        try:
            body = body.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidResourceError(uid, f"The content is a string that cannot be "
                                            f"encoded as UTF-8: {e.reason}") from None
    mtype = rdfio.normalize_media_type(media_type) if media_type else None
    if is_binary(model, graph=graph, body=body, media_type=media_type):
        if graph is not None or triples is not None:
            raise IncompatibleLdpTypeError(uid, "An RDF graph cannot be stored as a "
                                                "NonRDFSource; send bytes or a stream")
        if binaries is None:
            raise RuntimeError("No binary store")
        try:
            info = binaries.put(body if body is not None else b"", expected=digests or None)
        except ChecksumValidationError as e:
            e.uid = uid
            raise
        return BinaryInput(info, media_type.strip() if media_type else DEFAULT_MIMETYPE,
                           filename, NON_RDF_SOURCE)
    if graph is not None:
        return RdfInput(graph_triples(graph, base_iri), model, canonical=True, base=base_iri)
    if triples is not None:
        if isinstance(triples, rdfio.Parsed):
            return RdfInput(list(triples), model, canonical=True, base=base_iri,
                            distinct=triples.distinct)
        return RdfInput(_caller_triples(uid, triples), model, canonical=False, base=base_iri)
    if body is not None:
        if mtype is None or mtype not in rdfio.PARSEABLE:
            raise UnsupportedMediaTypeError(
                f"Cannot read {media_type or 'content without a media type'} as RDF for a "
                f"{interaction_model}; RDF media types: {', '.join(sorted(rdfio.PARSEABLE))}")
        raw = body if isinstance(body, (bytes, bytearray, memoryview)) else body.read()
        if isinstance(raw, str):          # a text-mode stream
            raw = raw.encode("utf-8")
        parsed = rdfio.parse(bytes(raw), mtype, base_iri)
        return RdfInput(parsed, model, canonical=True, base=base_iri, distinct=parsed.distinct)
    return RdfInput([], model, canonical=True, base=base_iri)


def is_binary(interaction_model: Any, *, graph: Any = None, body: Any = None,
              media_type: str | None = None) -> bool:
    """Whether ``read_input`` makes these arguments a binary (``body``: ``data`` or
    ``stream``): the NonRDFSource model, or content of a non-RDF media type (or none)."""
    model = normalize_interaction_model(interaction_model)
    if model == NON_RDF_SOURCE:
        return True
    mtype = rdfio.normalize_media_type(media_type) if isinstance(media_type, str) \
        and media_type else None
    return (model is None and graph is None and body is not None
            and (mtype is None or mtype not in rdfio.PARSEABLE))


def _check_types(uid: str | None, graph: Any, triples: Any, digests: Any) -> None:
    """``InvalidResourceError`` for an argument of the wrong type."""
    from rdflib import Graph
    if graph is not None and not isinstance(graph, Graph):
        raise InvalidResourceError(uid, f"graph must be an rdflib Graph, not "
                                        f"{type(graph).__name__}")
    if triples is not None and (isinstance(triples, (str, bytes))
                                or not hasattr(triples, "__iter__")):
        raise InvalidResourceError(uid, f"triples must be an iterable of (s, p, o) term "
                                        f"strings, not {type(triples).__name__}")
    if digests is not None and not isinstance(digests, Mapping):
        raise InvalidResourceError(uid, f"digests must be a mapping of algorithm to digest, "
                                        f"not {type(digests).__name__}")


def _check_content(uid: str | None, data: Any, stream: Any, media_type: Any) -> None:
    """``InvalidResourceError`` for content of the wrong type,
    ``UnsupportedMediaTypeError`` for a media type that is not a string."""
    if data is not None and not isinstance(data, (bytes, bytearray, memoryview, str)):
        raise InvalidResourceError(uid, f"data must be bytes, not {type(data).__name__}")
    if stream is not None and not isinstance(stream, (bytes, bytearray, memoryview, str)) \
            and not callable(getattr(stream, "read", None)):
        raise InvalidResourceError(uid, f"stream must be a readable file object, not "
                                        f"{type(stream).__name__}")
    if media_type is not None and not isinstance(media_type, str):
        raise UnsupportedMediaTypeError(f"A media type is a string, not "
                                        f"{type(media_type).__name__}")


def _caller_triples(uid: str | None, triples: Iterable[Any]) -> list[Triple]:
    """A caller's triples as a list; ``InvalidTripleError`` for an item that is not three
    strings (the terms themselves are validated where they are written)."""
    out = []
    for i, t in enumerate(triples):
        if not isinstance(t, (tuple, list)) or len(t) != 3 \
                or not all(isinstance(term, str) for term in t):
            raise InvalidTripleError(uid, f"Triple {i} is not three term strings: {t!r:.200}")
        out.append((t[0], t[1], t[2]))
    return out


def graph_triples(graph: Any, base_iri: str) -> list[Triple]:
    """Triples of an rdflib Graph: relative IRIs resolved against ``base_iri`` and
    blank nodes relabelled (fresh labels, so they never meet another resource's)."""
    try:
        triples: list[Triple] = rdfio.graph_to_triples(graph)
    except TermError:
        triples = _graph_triples_resolving(graph, base_iri)
    prefix = "_:b" + secrets.token_hex(6)
    labels: dict[str, str] = {}

    def bnode(term: str) -> str:
        label = labels.get(term)
        if label is None:
            label = labels[term] = f"{prefix}x{len(labels)}"
        return label

    out = []
    for s, p, o in triples:
        if s[0] == "_":
            s = bnode(s)
        if o[0] == "_":
            o = bnode(o)
        out.append((s, p, o))
    return out


def _graph_triples_resolving(graph: Any, base_iri: str) -> list[Triple]:
    from rdflib import URIRef

    def fix(node: Any) -> Any:
        if isinstance(node, URIRef) and not _ABSOLUTE.match(node):
            return URIRef(urljoin(base_iri, str(node)))
        return node

    out = []
    for s, p, o in graph:
        try:
            out.append((rdfio.from_rdflib(fix(s)), rdfio.from_rdflib(fix(p)),
                        rdfio.from_rdflib(fix(o))))
        except TermError as e:
            raise TermError(f"Invalid term in the graph: {e}") from None
    return out
