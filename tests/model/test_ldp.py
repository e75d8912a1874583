"""LDP model functions: interaction models, server-managed triples, input checks."""
from __future__ import annotations

from datetime import UTC

import pytest

from lakesuperior.exceptions import (
    IncompatibleLdpTypeError,
    InvalidTripleError,
    RefIntViolationError,
    ServerManagedTermError,
    SingleSubjectError,
)
from lakesuperior.model import interaction, ldp
from lakesuperior.model.context import Context, Settings, datetime_literal, literal_term
from lakesuperior.model.namespaces import FCREPO, LDP, LDP_NS, RDF_TYPE, Namespace

BASE = "http://test.example/rest"
EX = Namespace("http://ex.org/")


def test_namespace_terms():
    assert LDP.contains == "<http://www.w3.org/ns/ldp#contains>"
    assert LDP.term("a-b") == "<http://www.w3.org/ns/ldp#a-b>"
    assert LDP.prefix == "<http://www.w3.org/ns/ldp#"
    assert str(LDP) == LDP_NS


@pytest.mark.parametrize("given", [
    "http://www.w3.org/ns/ldp#DirectContainer",
    "<http://www.w3.org/ns/ldp#DirectContainer>",
    "ldp:DirectContainer",
    "DirectContainer",
])
def test_normalize_interaction_model(given):
    assert interaction.normalize_interaction_model(given) == LDP.DirectContainer


def test_normalize_interaction_model_refuses_unknown():
    assert interaction.normalize_interaction_model(None) is None
    with pytest.raises(IncompatibleLdpTypeError):
        interaction.normalize_interaction_model("ldp:Bucket")
    with pytest.raises(IncompatibleLdpTypeError):
        interaction.normalize_interaction_model("http://example.org/Container")


def test_model_of_picks_most_specific():
    assert interaction.model_of(interaction.MODEL_TYPES[interaction.INDIRECT_CONTAINER]) == interaction.INDIRECT_CONTAINER
    assert interaction.model_of(interaction.MODEL_TYPES[interaction.BASIC_CONTAINER]) == interaction.BASIC_CONTAINER
    assert interaction.model_of(interaction.MODEL_TYPES[interaction.NON_RDF_SOURCE]) == interaction.NON_RDF_SOURCE
    assert interaction.model_of(interaction.MODEL_TYPES[interaction.RDF_SOURCE]) == interaction.RDF_SOURCE
    assert interaction.model_of([EX.Thing]) is None


@pytest.mark.parametrize("p, o, expected", [
    (LDP.contains, "<info:fcres/a>", True),
    (FCREPO.created, '"x"', True),
    (FCREPO.anythingElse, '"x"', True),
    (RDF_TYPE, LDP.Container, True),
    (RDF_TYPE, FCREPO.Binary, True),
    (RDF_TYPE, EX.Photo, False),
    ("<http://www.loc.gov/premis/rdf/v1#hasMessageDigest>", "<urn:md5:00>", True),
    (LDP.membershipResource, "<info:fcres/a>", False),
    (EX.title, '"t"', False),
])
def test_is_server_managed(p, o, expected):
    assert ldp.is_server_managed(p, o) is expected


def test_literal_terms():
    assert literal_term('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert literal_term("5", "http://www.w3.org/2001/XMLSchema#long") == \
        '"5"^^<http://www.w3.org/2001/XMLSchema#long>'
    from datetime import datetime
    lit = datetime_literal(datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=UTC))
    assert lit == '"2020-01-02T03:04:05.000006Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'


# --- the input checker ------------------------------------------------------------------

def _check(repo, uid, triples, handling="strict", **settings):
    s = Settings(base_uri=BASE, **settings)
    with repo.store.read() as txn:
        return ldp.InputChecker(Context(txn, s), uid, handling).check(triples)


PUB = f"<{BASE}/a>"


def test_checker_internalizes(repo):
    out = _check(repo, "/a", [
        (PUB, EX.p, '"x"'),
        (f"<{BASE}/a#h>", EX.p, f"<{BASE}/>"),
        ("_:b", EX.p, PUB),
    ])
    assert out == [("<info:fcres/a>", EX.p, '"x"'),
                   ("<info:fcres/a#h>", EX.p, "<info:fcres/>"),
                   ("_:b", EX.p, "<info:fcres/a>")]


def test_checker_server_managed(repo):
    triples = [(PUB, EX.p, '"x"'), (PUB, RDF_TYPE, LDP.DirectContainer),
               (PUB, FCREPO.created, '"2000"')]
    with pytest.raises(ServerManagedTermError) as e:
        _check(repo, "/a", triples)
    assert "DirectContainer" in str(e.value)
    assert _check(repo, "/a", triples, "lenient") == [("<info:fcres/a>", EX.p, '"x"')]


def test_checker_single_subject(repo):
    with pytest.raises(SingleSubjectError) as e:
        _check(repo, "/a", [(f"<{BASE}/b>", EX.p, '"x"')])
    assert f"{BASE}/b" in str(e.value)
    with pytest.raises(SingleSubjectError):
        _check(repo, "/a", [("<http://elsewhere.org/x>", EX.p, '"x"')])
    # a "hash URI" of another resource is not ours either
    with pytest.raises(SingleSubjectError):
        _check(repo, "/a", [(f"<{BASE}/ab#x>", EX.p, '"x"')])
    out = _check(repo, "/a", [("<http://elsewhere.org/x>", EX.p, '"x"')],
                 allow_foreign_subjects=True)
    assert out == [("<http://elsewhere.org/x>", EX.p, '"x"')]


def test_checker_invalid_terms(repo):
    with pytest.raises(InvalidTripleError):
        _check(repo, "/a", [('"lit"', EX.p, '"x"')])
    with pytest.raises(InvalidTripleError):
        _check(repo, "/a", [(PUB, "_:p", '"x"')])


@pytest.mark.parametrize("mode", ["off", "lenient", "strict"])
def test_checker_refint(repo, mode):
    triples = [(PUB, EX.p, f"<{BASE}/>"),          # exists (the root)
               (PUB, EX.p, f"<{BASE}/a#self>"),     # the resource itself
               (PUB, EX.p, f"<{BASE}/missing>"),    # not in the repository
               (PUB, EX.p, "<http://elsewhere.org/x>")]
    if mode == "strict":
        with pytest.raises(RefIntViolationError) as e:
            _check(repo, "/a", triples, referential_integrity=mode)
        assert f"{BASE}/missing" in str(e.value)
        return
    out = _check(repo, "/a", triples, referential_integrity=mode)
    objects = [t[2] for t in out]
    assert "<info:fcres/>" in objects and "<info:fcres/a#self>" in objects
    assert "<http://elsewhere.org/x>" in objects
    assert ("<info:fcres/missing>" in objects) is (mode == "off")


def test_complete_membership_config_defaults():
    res = "<info:fcres/c>"
    out = ldp.complete_membership_config("/c", interaction.DIRECT_CONTAINER, [])
    assert (res, LDP.membershipResource, res) in out
    assert (res, LDP.hasMemberRelation, LDP.member) in out
    out = ldp.complete_membership_config("/c", interaction.INDIRECT_CONTAINER,
                                         [(res, LDP.isMemberOfRelation, EX.partOf)])
    assert (res, LDP.insertedContentRelation, LDP.MemberSubject) in out
    assert not any(t[1] == LDP.hasMemberRelation for t in out)
    assert ldp.complete_membership_config("/c", interaction.BASIC_CONTAINER, []) == []


@pytest.mark.parametrize("triples", [
    [("<info:fcres/c>", LDP.membershipResource, "<info:fcres/a>"),
     ("<info:fcres/c>", LDP.membershipResource, "<info:fcres/b>")],
    [("<info:fcres/c>", LDP.hasMemberRelation, EX.a),
     ("<info:fcres/c>", LDP.isMemberOfRelation, EX.b)],
    [("<info:fcres/c>", LDP.membershipResource, '"literal"')],
    [("<info:fcres/c>", LDP.insertedContentRelation, EX.p)],   # direct: only MemberSubject
])
def test_complete_membership_config_refuses(triples):
    with pytest.raises(InvalidTripleError):
        ldp.complete_membership_config("/c", interaction.DIRECT_CONTAINER, triples)
