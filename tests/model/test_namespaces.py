"""The one vocabulary: canonical terms, bare namespaces, and the bare-IRI helper."""
from __future__ import annotations

import pytest

from lakesuperior.model import namespaces
from lakesuperior.model.namespaces import LDP, LDP_CONTAINS, LDP_NS, XSD_DATETIME, bare_iri


def test_namespace_terms():
    assert LDP.contains == "<http://www.w3.org/ns/ldp#contains>"
    assert LDP.term("a-b") == "<http://www.w3.org/ns/ldp#a-b>"
    assert LDP.prefix == "<http://www.w3.org/ns/ldp#"
    assert str(LDP) == LDP_NS


def test_bare_iri_of_a_term():
    assert bare_iri(LDP_CONTAINS) == LDP_NS + "contains"
    assert bare_iri(XSD_DATETIME) == "http://www.w3.org/2001/XMLSchema#dateTime"
    with pytest.raises(ValueError):
        bare_iri(LDP_NS + "contains")
    with pytest.raises(ValueError):
        bare_iri('"literal"')


def test_every_constant_has_one_form():
    """Upper-case names are canonical IRI terms, except the bare ``*_NS`` namespaces
    and the prefix table."""
    names = [n for n in vars(namespaces) if n.isupper() or (n[0].isupper() and "_" in n)]
    assert "LDP_NON_RDF_SOURCE" in names and "XSD_LONG" in names
    for name in names:
        value = getattr(namespaces, name)
        if name.endswith("_NS"):
            assert isinstance(value, str) and value[-1] in "#/" and "<" not in value, name
        elif name == "DEFAULT_NAMESPACES":
            assert all(v == getattr(namespaces, k.upper() + "_NS") for k, v in value.items())
        elif isinstance(value, namespaces.Namespace):
            assert value.iri == getattr(namespaces, name + "_NS"), name
        else:
            assert value[0] == "<" and value[-1] == ">" and bare_iri(value), name
