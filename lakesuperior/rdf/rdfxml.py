"""What RDF/XML cannot carry: a predicate with no XML name form, a character XML
1.0 forbids. ``rdfio.serialize`` checks both (``UnwritableError``: 406 over HTTP)."""
from __future__ import annotations

import re
from collections.abc import Iterable

from lakesuperior.exceptions import UnwritableError

__all__ = ["check_predicates", "checked"]

_XML_LOCAL_NAME = re.compile(r"[^\W\d][\w.\-\u00b7]*\Z")
#: What XML 1.0 cannot carry, in UTF-8: C0 controls but tab, newline and return,
#: U+FFFE and U+FFFF (surrogates never reach UTF-8 output).
_XML_FORBIDDEN = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]|\xef\xbf[\xbe\xbf]")


def check_predicates(predicates: Iterable[str]) -> None:
    """RDF/XML writes a predicate (``<IRI>``) as an XML element name: it must end
    in an NCName."""
    for predicate in predicates:
        if not _XML_LOCAL_NAME.search(predicate[1:-1]):
            raise UnwritableError(
                f"Cannot write RDF/XML: predicate {predicate} does not end in an XML name; "
                "ask for Turtle, N-Triples or JSON-LD")


def checked(out: bytes) -> bytes:
    """RDF/XML output, unless it holds a character XML 1.0 forbids (a literal's
    control character): no XML parser would read it."""
    bad = _XML_FORBIDDEN.search(out)
    if bad is not None:
        raise UnwritableError(
            f"Cannot write RDF/XML: the data hold a character XML 1.0 forbids "
            f"(U+{ord(bad.group().decode('utf-8')):04X}); ask for Turtle, N-Triples or "
            "JSON-LD")
    return out
