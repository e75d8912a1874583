"""Query results written out: SPARQL JSON, XML, CSV and TSV, and RDF for graphs.

``serialize_result`` writes SELECT / ASK results as ``RESULT_TYPES`` and CONSTRUCT /
DESCRIBE results as ``GRAPH_TYPES``; ``result_table`` gives a result as rows of
canonical term strings (the HTML query page).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from types import MappingProxyType
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

from rdflib.graph import Graph
from rdflib.query import Result
from rdflib.term import BNode, Node, URIRef, Variable

from lakesuperior import rdfio
from lakesuperior.exceptions import SparqlError
from lakesuperior.query.view import QUERY_NAMESPACES

__all__ = ["SPARQL_JSON", "SPARQL_XML", "CSV", "TSV", "RESULT_TYPES", "GRAPH_TYPES",
           "format_media_type", "serialize_result", "result_table"]

SPARQL_JSON = "application/sparql-results+json"
SPARQL_XML = "application/sparql-results+xml"
CSV = "text/csv"
TSV = "text/tab-separated-values"
#: Media types of SELECT / ASK results, preferred first.
RESULT_TYPES = (SPARQL_JSON, SPARQL_XML, CSV, TSV)
#: Media types of CONSTRUCT / DESCRIBE results, preferred first.
GRAPH_TYPES = (rdfio.TURTLE, rdfio.N_TRIPLES, rdfio.JSON_LD, rdfio.RDF_XML)
_FORMAT_NAMES = MappingProxyType({
    "json": SPARQL_JSON, "xml": SPARQL_XML, "csv": CSV, "tsv": TSV,
    "turtle": rdfio.TURTLE, "ttl": rdfio.TURTLE, "nt": rdfio.N_TRIPLES,
    "ntriples": rdfio.N_TRIPLES, "json-ld": rdfio.JSON_LD, "jsonld": rdfio.JSON_LD,
    "rdfxml": rdfio.RDF_XML, "rdf/xml": rdfio.RDF_XML,
})


def format_media_type(fmt: str) -> str:
    """The media type a result format names (a media type, or ``json``, ``xml``,
    ``csv``, ``tsv``, ``turtle``, ``nt``, ``json-ld``, ``rdfxml``)."""
    if not isinstance(fmt, str):
        raise SparqlError(f"A result format is a string (a media type or a name), not "
                          f"{type(fmt).__name__}")
    mtype = _FORMAT_NAMES.get(fmt.lower(), rdfio.normalize_media_type(fmt))
    if mtype not in RESULT_TYPES and mtype not in GRAPH_TYPES:
        raise SparqlError(f"Unknown result format {fmt!r}; use one of "
                          f"{', '.join(RESULT_TYPES + GRAPH_TYPES)}")
    return mtype


def serialize_result(result: Result, media_type: str) -> bytes:
    """Serialize a query result: SELECT / ASK as ``RESULT_TYPES``, CONSTRUCT / DESCRIBE
    as ``GRAPH_TYPES`` (``SparqlError`` if the type does not fit the result)."""
    mtype = format_media_type(media_type)
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        if mtype not in GRAPH_TYPES:
            raise SparqlError(f"A {result.type} result cannot be written as {mtype}; use "
                              f"one of {', '.join(GRAPH_TYPES)}")
        assert result.graph is not None
        return rdfio.serialize(rdfio.graph_to_triples(result.graph), mtype,
                               namespaces=QUERY_NAMESPACES)
    if mtype not in RESULT_TYPES:
        raise SparqlError(f"A {result.type} result cannot be written as {mtype}; use one "
                          f"of {', '.join(RESULT_TYPES)}")
    writer = {SPARQL_JSON: _json, SPARQL_XML: _xml, CSV: _csv, TSV: _tsv}[mtype]
    if result.type == "ASK":
        return writer([], None, bool(result.askAnswer))
    names = [str(v) for v in (result.vars or [])]
    return writer(names, _rows(result, names), None)


def _rows(result: Result, names: list[str]) -> Iterator[list[Node | None]]:
    keys = [Variable(n) for n in names]
    for row in result.bindings:
        yield [row.get(k) for k in keys]


def _json_term(node: Node) -> dict[str, str]:
    if isinstance(node, URIRef):
        return {"type": "uri", "value": str(node)}
    if isinstance(node, BNode):
        return {"type": "bnode", "value": str(node)}
    out = {"type": "literal", "value": str(node)}
    if node.language:  # type: ignore[attr-defined]
        out["xml:lang"] = node.language  # type: ignore[attr-defined]
    elif node.datatype is not None:  # type: ignore[attr-defined]
        out["datatype"] = str(node.datatype)  # type: ignore[attr-defined]
    return out


def _json(names: list[str], rows: Iterable[list[Node | None]] | None,
          boolean: bool | None) -> bytes:
    """SPARQL 1.1 Query Results JSON Format."""
    if rows is None:
        return json.dumps({"head": {}, "boolean": boolean}).encode()
    bindings = [{n: _json_term(v) for n, v in zip(names, row, strict=False) if v is not None}
                for row in rows]
    doc = {"head": {"vars": names}, "results": {"bindings": bindings}}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def _xml_text(text: str) -> str:
    """XML 1.0 cannot hold most control characters: they are written as U+FFFD."""
    return xml_escape("".join(c if c >= " " or c in "\t\n\r" else "\ufffd" for c in text)
                      if any(c < " " for c in text) else text)


def _xml_term(node: Node) -> str:
    if isinstance(node, URIRef):
        return f"<uri>{_xml_text(str(node))}</uri>"
    if isinstance(node, BNode):
        return f"<bnode>{_xml_text(str(node))}</bnode>"
    attr = ""
    if node.language:  # type: ignore[attr-defined]
        attr = f" xml:lang={quoteattr(node.language)}"  # type: ignore[attr-defined]
    elif node.datatype is not None:  # type: ignore[attr-defined]
        attr = f" datatype={quoteattr(str(node.datatype))}"  # type: ignore[attr-defined]
    return f"<literal{attr}>{_xml_text(str(node))}</literal>"


def _xml(names: list[str], rows: Iterable[list[Node | None]] | None,
         boolean: bool | None) -> bytes:
    """SPARQL Query Results XML Format."""
    out = ['<?xml version="1.0" encoding="utf-8"?>\n'
           '<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head>']
    out.extend(f"<variable name={quoteattr(n)}/>" for n in names)
    out.append("</head>\n")
    if rows is None:
        out.append(f"<boolean>{'true' if boolean else 'false'}</boolean>\n")
    else:
        out.append("<results>\n")
        for row in rows:
            out.append("<result>")
            out.extend(f"<binding name={quoteattr(n)}>{_xml_term(v)}</binding>"
                       for n, v in zip(names, row, strict=False) if v is not None)
            out.append("</result>\n")
        out.append("</results>\n")
    out.append("</sparql>\n")
    return "".join(out).encode()


def _csv_text(text: str) -> str:
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_field(node: Node | None) -> str:
    if node is None:
        return ""
    return _csv_text(f"_:{node}" if isinstance(node, BNode) else str(node))


def _csv(names: list[str], rows: Iterable[list[Node | None]] | None,
         boolean: bool | None) -> bytes:
    """SPARQL 1.1 CSV results (RFC 4180, CRLF). ASK: a ``_askResult`` column."""
    if rows is None:
        return f"_askResult\r\n{'true' if boolean else 'false'}\r\n".encode()
    lines = [",".join(_csv_text(n) for n in names)]
    lines.extend(",".join(_csv_field(v) for v in row) for row in rows)
    return ("\r\n".join(lines) + "\r\n").encode()


def _tsv_field(node: Node | None) -> str:
    return "" if node is None else rdfio.from_rdflib(node)


def _tsv(names: list[str], rows: Iterable[list[Node | None]] | None,
         boolean: bool | None) -> bytes:
    """SPARQL 1.1 TSV results: terms in N-Triples syntax (tabs and newlines escaped)."""
    if rows is None:
        return f"?_askResult\n{'true' if boolean else 'false'}\n".encode()
    lines = ["\t".join("?" + n for n in names)]
    lines.extend("\t".join(_tsv_field(v) for v in row) for row in rows)
    return ("\n".join(lines) + "\n").encode()


def result_table(result: Result) -> tuple[list[str], list[list[str | None]]]:
    """Variable names and rows of canonical term strings (None: unbound) of a
    SELECT result; CONSTRUCT / DESCRIBE: ``s``, ``p``, ``o``; ASK: ``boolean``. The
    HTTP layer renders results with it without serializing them first."""
    if result.type == "ASK":
        return ["boolean"], [['"true"' if result.askAnswer else '"false"']]
    if result.type in ("CONSTRUCT", "DESCRIBE"):
        assert isinstance(result.graph, Graph)
        return ["s", "p", "o"], [list(t) for t in sorted(rdfio.graph_to_triples(result.graph))]
    names = [str(v) for v in (result.vars or [])]
    rows = [[None if v is None else rdfio.from_rdflib(v) for v in row]
            for row in _rows(result, names)]
    return names, rows
