"""Property test: every term ``rdfio`` yields is canonical, in ``store.terms``' form.

The store's write path trusts parser output (``add_graph(..., canonical=True)``)
because of this test: many random literals, IRIs and blank nodes over tricky code
points, written in N-Triples, Turtle and JSON-LD with random escaping, must come
out of ``rdfio.parse`` as terms that ``canonical()`` leaves unchanged and that
``store.terms`` builds identically (and as pyoxigraph prints them).
"""
import json
import random

import pyoxigraph
import pytest
import rdflib

from lakesuperior import rdfio
from lakesuperior.store.terms import canonical, iri, literal, literal_parts

BASE = "http://ex.org/base/"
XSD = "http://www.w3.org/2001/XMLSchema#"
TRICKY = ([chr(c) for c in range(0x20)] + ["\x7f", "\x80", "\x85", "\x9f", '"', "'", "\\",
          " ", "#", "<", ">", "@", "^", "\u00e9", "\u2028", "\u2029", "\ud7ff", "\ue000",
          "\ufdd0", "\ufdef", "\ufeff", "\ufffd", "\ufffe", "\uffff", "\U0001f600",
          "\U0001fffe", "\U0001ffff", "\U0010fffd", "\U0010ffff"]
          + list("abcxyzABC019 -_."))
LANGS = ["en", "EN", "en-US", "de-CH-1996", "zh-Hant-TW", "x-private", "fr-ca"]
DATATYPES = [XSD + "string", XSD + "integer", XSD + "dateTime", "http://ex.org/dt#\u00e9"]
IRI_CHARS = list("abcXYZ019-._~/?=&:@!$()*+,;") + ["\u00e9", "\u4e2d", "\U0001f600",
                                                   "\ufdf0", "\U000e1000"]
ECHAR = {"\t": "\\t", "\b": "\\b", "\n": "\\n", "\r": "\\r", "\f": "\\f", '"': '\\"',
         "'": "\\'", "\\": "\\\\"}


def _value(rng):
    return "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 12)))


def _uchar(rng, ch):
    cp = ord(ch)
    if cp <= 0xFFFF and rng.random() < 0.7:
        return f"\\u{cp:04X}" if rng.random() < 0.5 else f"\\u{cp:04x}"
    return f"\\U{cp:08X}"


def _escaped(rng, text, quote):
    """``text`` in a short quoted string, escaped at random where the grammar allows."""
    out = []
    for ch in text:
        must = ch in (quote, "\\", "\n", "\r")
        r = rng.random()
        if must or r < 0.3:
            out.append(ECHAR[ch] if ch in ECHAR and (must and r < 0.5 or r < 0.15)
                       else _uchar(rng, ch))
        else:
            out.append(ch)
    return "".join(out)


def _random_iri(rng):
    return "http://ex.org/" + "".join(rng.choice(IRI_CHARS) for _ in range(rng.randint(0, 8)))


def _iri_ref(rng, value):
    """``<value>`` with some characters written as UCHAR escapes."""
    return "<" + "".join(_uchar(rng, c) if c.isalpha() and rng.random() < 0.2 else c
                         for c in value) + ">"


def _cases(seed, n):
    rng = random.Random(seed)
    for i in range(n):
        value = _value(rng)
        r = rng.random()
        lang = rng.choice(LANGS) if r < 0.35 else None
        datatype = rng.choice(DATATYPES) if 0.35 <= r < 0.7 else None
        yield i, value, lang, datatype, _random_iri(rng)


def _ox_literal(value, lang, datatype):
    if lang:
        return pyoxigraph.Literal(value, language=lang)
    if datatype:
        return pyoxigraph.Literal(value, datatype=pyoxigraph.NamedNode(datatype))
    return pyoxigraph.Literal(value)


def _ntriples(rng, cases):
    lines = []
    for i, value, lang, datatype, obj_iri in cases:
        lit = '"' + _escaped(rng, value, '"') + '"'
        if lang:
            lit += "@" + lang
        elif datatype:
            lit += "^^" + _iri_ref(rng, datatype)
        lines.append(f"_:b{i} <http://ex.org/p> {lit} .")
        lines.append(f"_:b{i} <http://ex.org/q> {_iri_ref(rng, obj_iri)} .")
    return "\n".join(lines).encode()


def _turtle(rng, cases):
    lines = [f"@prefix xsd: <{XSD}> .", "@prefix ex: <http://ex.org/> ."]
    for i, value, lang, datatype, obj_iri in cases:
        quote = rng.choice(['"', "'"])
        lit = quote + _escaped(rng, value, quote) + quote
        if lang:
            lit += "@" + lang
        elif datatype:
            lit += "^^" + ("xsd:" + datatype[len(XSD):] if datatype.startswith(XSD)
                           else _iri_ref(rng, datatype))
        lines.append(f"_:b{i} ex:p {lit} ; ex:q {_iri_ref(rng, obj_iri)} .")
    return "\n".join(lines).encode()


def _json_ld(rng, cases):
    nodes = []
    for i, value, lang, datatype, obj_iri in cases:
        obj = {"@value": value}
        if lang:
            obj["@language"] = lang
        elif datatype:
            obj["@type"] = datatype
        nodes.append({"@id": f"_:b{i}", "http://ex.org/p": [obj],
                      "http://ex.org/q": [{"@id": obj_iri}]})
    return json.dumps(nodes, ensure_ascii=rng.random() < 0.5).encode()


WRITERS = {rdfio.N_TRIPLES: _ntriples, rdfio.TURTLE: _turtle, rdfio.JSON_LD: _json_ld}


@pytest.mark.parametrize("media_type", sorted(WRITERS))
@pytest.mark.parametrize("seed", range(8))
def test_parsed_terms_are_canonical(media_type, seed):
    rng = random.Random(f"{media_type}{seed}")
    cases = list(_cases(seed, 60))
    triples = rdfio.parse(WRITERS[media_type](rng, cases), media_type, BASE)
    assert len(triples) == 2 * len(cases)
    expected = {str(_ox_literal(v, lang, dt)) for _, v, lang, dt, _ in cases}
    expected_iris = {str(pyoxigraph.NamedNode(o)) for *_, o in cases}
    literals = set()
    for triple in triples:
        for term in triple:
            assert canonical(term) == term, term
        if triple[1] == "<http://ex.org/p>":
            literals.add(triple[2])
            lex, lang, datatype = literal_parts(triple[2])
            assert literal(lex, lang, datatype) == triple[2]
        else:
            assert triple[2] in expected_iris and iri(triple[2][1:-1]) == triple[2]
    assert literals == expected


@pytest.mark.parametrize("seed", range(4))
def test_terms_builders_print_like_pyoxigraph(seed):
    for _, value, lang, datatype, obj_iri in _cases(100 + seed, 300):
        term = str(_ox_literal(value, lang, datatype))
        assert literal(value, lang, datatype) == term
        assert canonical(term) == term
        assert literal_parts(term)[0] == value
        assert rdfio.from_rdflib(rdfio.to_rdflib(term)) == term
        assert rdfio.from_rdflib(rdflib.Literal(value, lang=lang,
                                                datatype=datatype if not lang else None)) \
            == term
        assert iri(obj_iri) == str(pyoxigraph.NamedNode(obj_iri))


def test_non_canonical_escapes_are_canonicalised():
    for text in ["\ufffe", "\uffff", "\x7f", "\x00", "\x1f"]:
        cp = ord(text)
        assert canonical(f'"\\u{cp:04x}"') == str(pyoxigraph.Literal(text))
        assert canonical(f'"\\U{cp:08X}"') == str(pyoxigraph.Literal(text))
    assert canonical('"\ufffe"') == '"\\uFFFE"'
    assert canonical('"\x7f"') == '"\\u007F"'
    assert canonical('"\ufdd0\U0001fffe"') == '"\ufdd0\U0001fffe"'
