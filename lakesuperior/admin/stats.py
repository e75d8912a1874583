"""Repository figures: resources by interaction model, the live binaries, the
change feed (events retained, and the backlog waiting for the broker), and the
read replicas' lag and last error (``replicas``: by target URL)."""
from __future__ import annotations

from typing import Any

from lakesuperior.messaging.status import feed_figures
from lakesuperior.model import interaction
from lakesuperior.model.namespaces import LDP, LDP_NON_RDF_SOURCE, RDF_TYPE
from lakesuperior.model.uids import graph_kind, uid_of_graph
from lakesuperior.replicas.status import replica_status
from lakesuperior.repository import Repository

__all__ = ["repository_stats", "binary_uids"]


def _resource_types(repo: Repository, type_term: str | None = None) -> dict[str, set[str]]:
    """Resource graph -> its LDP rdf:types (one union-index scan)."""
    out: dict[str, set[str]] = {}
    with repo.snapshot() as ctx:
        for s, _p, o, g in ctx.txn.match(None, RDF_TYPE, type_term, None):
            if s == g and o.startswith(LDP.prefix) and graph_kind(g) == "res":
                out.setdefault(g, set()).add(o)
    return out


def repository_stats(repo: Repository) -> dict[str, Any]:
    """``Repository.stats()`` plus resources counted by interaction model
    (``by_model``: ``ldp:BasicContainer`` -> n, ...).

    Nothing about the host's file system (no paths): the admin pages serve this
    to anyone. The CLI adds the data directory for the operator."""
    out = dict(repo.stats())
    models = interaction.INTERACTION_MODELS
    by_model: dict[str, int] = {interaction.model_name(m): 0 for m in models}
    for types in _resource_types(repo).values():
        name = interaction.model_name(interaction.model_of(types))
        by_model[name] = by_model.get(name, 0) + 1
    out["by_model"] = by_model
    out["events"] = feed_figures(repo)
    out["replicas"] = {r["target"]: {k: r[k] for k in ("seq", "lag_events", "lag_seconds",
                                                         "last_error", "running")}
                       for r in replica_status(repo)}
    return out


def binary_uids(repo: Repository) -> list[str]:
    """Uids of every live binary (LDP-NR), sorted."""
    return sorted(uid_of_graph(g) for g in _resource_types(repo, LDP_NON_RDF_SOURCE))
