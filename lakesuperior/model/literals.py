"""The literals the model writes and reads, as thin calls to ``store.terms``.

``store.terms`` is the one place that escapes and unescapes terms; these
helpers only name what the model needs: a plain or typed literal, an
``xsd:dateTime`` timestamp, and a stored value's lexical form.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import overload

from lakesuperior.model.namespaces import XSD_DATETIME, bare_iri
from lakesuperior.store import terms

_XSD_DATETIME_IRI = bare_iri(XSD_DATETIME)


def literal_term(text: str, datatype: str | None = None) -> str:
    """A literal term in canonical form (``datatype`` a bare IRI, or None)."""
    return terms.literal(text, datatype=datatype)


def datetime_literal(when: datetime) -> str:
    """An ``xsd:dateTime`` literal term in UTC, with microseconds."""
    text = when.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")
    return terms.literal(text + "Z", datatype=_XSD_DATETIME_IRI)


@overload
def lexical(term: str) -> str: ...
@overload
def lexical(term: None) -> None: ...
def lexical(term: str | None) -> str | None:
    """The lexical form of a literal term; an IRI or blank node term unchanged; None
    stays None."""
    if term is None or term[:1] != '"':
        return term
    return terms.lexical(term)
