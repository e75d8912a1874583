"""Tests of lakesuperior.rdfio: parsing, serializing, rdflib term conversion."""
from __future__ import annotations

import random
import re
import xml.dom.minidom

import pyoxigraph
import pytest
import rdflib
from rdflib.compare import isomorphic

from lakesuperior import rdfio
from lakesuperior.exceptions import (
    RdfParseError,
    TermError,
    UnsupportedMediaTypeError,
    UnwritableError,
)

BASE = "http://localhost:8000/rest/container/child"
XSD = "http://www.w3.org/2001/XMLSchema#"

# Printable ASCII, Latin-1, Latin Extended-A, Greek, Runic (as in WORKLOAD.md).
SCRIPTS = [(0x20, 0x7E), (0xA1, 0xFF), (0x100, 0x17F), (0x391, 0x3A9), (0x3B1, 0x3C9),
           (0x16A0, 0x16F0)]
TRICKY_LEXICAL_FORMS = [
    "", "plain", 'say "hi"', "back\\slash", "\\u0041 is not an escape here",
    "line\nbreak\r\n", "tab\tbell\x07nul\x00esc\x1bdel\x7f", "\b\f\x0b",
    "caf\u00e9 \u00a0nbsp \u2028ls", "emoji \U0001F600\U0001F3F3\uFE0F\u200D\U0001F308",
    "\ufffe\uffff", "\u16a0\u16a1 runes, \u03b1\u03b2 greek", "x" * 10_000,
]


# --- helpers ------------------------------------------------------------------

def graph(triples) -> rdflib.Graph:
    return rdfio.triples_to_graph(triples)


def same_graph(left, right) -> bool:
    return isomorphic(graph(left), graph(right))


def random_text(rng: random.Random, length: int = 64) -> str:
    return "".join(chr(rng.randint(*rng.choice(SCRIPTS))) for _ in range(length))


def turtle_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def workload_turtle(seed: int = 1) -> bytes:
    """The WORKLOAD.md 200-triple graph, subject <>, as Turtle."""
    rng = random.Random(seed)
    parent = BASE.rsplit("/", 1)[0]
    lines = []
    for i in range(50):
        lines.append(f"<> <http://ex.org/exturi_p#u{i}> "
                     f"<http://example.edu/res/{rng.randrange(5)}> .")
    for i in range(50):
        lines.append(f"<> <http://ex.org/inturi_p#u{i}> <{parent}/ref{rng.randrange(5)}> .")
    for i in range(100):
        lines.append(f"<> <http://ex.org/lit_p#l{i // 2}> {turtle_string(random_text(rng))} .")
    return "\n".join(lines).encode()


SAMPLE_TURTLE = """\
@prefix ex: <http://example.org/ns#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<> ex:title "Caf\u00e9 \\"quoted\\"\\n2nd line"@EN-us ;
   ex:count 42 ;
   ex:ratio "0.5"^^xsd:decimal ;
   ex:plain "typed string"^^xsd:string ;
   ex:runes "\u16a0\u16a1\u16a2" ;
   ex:emoji "\U0001F600" ;
   ex:child <child> , <#frag> , <../up> ;
   ex:node [ ex:label "anonymous" ] ;
   ex:named _:b1 .
_:b1 ex:label "labelled" .
""".encode()


def documents() -> dict[str, tuple[bytes, str]]:
    """Documents that both parsers must read to the same graph."""
    return {
        "sample turtle": (SAMPLE_TURTLE, rdfio.TURTLE),
        "workload turtle": (workload_turtle(), rdfio.TURTLE),
        "n-triples": (
            b'<http://x/s> <http://x/p> "a\\tb\\u0001"@en .\n'
            b"<http://x/s> <http://x/p> _:b0 .\n_:b0 <http://x/q> <http://x/o> .\n",
            rdfio.N_TRIPLES),
        "json-ld": (
            b'{"@context": {"ex": "http://example.org/ns#"}, "@id": "",'
            b' "ex:p": [{"@id": "child"}, {"@value": "v", "@language": "de"}, '
            b'{"ex:q": "nested"}], '
            b'"ex:n": {"@value": "7", "@type": "http://www.w3.org/2001/XMLSchema#integer"}}',
            rdfio.JSON_LD),
        "rdf/xml": (
            b'<?xml version="1.0" encoding="UTF-8"?>\n'
            b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            b'xmlns:ex="http://example.org/ns#">\n'
            b'  <rdf:Description rdf:about="">\n'
            b'    <ex:p rdf:resource="child"/>\n'
            b'    <ex:p xml:lang="fr">caf\xc3\xa9</ex:p>\n'
            b'    <ex:q rdf:nodeID="n1"/>\n'
            b'  </rdf:Description>\n'
            b'  <rdf:Description rdf:nodeID="n1"><ex:r>x</ex:r></rdf:Description>\n'
            b'</rdf:RDF>\n',
            rdfio.RDF_XML),
    }


@pytest.fixture(scope="module")
def workload() -> list[rdfio.Triple]:
    return rdfio.parse(workload_turtle(), "text/turtle", BASE)


# --- media types ----------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("text/turtle", "text/turtle"),
    ("  Text/Turtle ; charset=UTF-8 ", "text/turtle"),
    ("application/x-turtle", "text/turtle"),
    ("application/ld+json; profile=\"http://www.w3.org/ns/json-ld#compacted\"",
     "application/ld+json"),
    ("text/rdf+n3", "text/n3"),
    ("text/plain", "text/plain"),
    ("", ""),
])
def test_normalize_media_type(value, expected):
    assert rdfio.normalize_media_type(value) == expected


def test_parseable_and_serializable():
    assert rdfio.PARSEABLE == {"text/turtle", "application/n-triples", "application/ld+json",
                               "application/rdf+xml", "text/n3"}
    assert rdfio.SERIALIZABLE == ("text/turtle", "application/ld+json",
                                  "application/n-triples", "application/rdf+xml")


# --- parse ----------------------------------------------------------------------

def test_parse_resolves_relative_iris():
    triples = rdfio.parse(b"<> <p> <child>, <#frag>, <../up>, <?q=1> .", "text/turtle", BASE)
    assert set(triples) == {
        (f"<{BASE}>", "<http://localhost:8000/rest/container/p>", o) for o in (
            "<http://localhost:8000/rest/container/child>",
            f"<{BASE}#frag>",
            "<http://localhost:8000/rest/up>",
            f"<{BASE}?q=1>",
        )}


@pytest.mark.parametrize("parser", [rdfio.parse, rdfio.parse_rdflib])
@pytest.mark.parametrize("name", ["sample turtle", "json-ld", "rdf/xml"])
def test_parse_resolves_relative_iris_in_every_format(parser, name):
    data, media_type = documents()[name]
    triples = parser(data, media_type, BASE)
    subjects = {s for s, _, _ in triples if s.startswith("<")}
    objects = {o for _, _, o in triples}
    assert subjects == {f"<{BASE}>"}
    assert "<http://localhost:8000/rest/container/child>" in objects


def test_parse_terms_are_canonical():
    triples = rdfio.parse(SAMPLE_TURTLE, "text/turtle; charset=utf-8", BASE)
    by_predicate = {p.rsplit("#", 1)[1][:-1]: o for _, p, o in triples}
    assert by_predicate["title"] == '"Caf\u00e9 \\"quoted\\"\\n2nd line"@en-us'
    assert by_predicate["count"] == f'"42"^^<{XSD}integer>'
    assert by_predicate["ratio"] == f'"0.5"^^<{XSD}decimal>'
    assert by_predicate["plain"] == '"typed string"'
    assert by_predicate["runes"] == '"\u16a0\u16a1\u16a2"'
    assert by_predicate["emoji"] == '"\U0001F600"'
    for s, p, o in triples:  # the string is what pyoxigraph prints
        assert str(pyoxigraph.Triple(*map(_ox_term, (s, p, o)))) == f"{s} {p} {o}"


def _ox_term(term: str):
    return next(pyoxigraph.parse(f"<http://x/s> <http://x/p> {term} .",
                                 pyoxigraph.RdfFormat.N_TRIPLES)).object


@pytest.mark.parametrize("text", TRICKY_LEXICAL_FORMS)
def test_parse_tricky_literals(text):
    plain = str(pyoxigraph.Literal(text))
    data = f"<> <http://x/p> {plain}, {plain}@EN .".encode()
    objects = {o for _, _, o in rdfio.parse(data, "text/turtle", BASE)}
    assert objects == {plain, plain + "@en"}
    assert {str(rdfio.to_rdflib(o)) for o in objects} == {text}


def test_parse_blank_nodes_are_fresh_per_call():
    data = b"<http://x/s> <http://x/p> _:b1, [] . _:b1 <http://x/q> _:b1 ."
    first = rdfio.parse(data, "text/turtle", BASE)
    second = rdfio.parse(data, "text/turtle", BASE)
    labels = {t for tr in first for t in tr if t.startswith("_:")}
    assert len(labels) == 2
    assert labels.isdisjoint(t for tr in second for t in tr)
    assert same_graph(first, second)


@pytest.mark.parametrize("media_type", sorted(rdfio.PARSEABLE))
@pytest.mark.parametrize("data", [b"", b"  \n\t", b"\xef\xbb\xbf"])
def test_parse_empty_body(media_type, data):
    assert rdfio.parse(data, media_type, BASE) == []


def test_parse_skips_utf8_bom():
    assert rdfio.parse(b"\xef\xbb\xbf<> <p> <o> .", "text/turtle", BASE) == [
        (f"<{BASE}>", "<http://localhost:8000/rest/container/p>",
         "<http://localhost:8000/rest/container/o>")]


def test_parse_bad_turtle_gives_line_and_column():
    with pytest.raises(RdfParseError) as caught:
        rdfio.parse(b'<> <p> "a" .\n<> <p> .', "text/turtle", BASE)
    assert (caught.value.line, caught.value.column) == (2, 8)
    assert "line 2, column 8" in str(caught.value)
    assert not str(caught.value).startswith("Parser error")


@pytest.mark.parametrize("media_type, data", [
    ("application/ld+json", b'{"@id": "", "http://x/p": [}'),
    ("application/ld+json", b'{"@context": "http://schema.org/", "name": "remote"}'),
    ("application/rdf+xml", b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
                            b'<rdf:Description rdf:about=""></rdf:RDF>'),
    ("application/n-triples", b"<relative> <http://x/p> <http://x/o> ."),
    ("text/turtle", b"@prefix x: <a> .\nfoo:bar <p> <o> ."),
    ("text/n3", b"<> <p> ."),
])
def test_parse_malformed(media_type, data):
    with pytest.raises(RdfParseError):
        rdfio.parse(data, media_type, BASE)


@pytest.mark.parametrize("parser", [rdfio.parse, rdfio.parse_rdflib])
@pytest.mark.parametrize("media_type", ["text/turtle", "application/ld+json", "text/n3"])
def test_parse_not_utf8(parser, media_type):
    with pytest.raises(RdfParseError) as caught:
        parser(b'{"@id": "", "http://x/p": "caf\xe9"}' if media_type.endswith("json")
               else b'<> <http://x/p> "caf\xe9" .', media_type, BASE)
    assert caught.value.line == 1


@pytest.mark.parametrize("parser", [rdfio.parse, rdfio.parse_rdflib])
def test_parse_refuses_named_graphs(parser):
    data = b'{"@id": "http://x/g", "@graph": [{"@id": "a", "http://x/p": "v"}]}'
    with pytest.raises(RdfParseError, match="Named graphs"):
        parser(data, "application/ld+json", BASE)


@pytest.mark.parametrize("data", [
    b"<> <http://x/p> <<( <http://x/a> <http://x/b> <http://x/c> )>> .",
    b"<< <http://x/a> <http://x/b> <http://x/c> >> <http://x/p> <http://x/o> .",
    b'<> <http://x/p> "text"@en--ltr .',
    b'<> <http://x/p> "text"@en--rtl ; <http://x/q> "plain" .',
    b"<> <http://x/p> <http://x/o> {| <http://x/source> <http://x/s> |} .",
    b"<> <http://x/p> <http://x/o> ~ <http://x/r> .",
    b"<> <http://x/a> 1 ; <http://x/p> <<( <http://x/a> <http://x/b> "
    b"<<( <http://x/c> <http://x/d> <http://x/e> )>> )>> ; <http://x/z> 2 .",
])
def test_parse_refuses_rdf_1_2(data):
    with pytest.raises(RdfParseError, match="not supported"):
        rdfio.parse(data, "text/turtle", BASE)


def test_parse_reads_rdf_1_2_look_alikes_in_literals():
    data = (b'<> <http://x/p> "a )>> b >>", "ends --ltr", "<<( x )>>"@en, '
            b'"x"^^<http://x/t--ltr> .')
    objects = {o for _, _, o in rdfio.parse(data, "text/turtle", BASE)}
    assert objects == {'"a )>> b >>"', '"ends --ltr"', '"<<( x )>>"@en',
                       '"x"^^<http://x/t--ltr>'}


def test_parse_lists_a_repeated_triple_once():
    data = (b'@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n'
            b'<> <http://x/p> "a", "a"^^xsd:string, "b" ; <http://x/q> <#h> .\n'
            b'<#h> <http://x/r> 1 . <> <http://x/q> <child#h> . <> <http://x/p> "a" .')
    parsed = rdfio.parse(data, "text/turtle", BASE)
    assert parsed.distinct and len(parsed) == len(set(parsed)) == 4
    assert parsed[:2] == [(f"<{BASE}>", "<http://x/p>", '"a"'),
                          (f"<{BASE}>", "<http://x/p>", '"b"')]
    assert not rdfio.graph_to_triples(rdflib.Graph()).distinct


@pytest.mark.parametrize("parser", [rdfio.parse, rdfio.parse_rdflib])
def test_parse_refuses_n3_formulas(parser):
    with pytest.raises(RdfParseError):
        parser(b"{ <a> <b> <c> } => { <a> <b> ?x } .", "text/n3", BASE)


@pytest.mark.parametrize("parser", [rdfio.parse, rdfio.parse_rdflib])
@pytest.mark.parametrize("media_type", ["application/n-quads", "application/trig",
                                        "text/plain", "application/json", "nonsense"])
def test_parse_unsupported_media_type(parser, media_type):
    with pytest.raises(UnsupportedMediaTypeError) as caught:
        parser(b"<a> <b> <c> .", media_type, BASE)
    assert media_type in str(caught.value)
    assert "text/turtle" in str(caught.value)


@pytest.mark.parametrize("parser", [rdfio.parse, rdfio.parse_rdflib])
def test_parse_bad_base(parser):
    with pytest.raises(ValueError):
        parser(b"<> <p> <o> .", "text/turtle", "not an iri")


@pytest.mark.parametrize("message, expected", [
    ("Parser error at line 2 column 8: . is not a valid RDF object",
     (". is not a valid RDF object", 2, 8)),
    ("Parser error at line 3 between columns 3 and 10: The prefix foo: has not been declared",
     ("The prefix foo: has not been declared", 3, 3)),
    ("XML namespaces are required in RDF/XML", ("XML namespaces are required in RDF/XML",
                                                None, None)),
])
def test_pyoxigraph_error_positions(message, expected):
    error = rdfio._ox_parse_error(SyntaxError(message))
    assert (error.args[0].split(" (line")[0], error.line, error.column) == expected


def test_parse_refuses_remote_json_ld_contexts():
    with pytest.raises(RdfParseError, match="Remote JSON-LD contexts"):
        rdfio.parse(b'{"@context": "http://schema.org/", "name": "remote"}',
                    "application/ld+json", BASE)


def test_parse_uses_rdflib_for_formats_pyoxigraph_lacks(monkeypatch):
    data, media_type = documents()["json-ld"]
    expected = rdfio.parse(data, media_type, BASE)
    without_json_ld = {k: v for k, v in rdfio._OX_FORMATS.items() if k != rdfio.JSON_LD}
    monkeypatch.setattr(rdfio, "_OX_FORMATS", without_json_ld)
    assert same_graph(rdfio.parse(data, media_type, BASE), expected)
    out = rdfio.serialize(expected, media_type)
    assert same_graph(rdfio.parse(out, media_type, BASE), expected)
    n3 = b"<> <http://x/p> <http://x/o> ."
    assert rdfio.parse(n3, "text/n3", BASE) == rdfio.parse_rdflib(n3, "text/n3", BASE)


# --- parse_rdflib -------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(documents()))
def test_both_parsers_agree(name):
    data, media_type = documents()[name]
    fast = rdfio.parse(data, media_type, BASE)
    slow = rdfio.parse_rdflib(data, media_type, BASE)
    assert fast and same_graph(fast, slow)


@pytest.mark.parametrize("media_type", rdfio.SERIALIZABLE)
def test_both_parsers_agree_on_workload_in_every_format(workload, media_type):
    data = rdfio.serialize(workload, media_type, namespaces={"ex": "http://ex.org/"}, base=BASE)
    fast = rdfio.parse(data, media_type, BASE)
    slow = rdfio.parse_rdflib(data, media_type, BASE)
    assert len(fast) == len(slow) == 200
    assert same_graph(fast, workload) and same_graph(slow, workload)


def test_parse_rdflib_reads_n3():
    triples = rdfio.parse_rdflib(b"@prefix : <#> . <> :p <c>, [ :q 1 ] . <a> = <b> .",
                                 "text/n3", BASE)
    assert (f"<{BASE}>", f"<{BASE}#p>", "<http://localhost:8000/rest/container/c>") in triples
    assert ("<http://localhost:8000/rest/container/a>", "<http://www.w3.org/2002/07/owl#sameAs>",
            "<http://localhost:8000/rest/container/b>") in triples
    assert len(triples) == 4


def test_parse_rdflib_blank_nodes_are_fresh_per_call():
    data = b"<> <http://x/p> [ <http://x/q> 1 ] ."
    first = rdfio.parse_rdflib(data, "text/n3", BASE)
    second = rdfio.parse_rdflib(data, "text/n3", BASE)
    assert {t for tr in first for t in tr if t.startswith("_:")}.isdisjoint(
        t for tr in second for t in tr)


@pytest.mark.parametrize("media_type, data, line", [
    ("text/turtle", b"<a> <b> <c> .\n<a> <b> .", 2),
    ("application/rdf+xml", b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
                            b'\n<rdf:Description rdf:about=""></rdf:RDF>', 2),
    ("application/ld+json", b'{\n"@id": }', 2),
    ("application/n-triples", b"<http://a> <http://b> .", None),
])
def test_parse_rdflib_malformed(media_type, data, line):
    with pytest.raises(RdfParseError) as caught:
        rdfio.parse_rdflib(data, media_type, BASE)
    assert caught.value.line == line


# --- serialize ------------------------------------------------------------------

@pytest.mark.parametrize("serializer", [rdfio.serialize, rdfio.serialize_rdflib])
@pytest.mark.parametrize("media_type", rdfio.SERIALIZABLE)
@pytest.mark.parametrize("name", sorted(documents()))
def test_round_trip(serializer, media_type, name):
    data, source_type = documents()[name]
    triples = rdfio.parse(data, source_type, BASE)
    if media_type == "application/rdf+xml" and any(
            XML_FORBIDDEN.search(str(rdfio.to_rdflib(o))) for _s, _p, o in triples):
        with pytest.raises(UnwritableError):   # the n-triples document's U+0001
            serializer(iter(triples), media_type, base=BASE)
        return
    out = serializer(iter(triples), media_type, namespaces={"ex": "http://example.org/ns#"},
                     base=BASE)
    assert isinstance(out, bytes)
    assert same_graph(rdfio.parse(out, media_type, BASE), triples)


@pytest.mark.parametrize("text", TRICKY_LEXICAL_FORMS)
@pytest.mark.parametrize("media_type", rdfio.SERIALIZABLE)
def test_round_trip_tricky_literals(media_type, text):
    triples = [(f"<{BASE}>", "<http://x/p>", str(pyoxigraph.Literal(text))),
               (f"<{BASE}>", "<http://x/p>", str(pyoxigraph.Literal(text, language="en")))]
    if media_type == "application/rdf+xml" and XML_FORBIDDEN.search(text):
        for serializer in (rdfio.serialize, rdfio.serialize_rdflib):
            with pytest.raises(UnwritableError, match="XML 1.0 forbids"):
                serializer(triples, media_type)
        return
    out = rdfio.serialize(triples, media_type)
    assert set(rdfio.parse(out, media_type, BASE)) == set(triples)
    if media_type == "application/rdf+xml":
        xml.dom.minidom.parseString(out)      # a strict XML parser reads it


XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def test_serialize_n_triples_is_canonical(workload):
    out = rdfio.serialize(workload, "application/n-triples")
    n_triples = pyoxigraph.RdfFormat.N_TRIPLES
    assert out == pyoxigraph.serialize(pyoxigraph.parse(out, n_triples), format=n_triples)
    assert out.decode().splitlines()[0] == " ".join(workload[0]) + " ."


def test_serialize_turtle_uses_prefixes_and_base(workload):
    out = rdfio.serialize(workload, "text/turtle; charset=utf-8",
                          namespaces={"ext": "http://ex.org/exturi_p#"}, base=BASE).decode()
    # pyoxigraph relativizes every IRI against the base, other hosts included
    # (network-path references such as <//ex.org/exturi_p#>).
    assert out.startswith(f"@base <{BASE}> .\n@prefix ext: ")
    assert "<> ext:u0 " in out
    assert "exturi_p#u0" not in out
    assert set(rdfio.parse(out.encode(), "text/turtle", BASE)) == set(workload)


@pytest.mark.parametrize("serializer", [rdfio.serialize, rdfio.serialize_rdflib])
def test_serialize_bad_prefix(serializer, workload):
    with pytest.raises(ValueError, match="prefix"):
        serializer(workload, "text/turtle", namespaces={"e x": "http://ex.org/"})


@pytest.mark.parametrize("serializer", [rdfio.serialize, rdfio.serialize_rdflib])
@pytest.mark.parametrize("media_type", ["text/n3", "application/n-quads", "text/html"])
def test_serialize_unsupported_media_type(serializer, media_type):
    with pytest.raises(UnsupportedMediaTypeError, match="accepted"):
        serializer([], media_type)


@pytest.mark.parametrize("serializer", [rdfio.serialize, rdfio.serialize_rdflib])
@pytest.mark.parametrize("predicate", ["<urn:isbn:1234>", "<http://x/1.5>", "<http://x/a#>"])
def test_serialize_rdf_xml_needs_qname_predicates(serializer, predicate):
    with pytest.raises(UnsupportedMediaTypeError, match="RDF/XML"):
        serializer([("<http://x/s>", predicate, '"o"')], "application/rdf+xml")


@pytest.mark.parametrize("media_type, base", [("application/rdf+xml", None),
                                              ("text/turtle", "http://x/")])
def test_serialize_invalid_term(media_type, base):
    with pytest.raises(TermError):
        rdfio.serialize([("<http://x/s>", "<http://x/p>", '"unterminated')], media_type,
                        base=base)


@pytest.mark.parametrize("serializer", [rdfio.serialize, rdfio.serialize_rdflib])
@pytest.mark.parametrize("media_type", rdfio.SERIALIZABLE)
def test_serialize_nothing(serializer, media_type):
    assert rdfio.parse(serializer([], media_type), media_type, BASE) == []


# --- rdflib terms -------------------------------------------------------------

@pytest.mark.parametrize("text", TRICKY_LEXICAL_FORMS)
def test_rdflib_literal_round_trip(text):
    datatype = pyoxigraph.NamedNode("http://example.org/dt")
    for ox_literal in (pyoxigraph.Literal(text),
                       pyoxigraph.Literal(text, language="EN-gb"),
                       pyoxigraph.Literal(text, datatype=datatype)):
        term = str(ox_literal)
        node = rdfio.to_rdflib(term)
        assert isinstance(node, rdflib.Literal) and str(node) == text
        assert rdfio.from_rdflib(node) == term


def test_from_rdflib_escapes_like_pyoxigraph():
    every_char = "".join(chr(c) for c in range(0x200)) + "\ufffd\ufffe\uffff\U0010FFFF"
    assert rdfio.from_rdflib(rdflib.Literal(every_char)) == str(pyoxigraph.Literal(every_char))


@pytest.mark.parametrize("term, node", [
    ("<http://x/a?b=c#d>", rdflib.URIRef("http://x/a?b=c#d")),
    ("<urn:uuid:1234>", rdflib.URIRef("urn:uuid:1234")),
    ("_:b0", rdflib.BNode("b0")),
    ('"plain"', rdflib.Literal("plain")),
    ('"chat"@fr', rdflib.Literal("chat", lang="fr")),
    (f'"01"^^<{XSD}integer>', rdflib.Literal("01", datatype=rdflib.XSD.integer, normalize=False)),
    (f'"abc"^^<{XSD}integer>', rdflib.Literal("abc", datatype=rdflib.XSD.integer,
                                              normalize=False)),
    ('"a\\"b"^^<http://x/dt>', rdflib.Literal('a"b', datatype=rdflib.URIRef("http://x/dt"))),
])
def test_to_rdflib(term, node):
    converted = rdfio.to_rdflib(term)
    assert type(converted) is type(node) and converted == node
    assert rdfio.from_rdflib(converted) == term


def test_to_rdflib_keeps_lexical_form():
    assert str(rdfio.to_rdflib(f'"01"^^<{XSD}integer>')) == "01"


def test_to_rdflib_unescapes_non_canonical_escapes():
    assert str(rdfio.to_rdflib('"\\u00E9\\U0001F600\\\'\\t"')) == "\u00e9\U0001F600'\t"


@pytest.mark.parametrize("term", ["", "http://x/a", "<http://x/a", '"open', '"x"@', '"x"^^dt',
                                  '"x"@e n', "_x"])
def test_to_rdflib_invalid(term):
    with pytest.raises(TermError):
        rdfio.to_rdflib(term)


@pytest.mark.parametrize("node, term", [
    (rdflib.Literal("s", datatype=rdflib.XSD.string), '"s"'),
    (rdflib.Literal("s", lang="EN-Latn-US"), '"s"@en-latn-us'),
    (rdflib.Literal(7), f'"7"^^<{XSD}integer>'),
    (rdflib.Literal(True), f'"true"^^<{XSD}boolean>'),
    (rdflib.URIRef("http://x/\u00e9"), "<http://x/\u00e9>"),
    (rdflib.Namespace("http://x/")["a"], "<http://x/a>"),
    (rdflib.BNode("N1a-b.c"), "_:N1a-b.c"),
])
def test_from_rdflib(node, term):
    assert rdfio.from_rdflib(node) == term


@pytest.mark.parametrize("node", [
    rdflib.URIRef("relative"), rdflib.URIRef("http://x/a b"), rdflib.URIRef("http://x/<a>"),
    rdflib.BNode("a b"), rdflib.BNode("ends."), rdflib.Variable("x"), "<http://x/a>",
    rdflib.Literal("x", datatype=rdflib.URIRef("no scheme")),
])
def test_from_rdflib_invalid(node):
    with pytest.raises(TermError):
        rdfio.from_rdflib(node)


def test_graph_to_triples(workload):
    rdflib_graph = rdflib.Graph()
    rdflib_graph.parse(data=workload_turtle(), format="turtle", publicID=BASE)
    triples = rdfio.graph_to_triples(rdflib_graph)
    assert len(triples) == 200
    assert set(triples) == set(workload)


def test_graph_to_triples_blank_nodes():
    rdflib_graph = rdflib.Graph()
    b = rdflib.BNode("b1")
    rdflib_graph.add((rdflib.URIRef("http://x/s"), rdflib.URIRef("http://x/p"), b))
    rdflib_graph.add((b, rdflib.URIRef("http://x/p"), rdflib.Literal("x", lang="de")))
    assert sorted(rdfio.graph_to_triples(rdflib_graph)) == [
        ("<http://x/s>", "<http://x/p>", "_:b1"), ("_:b1", "<http://x/p>", '"x"@de')]


def test_triples_to_graph(workload):
    rdflib_graph = rdfio.triples_to_graph(workload)
    assert len(rdflib_graph) == 200
    assert set(rdfio.graph_to_triples(rdflib_graph)) == set(workload)


def test_triples_to_graph_adds_to_given_graph():
    existing = rdflib.Graph()
    existing.add((rdflib.URIRef("http://x/s"), rdflib.URIRef("http://x/p"), rdflib.Literal("a")))
    returned = rdfio.triples_to_graph([("<http://x/s>", "<http://x/p>", '"b"')], existing)
    assert returned is existing and len(existing) == 2


@pytest.mark.parametrize("media_type", ["application/n-triples", "text/turtle", "text/n3"])
def test_parse_rebases_iris_under_a_prefix(media_type):
    data = (b'<info:fedora> <http://x/p> <info:fedora/a#h> .\n'
            b'<info:fedora/a> <info:fedora/p> "<info:fedora/a>", <info:fedoraX> .\n')
    if media_type == "application/n-triples":
        data = data.replace(b'", <info:fedoraX> .', b'" .\n<info:fedora/a> '
                                                    b'<info:fedora/p> <info:fedoraX> .')
    parsed = rdfio.parse(data, media_type, BASE, rebase=("<info:fedora", "<http://h/r"))
    assert sorted(parsed) == sorted([
        ("<http://h/r/>", "<http://x/p>", "<http://h/r/a#h>"),
        ("<http://h/r/a>", "<info:fedora/p>", '"<info:fedora/a>"'),
        ("<http://h/r/a>", "<info:fedora/p>", "<info:fedoraX>")])
    assert parsed.distinct


@pytest.mark.parametrize("data", [
    b'<info:fedora/a> <http://x/p> "v"@en , <info:fedora#h> .\n_:b <http://x/q> 1 .',
    b"<> <http://x/p> <a>",                      # forgiven: the last "." missing
    b"\xef\xbb\xbf  \n", b""])
def test_parse_in_two_halves_is_parse(data):
    """``canonical_ntriples`` then ``split_canonical`` (the OCFL import parses in
    its reader process and splits in the writer) give what ``parse`` gives."""
    rebase = ("<info:fedora", "<http://h/r")
    whole = rdfio.parse(data, "text/turtle", BASE, rebase=rebase)
    halves = rdfio.split_canonical(rdfio.canonical_ntriples(data, "text/turtle", BASE),
                                   rebase=rebase)
    blank = [t for t in whole if t[0].startswith("_:")]    # fresh labels each parse
    assert sorted(t for t in halves if not t[0].startswith("_:")) == \
        sorted(t for t in whole if not t[0].startswith("_:"))
    assert len(halves) == len(whole) and len(blank) == (1 if data.startswith(b"<info") else 0)


def test_parse_in_two_halves_fails_as_parse():
    with pytest.raises(RdfParseError, match="line 1"):
        rdfio.canonical_ntriples(b"<a> <b> .", rdfio.N_TRIPLES, BASE)
    with pytest.raises(RdfParseError, match="RDF 1.2"):
        rdfio.split_canonical(rdfio.canonical_ntriples(
            b'<http://x/s> <http://x/p> "v"@en--ltr .', rdfio.N_TRIPLES, BASE))
    with pytest.raises(ValueError, match="not read by pyoxigraph"):
        rdfio.canonical_ntriples(b"{}", "application/x-unknown", BASE)


@pytest.mark.parametrize("media_type", ["text/turtle", "application/n-triples"])
def test_a_term_longer_than_the_parser_takes_is_a_parse_error(media_type):
    data = b'<http://e/a> <http://e/p> "' + b"x" * (17 * 1024 * 1024) + b'" .\n'
    with pytest.raises(RdfParseError, match="16 MiB"):
        rdfio.parse(data, media_type, "http://e/")
