"""A Direct/Indirect container's membership configuration: checks and defaults."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import InvalidTripleError
from lakesuperior.model import interaction, membership
from lakesuperior.model.namespaces import LDP, Namespace

EX = Namespace("http://ex.org/")


def test_complete_config_defaults():
    res = "<info:fcres/c>"
    out = membership.complete_config("/c", interaction.DIRECT_CONTAINER, [])
    assert (res, LDP.membershipResource, res) in out
    assert (res, LDP.hasMemberRelation, LDP.member) in out
    out = membership.complete_config("/c", interaction.INDIRECT_CONTAINER,
                                     [(res, LDP.isMemberOfRelation, EX.partOf)])
    assert (res, LDP.insertedContentRelation, LDP.MemberSubject) in out
    assert not any(t[1] == LDP.hasMemberRelation for t in out)
    assert membership.complete_config("/c", interaction.BASIC_CONTAINER, []) == []


@pytest.mark.parametrize("triples", [
    [("<info:fcres/c>", LDP.membershipResource, "<info:fcres/a>"),
     ("<info:fcres/c>", LDP.membershipResource, "<info:fcres/b>")],
    [("<info:fcres/c>", LDP.hasMemberRelation, EX.a),
     ("<info:fcres/c>", LDP.isMemberOfRelation, EX.b)],
    [("<info:fcres/c>", LDP.membershipResource, '"literal"')],
    [("<info:fcres/c>", LDP.insertedContentRelation, EX.p)],   # direct: only MemberSubject
])
def test_complete_config_refuses(triples):
    with pytest.raises(InvalidTripleError):
        membership.complete_config("/c", interaction.DIRECT_CONTAINER, triples)
