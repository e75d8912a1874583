"""Which triples are server-managed, and the ones the server writes."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lakesuperior.model import interaction
from lakesuperior.model.context import Context, Settings
from lakesuperior.model.namespaces import FCREPO, LDP, RDF_TYPE, Namespace
from lakesuperior.model.server_managed import (
    MAYBE_MANAGED,
    SERVER_MANAGED_PREDICATES,
    TIMESTAMPS,
    binary_values,
    first_value,
    is_server_managed,
    renewed_server_triples,
    server_triples,
)

EX = Namespace("http://ex.org/")


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
    assert is_server_managed(p, o) is expected
    if expected:
        assert p.startswith(MAYBE_MANAGED)


def test_a_predicate_outside_maybe_managed_is_never_server_managed():
    """The input check's first test (``MAYBE_MANAGED``) lets every server-managed
    predicate through, and stops the client's."""
    for p in (*SERVER_MANAGED_PREDICATES, *TIMESTAMPS, FCREPO.hasParent, RDF_TYPE):
        assert p.startswith(MAYBE_MANAGED), p
    for p in (EX.title, LDP.membershipResource, "<http://purl.org/dc/terms/title>",
              "<http://fedora.info/definitions/v4/repositoryX>"):
        assert not p.startswith(MAYBE_MANAGED) and not is_server_managed(p, LDP.Container)


def test_server_triples_and_renewal():
    ctx = Context(None, Settings(agent="me"), now=datetime(2021, 1, 1, tzinfo=UTC))
    res = "<info:fcres/a/b>"
    out = server_triples(ctx, "/a/b", interaction.BASIC_CONTAINER)
    assert (res, RDF_TYPE, LDP.BasicContainer) in out
    assert (res, FCREPO.hasParent, "<info:fcres/a>") in out
    assert (res, FCREPO.createdBy, '"me"') in out
    assert all(is_server_managed(p, o) for _s, p, o in out)
    old = [(res, FCREPO.created, '"then"'), (res, FCREPO.createdBy, '"them"')]
    renewed = renewed_server_triples(ctx, "/a/b", interaction.BASIC_CONTAINER, old)
    assert first_value(renewed, res, FCREPO.created) == '"then"'
    assert first_value(renewed, res, FCREPO.createdBy) == '"them"'
    assert first_value(renewed, res, FCREPO.lastModified) == ctx.now_term
    assert first_value(renewed, res, EX.nothing) is None


def test_binary_values():
    res = "<info:fcres/f>"
    triples = [(res, "<http://www.loc.gov/premis/rdf/v1#hasSize>", '"3"'),
               (res, EX.title, '"t"'),
               ("<info:fcres/g>", "<http://www.loc.gov/premis/rdf/v1#hasSize>", '"4"')]
    assert binary_values(triples, "/f") == triples[:1]
