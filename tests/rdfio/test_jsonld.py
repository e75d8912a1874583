"""JSON-LD output in Fedora's three profiles (``lakesuperior.jsonld`` through
``rdfio.serialize``): each reads back, by pyoxigraph's and rdflib's parsers, to the
graph written; the shapes are those of JSON-LD 1.1 section 9.2; nothing is fetched."""
from __future__ import annotations

import json
import random

import pyoxigraph
import pytest
from rdflib.compare import isomorphic

from lakesuperior import jsonld, rdfio

BASE = "http://ex.org/base/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
NS = {"ex": "http://ex.org/", "xsd": XSD, "ldp": "http://www.w3.org/ns/ldp#",
      "dcterms": "http://purl.org/dc/terms/", "bad": "http://no-delimiter.org/x"}
TRICKY = (["\x00", "\x01", "\t", "\n", "\r", "\x7f", '"', "\\", "\u00e9", "\u2028", "\ufeff",
           "\U0001f600", "@", "{", "}", "[", "]", ":"] + list("abc xyz019"))
PROFILES = [jsonld.COMPACTED, jsonld.EXPANDED, jsonld.FLATTENED]


def _media_type(profile: str | None) -> str:
    return rdfio.JSON_LD + (f'; profile="{profile}"' if profile else "")


def _random_triples(seed: int, n: int = 80) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    subjects = ["<http://ex.org/s>", "<http://ex.org/s#frag>", "_:b1", "_:b2",
                "<http://other.org/x>", "<http://ex.org/>"]
    predicates = ["<http://ex.org/p>", "<http://purl.org/dc/terms/title>", RDF_TYPE,
                  "<http://ex.org/>", "<http://ex.org///odd>", "<http://other.org/q>"]
    triples = set()
    for _ in range(n):
        kind = rng.random()
        if kind < 0.3:
            o = rng.choice(subjects + ["<http://www.w3.org/ns/ldp#Container>", "<ex:confusing>"])
        else:
            value = "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 8)))
            lang = rng.choice(["en", "fr-ca", None, None])
            dt = None if lang else rng.choice([None, XSD + "integer", "http://ex.org/dt"])
            o = str(pyoxigraph.Literal(value, language=lang) if lang else
                    pyoxigraph.Literal(value, datatype=pyoxigraph.NamedNode(dt)) if dt else
                    pyoxigraph.Literal(value))
        triples.add((rng.choice(subjects), rng.choice(predicates), o))
    return sorted(triples)


def _graph(triples):
    return rdfio.triples_to_graph(triples)


@pytest.mark.parametrize("profile", [None, *PROFILES])
@pytest.mark.parametrize("seed", range(6))
def test_every_profile_reads_back_to_the_same_graph(profile, seed):
    triples = _random_triples(seed)
    data = rdfio.serialize(triples, _media_type(profile), namespaces=NS)
    assert isomorphic(_graph(rdfio.parse(data, rdfio.JSON_LD, BASE)), _graph(triples))


def test_rdflib_reads_it_the_same():
    triples = [t for t in _random_triples(7) if XSD + "integer" not in t[2]]
    for profile in PROFILES:
        data = rdfio.serialize(triples, _media_type(profile), namespaces=NS)
        assert isomorphic(_graph(rdfio.parse_rdflib(data, rdfio.JSON_LD, BASE)), _graph(triples))


def test_shapes():
    triples = [("<http://ex.org/a>", RDF_TYPE, "<http://www.w3.org/ns/ldp#Container>"),
               ("<http://ex.org/a>", "<http://purl.org/dc/terms/title>", '"t"'),
               ("<http://ex.org/a>", "<http://purl.org/dc/terms/title>", '"u"@en'),
               ("<http://ex.org/a>", "<http://ex.org/n>", f'"1"^^<{XSD}integer>'),
               ("<http://ex.org/a>", "<http://ex.org/r>", "<http://ex.org/b>"),
               ("<http://ex.org/b>", "<http://ex.org/r>", "_:x")]
    compacted = json.loads(rdfio.serialize(triples, rdfio.JSON_LD, namespaces=NS))
    assert compacted["@context"] == {p: ns for p, ns in NS.items() if p != "bad"}
    a = next(n for n in compacted["@graph"] if n["@id"] == "ex:a")
    assert a == {"@id": "ex:a", "@type": "ldp:Container", "dcterms:title": ["t", {
        "@value": "u", "@language": "en"}], "ex:n": {"@value": "1", "@type": "xsd:integer"},
        "ex:r": {"@id": "ex:b"}}
    expanded = json.loads(rdfio.serialize(triples, _media_type(jsonld.EXPANDED),
                                          namespaces=NS))
    assert isinstance(expanded, list)
    assert expanded[0]["@type"] == ["http://www.w3.org/ns/ldp#Container"]
    assert expanded[0]["http://purl.org/dc/terms/title"] == [{"@value": "t"},
                                                             {"@value": "u", "@language": "en"}]
    flattened = json.loads(rdfio.serialize(triples[:1], _media_type(jsonld.FLATTENED),
                                           namespaces=NS))
    assert flattened["@graph"] == [{"@id": "ex:a", "@type": "ldp:Container"}]
    one = json.loads(rdfio.serialize(triples[:1], rdfio.JSON_LD, namespaces=NS))
    assert one == {"@context": compacted["@context"], "@id": "ex:a", "@type": "ldp:Container"}


def test_a_prefix_that_is_also_a_scheme_is_left_out():
    """``ex:confusing`` is an absolute IRI: with ``ex`` in the context it would read
    as a compact IRI."""
    triples = [("<http://ex.org/a>", "<http://ex.org/p>", "<ex:confusing>")]
    doc = json.loads(rdfio.serialize(triples, rdfio.JSON_LD, namespaces=NS))
    assert "ex" not in doc["@context"] and doc["http://ex.org/p"] == {"@id": "ex:confusing"}
    assert set(rdfio.parse(json.dumps(doc).encode(), rdfio.JSON_LD, BASE)) == set(triples)


def test_empty_graph_and_no_namespaces():
    for profile in PROFILES:
        data = rdfio.serialize([], _media_type(profile))
        assert rdfio.parse(data, rdfio.JSON_LD, BASE) == []
    doc = json.loads(rdfio.serialize([("<http://ex.org/a>", "<http://ex.org/p>", '"x"')],
                                     rdfio.JSON_LD))
    assert doc == {"@context": {}, "@id": "http://ex.org/a", "http://ex.org/p": "x"}


def test_profile_of():
    assert jsonld.profile_of(None) == jsonld.profile_of("http://x/y") == jsonld.COMPACTED
    assert jsonld.profile_of(f"http://x/y {jsonld.FLATTENED}") == jsonld.FLATTENED
    with pytest.raises(ValueError):
        jsonld.document([], "http://x/y")
