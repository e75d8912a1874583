"""``rdfio.serialize(..., lists=[ObjectList(s, p, objects)])``: a long run of
objects (a container's ``ldp:contains``) written without a tuple per object,
read back as the same graph in every format."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.rdfio import ObjectList

BASE = "http://localhost:8000/rest/c"
S = f"<{BASE}>"
CONTAINS = "<http://www.w3.org/ns/ldp#contains>"
OWN = [(S, "<http://purl.org/dc/terms/title>", '"A \\"quoted\\" title"@en'),
       (S, "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
        "<http://www.w3.org/ns/ldp#BasicContainer>")]
KIDS = [f"<{BASE}/k{i}>" for i in range(300)]
LDP = {"ldp": "http://www.w3.org/ns/ldp#", "dcterms": "http://purl.org/dc/terms/"}


@pytest.mark.parametrize("media_type", rdfio.SERIALIZABLE)
@pytest.mark.parametrize("base", [None, BASE])
def test_object_lists_read_back_in_every_format(media_type, base):
    out = rdfio.serialize(OWN, media_type, namespaces=LDP, base=base,
                          lists=[ObjectList(S, CONTAINS, KIDS)])
    expected = set(OWN) | {(S, CONTAINS, k) for k in KIDS}
    assert set(rdfio.parse(out, media_type, BASE)) == expected


def test_turtle_writes_one_statement_with_the_prefix():
    out = rdfio.serialize(OWN, "text/turtle", namespaces=LDP,
                          lists=[ObjectList(S, CONTAINS, KIDS[:3])]).decode()
    assert out.startswith("@prefix ")
    assert f"{S} ldp:contains {KIDS[0]} ,\n\t\t{KIDS[1]} ,\n\t\t{KIDS[2]} .\n" in out
    plain = rdfio.serialize([], "text/turtle",
                            lists=[ObjectList(S, CONTAINS, KIDS[:1])]).decode()
    assert plain == f"{S} {CONTAINS} {KIDS[0]} .\n"


def test_n_triples_lines_and_empty_lists():
    out = rdfio.serialize([], "application/n-triples",
                          lists=[ObjectList(S, CONTAINS, KIDS[:2]), ObjectList(S, CONTAINS, [])])
    assert out.decode() == f"{S} {CONTAINS} {KIDS[0]} .\n{S} {CONTAINS} {KIDS[1]} .\n"
    assert rdfio.serialize([], "text/turtle", lists=[ObjectList(S, CONTAINS, [])]) == b""


def test_a_local_name_that_is_not_plain_is_written_whole():
    pred = "<http://www.w3.org/ns/ldp#has.dot>"
    out = rdfio.serialize([], "text/turtle", namespaces=LDP,
                          lists=[ObjectList(S, pred, KIDS[:2])])
    assert pred.encode() in out
    assert set(rdfio.parse(out, "text/turtle", BASE)) == {(S, pred, k) for k in KIDS[:2]}
