"""RDF I/O: parse and serialize RDF documents by media type.

Terms are ``str`` in canonical N-Triples form, exactly as ``str(pyoxigraph_term)``
prints them: ``<http://x/a>``, ``_:label``, ``"lex"``, ``"lex"@lang`` (tag in lower
case), ``"lex"^^<datatype>`` (never ``xsd:string``). In the lexical form only ``"``,
``\\``, the control characters (``\\b \\t \\n \\f \\r``, others as ``\\uXXXX``, upper-case
hex), U+007F, U+FFFE and U+FFFF are escaped. A triple is a tuple of three terms.
``lakesuperior.store.terms`` builds, escapes and unescapes them (the one place that
does); every term ``parse`` yields is canonical (``tests/rdfio/test_canonical_terms.py``),
so a writer may hand parser output to ``WriteTxn.add_graph(..., canonical=True)``.

The hot formats go through pyoxigraph (Rust): parsing yields tuples of strings with
no rdflib object on the way. rdflib is the term model of the Python API
(``to_rdflib``, ``from_rdflib``, ``graph_to_triples``, ``triples_to_graph``) and the
parser and serializer of the formats pyoxigraph lacks (``parse_rdflib``,
``serialize_rdflib``).
"""
from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from types import MappingProxyType
from typing import Any, NamedTuple, cast
from xml.parsers import expat
from xml.sax import SAXParseException

import pyoxigraph
import rdflib
from rdflib.plugins.parsers.jsonld import to_rdf as _jsonld_to_rdf
from rdflib.plugins.parsers.notation3 import BadSyntax
from rdflib.term import BNode, Literal, Node, URIRef

from lakesuperior import jsonld
from lakesuperior.exceptions import (
    RdfParseError,
    TermError,
    UnsupportedMediaTypeError,
)
from lakesuperior.http.mediatypes import parameter
from lakesuperior.rdf import rdfxml, turtle
from lakesuperior.store import terms
from lakesuperior.store.reads import Triple

__all__ = [
    "MAX_NESTING", "PARSEABLE", "SERIALIZABLE", "Triple", "ObjectList",
    "TURTLE", "N_TRIPLES", "JSON_LD", "RDF_XML", "N3",
    "check_input", "normalize_media_type", "parse", "parse_rdflib", "serialize", "serialize_rdflib",
    "canonical_ntriples", "split_canonical",
    "to_rdflib", "from_rdflib", "graph_to_triples", "triples_to_graph",
]


TURTLE = "text/turtle"
N_TRIPLES = "application/n-triples"
JSON_LD = "application/ld+json"
RDF_XML = "application/rdf+xml"
N3 = "text/n3"

_ALIASES = MappingProxyType({
    "application/x-turtle": TURTLE,
    "text/rdf+n3": N3,
})

# rdflib parser names; every format listed here can be read.
_RDFLIB_PARSERS = MappingProxyType({
    TURTLE: "turtle",
    N_TRIPLES: "nt",
    JSON_LD: "json-ld",
    RDF_XML: "xml",
    N3: "turtle",  # rdflib's Turtle parser with turtle=False reads N3 (see parse_rdflib)
})
_RDFLIB_SERIALIZERS = MappingProxyType({
    TURTLE: "turtle", JSON_LD: "json-ld", N_TRIPLES: "nt", RDF_XML: "xml",
})

PARSEABLE: frozenset[str] = frozenset(_RDFLIB_PARSERS)
SERIALIZABLE: tuple[str, ...] = (TURTLE, JSON_LD, N_TRIPLES, RDF_XML)

# pyoxigraph < 0.5 has no JSON-LD: those versions use rdflib for it.
_OX_JSON_LD = getattr(pyoxigraph.RdfFormat, "JSON_LD", None)
_OX_FORMATS = MappingProxyType({
    TURTLE: pyoxigraph.RdfFormat.TURTLE,
    N_TRIPLES: pyoxigraph.RdfFormat.N_TRIPLES,
    RDF_XML: pyoxigraph.RdfFormat.RDF_XML,
    **({JSON_LD: _OX_JSON_LD} if _OX_JSON_LD is not None else {}),
})
_DIRECTIONS = ("--ltr", "--rtl")  # RDF 1.2 base direction, not in our term model

_UTF8_BOM = b"\xef\xbb\xbf"
# "Parser error at line 2 column 8: msg" / "... line 3 between columns 3 and 10: msg"
_OX_POSITION = re.compile(
    r"Parser error at line (\d+) (?:column (\d+)|between columns (\d+) and \d+): (.*)", re.S)
_LINE = re.compile(r"\bline:? (\d+)", re.I)

# Term syntax (Unicode approximations of the grammar's character classes).
_IRI = re.compile(r'[A-Za-z][A-Za-z0-9+.\-]*:[^\x00-\x20<>"{}|^`\\]*')
_BNODE_LABEL = re.compile(r"\w(?:[\w.\-]*[\w\-])?")
_PREFIX = re.compile(r"(?:[^\W\d_](?:[\w.\-]*[\w\-])?)?")


# --- media types -------------------------------------------------------------

def normalize_media_type(value: str) -> str:
    """Return the bare, lower-case media type of a Content-Type value, aliases mapped."""
    bare = value.split(";", 1)[0].strip().lower()
    return _ALIASES.get(bare, bare)


def _unsupported(media_type: str, accepted: Iterable[str]) -> UnsupportedMediaTypeError:
    return UnsupportedMediaTypeError(
        f"Unsupported RDF media type {media_type!r}; accepted: {', '.join(sorted(accepted))}")


# --- input limits (before any parser sees the input) -------------------------

#: The deepest nesting ``parse`` reads: JSON-LD objects and arrays, Turtle and N3
#: blank-node property lists, collections, formulas and triple terms, RDF/XML
#: elements. Deeper input overflows the parsers' stacks (pyoxigraph's JSON-LD and
#: N-Triples 1.2 parsers crash the process; rdflib's recursion limit is near 100).
MAX_NESTING = 64

_OPEN, _CLOSE = b"[({", b"])}"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _OPEN + _CLOSE)
_STEP = tuple(1 if b in _OPEN else -1 if b in _CLOSE else 0 for b in range(256))
# What may hold brackets that do not nest: strings (an unterminated one runs to the
# end), and in Turtle and N3 also IRIs, comments and escapes in prefixed names. A
# long string ends with its whole run of quotes (rdflib reads """a"""" as 'a"').
_JSON_SKIP = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)', re.S)
_TURTLE_SKIP = re.compile(rb"""
      \"{3}[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:"{3,}|\Z)
    | '{3}[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'{3,}|\Z)
    | "[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*"?
    | '[^'\\\n\r]*(?:\\.[^'\\\n\r]*)*'?
    | <[^\x00-\x20<>"{}|^`\\]*(?:\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})[^\x00-\x20<>"{}|^`\\]*)*>
    | \#[^\n\r]*
    | \\.
""", re.S | re.X)

_DOUBLE_LT = re.compile(rb"<<")


_XML_MARKUP = re.compile(rb"""
      <!--.*?(?:-->|\Z) | <!\[CDATA\[.*?(?:\]\]>|\Z) | <\?.*?(?:\?>|\Z) | <!DOCTYPE
    | </ | <[^\s<>!?/](?:[^>"']++|"[^"]*+"|'[^']*+')*+>
""", re.S | re.X)


def _too_deep(what: str) -> RdfParseError:
    return RdfParseError(f"The document nests {what} deeper than {MAX_NESTING} levels: "
                         "nesting is too deep")


def _bracket_depth(data: bytes) -> int:
    """The deepest nesting of ``[ ( {`` in ``data`` (closers may be missing)."""
    brackets = data.translate(None, _NOT_BRACKETS)
    if len(brackets) <= MAX_NESTING:
        return len(brackets)
    return max(accumulate(map(_STEP.__getitem__, brackets)))


def _check_json(data: bytes) -> None:
    if len(data.translate(None, _NOT_BRACKETS)) > MAX_NESTING and \
            _bracket_depth(_JSON_SKIP.sub(b"", data)) > MAX_NESTING:
        raise _too_deep("JSON objects and arrays")


def _check_turtle(data: bytes) -> None:
    # re finds a first "<<" faster than bytes.count looks at every "<" of the IRIs.
    lts = data.count(b"<<") if _DOUBLE_LT.search(data) else 0
    if lts + len(data.translate(None, _NOT_BRACKETS)) <= MAX_NESTING:
        return
    bare = _TURTLE_SKIP.sub(b" ", data).replace(b"<<", b"(").replace(b">>", b")")
    if _bracket_depth(bare) > MAX_NESTING:
        raise _too_deep("blank nodes, collections, formulas or triple terms")


def _check_xml(data: bytes) -> None:
    """Refuse DTDs (entity expansion, external fetches) and deep element nesting.

    Expat reads the document once (its own stack is on the heap). Where it stops
    at something it finds malformed that the RDF/XML parsers may still read (a
    second root element, a control character reference, an unknown encoding), a
    scan of the markup (``_check_xml_markup``) checks the whole document."""
    parser = expat.ParserCreate()
    depth = 0

    def doctype(name: str, sysid: str | None, pubid: str | None, internal: bool) -> None:
        if internal or sysid or pubid:
            raise RdfParseError("RDF/XML with a DTD (<!DOCTYPE> with entity declarations or "
                                "an external DTD) is not accepted: declare namespaces with "
                                "xmlns attributes", parser.CurrentLineNumber,
                                parser.CurrentColumnNumber + 1)

    def start(name: str, attrs: Any) -> None:
        nonlocal depth
        depth += 1
        if depth > MAX_NESTING:
            raise _too_deep("XML elements")

    def end(name: str) -> None:
        nonlocal depth
        depth -= 1

    parser.StartDoctypeDeclHandler = doctype
    if data.count(b"<") > MAX_NESTING:
        parser.StartElementHandler = start
        parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except (expat.ExpatError, LookupError):   # LookupError: an unknown encoding
        _check_xml_markup(data)


def _check_xml_markup(data: bytes) -> None:
    """``_check_xml`` for a document expat does not read: its tags counted by a scan."""
    depth = 0
    for found in _XML_MARKUP.finditer(data):
        tag = found.group()
        if tag[1:2] == b"/":
            depth -= 1
        elif tag.startswith(b"<!DOCTYPE"):
            raise RdfParseError("RDF/XML with a DTD (<!DOCTYPE>) is not accepted: declare "
                                "namespaces with xmlns attributes")
        elif tag[1:2] not in b"!?" and not tag.endswith(b"/>"):
            depth += 1
            if depth > MAX_NESTING:
                raise _too_deep("XML elements")


_CHECKS = MappingProxyType({
    JSON_LD: _check_json, TURTLE: _check_turtle, N3: _check_turtle,
    N_TRIPLES: _check_turtle, RDF_XML: _check_xml,
})


def check_input(data: bytes, media_type: str) -> None:
    """Refuse, with ``RdfParseError``, input no parser may see: nesting deeper than
    ``MAX_NESTING``, and DTDs in RDF/XML (entity expansion, external fetches).
    ``parse`` and ``parse_rdflib`` call it first."""
    check = _CHECKS.get(normalize_media_type(media_type))
    if check is not None:
        check(data)


# --- parsing -----------------------------------------------------------------

class Parsed(list[Triple]):
    """Triples as ``parse`` and ``graph_to_triples`` give them: every term already
    in the canonical form of ``store.terms`` (the property tests in
    ``tests/rdfio/test_canonical_terms.py`` hold this), so a writer may hand
    them to the store without re-validation (``add_graph(..., canonical=True)``).
    ``distinct``: no triple is listed twice (``parse`` drops repeats where
    pyoxigraph reads the format), so a writer need not deduplicate them again."""

    __slots__ = ("distinct",)

    def __init__(self, triples: Iterable[Triple] = (), distinct: bool = False):
        super().__init__(triples)
        self.distinct = distinct


def parse(data: bytes, media_type: str, base: str, *,
          rebase: tuple[str, str] | None = None) -> Parsed:
    """Parse an RDF document into triples of canonical term strings.

    Relative IRIs resolve against ``base`` (an absolute IRI, else ``ValueError``).
    Blank nodes get fresh labels on every call. In the formats pyoxigraph reads, a
    triple the document repeats is listed once (``Parsed.distinct``). Raises
    ``UnsupportedMediaTypeError`` for a type not in ``PARSEABLE`` and
    ``RdfParseError`` for malformed input, input that is not UTF-8, nesting deeper
    than ``MAX_NESTING``, RDF/XML with a DTD, named graphs and RDF 1.2 triple terms
    or directional literals. Turtle as clients write it is read as Fedora (Jena)
    reads it: ``@prefix`` / ``@base`` lines at the top without their ``.``, and a
    last statement without its closing ``.``; nothing else is forgiven (the
    error is the first one, with its line and column). ``rebase``: ``(prefix,
    replacement)``, the subject and object IRIs under ``prefix`` moved under
    ``replacement`` as they are read (``store.terms.split_ntriples`` says how;
    other IRIs and literals stay as they are).
    """
    mtype = normalize_media_type(media_type)
    fmt = _OX_FORMATS.get(mtype)
    if fmt is None:
        if mtype not in PARSEABLE:
            raise _unsupported(media_type, PARSEABLE)
        found = parse_rdflib(data, mtype, base)
        if rebase is None:
            return Parsed(found)
        # The rebasing of terms has one owner: the triples, canonical, as N-Triples.
        written = "".join(f"{s} {p} {o} .\n" for s, p, o in found).encode("utf-8")
        return Parsed(terms.split_ntriples(written, *rebase)[0], distinct=True)
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    if not data or data.isspace():
        return Parsed()
    return split_canonical(_canonical(data, mtype, fmt, base), rebase=rebase)


def canonical_ntriples(data: bytes, media_type: str, base: str) -> bytes:
    """The first half of ``parse`` for a format pyoxigraph reads (``N_TRIPLES``,
    ``TURTLE``, ...): the document's triples as canonical N-Triples text, checked
    as ``parse`` checks them; ``split_canonical`` makes them what ``parse``
    returns. (The OCFL import parses in one process, ahead, and splits in the one
    that writes.) ``ValueError`` for a format pyoxigraph does not read."""
    mtype = normalize_media_type(media_type)
    fmt = _OX_FORMATS.get(mtype)
    if fmt is None:
        raise ValueError(f"{media_type} is not read by pyoxigraph")
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    if not data or data.isspace():
        return b""
    return _canonical(data, mtype, fmt, base)


def split_canonical(written: bytes, *, rebase: tuple[str, str] | None = None) -> Parsed:
    """The second half of ``parse``: the triples of canonical N-Triples text
    (``canonical_ntriples``), ``rebase`` as ``parse`` takes it; ``RdfParseError``
    for RDF 1.2 triple terms and directional literals."""
    found, rdf12 = terms.split_ntriples(written, *(rebase or ()))
    if rdf12:
        for _, _, o in found:
            if o.startswith("<<") or o.endswith(_DIRECTIONS):
                raise RdfParseError(f"RDF 1.2 triple terms and directional literals "
                                    f"are not supported: {o}")
    return Parsed(found, distinct=True)


def _canonical(data: bytes, mtype: str, fmt: pyoxigraph.RdfFormat, base: str) -> bytes:
    check_input(data, mtype)
    try:
        return _ox_parse(data, fmt, base)
    except SyntaxError as e:
        error = _ox_parse_error(e)
        if mtype != TURTLE:
            raise error from None
        return _forgiven(data, fmt, base, e.msg or "", error)


#: What pyoxigraph says of Turtle whose last statement has no closing ".".
_MISSING_END = re.compile(r": (?:Unexpected end(?: of file)?|Triples should be followed by a dot)$")


#: A directive line without its ".": ``@prefix p: <iri>`` or ``@base <iri>``.
_BARE_DIRECTIVE = re.compile(rb"[ \t]*@(?:prefix[ \t]+[^\s:]*:[ \t]*|base[ \t]+)<[^>\n]*>[ \t]*\r?")
_PREAMBLE_LINE = re.compile(rb"[ \t]*(?:#.*|@(?:prefix|base)\b.*|(?:PREFIX|BASE)\b.*)?\r?")


def _forgiven(data: bytes, fmt: pyoxigraph.RdfFormat, base: str, msg: str,
              error: RdfParseError) -> bytes:
    """The triples of Turtle that failed as written (``error``), read as Jena
    reads it: ``@prefix`` / ``@base`` lines at the top without their ``.``, a
    last statement without its ``.``. If that does not make it parse, the error
    of the document with its directives completed (the same lines), else
    ``error``."""
    lines = data.split(b"\n")
    head = 0
    while head < len(lines) and _PREAMBLE_LINE.fullmatch(lines[head]):
        head += 1          # only the directives before the first statement: no literal
    fixed_lines = [line.rstrip(b"\r") + b" ." if _BARE_DIRECTIVE.fullmatch(line) else line
                   for line in lines[:head]]
    dotted = b"\n".join(fixed_lines + lines[head:])
    tries = [dotted] if dotted != data else []
    if _MISSING_END.search(msg) or tries:
        tries.append(dotted + b"\n.\n")
    for attempt in tries:
        try:
            return _ox_parse(attempt, fmt, base)
        except SyntaxError as e:
            if attempt is dotted:
                error = _ox_parse_error(e)
    raise error from None


def _ox_parse(data: bytes, fmt: pyoxigraph.RdfFormat, base: str) -> bytes:
    """Parse with pyoxigraph; the triples as canonical N-Triples text (UTF-8)."""
    # pyoxigraph writes the parsed triples as canonical N-Triples in one call;
    # splitting that text is cheaper than one str() per triple. Line breaks in
    # literals are escaped, so " .\n" only ends a line; s and p hold no space.
    try:
        written = pyoxigraph.serialize(
            pyoxigraph.parse(data, fmt, base_iri=base, without_named_graphs=True,
                             rename_blank_nodes=True),
            format=pyoxigraph.RdfFormat.N_TRIPLES)
    except MemoryError:   # pyoxigraph's buffer for one token is bounded (16 MiB)
        raise RdfParseError("A term of the document is longer than the parser takes "
                            "(16 MiB)") from None
    return cast(bytes, written)   # bytes: no output file given


def _ox_parse_error(e: SyntaxError) -> RdfParseError:
    """Turn a pyoxigraph SyntaxError into an RdfParseError, position moved to fields."""
    msg = e.msg or str(e)
    if "LoadDocumentCallback" in msg:
        msg = "Remote JSON-LD contexts are not loaded: embed the context in the document"
    found = _OX_POSITION.match(msg)
    if found is None:
        return RdfParseError(msg)
    line, column, first_column, text = found.groups()
    return RdfParseError(text, int(line), int(column or first_column))


def parse_rdflib(data: bytes, media_type: str, base: str) -> list[Triple]:
    """Parse like ``parse``, with rdflib's parsers (slower; every type in PARSEABLE).

    Differences from the pyoxigraph path: rdflib normalizes the lexical form of some
    typed literals (``"01"^^xsd:integer`` becomes ``"1"``); JSON-LD remote contexts are
    fetched from the network.
    """
    mtype = normalize_media_type(media_type)
    parser = _RDFLIB_PARSERS.get(mtype)
    if parser is None:
        raise _unsupported(media_type, PARSEABLE)
    pyoxigraph.NamedNode(base)  # same ValueError as the fast path for a bad base
    if data.startswith(_UTF8_BOM):
        data = data[3:]
    if not data or data.isspace():
        return []
    check_input(data, mtype)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - data.rfind(b"\n", 0, e.start)
        raise RdfParseError(f"Invalid UTF-8: {e.reason}", line, column) from None
    try:
        graph: rdflib.Graph
        if mtype == JSON_LD:
            graph = _NoNamedGraphs()
            _jsonld_to_rdf(json.loads(text), graph, base=base)
        else:
            graph = rdflib.Graph()
            options: dict[str, Any] = {"turtle": False} if mtype == N3 else {}
            graph.parse(data=text, format=parser, publicID=base, **options)
        return _graph_to_parsed_triples(graph)
    except RdfParseError:
        raise
    except Exception as e:  # rdflib's parsers raise many unrelated types
        raise _rdflib_parse_error(e) from None


class _NoNamedGraphs(rdflib.Graph):
    """A graph that rdflib's JSON-LD parser takes for a dataset, so named graphs fail.

    Given a plain graph the parser would merge named graphs into it silently (or wrap
    it in a deprecated ConjunctiveGraph).
    """

    def __init__(self) -> None:
        super().__init__()
        self.context_aware = True

    @property
    def default_context(self) -> rdflib.Graph:
        return self

    def get_context(self, identifier, quoted=False, base=None):
        raise RdfParseError("Named graphs are not allowed")


def _graph_to_parsed_triples(graph: rdflib.Graph) -> list[Triple]:
    """``graph_to_triples`` with fresh blank node labels (rdflib's may repeat across parses)."""
    prefix = secrets.token_hex(8)
    labels: dict[BNode, str] = {}

    def term(node: Node) -> str:
        if isinstance(node, BNode):
            label = labels.get(node)
            if label is None:
                label = labels[node] = f"_:{prefix}{len(labels)}"
            return label
        if isinstance(node, rdflib.Graph):
            raise RdfParseError("N3 formulas ({ ... }) are not supported: send RDF triples")
        try:
            return from_rdflib(node)
        except TermError as e:
            raise RdfParseError(str(e)) from None

    return [(term(s), term(p), term(o)) for s, p, o in graph]


def _rdflib_parse_error(e: Exception) -> RdfParseError:
    if isinstance(e, BadSyntax):  # rdflib's N3 parser: its message shows bytes reprs
        text, at = e._str, e._i
        near = text[max(0, at - 30):at + 30].decode("utf-8", "replace")
        return RdfParseError(f"Bad syntax ({e._why}) near {near!r}", e.lines + 1,
                             at - text.rfind(b"\n", 0, at))
    if isinstance(e, SAXParseException):
        column = e.getColumnNumber()
        return RdfParseError(e.getMessage(), e.getLineNumber(),
                             column + 1 if column is not None else None)
    if isinstance(e, json.JSONDecodeError):
        return RdfParseError(e.msg, e.lineno, e.colno)
    msg = str(e) or type(e).__name__
    found = _LINE.search(msg)
    return RdfParseError(msg, int(found.group(1)) if found else None)


# --- serializing -------------------------------------------------------------

class ObjectList(NamedTuple):
    """Triples sharing a subject and a predicate, as ``serialize`` takes a long run
    of them (a container's ``ldp:contains``): one tuple for all the objects."""

    subject: str
    predicate: str
    objects: Sequence[str]

    def triples(self) -> list[Triple]:
        s, p = self.subject, self.predicate
        return [(s, p, o) for o in self.objects]


def serialize(triples: Iterable[Triple], media_type: str, *,
              namespaces: Mapping[str, str] | None = None,
              base: str | None = None, lists: Sequence[ObjectList] = ()) -> bytes:
    """Serialize triples of canonical term strings to ``media_type`` (UTF-8 bytes).

    ``namespaces`` (prefix -> IRI) and ``base`` shorten IRIs in Turtle and RDF/XML;
    ``namespaces`` is the context of JSON-LD, written in the profile the media type's
    ``profile`` parameter names (``jsonld``; compacted by default).
    N-Triples and Turtle (without ``base``) are the terms joined as given, which are
    trusted to be canonical (``rdf.turtle``): no parse in between.
    ``lists``: more triples, as object lists (``ObjectList``), whose terms are
    trusted to be canonical (a store's output): Turtle and N-Triples write them
    joined, without a tuple per object or a parse.
    Raises ``UnsupportedMediaTypeError`` for a type not in ``SERIALIZABLE``;
    ``UnwritableError`` (one) for RDF/XML of a predicate with no XML name form or a
    character XML 1.0 forbids; ``TermError`` for an invalid term
    in the formats written through pyoxigraph (RDF/XML, Turtle with ``base``).
    """
    mtype = normalize_media_type(media_type)
    if mtype == N_TRIPLES:
        text = "".join([f"{s} {p} {o} .\n" for s, p, o in triples])
        return (text + "".join([_nt_list(ol) for ol in lists])).encode()
    if mtype == TURTLE and base is None:
        return turtle.write(triples, _prefixes(namespaces), lists).encode()
    if lists and mtype != TURTLE:
        triples = list(triples)
        for ol in lists:
            triples.extend(ol.triples())
        lists = ()
    if mtype == JSON_LD:
        return jsonld.serialize(triples, jsonld.profile_of(parameter(media_type, "profile")),
                                _prefixes(namespaces))
    fmt = _OX_FORMATS.get(mtype)
    if fmt is None:
        if mtype in SERIALIZABLE:
            return serialize_rdflib(triples, mtype, namespaces=namespaces, base=base)
        raise _unsupported(media_type, SERIALIZABLE)
    if mtype == RDF_XML:
        triples = list(triples)
        rdfxml.check_predicates({p for _, p, _ in triples})
    prefixes = _prefixes(namespaces)
    # Re-parsing the terms as one N-Triples document is the cheapest way to hand them
    # to pyoxigraph (faster than building NamedNode/Literal objects one by one). The
    # terms are trusted to be canonical: lenient skips IRI validation.
    document = "".join([f"{s} {p} {o} .\n" for s, p, o in triples])
    try:
        quads = pyoxigraph.parse(document, pyoxigraph.RdfFormat.N_TRIPLES, lenient=True)
        out = cast(bytes, pyoxigraph.serialize(quads, format=fmt, prefixes=prefixes,
                                               base_iri=base))
    except SyntaxError as e:
        raise TermError(f"Invalid term in triples to serialize: {_ox_parse_error(e)}") from None
    if lists:   # Turtle: pyoxigraph wrote the prefixes first; the lists follow
        short = turtle.Shortener(prefixes)
        out += "".join([turtle.object_list(*ol, short) for ol in lists]).encode()
    return rdfxml.checked(out) if mtype == RDF_XML else out


def _nt_list(ol: ObjectList) -> str:
    """An object list as N-Triples lines (the terms joined as given)."""
    if not ol.objects:
        return ""
    head = f"{ol.subject} {ol.predicate} "
    return head + (" .\n" + head).join(ol.objects) + " .\n"


def serialize_rdflib(triples: Iterable[Triple], media_type: str, *,
                     namespaces: Mapping[str, str] | None = None,
                     base: str | None = None) -> bytes:
    """Serialize like ``serialize``, with rdflib's serializers (slower)."""
    mtype = normalize_media_type(media_type)
    serializer = _RDFLIB_SERIALIZERS.get(mtype)
    if serializer is None:
        raise _unsupported(media_type, SERIALIZABLE)
    graph = triples_to_graph(triples)
    if mtype == RDF_XML:
        rdfxml.check_predicates({f"<{p}>" for p in graph.predicates(unique=True)})
    for prefix, iri in _prefixes(namespaces).items():
        graph.bind(prefix, iri, override=True, replace=True)
    # rdflib's JSON-LD writer relativizes IRIs without saying @base; N-Triples has none.
    base = base if mtype in (TURTLE, RDF_XML) else None
    out = graph.serialize(format=serializer, base=base, encoding="utf-8")
    return rdfxml.checked(out) if mtype == RDF_XML else out


def _prefixes(namespaces: Mapping[str, str] | None) -> dict[str, str]:
    """Check prefix names (pyoxigraph writes invalid ones as given)."""
    prefixes = dict(namespaces or {})
    for prefix in prefixes:
        if not _PREFIX.fullmatch(prefix):
            raise ValueError(f"Invalid namespace prefix {prefix!r}")
    return prefixes


# --- rdflib terms ------------------------------------------------------------

def to_rdflib(term: str) -> Node:
    """Return the rdflib URIRef, BNode or Literal of a canonical term string.

    Typed literals keep their lexical form (``normalize=False``), except that rdflib
    itself collapses whitespace in ``xsd:token`` and ``xsd:normalizedString`` ones.
    """
    first = term[:1]
    if first == "<" and term.endswith(">"):
        return URIRef(term[1:-1])
    if first == "_" and term.startswith("_:"):
        return BNode(term[2:])
    if first == '"':
        lex, lang, datatype = terms.literal_parts(term)
        if lang is not None:
            return Literal(lex, lang=lang)
        if datatype is not None:
            return Literal(lex, datatype=URIRef(datatype), normalize=False)
        return Literal(lex)
    raise TermError(f"Not a canonical RDF term: {term!r}")


def from_rdflib(term: Node) -> str:
    """Return the canonical string of an rdflib URIRef, BNode or Literal."""
    if isinstance(term, URIRef):
        if _IRI.fullmatch(term):
            return f"<{term}>"
        raise TermError(f"Not an absolute IRI: {str(term)!r}")
    if isinstance(term, Literal):
        datatype = term.datatype
        return terms.literal(str(term), term.language or None,
                             None if datatype is None else str(datatype))
    if isinstance(term, BNode):
        if _BNODE_LABEL.fullmatch(term):
            return f"_:{term}"
        raise TermError(f"Not a valid blank node label: {str(term)!r}")
    raise TermError(f"Not an RDF term: {term!r}")


def graph_to_triples(graph: rdflib.Graph) -> Parsed:
    """Return the triples of an rdflib graph as canonical term strings."""
    # Subjects, predicates and IRI objects repeat: convert each once. Literals rarely
    # repeat and hash slowly (in Python): convert them directly.
    memo: dict[Node, str] = {}
    triples = Parsed()
    for s, p, o in graph:
        s_text = memo.get(s)
        if s_text is None:
            s_text = memo[s] = from_rdflib(s)
        p_text = memo.get(p)
        if p_text is None:
            p_text = memo[p] = from_rdflib(p)
        o_text: str | None
        if type(o) is Literal:
            o_text = from_rdflib(o)
        else:
            o_text = memo.get(o)
            if o_text is None:
                o_text = memo[o] = from_rdflib(o)
        triples.append((s_text, p_text, o_text))
    return triples


def triples_to_graph(triples: Iterable[Triple], graph: rdflib.Graph | None = None) -> rdflib.Graph:
    """Add triples of canonical term strings to ``graph`` (a new Graph if None); return it."""
    graph = rdflib.Graph() if graph is None else graph
    memo: dict[str, Node] = {}

    def term(text: str) -> Node:
        node = memo.get(text)
        if node is None:
            node = memo[text] = to_rdflib(text)
        return node

    graph.addN((term(s), term(p), term(o), graph) for s, p, o in triples)
    return graph
