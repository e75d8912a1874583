"""RDF terms as canonical N-Triples strings, and their content-derived ids.

A term is a ``str`` in canonical N-Triples form:

* IRI: ``<http://example.org/a>``
* blank node: ``_:b0``
* literal: ``"lexical"``, ``"lexical"@lang`` (tag lower-cased) or
  ``"lexical"^^<datatype>`` (``xsd:string`` is dropped: plain literal).

In the lexical form only ``"``, ``\\``, the control characters (``\\n \\r \\t
\\b \\f``, others as ``\\uXXXX``), U+007F, U+FFFE and U+FFFF are escaped, exactly
as pyoxigraph prints terms. ``canonical()`` turns any valid N-Triples term into
that form. This module is the only place that builds, escapes and unescapes terms.

Ids are 64-bit integers: the top two bits give the kind (``KIND_IRI``,
``KIND_BNODE``, ``KIND_LITERAL``), the other 62 bits a hash of the canonical
UTF-8 bytes.
"""
from lakesuperior.exceptions import TermError as TermError

KIND_IRI: int
KIND_BNODE: int
KIND_LITERAL: int
XSD_STRING: str
RDF_LANGSTRING: str

def canonical(term: str) -> str:
    """Validate an N-Triples term and return its canonical form (``TermError`` if invalid)."""
def kind_of(term: str) -> int:
    """The kind of a canonical term (``KIND_*``)."""
def term_id(term: str) -> int:
    """The content-derived id of a canonical term (no database access)."""
def id_kind(tid: int) -> int:
    """The kind encoded in an id."""
def lexical(term: str) -> str:
    """The unescaped lexical form of a literal, or the IRI / blank node label."""
def literal(lex: str, lang: str | None = None, datatype: str | None = None) -> str:
    """Build a canonical literal term from its parts (``datatype`` is a bare IRI)."""
def iri(value: str) -> str:
    """Build a canonical IRI term from a bare IRI (validated)."""
def literal_parts(term: str) -> tuple[str, str | None, str | None]:
    """``(lexical, lang, datatype)`` of a canonical literal."""
def split_ntriples(data: bytes, prefix: str | None = None, replacement: str | None = None
                   ) -> tuple[list[tuple[str, str, str]], bool]:
    """The distinct triples of canonical N-Triples text (one ``s p o .`` line each),
    in order, and whether an object is an RDF 1.2 form (``ValueError`` for a line
    of another shape); ``prefix`` and ``replacement``: the subject and object IRIs
    under ``prefix`` moved under ``replacement``."""
