"""The Python API's side of the write-path MUSTs: binary descriptions that set
the media type and file name (Fedora API 3.2, 3.7), a ``create`` whose slug is
taken (LDP 5.2.3), and what lenient referential integrity reports."""
from __future__ import annotations

import pytest
import rdflib

from lakesuperior import rdfio
from lakesuperior.exceptions import (
    InvalidDescriptionError,
    InvalidResourceError,
    RefIntViolationError,
)

from ..conftest import BASE

EBUCORE = "http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#"
MIME = f"<{EBUCORE}hasMimeType>"
FILENAME = f"<{EBUCORE}filename>"
TITLE = "<http://purl.org/dc/terms/title>"
SEE_ALSO = "<http://www.w3.org/2000/01/rdf-schema#seeAlso>"
BIN = f"<{BASE}/bin>"


@pytest.fixture
def binary(repo):
    repo.create_or_replace("/bin", data=b"hello", media_type="text/plain", filename="a.txt")
    return repo


# --- descriptions ----------------------------------------------------------------------------

def test_fedora_3_7_update_delta_sets_mimetype_and_filename(binary):
    res = binary.update_delta("/bin", [(None, None, None)],
                              [(BIN, MIME, '"image/png"'), (BIN, FILENAME, '"b.png"'),
                               (BIN, TITLE, '"t"')])
    assert (res.mimetype, res.filename) == ("image/png", "b.png")
    got = binary.get("/bin")
    assert (got.mimetype, got.filename) == ("image/png", "b.png")
    with got.content as f:
        assert f.read() == b"hello"
    assert (BIN, TITLE, '"t"') in got.triples
    assert [t for t in got.triples if t[1] == FILENAME] == [(BIN, FILENAME, '"b.png"')]


def test_fedora_3_7_replacing_without_them_keeps_them(binary):
    binary.update_delta("/bin", [(None, None, None)], [("<>", TITLE, '"t"')])
    got = binary.get("/bin")
    assert (got.mimetype, got.filename) == ("text/plain", "a.txt")
    assert (BIN, TITLE, '"t"') in got.triples


def test_fedora_3_7_sparql_update_of_a_description(binary):
    res = binary.update("/bin", f'DELETE {{ <> {MIME} ?m }} INSERT {{ <> {MIME} "text/csv" }} '
                                f'WHERE {{ <> {MIME} ?m }}')
    assert (res.mimetype, res.filename) == ("text/csv", "a.txt")
    binary.update("/bin", f'INSERT DATA {{ <> {FILENAME} "c.csv" }}')
    assert (binary.get("/bin").mimetype, binary.get("/bin").filename) == ("text/csv", "c.csv")
    binary.update("/bin", f"DELETE WHERE {{ <> {MIME} ?m . <> {FILENAME} ?f }}")
    assert (binary.get("/bin").mimetype, binary.get("/bin").filename) == ("text/csv", "c.csv")


@pytest.mark.parametrize("added,why", [
    ([(BIN, MIME, '"no media type"')], "Invalid ebucore:hasMimeType"),
    ([(BIN, MIME, '"text/plain\\nX: y"')], "Invalid ebucore:hasMimeType"),
    ([(BIN, MIME, '"text/html"'), (BIN, MIME, '"text/csv"')], "one ebucore:hasMimeType"),
    ([(BIN, MIME, "<http://example.org/t>")], "plain string literal"),
    ([(BIN, FILENAME, '"x"^^<http://www.w3.org/2001/XMLSchema#int>')], "plain string literal"),
    ([(BIN, FILENAME, '"a"'), (BIN, FILENAME, '"b"')], "one ebucore:filename"),
])
def test_fedora_3_7_bad_description_values(binary, state, added, why):
    before = state(binary)
    with pytest.raises(InvalidDescriptionError, match=why):
        binary.update_delta("/bin", [(None, None, None)], added)
    assert state(binary) == before


def test_description_values_of_an_rdf_source_are_ordinary(repo):
    """Only a binary has a media type: on an RDF source ``ebucore:filename`` is data."""
    repo.create_or_replace("/r")
    res = repo.update_delta("/r", None, [("<>", FILENAME, '"x"'), ("<>", FILENAME, '"y"')])
    assert {t for t in res.triples if t[1] == FILENAME} == {
        (f"<{BASE}/r>", FILENAME, '"x"'), (f"<{BASE}/r>", FILENAME, '"y"')}


# --- a taken slug ------------------------------------------------------------------------------

def _body(repo) -> bytes:
    return (f'<> {TITLE} "second" ; {SEE_ALSO} <{BASE}/a>, <{BASE}/a#f>, <{BASE}/a/c> . '
            f'<#me> {TITLE} "hash" .').encode()


def _check_links(res, repo) -> None:
    new = f"<{res.uri}>"
    assert res.uid != "/a"
    got = repo.get(res.uid).triples
    for target in (f"<{BASE}/a>", f"<{BASE}/a#f>", f"<{BASE}/a/c>"):
        assert (new, SEE_ALSO, target) in got
    assert (new, SEE_ALSO, new) not in got
    assert (new, TITLE, '"second"') in got
    assert (f"<{res.uri}#me>", TITLE, '"hash"') in got
    assert (f"<{BASE}/a>", TITLE, '"first"') in repo.get("/a").triples


def test_ldp_5_2_3_taken_slug_keeps_links_data(repo):
    repo.create("/", slug="a", data=f'<> {TITLE} "first" .'.encode(), media_type="text/turtle")
    _check_links(repo.create("/", slug="a", data=_body(repo), media_type="text/turtle"), repo)


def test_ldp_5_2_3_taken_slug_keeps_links_graph(repo):
    repo.create("/", slug="a", data=f'<> {TITLE} "first" .'.encode(), media_type="text/turtle")
    me, see_also = rdflib.URIRef(""), rdflib.URIRef(SEE_ALSO[1:-1])
    g = rdflib.Graph()
    g.add((me, rdflib.URIRef(TITLE[1:-1]), rdflib.Literal("second")))
    g.add((rdflib.URIRef("#me"), rdflib.URIRef(TITLE[1:-1]), rdflib.Literal("hash")))
    for target in (f"{BASE}/a", f"{BASE}/a#f", f"{BASE}/a/c"):
        g.add((me, see_also, rdflib.URIRef(target)))
    _check_links(repo.create("/", slug="a", graph=g), repo)


def test_ldp_5_2_3_taken_slug_keeps_links_parsed_triples(repo):
    repo.create("/", slug="a", data=f'<> {TITLE} "first" .'.encode(), media_type="text/turtle")
    fresh = f"{BASE}/fresh-for-parsing"
    triples = rdfio.parse(_body(repo), "text/turtle", fresh)
    _check_links(repo.create("/", slug="a", triples=triples, resolved_against=fresh), repo)


def test_resolved_against_must_be_a_string(repo, state):
    before = state(repo)
    with pytest.raises(InvalidResourceError, match="resolved_against"):
        repo.create("/", slug="x", triples=[], resolved_against=b"http://x")
    assert state(repo) == before


def test_ldp_5_2_3_free_slug(repo):
    res = repo.create("/", slug="s", data=f"<> {SEE_ALSO} <{BASE}/s>, <#x> .".encode(),
                      media_type="text/turtle")
    assert res.uid == "/s"
    assert {(f"<{BASE}/s>", SEE_ALSO, f"<{BASE}/s>"),
            (f"<{BASE}/s>", SEE_ALSO, f"<{BASE}/s#x>")} <= set(repo.get("/s").triples)


# --- referential integrity --------------------------------------------------------------------

def test_referential_integrity_off_by_default(repo):
    res = repo.create_or_replace("/r", triples=[(f"<{BASE}/r>", SEE_ALSO, f"<{BASE}/gone>")])[1]
    assert list(res.dropped) == []
    assert (f"<{BASE}/r>", SEE_ALSO, f"<{BASE}/gone>") in repo.get("/r").triples


def test_referential_integrity_lenient_reports_dropped(repo_factory):
    repo = repo_factory(referential_integrity="lenient")
    repo.create_or_replace("/here")
    r = f"<{BASE}/r>"
    _, res = repo.create_or_replace("/r", triples=[
        (r, SEE_ALSO, f"<{BASE}/gone>"), (r, SEE_ALSO, f"<{BASE}/here>"), (r, TITLE, '"t"')])
    assert res.dropped == [(r, SEE_ALSO, f"<{BASE}/gone>")]
    assert (r, SEE_ALSO, f"<{BASE}/gone>") not in repo.get("/r").triples
    assert (r, SEE_ALSO, f"<{BASE}/here>") in repo.get("/r").triples
    res = repo.update_delta("/r", None, [("<>", SEE_ALSO, f"<{BASE}/gone2>")])
    assert res.dropped == [(r, SEE_ALSO, f"<{BASE}/gone2>")]
    res = repo.update("/r", f"INSERT DATA {{ <> {SEE_ALSO} <{BASE}/gone3> }}")
    assert res.dropped == [(r, SEE_ALSO, f"<{BASE}/gone3>")]
    child = repo.create("/", data=f"<> {SEE_ALSO} <{BASE}/gone4> .".encode(),
                        media_type="text/turtle")
    assert child.dropped == [(f"<{child.uri}>", SEE_ALSO, f"<{BASE}/gone4>")]
    assert repo.update_delta("/r", None, [("<>", TITLE, '"u"')]).dropped == []


def test_referential_integrity_strict_names_every_target(repo_factory, state):
    repo = repo_factory(referential_integrity="strict")
    repo.create_or_replace("/r")
    before = state(repo)
    targets = [f"{BASE}/gone{i}" for i in range(8)]
    with pytest.raises(RefIntViolationError) as e:
        repo.create_or_replace("/r", triples=[(f"<{BASE}/r>", SEE_ALSO, f"<{t}>")
                                              for t in targets])
    assert all(t in str(e.value) for t in targets)
    assert state(repo) == before
