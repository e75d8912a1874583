"""Term canonicalisation and content-derived ids."""
import pyoxigraph
import pytest

from lakesuperior.exceptions import TermError
from lakesuperior.store import terms
from lakesuperior.store.quadstore import QuadStore
from lakesuperior.store.terms import (
    KIND_BNODE,
    KIND_IRI,
    KIND_LITERAL,
    canonical,
    id_kind,
    iri,
    kind_of,
    lexical,
    literal,
    literal_parts,
    term_id,
)

XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.mark.parametrize("term", [
    "<http://example.org/a>",
    "<urn:isbn:123>",
    "<http://example.org/é/ᚠ>",
    "_:b0",
    "_:node-1.x",
    '"plain"',
    '""',
    '"with \\"quotes\\" and \\\\ backslash"',
    '"line\\nbreak\\r\\ttab"',
    '"ctrl \\u0001 \\u007F \\b \\f"',
    '"émoji 😀 Ελληνικά ᚠᚢᚦ"@el',
    '"1"^^<http://www.w3.org/2001/XMLSchema#integer>',
])
def test_canonical_terms_are_unchanged(term):
    assert canonical(term) == term


@pytest.mark.parametrize("given,expected", [
    ('"x"^^<http://www.w3.org/2001/XMLSchema#string>', '"x"'),
    ('"x"@EN-us', '"x"@en-us'),
    ('"\\u00e9t\\u00C9"', '"étÉ"'),
    ('"\\U0001F600"', '"😀"'),
    ("<http://a/\\u00e9>", "<http://a/é>"),
    ('"it\\\'s"', "\"it's\""),
    ('"tab\\u0009"', '"tab\\t"'),
])
def test_canonical_normalises(given, expected):
    assert canonical(given) == expected


@pytest.mark.parametrize("bad", [
    "", "plain", "<no-scheme>", "<http://a b>", "<http://a>x", "<http://a",
    '"unterminated', '"x"@', '"x"@1bad', '"x"^^<bad iri>', '"x"junk',
    '"raw\nline"', "_:", "_:bad label", '"bad \\q escape"', "<http://a/\\n>",
    '"x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>',
])
def test_invalid_terms_raise(bad):
    with pytest.raises(TermError):
        canonical(bad)


@pytest.mark.parametrize("bad", [None, 1, b"<http://a>", ("<http://a>",)])
def test_non_strings_raise(bad):
    with pytest.raises(TermError, match="must be a str"):
        canonical(bad)


def test_kinds_and_ids():
    assert kind_of("<http://a>") == KIND_IRI
    assert kind_of("_:b") == KIND_BNODE
    assert kind_of('"x"') == KIND_LITERAL
    for term, kind in (("<http://a>", KIND_IRI), ("_:b", KIND_BNODE), ('"x"', KIND_LITERAL)):
        tid = term_id(term)
        assert id_kind(tid) == kind
        assert tid == term_id(term)          # content-derived: same term, same id
    assert term_id('"x"') != term_id('"x"@en') != term_id("<x:x>")
    assert len({term_id(f'"{i}"') for i in range(10000)}) == 10000


def test_builders_and_parts():
    assert literal('a "b"\n') == '"a \\"b\\"\\n"'
    assert literal("x", lang="EN") == '"x"@en'
    assert literal("1", datatype=XSD + "integer") == f'"1"^^<{XSD}integer>'
    assert literal("x", datatype=XSD + "string") == '"x"'
    assert iri("http://a/b") == "<http://a/b>"
    with pytest.raises(TermError):
        iri("not an iri")
    with pytest.raises(TermError):
        literal("x", lang="en", datatype=XSD + "integer")
    with pytest.raises(TermError):
        literal(3)
    assert literal_parts('"a\\nb"@en') == ("a\nb", "en", None)
    assert literal_parts(f'"1"^^<{XSD}integer>') == ("1", None, XSD + "integer")
    assert literal_parts('"x"') == ("x", None, None)
    with pytest.raises(TermError):
        literal_parts("<http://a>")
    assert lexical("<http://a>") == "http://a"
    assert lexical("_:b1") == "b1"
    assert lexical('"q\\""') == 'q"'


def test_long_and_unicode_literals_round_trip():
    text = "".join(chr(c) for c in range(0x20, 0x3000) if not 0xD800 <= c < 0xE000) * 5
    term = literal(text + "\n\"\\")
    assert literal_parts(canonical(term))[0] == text + "\n\"\\"


def test_lone_surrogate_is_refused():
    with pytest.raises(TermError):
        term_id('"\ud800"')


def test_constants():
    assert terms.XSD_STRING == XSD + "string"
    assert terms.RDF_LANGSTRING.endswith("#langString")


def test_non_characters_escape_as_pyoxigraph_prints_them():
    """U+FFFE and U+FFFF are escaped (pyoxigraph does); other non-characters are not."""
    for text in ["\ufffe", "\uffff", "a\ufffeb\uffff", "\x7f", "\ufdd0", "\U0001fffe"]:
        term = str(pyoxigraph.Literal(text))
        assert literal(text) == term
        assert canonical('"' + text + '"') == term
        assert canonical(term) == term
        assert literal_parts(term)[0] == text
    assert literal("\ufffe") == '"\\uFFFE"'


def test_literal_parts_refuses_a_bad_suffix():
    for term in ['"x"@', '"x"@e n', '"x"^^dt', '"x"junk']:
        with pytest.raises(TermError):
            literal_parts(term)


def test_the_write_path_stores_the_canonical_form(tmp_path):
    st = QuadStore(str(tmp_path / "s"))
    g, s, p = "<http://ex.org/g>", "<http://ex.org/s>", "<http://ex.org/p>"
    with st.write() as txn:
        txn.add_graph(g, [(s, p, '"a\ufffe\x7f"'), (s, p, '"b\\uffff"@EN')])
    with st.read() as txn:
        assert sorted(t[2] for t in txn.triples(g)) == ['"a\\uFFFE\\u007F"', '"b\\uFFFF"@en']
        assert txn.count(s, p, '"a\\uFFFE\\u007F"', g) == 1
    st.close()


def test_split_ntriples_gives_distinct_triples_in_order():
    text = ('<http://e/a> <http://e/p> "x y z . w"@en .\n'
            '<http://e/a> <http://e/q> <http://e/é> .\n'
            '<http://e/a> <http://e/p> "x y z . w"@en .\n'
            '_:b0 <http://e/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n')
    found, rdf12 = terms.split_ntriples(text.encode())
    assert found == [("<http://e/a>", "<http://e/p>", '"x y z . w"@en'),
                     ("<http://e/a>", "<http://e/q>", "<http://e/é>"),
                     ("_:b0", "<http://e/p>",
                      '"1"^^<http://www.w3.org/2001/XMLSchema#integer>')]
    assert rdf12 is False
    assert found[0][0] is found[1][0]      # a repeated subject is one object
    assert terms.split_ntriples(b"") == ([], False)


def test_split_ntriples_matches_pyoxigraph_terms():
    doc = b'<a> <p> """multi\nline \\" quoted"""@en-GB, "\xc3\xa9"; <q> [ <r> 1.5 ] .'
    quads = list(pyoxigraph.parse(doc, pyoxigraph.RdfFormat.TURTLE, base_iri="http://e/"))
    text = pyoxigraph.serialize(quads, format=pyoxigraph.RdfFormat.N_TRIPLES)
    found, _ = terms.split_ntriples(text)
    assert found == [(str(q.subject), str(q.predicate), str(q.object)) for q in quads]


@pytest.mark.parametrize("obj", ['<<( <http://e/a> <http://e/p> <http://e/o> )>>',
                                 '"text"@en--ltr', '"text"@ar--rtl'])
def test_split_ntriples_flags_rdf12_objects(obj):
    found, rdf12 = terms.split_ntriples(f"<http://e/a> <http://e/p> {obj} .\n".encode())
    assert rdf12 is True and found[0][2] == obj


@pytest.mark.parametrize("bad", [b"<http://e/a> <http://e/p>\n", b"<http://e/a> .\n",
                                 b"<http://e/a> <http://e/p> <o>"])
def test_split_ntriples_refuses_other_lines(bad):
    with pytest.raises(ValueError, match="Not an N-Triples line"):
        terms.split_ntriples(bad)


def test_split_ntriples_moves_iris_under_a_prefix():
    text = (b"<info:fedora> <http://x/p> <info:fedora/a/b> .\n"
            b"<info:fedora#h> <info:fedora/p> <info:fedoraX> .\n"
            b'<info:fedora/a> <http://x/p> "<info:fedora/a>" .\n'
            b"<info:fedora/a#h> <http://x/p> <info:fedor> .\n"
            b"<info:fedora/> <http://x/p> <info:fedora/a/b> .\n")  # the root again: once
    found, rdf12 = terms.split_ntriples(text, "<info:fedora", "<http://h/rest")
    assert found == [("<http://h/rest/>", "<http://x/p>", "<http://h/rest/a/b>"),
                     ("<http://h/rest/#h>", "<info:fedora/p>", "<info:fedoraX>"),
                     ("<http://h/rest/a>", "<http://x/p>", '"<info:fedora/a>"'),
                     ("<http://h/rest/a#h>", "<http://x/p>", "<info:fedor>")]
    assert rdf12 is False
    with pytest.raises(ValueError, match="both"):
        terms.split_ntriples(b"", "<info:fedora")
