"""Interaction models (LDP 1.0 §4.2.1.4, §5.2.3.4; Fedora API 1.0 §3.6.2): which
one a resource has, which one a request asks for, and whether a replacement may
change it.

The one owner of these rules: the Python API and the HTTP endpoints both ask
here. Models are canonical IRI terms (``<http://www.w3.org/ns/ldp#...>``).
"""
from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from lakesuperior.exceptions import IncompatibleLdpTypeError
from lakesuperior.model.namespaces import (
    FCREPO_BINARY,
    FCREPO_CONTAINER,
    FCREPO_RESOURCE,
    LDP_BASIC_CONTAINER,
    LDP_CONTAINER,
    LDP_DIRECT_CONTAINER,
    LDP_INDIRECT_CONTAINER,
    LDP_NON_RDF_SOURCE,
    LDP_NS,
    LDP_RDF_SOURCE,
    LDP_RESOURCE,
)

RDF_SOURCE = LDP_RDF_SOURCE
NON_RDF_SOURCE = LDP_NON_RDF_SOURCE
BASIC_CONTAINER = LDP_BASIC_CONTAINER
DIRECT_CONTAINER = LDP_DIRECT_CONTAINER
INDIRECT_CONTAINER = LDP_INDIRECT_CONTAINER

INTERACTION_MODELS = (RDF_SOURCE, NON_RDF_SOURCE, BASIC_CONTAINER, DIRECT_CONTAINER,
                      INDIRECT_CONTAINER)
CONTAINERS = frozenset((BASIC_CONTAINER, DIRECT_CONTAINER, INDIRECT_CONTAINER))
MEMBERSHIP_CONTAINERS = frozenset((DIRECT_CONTAINER, INDIRECT_CONTAINER))

#: rdf:type triples the server writes for each interaction model.
MODEL_TYPES = MappingProxyType({
    RDF_SOURCE: (LDP_RESOURCE, LDP_RDF_SOURCE, FCREPO_RESOURCE),
    NON_RDF_SOURCE: (LDP_RESOURCE, LDP_NON_RDF_SOURCE, FCREPO_RESOURCE, FCREPO_BINARY),
    BASIC_CONTAINER: (LDP_RESOURCE, LDP_RDF_SOURCE, LDP_CONTAINER, LDP_BASIC_CONTAINER,
                      FCREPO_RESOURCE, FCREPO_CONTAINER),
    DIRECT_CONTAINER: (LDP_RESOURCE, LDP_RDF_SOURCE, LDP_CONTAINER, LDP_DIRECT_CONTAINER,
                       FCREPO_RESOURCE, FCREPO_CONTAINER),
    INDIRECT_CONTAINER: (LDP_RESOURCE, LDP_RDF_SOURCE, LDP_CONTAINER,
                         LDP_INDIRECT_CONTAINER, FCREPO_RESOURCE, FCREPO_CONTAINER),
})

# Most specific first: the first one found among a resource's types is its model.
_MODEL_ORDER = (INDIRECT_CONTAINER, DIRECT_CONTAINER, BASIC_CONTAINER, NON_RDF_SOURCE,
                RDF_SOURCE)
_SHORT_NAMES = MappingProxyType({t[len(LDP_NS) + 1:-1]: t for t in INTERACTION_MODELS})
# What a ``rel="type"`` link may name: the models, ldp:Container (a basic
# container unless a more specific one is also named) and ldp:Resource (no model).
_REQUESTABLE = MappingProxyType({**_SHORT_NAMES, "Container": BASIC_CONTAINER,
                                 "Resource": None})


def normalize_interaction_model(value: object) -> str | None:
    """The canonical term of an interaction model given as a term, a bare IRI,
    ``ldp:Name`` or ``Name``; None stays None. Raises ``IncompatibleLdpTypeError``
    for anything else."""
    if value is None:
        return None
    text = str(value).strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if text.startswith(LDP_NS):
        text = text[len(LDP_NS):]
    elif text.startswith("ldp:"):
        text = text[4:]
    model = _SHORT_NAMES.get(text)
    if model is None:
        raise IncompatibleLdpTypeError(
            None, f"Unknown interaction model {value!r}; use one of "
                  f"{', '.join(m[1:-1] for m in INTERACTION_MODELS)}")
    return model


def model_of(types: Iterable[str]) -> str | None:
    """The interaction model among a resource's rdf:type terms."""
    found = set(types)
    for model in _MODEL_ORDER:
        if model in found:
            return model
    return None


def model_name(model: str | None) -> str:
    """``ldp:BasicContainer`` for a model term; ``none`` for None."""
    return "none" if model is None else "ldp:" + model[len(LDP_NS) + 1:-1]


def requested_model(type_iris: Iterable[str]) -> str | None:
    """The model a request asks for with the bare IRIs of its ``rel="type"`` links
    (others than LDP's are ignored), or None. Raises ``IncompatibleLdpTypeError``
    for an unknown LDP type or for models that conflict (two kinds of container,
    or a NonRDFSource and an RDF source)."""
    names = {iri[len(LDP_NS):] for iri in type_iris if iri.startswith(LDP_NS)}
    unknown = names - set(_REQUESTABLE)
    if unknown:
        raise IncompatibleLdpTypeError(None, "Unsupported LDP interaction model(s): "
                                       + ", ".join(sorted(LDP_NS + n for n in unknown)))
    models = {m for n in names if (m := _REQUESTABLE[n]) is not None}
    containers = models & CONTAINERS
    if len(containers) > 1 and "Container" in names:
        containers -= {BASIC_CONTAINER}     # ldp:Container with a specific kind
    if len(containers) > 1:
        raise IncompatibleLdpTypeError(None, "Conflicting interaction models requested: "
                                       + ", ".join(sorted(m[1:-1] for m in containers)))
    if NON_RDF_SOURCE in models and (containers or RDF_SOURCE in models):
        raise IncompatibleLdpTypeError(None, "Conflicting interaction models requested: "
                                       "ldp:NonRDFSource and an RDF source")
    if containers:
        return next(iter(containers))
    return next(iter(models), None)


def check_change(uid: str, current: str, requested: str | None, *,
                 name: str | None = None) -> None:
    """Refuse a replacement of the resource at ``uid`` (``name``: how to call it in
    the message, default the uid) that asks for another interaction model than
    its ``current`` one. Asking for one of the current model's own types
    (``ldp:RDFSource`` on a container) keeps the model."""
    if requested is None or requested == current or requested in MODEL_TYPES[current]:
        return
    raise IncompatibleLdpTypeError(uid, f"{name or uid} is a {model_name(current)}: its "
                                        f"interaction model cannot change to "
                                        f"{model_name(requested)}")
