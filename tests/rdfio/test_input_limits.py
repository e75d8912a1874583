"""Input no parser may see: nesting deeper than ``rdfio.MAX_NESTING`` (it overflows
the parsers' stacks) and DTDs in RDF/XML (entity expansion, external fetches)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from lakesuperior import rdfio
from lakesuperior.exceptions import RdfParseError

BASE = "http://localhost/rest/r"
P = "http://ex.org/p"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
PARSERS = [rdfio.parse, rdfio.parse_rdflib]


def json_ld(depth: int) -> bytes:
    """``depth`` nested JSON objects (the outermost is the resource)."""
    inner = depth - 1
    return (b'{"@id":"","' + P.encode() + b'":' + (b'{"' + P.encode() + b'":') * inner
            + b'"x"' + b"}" * depth)


def turtle_bnodes(depth: int) -> bytes:
    return (b"<> <" + P.encode() + b"> " + (b"[ <" + P.encode() + b"> ") * depth + b'"x"'
            + b" ]" * depth + b" .")


def turtle_collections(depth: int) -> bytes:
    return b"<> <" + P.encode() + b"> " + b"( " * depth + b'"x"' + b" )" * depth + b" ."


def triple_terms(depth: int) -> bytes:
    """N-Triples 1.2: triple terms nested ``depth`` deep."""
    s, p = b"<http://ex.org/s>", b"<" + P.encode() + b">"
    return s + b" " + p + b" " + (b"<<( " + s + b" " + p + b" ") * depth + b'"x"' \
        + b" )>>" * depth + b" .\n"


def rdf_xml(depth: int) -> bytes:
    """A node element with property/node elements nested to ``depth`` elements."""
    pairs = (depth - 3) // 2
    return (b'<rdf:RDF xmlns:rdf="' + RDF_NS.encode() + b'" xmlns:e="http://ex.org/">'
            b'<rdf:Description rdf:about="">' + b"<e:p><rdf:Description>" * pairs
            + b"<e:p>x</e:p>" + b"</rdf:Description></e:p>" * pairs
            + b"</rdf:Description></rdf:RDF>")


def laughs(levels: int) -> bytes:
    """The billion laughs: ``levels`` entities, each ten of the one before."""
    decls = ['<!ENTITY l0 "ha">'] + [
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1)]
    return (f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{chr(10).join(decls)}\n]>\n'
            f'<rdf:RDF xmlns:rdf="{RDF_NS}" xmlns:e="http://ex.org/">'
            f'<rdf:Description rdf:about=""><e:p>&l{levels};</e:p></rdf:Description>'
            f"</rdf:RDF>").encode()


# --- the crash, in a child process ---------------------------------------------------

def run_child(code: str, cwd) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter (outside the checkout: the installed package)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_deep_json_ld_does_not_kill_the_process(tmp_path):
    """5000 nested objects overflowed pyoxigraph's JSON-LD parser (SIGSEGV)."""
    code = ("import sys\nfrom lakesuperior import rdfio\n"
            "body = b'{\"@id\":\"\",\"http://ex.org/p\":' + b'{\"http://ex.org/p\":' * 5000"
            " + b'\"x\"' + b'}' * 5001\n"
            "try:\n    rdfio.parse(body, 'application/ld+json', 'http://localhost/r')\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    child = run_child(code, tmp_path)
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert child.stdout.startswith("RdfParseError")
    assert "nesting is too deep" in child.stdout


def test_deep_triple_terms_do_not_kill_the_process(tmp_path):
    """100000 nested N-Triples 1.2 triple terms overflowed pyoxigraph (SIGSEGV)."""
    code = ("from lakesuperior import rdfio\n"
            "s, p = b'<http://ex.org/s>', b'<http://ex.org/p>'\n"
            "body = s + b' ' + p + b' ' + (b'<<( ' + s + b' ' + p + b' ') * 100000"
            " + b'\"x\"' + b' )>>' * 100000 + b' .'\n"
            "try:\n    rdfio.parse(body, 'application/n-triples', 'http://localhost/r')\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    child = run_child(code, tmp_path)
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert "nesting is too deep" in child.stdout


# --- the limit, in every format ------------------------------------------------------

NESTED = [
    (rdfio.JSON_LD, json_ld),
    (rdfio.TURTLE, turtle_bnodes),
    (rdfio.TURTLE, turtle_collections),
    (rdfio.N3, turtle_bnodes),
    (rdfio.N3, turtle_collections),
    (rdfio.RDF_XML, rdf_xml),
]


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("media_type, make", NESTED)
def test_nesting_at_the_limit_parses(parser, media_type, make):
    assert parser(make(rdfio.MAX_NESTING), media_type, BASE)


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("media_type, make", NESTED)
@pytest.mark.parametrize("depth", [rdfio.MAX_NESTING + 2, 5000])
def test_nesting_past_the_limit_is_refused(parser, media_type, make, depth):
    with pytest.raises(RdfParseError, match=f"deeper than {rdfio.MAX_NESTING} levels: "
                                            "nesting is too deep"):
        parser(make(depth), media_type, BASE)


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("media_type", [rdfio.TURTLE, rdfio.N3])
@pytest.mark.parametrize("quotes", [b'"""a""""', b'"""a"""""', b"'''a''''", b'"""a""""""'])
def test_nesting_after_a_long_string_ending_in_quotes_is_refused(parser, media_type, quotes):
    """rdflib reads a long string closed by four quotes as ending in a quote: the last
    one must not open a string that hides the rest of the line from the check."""
    body = (b"<> <" + P.encode() + b"> " + quotes + b" ; <" + P.encode() + b"> "
            + (b"[ <" + P.encode() + b"> ") * 5000 + b"1" + b" ]" * 5000 + b" .")
    with pytest.raises(RdfParseError, match="nesting is too deep"):
        parser(body, media_type, BASE)


@pytest.mark.parametrize("parser", PARSERS)
def test_nested_triple_terms_are_refused(parser):
    with pytest.raises(RdfParseError, match="nesting is too deep"):
        parser(triple_terms(rdfio.MAX_NESTING + 1), rdfio.N_TRIPLES, BASE)


@pytest.mark.parametrize("media_type, body", [
    # Brackets in strings, IRIs, comments and escapes do not nest.
    (rdfio.JSON_LD, b'{"@id": "", "' + P.encode() + b'": "' + b"[{" * 500 + b'\\"x"}'),
    (rdfio.TURTLE, b"<> <" + P.encode() + b'> "' + b"[(" * 500 + b'\\"" .'),
    (rdfio.TURTLE, b"<> <" + P.encode() + b"> '''" + b"[(" * 500 + b"''' ."),
    (rdfio.TURTLE, b"<> <" + P.encode() + b'> """' + b"[(\n" * 500 + b'""" .'),
    (rdfio.TURTLE, b"# " + b"[(" * 500 + b"\n<> <" + P.encode() + b"> 1 ."),
    (rdfio.TURTLE, b"<> <" + P.encode() + b"> <http://x/" + b"((" * 500 + b"> ."),
    (rdfio.TURTLE, b"<> <" + P.encode() + b"> <http://x/\\u0041" + b"((" * 500 + b"> ."),
    (rdfio.TURTLE, b"@prefix e: <http://x/> .\n<> <" + P.encode() + b"> e:a\\("
     + b"\\(" * 500 + b" ."),
    (rdfio.RDF_XML, b'<rdf:RDF xmlns:rdf="' + RDF_NS.encode() + b'" xmlns:e="http://x/">'
     + b'<rdf:Description rdf:about="">' + b"<e:p>x</e:p>" * 500
     + b"</rdf:Description></rdf:RDF>"),
])
def test_many_brackets_that_do_not_nest_parse(media_type, body):
    assert rdfio.parse(body, media_type, BASE)


def test_many_sibling_blank_nodes_parse():
    body = b"<> <" + P.encode() + b"> " + b", ".join([b"[ <" + P.encode() + b"> 1 ]"] * 500)
    assert len(rdfio.parse(body + b" .", rdfio.TURTLE, BASE)) == 1000


# --- DTDs in RDF/XML -----------------------------------------------------------------

@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("levels", [2, 9])
def test_entity_declarations_are_refused(parser, levels):
    """Nine levels were stored as a 1,000,000,000-character literal."""
    with pytest.raises(RdfParseError, match="DTD"):
        parser(laughs(levels), rdfio.RDF_XML, BASE)


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE rdf:RDF [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE rdf:RDF SYSTEM "http://127.0.0.1:9/rdf.dtd">',
    '<!DOCTYPE rdf:RDF PUBLIC "-//X//DTD X//EN" "http://127.0.0.1:9/rdf.dtd">',
    '<!DOCTYPE rdf:RDF [<!ENTITY % p SYSTEM "http://127.0.0.1:9/p.dtd"> %p;]>',
])
def test_external_dtds_and_entities_are_refused(parser, doctype):
    body = (f'<?xml version="1.0"?>{doctype}<rdf:RDF xmlns:rdf="{RDF_NS}" '
            f'xmlns:e="http://ex.org/"><rdf:Description rdf:about=""><e:p>&x;</e:p>'
            f"</rdf:Description></rdf:RDF>").encode()
    with pytest.raises(RdfParseError, match="DTD") as info:
        parser(body, rdfio.RDF_XML, BASE)
    assert info.value.line == 1


def test_utf16_dtd_is_refused():
    with pytest.raises(RdfParseError, match="DTD"):
        rdfio.parse_rdflib(laughs(2).decode().encode("utf-16"), rdfio.RDF_XML, BASE)


def test_doctype_without_a_dtd_parses():
    body = (f'<?xml version="1.0"?><!DOCTYPE rdf:RDF><rdf:RDF xmlns:rdf="{RDF_NS}" '
            f'xmlns:e="http://ex.org/"><rdf:Description rdf:about=""><e:p>x</e:p>'
            f"</rdf:Description></rdf:RDF>").encode()
    assert rdfio.parse(body, rdfio.RDF_XML, BASE) == [(f"<{BASE}>", f"<{P}>", '"x"')]


def test_check_input_is_public_and_ignores_other_types():
    rdfio.check_input(b"[" * 1000, "text/plain")
    with pytest.raises(RdfParseError, match="nesting is too deep"):
        rdfio.check_input(b"[" * 1000, "text/turtle; charset=utf-8")


# --- XML that is not well-formed ----------------------------------------------------------

@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("head", [
    b'<rdf:RDF xmlns:rdf="' + RDF_NS.encode() + b'"/>',         # a second root element
    b"<?xml version='1.0' encoding='bogus'?>",                  # an unknown encoding
    b"<!-- &#x7; --><x a='&#x7;'/>",                            # XML 1.1 characters
])
def test_deep_xml_that_expat_stops_at_is_refused(parser, head):
    """pyoxigraph read 20000 nested elements after a first root element, unchecked;
    an unknown encoding raised LookupError (a 500 over HTTP)."""
    with pytest.raises(RdfParseError, match="nesting is too deep"):
        parser(head + rdf_xml(5000), rdfio.RDF_XML, BASE)


@pytest.mark.parametrize("parser", PARSERS)
def test_dtd_that_expat_stops_before_is_refused(parser):
    body = (b"<?xml version='1.0' encoding='bogus'?><!-- <!DOCTYPE in a comment -->"
            b"<![CDATA[ <a><b> ]]><!DOCTYPE rdf:RDF [<!ENTITY a 'x'>]>" + rdf_xml(10))
    with pytest.raises(RdfParseError, match="DTD"):
        parser(body, rdfio.RDF_XML, BASE)


def test_markup_scan_counts_what_nests():
    body = (b"<?xml version='1.0' encoding='bogus'?><!-- <a><a> --><r x='>'>"
            + b"<a b=\"/>\"><c/><![CDATA[<d><d>]]></a>" * 5000 + b"</r>")
    rdfio.check_input(body, rdfio.RDF_XML)


@pytest.mark.parametrize("parser", PARSERS)
def test_n3_formulas_say_so(parser):
    with pytest.raises(RdfParseError, match=r"N3 formulas \(\{ ... \}\) are not supported"):
        parser(b"<> <http://x/p> { <http://x/a> <http://x/b> <http://x/c> } .", rdfio.N3, BASE)


@pytest.mark.parametrize("parser", PARSERS)
def test_n3_syntax_errors_say_where_without_bytes_reprs(parser):
    """rdflib's N3 message showed ``b'...'`` reprs and no column."""
    with pytest.raises(RdfParseError) as info:
        parser(b"<> <http://x/p> 1 .\n<> <http://x/p> [ .", rdfio.N3, BASE)
    assert str(info.value).startswith(
        "Bad syntax (']' expected) near '://x/p> 1 .\\n<> <http://x/p> [ .'")
    assert (info.value.line, info.value.column) == (2, 19)
    assert "b'" not in str(info.value)
