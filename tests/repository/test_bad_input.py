"""Bad input: every error is a LakesuperiorError that says what was wrong, and the
repository is exactly as it was afterwards."""
from __future__ import annotations

import pytest
import rdflib

from lakesuperior.exceptions import (
    ChecksumValidationError,
    IncompatibleLdpTypeError,
    InvalidResourceError,
    InvalidTripleError,
    LakesuperiorError,
    RdfParseError,
    RefIntViolationError,
    ResourceNotExistsError,
    ServerManagedTermError,
    SingleSubjectError,
    SparqlError,
    TermError,
    TombstoneError,
    UnsupportedMediaTypeError,
)

TTL = "text/turtle"


@pytest.fixture
def filled(repo_factory):
    repo = repo_factory(referential_integrity="strict")
    repo.create_or_replace("/c", data=b'<> <http://ex.org/t> "c" .', media_type=TTL)
    repo.create_or_replace("/c/child")
    repo.create_or_replace("/bin", data=b"content", media_type="text/plain")
    repo.create_or_replace("/gone")
    repo.delete("/gone")
    return repo


def _literal_subject_graph():
    g = rdflib.Graph()
    g.add((rdflib.Literal("x"), rdflib.URIRef("http://ex.org/p"), rdflib.Literal("y")))
    return g


def _deep_json_ld(depth: int) -> bytes:
    return (b'{"@id":"","http://ex.org/p":' + b'{"http://ex.org/p":' * depth + b'"x"'
            + b"}" * (depth + 1))


def _deep_rdf_xml(depth: int) -> bytes:
    return (b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            b'xmlns:e="http://ex.org/"><rdf:Description rdf:about="">'
            + b"<e:p><rdf:Description>" * depth + b"<e:p>x</e:p>"
            + b"</rdf:Description></e:p>" * depth + b"</rdf:Description></rdf:RDF>")


def _laughs(levels: int) -> bytes:
    decls = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1))
    return (f'<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY l0 "ha">{decls}]>'
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            f'xmlns:e="http://ex.org/"><rdf:Description rdf:about=""><e:p>&l{levels};</e:p>'
            "</rdf:Description></rdf:RDF>").encode()


CASES = [
    # malformed RDF
    ("turtle", RdfParseError, "line 2",
     lambda r: r.create_or_replace("/c", data=b'<> <http://ex.org/p> "x" ;\n  <broken',
                                   media_type=TTL)),
    ("turtle-post", RdfParseError, "",
     lambda r: r.create("/c", data=b"@prefix : <x> . :a :b", media_type=TTL)),
    ("json-ld", RdfParseError, "",
     lambda r: r.create_or_replace("/new", data=b'{"@id": "x", ',
                                   media_type="application/ld+json")),
    ("n-triples", RdfParseError, "",
     lambda r: r.create_or_replace("/new", data=b"<a> <b> .", media_type="application/n-triples")),
    ("rdf/xml", RdfParseError, "",
     lambda r: r.create_or_replace("/new", data=b"<rdf:RDF", media_type="application/rdf+xml")),
    ("not utf-8", RdfParseError, "",
     lambda r: r.create_or_replace("/new", data=b'<> <http://ex.org/p> "\xff\xfe" .',
                                   media_type=TTL)),
    ("n3", RdfParseError, "",
     lambda r: r.create_or_replace("/new", data=b"<> <http://ex.org/p> [ .",
                                   media_type="text/n3")),
    # input no parser may see (issue 14, items 1 and 2)
    ("deep json-ld", RdfParseError, "nesting is too deep",
     lambda r: r.create_or_replace("/new", data=_deep_json_ld(5000),
                                   media_type="application/ld+json")),
    ("deep json-ld post", RdfParseError, "nesting is too deep",
     lambda r: r.create("/c", data=_deep_json_ld(5000), media_type="application/ld+json")),
    ("deep turtle", RdfParseError, "nesting is too deep",
     lambda r: r.create_or_replace("/c", data=b"<> <http://ex.org/p> " + b"[ <http://ex.org/p> "
                                   * 5000 + b"1" + b" ]" * 5000 + b" .", media_type=TTL)),
    ("deep n3 collections", RdfParseError, "nesting is too deep",
     lambda r: r.create_or_replace("/c", data=b"<> <http://ex.org/p> " + b"( " * 5000 + b"1"
                                   + b" )" * 5000 + b" .", media_type="text/n3")),
    ("deep rdf/xml", RdfParseError, "nesting is too deep",
     lambda r: r.create_or_replace("/c", data=_deep_rdf_xml(5000),
                                   media_type="application/rdf+xml")),
    ("billion laughs", RdfParseError, "DTD",
     lambda r: r.create_or_replace("/c", data=_laughs(9), media_type="application/rdf+xml")),
    ("rdf model, non-rdf type", UnsupportedMediaTypeError, "image/png",
     lambda r: r.create_or_replace("/new", data=b"x", media_type="image/png",
                                   interaction_model="ldp:BasicContainer")),
    # uids
    ("dotdot", InvalidResourceError, "..", lambda r: r.create_or_replace("/c/../etc")),
    ("double slash", InvalidResourceError, "//", lambda r: r.create_or_replace("/c//x")),
    ("control char", InvalidResourceError, "control", lambda r: r.create_or_replace("/c/a\x01")),
    ("fcr segment", InvalidResourceError, "fcr:", lambda r: r.create_or_replace("/c/fcr:acl")),
    ("fcr get", InvalidResourceError, "fcr:", lambda r: r.get("/c/fcr:metadata")),
    ("bad slug", InvalidResourceError, "slug", lambda r: r.create("/c", slug="a/b")),
    ("slug dotdot", InvalidResourceError, "..", lambda r: r.create("/c", slug="..")),
    ("uid not a str", InvalidResourceError, "", lambda r: r.exists(42)),
    # models and types
    ("under a binary", IncompatibleLdpTypeError, "bin", lambda r: r.create_or_replace("/bin/x")),
    ("post to binary", IncompatibleLdpTypeError, "", lambda r: r.create("/bin")),
    ("binary with rdf", IncompatibleLdpTypeError, "binary",
     lambda r: r.create_or_replace("/bin", data=b'<> <http://ex.org/p> "x" .', media_type=TTL)),
    ("change model", IncompatibleLdpTypeError, "",
     lambda r: r.create_or_replace("/c", interaction_model="ldp:DirectContainer")),
    ("unknown model", IncompatibleLdpTypeError, "Unknown",
     lambda r: r.create_or_replace("/new", interaction_model="ldp:Nothing")),
    ("graph as binary", IncompatibleLdpTypeError, "",
     lambda r: r.create_or_replace("/new", graph=rdflib.Graph(),
                                   interaction_model="ldp:NonRDFSource")),
    ("two inputs", InvalidResourceError, "one of",
     lambda r: r.create_or_replace("/new", data=b"x", stream=b"y")),
    # triples
    ("server-managed", ServerManagedTermError, "repository#created",
     lambda r: r.create_or_replace("/c", data=b'@prefix fcrepo: '
                                   b'<http://fedora.info/definitions/v4/repository#> .'
                                   b' <> fcrepo:created "2000-01-01" .', media_type=TTL)),
    ("contains", ServerManagedTermError, "contains",
     lambda r: r.create_or_replace("/c", data=b'<> <http://www.w3.org/ns/ldp#contains> '
                                   b'</rest/bin> .', media_type=TTL)),
    ("foreign subject", SingleSubjectError, "other",
     lambda r: r.create_or_replace("/c", data=b'</rest/other> <http://ex.org/p> "x" .',
                                   media_type=TTL)),
    ("literal subject", InvalidTripleError, "subject",
     lambda r: r.create_or_replace("/c", graph=_literal_subject_graph())),
    ("refint strict", RefIntViolationError, "missing",
     lambda r: r.create_or_replace("/c", data=b'<> <http://ex.org/p> </rest/missing> .',
                                   media_type=TTL)),
    ("bad delta term", TermError, "",
     lambda r: r.update_delta("/c", None, [("<>", "<http://ex.org/p>", '"unterminated')])),
    ("delta none", InvalidTripleError, "None",
     lambda r: r.update_delta("/c", None, [("<>", "<http://ex.org/p>", None)])),
    # binaries
    ("bad digest", ChecksumValidationError, "mismatch",
     lambda r: r.create_or_replace("/new", data=b"abc", media_type="text/plain",
                                   digests={"md5": "0" * 32})),
    ("fixity of rdf", IncompatibleLdpTypeError, "", lambda r: r.fixity_check("/c")),
    # sparql
    ("sparql syntax", SparqlError, "syntax",
     lambda r: r.update("/c", "INSERT DATA { <> <http://ex.org/p> }")),
    ("sparql server-managed", ServerManagedTermError, "",
     lambda r: r.update("/c", "DELETE WHERE { <> <http://fedora.info/definitions/v4/"
                              "repository#created> ?x }")),
    # missing and buried things
    ("purge missing", ResourceNotExistsError, "", lambda r: r.delete("/missing", soft=False)),
    ("forget missing", ResourceNotExistsError, "", lambda r: r.forget("/missing")),
    ("update missing", ResourceNotExistsError, "",
     lambda r: r.update("/missing", "INSERT DATA {}")),
    ("version missing", ResourceNotExistsError, "", lambda r: r.create_version("/missing")),
    ("revert missing version", ResourceNotExistsError, "",
     lambda r: r.revert_to_version("/c", "20000101000000")),
    ("bad version id", InvalidResourceError, "version",
     lambda r: r.get_version("/c", "latest")),
    ("write a tombstone", TombstoneError, "", lambda r: r.create_or_replace("/gone")),
    ("under a tombstone", TombstoneError, "", lambda r: r.create_or_replace("/gone/x")),
    ("post to tombstone", TombstoneError, "", lambda r: r.create("/gone")),
    ("update tombstone", TombstoneError, "", lambda r: r.update("/gone", "INSERT DATA {}")),
]


@pytest.mark.parametrize("name, error, message, call", CASES, ids=[c[0] for c in CASES])
def test_bad_input_changes_nothing(filled, state, name, error, message, call):
    before = state(filled)
    with pytest.raises(error) as e:
        call(filled)
    assert isinstance(e.value, LakesuperiorError)
    assert message.lower() in str(e.value).lower()
    assert str(e.value)
    assert state(filled) == before


def test_parse_error_says_where(repo):
    with pytest.raises(RdfParseError) as e:
        repo.create_or_replace("/x", data=b'<> <http://ex.org/p> "ok" .\n<> <http://ex.org/q> ???',
                               media_type=TTL)
    assert e.value.line == 2 and e.value.column is not None


def test_handling_must_be_known(repo):
    with pytest.raises(InvalidResourceError):
        repo.create_or_replace("/x", data=b"<> <http://ex.org/p> 1 .", media_type=TTL,
                               handling="sloppy")
    assert repo.exists("/x") is False
