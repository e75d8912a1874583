"""``create`` / ``create_or_replace`` with ``triples=``: RDF parsed by the caller
(before a ``transaction()``) is taken as if the repository had parsed it."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.exceptions import IncompatibleLdpTypeError, InvalidResourceError, TermError

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
