"""JSON-LD output in the three profiles Fedora serves (JSON-LD 1.1, section 9.2):
compacted (the default), expanded and flattened, written straight from triples of
canonical term strings. Nothing is fetched: the context is built here, from the
namespace prefixes the caller passes.

The documents are what the JSON-LD algorithms give for RDF read with "Serialize RDF
as JSON-LD" (rdf:type as ``@type``, no native types, no embedding): one node object
per subject. Expanded: those node objects, every value an array. Compacted: the
same under ``{"@context": {prefix: namespace}}``, IRIs shortened to ``prefix:name``
where a namespace is a prefix of them, one-element arrays unwrapped, plain strings
as JSON strings; a single node object is the document itself, several are in
``@graph``. Flattened: compacted, always in ``@graph``, nodes sorted by ``@id``.
``tests/rdfio/test_jsonld.py`` reads every profile back to the same graph.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from lakesuperior.store import terms

COMPACTED = "http://www.w3.org/ns/json-ld#compacted"
EXPANDED = "http://www.w3.org/ns/json-ld#expanded"
FLATTENED = "http://www.w3.org/ns/json-ld#flattened"
PROFILES = (COMPACTED, EXPANDED, FLATTENED)

_RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
# A namespace can shorten IRIs only if it ends with a gen-delim (JSON-LD 1.1, 4.1.3).
_GEN_DELIMS = tuple(":/?#[]@")

Node = dict[str, Any]


def _ref(term: str) -> str:
    """The ``@id`` of an IRI or blank node term."""
    return term[1:-1] if term[0] == "<" else term


def _value(term: str) -> dict[str, str]:
    """The expanded value object (or node reference) of an object term."""
    if term[0] != '"':
        return {"@id": _ref(term)}
    lex, lang, datatype = terms.literal_parts(term)
    if lang is not None:
        return {"@value": lex, "@language": lang}
    if datatype is not None:
        return {"@value": lex, "@type": datatype}
    return {"@value": lex}


def expand(triples: Iterable[tuple[str, str, str]]) -> list[Node]:
    """The expanded node objects of triples, one per subject, in first-seen order."""
    nodes: dict[str, Node] = {}
    for s, p, o in triples:
        node = nodes.get(s)
        if node is None:
            node = nodes[s] = {"@id": _ref(s)}
        if p == _RDF_TYPE and o[0] != '"':
            node.setdefault("@type", []).append(_ref(o))
        else:
            node.setdefault(p[1:-1], []).append(_value(o))
    return list(nodes.values())


class _Compactor:
    """IRI and value compaction against a context of prefixes only."""

    def __init__(self, context: Mapping[str, str]):
        # longest namespace first: the most specific prefix wins
        self.context = dict(context)
        self.prefixes = sorted(((ns, p) for p, ns in self.context.items()),
                               key=lambda item: -len(item[0]))

    def iri(self, iri: str, vocab: bool) -> str:
        for ns, prefix in self.prefixes:
            if iri.startswith(ns):
                suffix = iri[len(ns):]
                if not suffix:
                    return prefix if vocab else iri
                if not suffix.startswith("//"):
                    return f"{prefix}:{suffix}"
        return iri

    def value(self, value: dict[str, str]) -> Any:
        if "@id" in value:
            return {"@id": self.ref(value["@id"])}
        if len(value) == 1:
            return value["@value"]
        if "@type" in value:
            return {"@value": value["@value"], "@type": self.iri(value["@type"], True)}
        return value

    def ref(self, ref: str) -> str:
        return ref if ref.startswith("_:") else self.iri(ref, False)

    def node(self, node: Node) -> Node:
        out: Node = {}
        for key, values in node.items():
            if key == "@id":
                out[key] = self.ref(values)
            elif key == "@type":
                types = [t if t.startswith("_:") else self.iri(t, True) for t in values]
                out[key] = types[0] if len(types) == 1 else types
            else:
                compacted = [self.value(v) for v in values]
                out[self.iri(key, True)] = compacted[0] if len(compacted) == 1 else compacted
        return out


def context_for(triples: list[tuple[str, str, str]], namespaces: Mapping[str, str]
                ) -> dict[str, str]:
    """The ``@context`` of a document: the namespaces that can shorten IRIs, less any
    prefix that is also the scheme of an IRI in it (``x:...`` would read as a
    compact IRI)."""
    usable = {p: ns for p, ns in namespaces.items()
              if p and p != "_" and ns.endswith(_GEN_DELIMS)}
    if not usable:
        return {}
    schemes = {f"<{p}:" for p in usable}
    clash = {t[1:t.index(":")] for triple in triples for t in triple
             if t[:1] == "<" and t[:t.find(":") + 1] in schemes}
    return {p: ns for p, ns in usable.items() if p not in clash}


def document(triples: Iterable[tuple[str, str, str]], profile: str = COMPACTED,
             namespaces: Mapping[str, str] | None = None) -> Any:
    """The JSON-LD document (a JSON value) of triples in a profile of ``PROFILES``."""
    if profile not in PROFILES:
        raise ValueError(f"Not a JSON-LD profile: {profile!r}")
    triples = list(triples)
    nodes = expand(triples)
    if profile == EXPANDED:
        return nodes
    context = context_for(triples, namespaces or {})
    compactor = _Compactor(context)
    if profile == FLATTENED:
        nodes.sort(key=lambda n: n["@id"])
        return {"@context": context, "@graph": [compactor.node(n) for n in nodes]}
    if len(nodes) == 1:
        return {"@context": context, **compactor.node(nodes[0])}
    return {"@context": context, "@graph": [compactor.node(n) for n in nodes]}


def serialize(triples: Iterable[tuple[str, str, str]], profile: str = COMPACTED,
              namespaces: Mapping[str, str] | None = None) -> bytes:
    """``document`` as UTF-8 JSON."""
    return json.dumps(document(triples, profile, namespaces), ensure_ascii=False,
                      indent=1).encode("utf-8")


def profile_of(requested: str | None) -> str:
    """The profile to write for a ``profile`` media type parameter (a space-separated
    list of IRIs): the first one known, else compacted."""
    for iri in (requested or "").split():
        if iri in PROFILES:
            return iri
    return COMPACTED
