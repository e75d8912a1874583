"""External content (Fedora API 1.0 section 3.9): how a binary refers to it.

Which URLs content may come from (the allow-list) and fetching it are
``store/external.py``, beside the binary store.

The description of a ``redirect`` or ``proxy`` binary records where the content
is, as two server-managed triples (kept by versions, and by a GET-modify-PUT of
the description)::

    <res> fcsystem:externalContent "https://example.org/a.tif" ;
          fcsystem:externalHandling "proxy" .

A ``copy`` is an ordinary binary once stored: nothing of its source is kept.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lakesuperior.exceptions import ExternalContentError
from lakesuperior.model.interaction import (
    NON_RDF_SOURCE,
    model_name,
    normalize_interaction_model,
)
from lakesuperior.model.namespaces import FCSYSTEM

#: ``Link`` relation of external content, and the handlings this server supports
#: (``Accept-External-Content-Handling``).
EXTERNAL_CONTENT_REL = "http://fedora.info/definitions/fcrepo#ExternalContent"
HANDLINGS = ("copy", "redirect", "proxy")

#: Description predicates of a redirect / proxy binary (server-managed literals).
EXTERNAL_URL = FCSYSTEM.externalContent
EXTERNAL_HANDLING = FCSYSTEM.externalHandling

@dataclass(frozen=True)
class ExternalRef:
    """A binary's external content: its normalized URL and how it is served."""

    url: str
    handling: str


def check_handling(handling: str | None) -> str:
    """``handling`` if this server supports it; ``ExternalContentError`` otherwise."""
    if handling not in HANDLINGS:
        given = "no handling" if handling is None else f"handling {str(handling)[:50]!r}"
        raise ExternalContentError(f"External content needs a handling of "
                                   f"{', '.join(HANDLINGS)}, not {given}")
    return handling


def external_ref(url: str | None, handling: str, *inputs: Any,
                 model: Any = None) -> ExternalRef | None:
    """The external content a write names (None without ``url``); it takes no
    other input (``inputs``: the write's graph, data, stream...) and makes a
    binary (``model``: the interaction model asked for)."""
    if url is None:
        return None
    if any(i is not None for i in inputs):
        raise ExternalContentError("External content takes no graph, triples, data or stream: "
                                   "its content is at its URL")
    if normalize_interaction_model(model) not in (None, NON_RDF_SOURCE):
        raise ExternalContentError(f"External content makes a binary (ldp:NonRDFSource), not "
                                   f"a {model_name(normalize_interaction_model(model))}")
    if not isinstance(url, str):
        raise ExternalContentError(f"An external content URL is a string, not "
                                   f"{type(url).__name__}")
    return ExternalRef(url, check_handling(handling))
