"""What is at a uid: a live resource's model, a tombstone, or nothing."""
from __future__ import annotations

import pytest

from lakesuperior.exceptions import ResourceNotExistsError, TombstoneError
from lakesuperior.model import interaction
from lakesuperior.model.lookup import (
    is_tombstone,
    model_at,
    model_in,
    require_model,
    tombstone_error,
)
from lakesuperior.model.namespaces import LDP, RDF_TYPE


def test_model_in_reads_the_resource_s_own_types():
    res = "<info:fcres/a>"
    triples = [(res, RDF_TYPE, LDP.RDFSource), (res, RDF_TYPE, LDP.DirectContainer),
               ("<info:fcres/a#x>", RDF_TYPE, LDP.IndirectContainer)]
    assert model_in(triples, "/a") == interaction.DIRECT_CONTAINER
    assert model_in(triples[2:], "/a") is None


def test_live_deleted_and_missing(repo):
    repo.create_or_replace("/t/a", interaction_model="ldp:RDFSource")
    repo.delete("/t")
    repo.create_or_replace("/live")
    with repo.store.read() as txn:
        assert model_at(txn, "/live") == interaction.BASIC_CONTAINER
        assert require_model(txn, "/live") == interaction.BASIC_CONTAINER
        assert model_at(txn, "/t/a") is None and model_at(txn, "/none") is None
        assert is_tombstone(txn, "/t/a") and not is_tombstone(txn, "/none")
        assert tombstone_error(txn, "/t/a").top == "/t"
        with pytest.raises(TombstoneError):
            require_model(txn, "/t/a")
        with pytest.raises(ResourceNotExistsError):
            require_model(txn, "/none")
