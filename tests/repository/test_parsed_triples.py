"""``create`` / ``create_or_replace`` with ``triples=``: RDF parsed by the caller
(before a ``transaction()``) is taken as if the repository had parsed it."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.exceptions import IncompatibleLdpTypeError, InvalidResourceError, TermError
from lakesuperior.model.inputs import read_input

from ..conftest import BASE

TITLE = "<http://purl.org/dc/terms/title>"
BODY = f'<> {TITLE} "t" ; <http://purl.org/dc/terms/relation> <#part> .'.encode()


def _own(res, uid):
    uri = f"<{BASE}{uid}>"
    return {(s, p, o) for s, p, o in res.triples if s == uri and p in (
        TITLE, "<http://purl.org/dc/terms/relation>")}


def test_replace_with_triples_equals_data(repo):
    _, from_data = repo.create_or_replace("/a", data=BODY, media_type="text/turtle")
    triples = rdfio.parse(BODY, "text/turtle", BASE + "/b")
    with repo.transaction():
        action, from_triples = repo.create_or_replace("/b", triples=triples)
    assert action == "create"
    assert _own(from_triples, "/b") == {
        (s.replace("/a", "/b"), p, o.replace("/a#", "/b#")) for s, p, o in _own(from_data, "/a")}
    action, res = repo.create_or_replace("/b", triples=iter([]))
    assert action == "replace" and not _own(res, "/b")


def test_create_with_triples_moves_them_if_the_slug_is_taken(repo):
    repo.create("/", slug="s")
    triples = rdfio.parse(BODY, "text/turtle", BASE + "/s")
    res = repo.create("/", slug="s", triples=triples,
                      interaction_model="ldp:RDFSource")
    assert res.uid != "/s"
    assert (f"<{BASE}{res.uid}>", "<http://purl.org/dc/terms/relation>",
            f"<{BASE}{res.uid}#part>") in _own(res, res.uid)
    assert res.interaction_model == "<http://www.w3.org/ns/ldp#RDFSource>"


def test_triples_are_checked_like_any_input(repo):
    with pytest.raises(InvalidResourceError):
        repo.create_or_replace("/c", triples=[], data=b"", media_type="text/turtle")
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/c", triples=[], interaction_model="ldp:NonRDFSource")
    with pytest.raises(TermError):
        repo.create_or_replace("/c", triples=[(f"<{BASE}/c>", "<http://p>", "not a term")])
    assert not repo.exists("/c")


def test_only_rdfio_output_is_vouched_canonical():
    parsed = rdfio.parse(BODY, "text/turtle", BASE + "/a")
    assert isinstance(parsed, rdfio.Parsed)
    assert read_input(BASE + "/a", triples=parsed).canonical
    assert not read_input(BASE + "/a", triples=list(parsed)).canonical
    assert read_input(BASE + "/a", data=BODY, media_type="text/turtle").canonical
    assert read_input(BASE + "/a").canonical
    assert isinstance(rdfio.graph_to_triples(rdfio.triples_to_graph(parsed)), rdfio.Parsed)


def test_caller_triples_are_still_validated_and_canonicalised(repo, state):
    s = f"<{BASE}/v>"
    xsd_string = '"x"^^<http://www.w3.org/2001/XMLSchema#string>'
    repo.create_or_replace("/v", triples=[(s, TITLE, xsd_string)])
    assert (s, TITLE, '"x"') in repo.get("/v").triples
    before = state(repo)
    with pytest.raises(TermError):
        repo.create_or_replace("/w", triples=[(f"<{BASE}/w>", TITLE, '"unterminated')])
    assert state(repo) == before


@pytest.mark.parametrize("body, expected", [
    (f'<> <http://x/p> <{BASE}/t>, <info:fcres/t> .', {"<info:fcres/t>"}),
    (f'<> <http://x/p> <{BASE}>, <{BASE}/>, "a", "a" .', {"<info:fcres/>", '"a"'}),
    (f'<{BASE}/d> <http://x/p> "a" . <info:fcres/d> <http://x/p> "a" .', {'"a"'}),
])
def test_a_triple_named_twice_is_one_triple(repo, body, expected):
    """Public and internal forms of one IRI are one term: the stored graph and the
    returned view list the triple once."""
    repo.create_or_replace("/t")
    _, res = repo.create_or_replace("/d", data=body.encode(), media_type="text/turtle")
    with repo.store.read() as txn:
        stored = txn.triples("<info:fcres/d>")
    assert sorted(o for _s, p, o in stored if p == "<http://x/p>") == sorted(expected)
    returned = [o for _s, p, o in res.triples if p == "<http://x/p>"]
    assert sorted(returned) == sorted(o.replace("<info:fcres", f"<{BASE}") for o in expected)
