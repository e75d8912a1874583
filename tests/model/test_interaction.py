"""The interaction-model rules: what a request asks for, and what a replacement may change."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import IncompatibleLdpTypeError
from lakesuperior.model import interaction as im
from lakesuperior.model.namespaces import LDP, LDP_NS, Namespace

L = LDP_NS
EX = Namespace("http://ex.org/")


@pytest.mark.parametrize("iris, expected", [
    ((), None),
    (("http://example.org/Other",), None),
    ((L + "Resource",), None),
    ((L + "RDFSource",), im.RDF_SOURCE),
    ((L + "NonRDFSource",), im.NON_RDF_SOURCE),
    ((L + "Container",), im.BASIC_CONTAINER),
    ((L + "Container", L + "DirectContainer"), im.DIRECT_CONTAINER),
    ((L + "BasicContainer", L + "Container"), im.BASIC_CONTAINER),
    ((L + "RDFSource", L + "IndirectContainer"), im.INDIRECT_CONTAINER),
    ((L + "Resource", L + "NonRDFSource", "http://example.org/T"), im.NON_RDF_SOURCE),
])
def test_requested_model(iris, expected):
    assert im.requested_model(iris) == expected


@pytest.mark.parametrize("iris, message", [
    ((L + "Bogus",), "Unsupported"),
    ((L + "BasicContainer", L + "DirectContainer"), "Conflicting"),
    ((L + "NonRDFSource", L + "RDFSource"), "Conflicting"),
    ((L + "NonRDFSource", L + "Container"), "Conflicting"),
])
def test_requested_model_refuses_unknown_and_conflicting(iris, message):
    with pytest.raises(IncompatibleLdpTypeError, match=message):
        im.requested_model(iris)


@pytest.mark.parametrize("current, requested", [
    (im.BASIC_CONTAINER, None),
    (im.BASIC_CONTAINER, im.BASIC_CONTAINER),
    (im.BASIC_CONTAINER, im.RDF_SOURCE),          # one of its own types
    (im.NON_RDF_SOURCE, im.NON_RDF_SOURCE),
    (im.RDF_SOURCE, im.RDF_SOURCE),
])
def test_check_change_allows_the_current_model_and_its_types(current, requested):
    im.check_change("/r", current, requested)


@pytest.mark.parametrize("current, requested", [
    (im.BASIC_CONTAINER, im.DIRECT_CONTAINER),
    (im.RDF_SOURCE, im.BASIC_CONTAINER),
    (im.NON_RDF_SOURCE, im.RDF_SOURCE),
    (im.DIRECT_CONTAINER, im.NON_RDF_SOURCE),
])
def test_check_change_refuses_another_model(current, requested):
    with pytest.raises(IncompatibleLdpTypeError, match="cannot change to") as info:
        im.check_change("/r", current, requested, name="http://x/r")
    assert str(info.value).startswith("http://x/r is a ")


def test_model_of_and_names():
    assert im.model_of([im.RDF_SOURCE, im.BASIC_CONTAINER]) == im.BASIC_CONTAINER
    assert im.model_of(["<http://example.org/T>"]) is None
    assert im.model_name(im.DIRECT_CONTAINER) == "ldp:DirectContainer"
    assert im.model_name(None) == "none"
    assert im.normalize_interaction_model("ldp:IndirectContainer") == im.INDIRECT_CONTAINER
    assert im.normalize_interaction_model(L + "RDFSource") == im.RDF_SOURCE
    assert im.normalize_interaction_model(None) is None
    with pytest.raises(IncompatibleLdpTypeError):
        im.normalize_interaction_model("ldp:Nope")


@pytest.mark.parametrize("given", [
    "http://www.w3.org/ns/ldp#DirectContainer",
    "<http://www.w3.org/ns/ldp#DirectContainer>",
    "ldp:DirectContainer",
    "DirectContainer",
])
def test_normalize_interaction_model(given):
    assert im.normalize_interaction_model(given) == LDP.DirectContainer


def test_normalize_interaction_model_refuses_unknown():
    assert im.normalize_interaction_model(None) is None
    with pytest.raises(IncompatibleLdpTypeError):
        im.normalize_interaction_model("ldp:Bucket")
    with pytest.raises(IncompatibleLdpTypeError):
        im.normalize_interaction_model("http://example.org/Container")


def test_model_of_picks_most_specific():
    assert im.model_of(im.MODEL_TYPES[im.INDIRECT_CONTAINER]) == im.INDIRECT_CONTAINER
    assert im.model_of(im.MODEL_TYPES[im.BASIC_CONTAINER]) == im.BASIC_CONTAINER
    assert im.model_of(im.MODEL_TYPES[im.NON_RDF_SOURCE]) == im.NON_RDF_SOURCE
    assert im.model_of(im.MODEL_TYPES[im.RDF_SOURCE]) == im.RDF_SOURCE
    assert im.model_of([EX.Thing]) is None
