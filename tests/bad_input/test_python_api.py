"""Bad input through the Python API: each call raises the right
``lakesuperior.exceptions`` class with a message that says what was wrong, and
leaves the store exactly as it was."""
from __future__ import annotations

import io

import pytest
import rdflib

from lakesuperior.exceptions import (
    ChecksumValidationError,
    IncompatibleLdpTypeError,
    InvalidDigestError,
    InvalidResourceError,
    InvalidTripleError,
    RdfParseError,
    RefIntViolationError,
    ResourceExistsError,
    ResourceNotExistsError,
    ServerManagedTermError,
    SingleSubjectError,
    SparqlError,
    TermError,
    TombstoneError,
    UnsupportedDigestError,
    UnsupportedMediaTypeError,
)

from .conftest import FCREPO, JSONLD, LDP, NT, RDFXML, TTL, Call, check_call, ids

pytestmark = pytest.mark.both_backends

P = "<http://purl.org/dc/terms/title>"
BASE = "http://test.example/rest"


def c(id: str, error: type[BaseException], keyword: str, call) -> Call:
    return Call(id, error, keyword, call)


def graph(*triples) -> rdflib.Graph:
    g = rdflib.Graph()
    for t in triples:
        g.add(t)
    return g


U = rdflib.URIRef
L = rdflib.Literal

UIDS = [
    c("uid dotdot", InvalidResourceError, "..", lambda r: r.create_or_replace("/c/../x")),
    c("uid dot", InvalidResourceError, ".", lambda r: r.create_or_replace("/c/./x")),
    c("uid empty segment", InvalidResourceError, "//", lambda r: r.create_or_replace("/c//x")),
    c("uid control character", InvalidResourceError, "control",
      lambda r: r.create_or_replace("/c/a\nb")),
    c("uid NUL", InvalidResourceError, "control", lambda r: r.create_or_replace("/c/a\x00")),
    c("uid fcr segment", InvalidResourceError, "fcr:",
      lambda r: r.create_or_replace("/c/fcr:metadata")),
    c("uid backslash", InvalidResourceError, "not allowed",
      lambda r: r.create_or_replace("/c/a\\b")),
    c("uid not a string", InvalidResourceError, "int", lambda r: r.create_or_replace(42)),
    c("uid bytes", InvalidResourceError, "bytes", lambda r: r.get(b"/c")),
    c("uid None", InvalidResourceError, "None", lambda r: r.delete(None)),
    c("uid of a get with dotdot", InvalidResourceError, "..", lambda r: r.get("/c/../..")),
    c("parent uid dotdot", InvalidResourceError, "..", lambda r: r.create("/c/..")),
    c("slug with slash", InvalidResourceError, "slug", lambda r: r.create("/c", slug="a/b")),
    c("slug dotdot", InvalidResourceError, "..", lambda r: r.create("/c", slug="..")),
    c("slug fcr:", InvalidResourceError, "fcr:", lambda r: r.create("/c", slug="fcr:x")),
    c("slug not a string", InvalidResourceError, "slug", lambda r: r.create("/c", slug=5)),
    c("slug control character", InvalidResourceError, "control",
      lambda r: r.create("/c", slug="a\x07")),
    # one uid rule for both doors: a segment HTTP refuses as too long
    c("300-character segment", InvalidResourceError, "long",
      lambda r: r.create_or_replace("/c/" + "x" * 300)),
    c("300-character slug", InvalidResourceError, "long",
      lambda r: r.create("/c", slug="x" * 300)),
]

MISSING = [
    c("get missing", ResourceNotExistsError, "missing", lambda r: r.get("/missing")),
    c("info missing", ResourceNotExistsError, "missing", lambda r: r.info("/missing")),
    c("create under missing", ResourceNotExistsError, "missing",
      lambda r: r.create("/missing")),
    c("update missing", ResourceNotExistsError, "missing",
      lambda r: r.update("/missing", f"INSERT DATA {{ <> {P} 1 }}")),
    c("delta on missing", ResourceNotExistsError, "missing",
      lambda r: r.update_delta("/missing", None, [])),
    c("soft delete missing", ResourceNotExistsError, "missing", lambda r: r.delete("/missing")),
    c("resurrect a live resource", ResourceExistsError, "not deleted",
      lambda r: r.resurrect("/c")),
    c("forget a live resource", ResourceExistsError, "not deleted",
      lambda r: r.forget("/c")),
    c("versions of missing", ResourceNotExistsError, "missing", lambda r: r.versions("/missing")),
    c("missing version", ResourceNotExistsError, "19990101000000",
      lambda r: r.get_version("/c", "19990101000000")),
    c("version id not a date", InvalidResourceError, "version",
      lambda r: r.get_version("/c", "../../x")),
    c("revert to a bad version id", InvalidResourceError, "version",
      lambda r: r.revert_to_version("/c", "latest")),
    c("fixity of missing", ResourceNotExistsError, "missing",
      lambda r: r.fixity_check("/missing")),
    c("fixity of a container", IncompatibleLdpTypeError, "binaries",
      lambda r: r.fixity_check("/c")),
    c("get a tombstone", TombstoneError, "gone", lambda r: r.get("/gone")),
    c("exists on a tombstone", TombstoneError, "gone", lambda r: r.exists("/gone")),
    c("replace a tombstone", TombstoneError, "gone", lambda r: r.create_or_replace("/gone")),
    c("create under a tombstone", TombstoneError, "gone", lambda r: r.create("/gone")),
    c("version a tombstone", TombstoneError, "gone", lambda r: r.create_version("/gone")),
    c("delete a tombstone", TombstoneError, "gone", lambda r: r.delete("/gone")),
    c("update a tombstone", TombstoneError, "gone",
      lambda r: r.update("/gone", f"INSERT DATA {{ <> {P} 1 }}")),
]

BODIES = [
    c("turtle syntax", RdfParseError, "line",
      lambda r: r.create_or_replace("/c", data=f'<> {P} "x'.encode(), media_type=TTL)),
    c("turtle bad escape", RdfParseError, "line",
      lambda r: r.create_or_replace("/c", data=f'<> {P} "\\q" .'.encode(), media_type=TTL)),
    c("turtle bad language tag", RdfParseError, "line",
      lambda r: r.create_or_replace("/c", data=f'<> {P} "a"@1x .'.encode(), media_type=TTL)),
    c("turtle invalid utf-8", RdfParseError, "utf-8",
      lambda r: r.create_or_replace("/c", data=b'<> <http://ex.org/p> "\xff" .',
                                    media_type=TTL)),
    c("n-triples relative", RdfParseError, "line",
      lambda r: r.create_or_replace("/c", data=b"<a> <b> <c> .", media_type=NT)),
    c("json-ld truncated", RdfParseError, "",
      lambda r: r.create_or_replace("/c", data=b'{"@id": ', media_type=JSONLD)),
    c("rdf/xml unclosed", RdfParseError, "",
      lambda r: r.create_or_replace("/c", data=b"<rdf:RDF", media_type=RDFXML)),
    c("stream of bad turtle", RdfParseError, "line",
      lambda r: r.create("/c", stream=io.BytesIO(b"<> <"), media_type=TTL)),
    c("data and stream", InvalidResourceError, "one of",
      lambda r: r.create("/c", data=b"x", stream=io.BytesIO(b"y"), media_type="text/plain")),
    c("graph and triples", InvalidResourceError, "one of",
      lambda r: r.create_or_replace("/c", graph=rdflib.Graph(), triples=[])),
    c("rdf model with a binary type", UnsupportedMediaTypeError, "image/png",
      lambda r: r.create("/c", data=b"x", media_type="image/png",
                         interaction_model=f"<{LDP}BasicContainer>")),
    c("graph not a graph", InvalidResourceError, "graph",
      lambda r: r.create_or_replace("/c", graph="<> <http://ex.org/p> 1 .")),
    c("unknown handling", InvalidResourceError, "handling",
      lambda r: r.create_or_replace("/c", handling="sloppy")),
]

TRIPLES = [
    c("literal subject in a graph", InvalidTripleError, "subject",
      lambda r: r.create_or_replace("/c", graph=graph((L("s"), U("http://ex.org/p"), L("o"))))),
    c("blank predicate in a graph", InvalidTripleError, "predicate",
      lambda r: r.create_or_replace("/c", graph=graph(
          (U(f"{BASE}/c"), rdflib.BNode(), L("o"))))),
    c("foreign subject in a graph", SingleSubjectError, "subject",
      lambda r: r.create_or_replace("/c", graph=graph(
          (U("http://elsewhere.example/x"), U("http://ex.org/p"), L("o"))))),
    c("ldp:contains in a graph", ServerManagedTermError, "contains",
      lambda r: r.create_or_replace("/c", graph=graph(
          (U(f"{BASE}/c"), U(f"{LDP}contains"), U(f"{BASE}/dc"))))),
    c("model type in strict handling", ServerManagedTermError, "type",
      lambda r: r.create_or_replace("/c", data=f"<> a <{LDP}DirectContainer> .".encode(),
                                    media_type=TTL)),
    c("fcrepo predicate", ServerManagedTermError, "madeUp",
      lambda r: r.create_or_replace("/c", data=f'<> <{FCREPO}madeUp> "x" .'.encode(),
                                    media_type=TTL)),
    c("link to a missing resource", RefIntViolationError, "missing",
      lambda r: r.create_or_replace("/c", data=f"<> {P} <{BASE}/missing> .".encode(),
                                    media_type=TTL)),
    c("triples not canonical", TermError, "",
      lambda r: r.create_or_replace("/c", triples=[(f"<{BASE}/c>", P, '"open')])),
    c("triples a string", InvalidResourceError, "string",
      lambda r: r.create_or_replace("/c", triples=f"<{BASE}/c> {P} 1 .")),
    c("triples with a relative IRI", TermError, "",
      lambda r: r.create_or_replace("/c", triples=[(f"<{BASE}/c>", P, "<relative>")])),
    c("triples of the wrong arity", InvalidTripleError, "three",
      lambda r: r.create_or_replace("/c", triples=[(f"<{BASE}/c>", P)])),
    c("triples with None", InvalidTripleError, "None",
      lambda r: r.create_or_replace("/c", triples=[(f"<{BASE}/c>", P, None)])),
    c("delta add bad term", TermError, "",
      lambda r: r.update_delta("/c", None, [(f"<{BASE}/c>", P, '"a"@1x')])),
    c("delta add a number", TermError, "5",
      lambda r: r.update_delta("/c", None, [(f"<{BASE}/c>", P, 5)])),
    c("delta add server-managed", ServerManagedTermError, "contains",
      lambda r: r.update_delta("/c", None, [(f"<{BASE}/c>", f"<{LDP}contains>",
                                             f"<{BASE}/dc>")])),
    c("delta add about another resource", SingleSubjectError, "subject",
      lambda r: r.update_delta("/c", None, [(f"<{BASE}/c/k>", P, '"x"')])),
    c("delta remove pattern a string", InvalidTripleError, "",
      lambda r: r.update_delta("/c", "everything", None)),
]

MODELS = [
    c("unknown interaction model", IncompatibleLdpTypeError, "Unknown",
      lambda r: r.create_or_replace("/new", interaction_model="ldp:Nothing")),
    c("interaction model not a string", IncompatibleLdpTypeError, "",
      lambda r: r.create_or_replace("/new", interaction_model=5)),
    c("change a container's model", IncompatibleLdpTypeError, "",
      lambda r: r.create_or_replace("/c", interaction_model=f"<{LDP}DirectContainer>")),
    c("rdf over a binary", IncompatibleLdpTypeError, "binary",
      lambda r: r.create_or_replace("/c/bin", data=f'<> {P} "x" .'.encode(), media_type=TTL)),
    c("child of a binary", IncompatibleLdpTypeError, "bin",
      lambda r: r.create("/c/bin")),
    c("put under a binary", IncompatibleLdpTypeError, "bin",
      lambda r: r.create_or_replace("/c/bin/x")),
    c("delete the root", InvalidResourceError, "root", lambda r: r.delete("/")),
    c("membership resource a literal", InvalidTripleError, "IRI",
      lambda r: r.create_or_replace("/newdc", interaction_model=f"<{LDP}DirectContainer>",
                                    data=f'<> <{LDP}membershipResource> "c" .'.encode(),
                                    media_type=TTL)),
    c("ldp:contains as the member relation", InvalidTripleError, "membership predicate",
      lambda r: r.create_or_replace("/newdc", interaction_model=f"<{LDP}DirectContainer>",
                                    data=f"<> <{LDP}membershipResource> <c> ; "
                                         f"<{LDP}hasMemberRelation> <{LDP}contains> ."
                                    .encode(), media_type=TTL)),
    c("two membership resources", InvalidTripleError, "at most one",
      lambda r: r.create_or_replace("/newdc", interaction_model=f"<{LDP}DirectContainer>",
                                    data=f"<> <{LDP}membershipResource> <c>, <c/k> ."
                                    .encode(), media_type=TTL)),
]

BINARIES = [
    c("digest mismatch", ChecksumValidationError, "mismatch",
      lambda r: r.create("/c", data=b"abc", media_type="text/plain",
                         digests={"sha256": "0" * 64})),
    c("digest of the wrong length", InvalidDigestError, "md5",
      lambda r: r.create("/c", data=b"abc", media_type="text/plain", digests={"md5": "00"})),
    c("digest algorithm unknown", UnsupportedDigestError, "crc32",
      lambda r: r.create("/c", data=b"abc", media_type="text/plain",
                         digests={"crc32": "00000000"})),
    c("digests not a mapping", InvalidResourceError, "digests",
      lambda r: r.create("/c", data=b"abc", media_type="text/plain", digests="md5=00")),
]

#: Binary content where no binary can be made: refused before the content is stored.
CONTENT = [
    c("binary over a container", IncompatibleLdpTypeError, "binary",
      lambda r: r.create_or_replace("/c", data=b"new content", media_type="text/plain")),
    c("binary posted to a binary", IncompatibleLdpTypeError, "cannot contain",
      lambda r: r.create("/c/bin", data=b"new content", media_type="text/plain")),
    c("binary put below a binary", IncompatibleLdpTypeError, "cannot contain",
      lambda r: r.create_or_replace("/c/bin/x", data=b"new content")),
    c("binary posted to a tombstone", TombstoneError, "gone",
      lambda r: r.create("/gone", stream=io.BytesIO(b"new content"))),
    c("binary put below a tombstone", TombstoneError, "gone",
      lambda r: r.create_or_replace("/gone/x", data=b"new content",
                                    interaction_model=f"<{LDP}NonRDFSource>")),
    c("binary posted to a missing container", ResourceNotExistsError, "missing",
      lambda r: r.create("/missing", data=b"new content", media_type="image/png")),
]

QUERIES = [
    c("sparql syntax", SparqlError, "syntax",
      lambda r: r.sparql_query("SELECT * WHERE { ?s ")),
    c("sparql empty", SparqlError, "empty", lambda r: r.sparql_query("")),
    c("sparql not a string", SparqlError, "string", lambda r: r.sparql_query(b"ASK {}")),
    c("sparql update", SparqlError, "update",
      lambda r: r.sparql_query("INSERT DATA { <http://a> <http://b> 1 }")),
    c("sparql service", SparqlError, "SERVICE",
      lambda r: r.sparql_query("SELECT * { SERVICE <http://example.org/s> { ?s ?p ?o } }")),
    c("sparql bad format", SparqlError, "format",
      lambda r: r.sparql_query("ASK {}", fmt="image/png")),
    c("sparql graph format for a select", SparqlError, "SELECT",
      lambda r: r.sparql_query("SELECT * {}", fmt="text/turtle")),
    c("sparql bad graph uri", SparqlError, "IRI",
      lambda r: r.sparql_query("SELECT * {}", default_graph_uris=["not an iri"])),
    c("sparql evaluation error", SparqlError, "cannot be evaluated",
      lambda r: r.sparql_query("SELECT * WHERE { ?s ?p ?o } ORDER BY (1/0)")),
    c("sparql invalid regex", SparqlError, "cannot be evaluated",
      lambda r: r.sparql_query("ASK { ?s ?p ?o FILTER(REGEX(STR(?o), '(')) }")),
    c("update syntax", SparqlError, "syntax",
      lambda r: r.update("/c", "INSERT DATA { <> ")),
    c("update not a string", SparqlError, "string", lambda r: r.update("/c", 5)),
    c("update invalid utf-8", SparqlError, "utf-8", lambda r: r.update("/c", b"\xff")),
    c("update drop", SparqlError, "DROP", lambda r: r.update("/c", "DROP ALL")),
    c("update graph", SparqlError, "GRAPH",
      lambda r: r.update("/c", f"INSERT DATA {{ GRAPH <http://g> {{ <> {P} 1 }} }}")),
    c("update blank node in delete data", SparqlError, "blank node",
      lambda r: r.update("/c", f"DELETE DATA {{ _:b {P} 1 }}")),
    c("update containment", ServerManagedTermError, "contains",
      lambda r: r.update("/c", f"DELETE DATA {{ <> <{LDP}contains> <{BASE}/c/k> }}")),
    c("update foreign subject", SingleSubjectError, "subject",
      lambda r: r.update("/c", f'INSERT DATA {{ <http://elsewhere.example/x> {P} "x" }}')),
    c("triple_match bad term", TermError, "",
      lambda r: r.triple_match(s='"unterminated')),
    c("triple_match a number", TermError, "int", lambda r: r.triple_match(p=5)),
    c("term_search unknown operator", SparqlError, "operator",
      lambda r: r.term_search([("dcterms:title", "~", "x")])),
    c("term_search not triples", SparqlError, "",
      lambda r: r.term_search(["dcterms:title"])),
    c("term_search injection", SparqlError, "",
      lambda r: r.term_search([("<http://a> } ; DROP ALL ; #", "=", "x")])),
]

#: Arguments of the wrong type or value: a library error that says which, not a raw
#: AttributeError / TypeError / ValueError from deep inside.
ARGUMENTS = [
    c("base uri not absolute", InvalidResourceError, "absolute",
      lambda r: r.create("/c", base_uri="rest")),
    c("base uri not a string", InvalidResourceError, "base",
      lambda r: r.create_or_replace("/c", base_uri=5)),
    c("base uri of a query not absolute", InvalidResourceError, "absolute",
      lambda r: r.triple_match(base_uri="/rest")),
    c("data a string with a lone surrogate", InvalidResourceError, "utf-8",
      lambda r: r.create("/c", data="\ud800", media_type=TTL)),
    c("data of a number", InvalidResourceError, "data",
      lambda r: r.create("/c", data=5, media_type="text/plain")),
    c("stream without read", InvalidResourceError, "stream",
      lambda r: r.create("/c", stream=["a"], media_type="text/plain")),
    c("media type not a string", UnsupportedMediaTypeError, "media type",
      lambda r: r.create("/c", data=b"x", media_type=5)),
    c("delta add not iterable", InvalidTripleError, "triples",
      lambda r: r.update_delta("/c", None, 5)),
    c("delta add item not a triple", InvalidTripleError, "triple",
      lambda r: r.update_delta("/c", None, [None])),
    c("delta remove item not a triple", InvalidTripleError, "triple",
      lambda r: r.update_delta("/c", [5], None)),
    c("sparql format not a string", SparqlError, "format",
      lambda r: r.sparql_query("ASK {}", fmt=5)),
    c("sparql timeout not a number", SparqlError, "timeout",
      lambda r: r.sparql_query("ASK {}", timeout="soon")),
    c("triples not iterable", InvalidResourceError, "triples",
      lambda r: r.create("/c", triples=5)),
    c("term_search terms not a list", SparqlError, "terms",
      lambda r: r.term_search(5)),
    c("term_search terms one string", SparqlError, "terms",
      lambda r: r.term_search("dcterms:title = c")),
    c("sparql graph uris one string", SparqlError, "default_graph_uris",
      lambda r: r.sparql_query("ASK {}", default_graph_uris="http://test.example/rest/c")),
    c("sparql graph uris not a list", SparqlError, "named_graph_uris",
      lambda r: r.sparql_query("ASK {}", named_graph_uris=5)),
    c("term_search timeout not a number", SparqlError, "timeout",
      lambda r: r.term_search([("dcterms:title", "=", "c")], timeout="soon")),
]

CASES = (UIDS + MISSING + BODIES + TRIPLES + MODELS + BINARIES + CONTENT + QUERIES
         + ARGUMENTS)


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_bad_call(api_repo, case):
    check_call(api_repo, case)
