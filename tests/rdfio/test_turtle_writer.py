"""``rdf.turtle``: Turtle written from canonical terms, without a parser, reads
back as the same graph (pyoxigraph and rdflib), whatever the terms hold."""
from __future__ import annotations

import random

import pyoxigraph
import pytest
import rdflib

from lakesuperior import rdfio
from lakesuperior.rdf import turtle

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
PREFIXES = {"ex": "http://ex.org/ns#", "exs": "http://ex.org/ns#sub/", "xsd": XSD,
            "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "": "http://ex.org/"}
TRICKY = ['"', "\\", "\n", "\r", "\t", " ", "#", "<", ">", "^", "^^<", "@", ";", ",", ".",
          "\u00e9", "\u2028", "\U0001f600", "\ufeff", "a", "Z", "0", "_", "-", ":"]
LOCALS = ["a", "A_b-c", "_x", "1x", "a.b", "a%20b", "", "-a", "\u00e9t\u00e9", "a:b", "a/b"]


def _read(text: str) -> set[tuple[str, str, str]]:
    return {(str(q.subject), str(q.predicate), str(q.object))
            for q in pyoxigraph.parse(text, pyoxigraph.RdfFormat.TURTLE)}


def _term(rng: random.Random, position: str) -> str:
    """A random canonical term (pyoxigraph's N-Triples form) for ``position``."""
    ns = rng.choice([*PREFIXES.values(), "http://other.org/", "urn:x:"])
    iri = str(pyoxigraph.NamedNode(ns + rng.choice(LOCALS)))
    if position == "p":
        return rng.choice([iri, RDF_TYPE])
    if position == "s":
        return rng.choice([iri, RDF_TYPE, f"_:b{rng.randint(0, 3)}"])
    text = "".join(rng.choice(TRICKY) for _ in range(rng.randint(0, 8)))
    kind = rng.randrange(5)
    if kind == 0:
        return str(pyoxigraph.Literal(text))
    if kind == 1:
        return str(pyoxigraph.Literal(text, language=rng.choice(["en", "de-ch"])))
    if kind == 2:
        dtype = rng.choice([XSD + "decimalish", "http://ex.org/ns#t", "urn:dt:x", ns + "a.b"])
        return str(pyoxigraph.Literal(text, datatype=pyoxigraph.NamedNode(dtype)))
    return rng.choice([iri, RDF_TYPE, f"_:b{rng.randint(0, 3)}"])


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_read_back_the_same(seed):
    rng = random.Random(seed)
    triples = [(_term(rng, "s"), _term(rng, "p"), _term(rng, "o")) for _ in range(60)]
    # runs of one subject and of one predicate, as a store gives them
    triples += [(triples[0][0], triples[0][1], _term(rng, "o")) for _ in range(5)]
    text = turtle.write(triples, PREFIXES)
    assert _read(text) == set(triples)
    graph = rdflib.Graph().parse(data=text, format="turtle")
    assert len(graph) == len(set(triples))


def test_statements_group_runs_and_shorten_names():
    s = "<http://ex.org/s>"
    triples = [(s, RDF_TYPE, "<http://ex.org/ns#Thing>"),
               (s, RDF_TYPE, RDF_TYPE),
               (s, "<http://ex.org/ns#p>", f'"1"^^<{XSD}integer>'),
               ("_:b", "<http://other.org/q>", '"x"@en')]
    assert turtle.write(triples, {"ex": "http://ex.org/ns#", "xsd": XSD}) == (
        "@prefix ex: <http://ex.org/ns#> .\n"
        f"@prefix xsd: <{XSD}> .\n"
        f"<http://ex.org/s> a ex:Thing , {RDF_TYPE} ;\n"
        '\tex:p "1"^^xsd:integer .\n'
        '_:b <http://other.org/q> "x"@en .\n')


@pytest.mark.parametrize("local, short", [
    ("a", "ex:a"), ("A_b-c", "ex:A_b-c"), ("_x", "ex:_x"), ("1x", None), ("a.b", None),
    ("", None), ("-a", None), ("a%20b", None), ("\u00e9", None)])
def test_only_plain_local_names_are_shortened(local, short):
    term = f"<http://ex.org/ns#{local}>"
    assert turtle.Shortener({"ex": "http://ex.org/ns#"}).iri(term) == (short or term)


def test_the_longest_namespace_up_to_the_last_separator_is_used():
    short = turtle.Shortener({"a": "http://x/", "b": "http://x/y/", "c": "http://x/y/"})
    assert short.iri("<http://x/y/z>") == "b:z"
    assert short.iri("<http://x/z>") == "a:z"
    assert short.iri("<http://x/y/z/w>") == "<http://x/y/z/w>"


def test_a_typed_literal_holding_the_datatype_marker():
    term = '"a^^<http://ex.org/ns#b>"^^<http://ex.org/ns#t>'
    assert turtle.Shortener({"ex": "http://ex.org/ns#"}).term(term) == \
        '"a^^<http://ex.org/ns#b>"^^ex:t'


def test_nothing_but_the_prefixes():
    assert turtle.write([], {"ex": "http://ex.org/"}) == "@prefix ex: <http://ex.org/> .\n"
    assert turtle.write([], {}) == ""


def test_serialize_writes_turtle_with_the_writer():
    triples = [("<http://ex.org/s>", RDF_TYPE, "<http://ex.org/ns#T>")]
    out = rdfio.serialize(triples, "text/turtle", namespaces={"ex": "http://ex.org/ns#"})
    assert out == b"@prefix ex: <http://ex.org/ns#> .\n<http://ex.org/s> a ex:T .\n"
