"""What a replica holds of a resource: its named graph, as N-Triples.

The graph of a resource is named by its public IRI (under the configured
``base_uri``) and holds what ``GET`` returns for it (``Repository.get`` with
its defaults): its own triples, the server-managed ones, containment and
membership; for a binary, its description. ACLs and versions (Mementos) are not
copied. A resource that is gone (deleted, purged, never there) or that the
filter's agent may not read has no graph: the replica's is deleted.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from lakesuperior import rdfio
from lakesuperior.auth.agents import ANONYMOUS, Agent
from lakesuperior.auth.users import UserDB
from lakesuperior.exceptions import AccessDeniedError, ResourceError
from lakesuperior.model.uids import graph_kind, uid_of_graph

__all__ = ["GraphWrite", "Source", "agent_for", "live_uids"]

#: ``--readable-by`` value for the agent without credentials.
PUBLIC = "anonymous"


@dataclass(frozen=True)
class GraphWrite:
    """One graph to replace (``data``: N-Triples) or to delete (``data`` None)."""

    iri: str
    data: bytes | None


def agent_for(name: str, config: Any) -> Agent:
    """The agent of ``--readable-by NAME``: ``anonymous`` (what anyone may read), a
    WebID (an absolute URI), or a user of the data directory (as HTTP
    authentication makes it: its WebID is ``auth.webid_base`` plus the name)."""
    if name == PUBLIC:
        return ANONYMOUS
    if "://" in name or name.startswith(("urn:", "info:")):
        return Agent(name=name, webid=name)
    user = UserDB(config.data_dir).get(name)
    admin = bool(user and user.admin)
    return Agent(name=name, webid=config.auth_webid_base + quote(name, safe="@"), admin=admin)


class Source:
    """Reads the graphs a replica gets from ``repo`` (as seen by ``agent``, if given)."""

    def __init__(self, repo: Any, agent: Agent | None = None):
        self.repo = repo
        self.reader = repo if agent is None or agent.admin else repo.as_agent(agent)

    def iri(self, uid: str) -> str:
        return str(self.repo.base_uri) + uid

    def graph(self, uid: str) -> bytes | None:
        """The N-Triples of ``uid``'s graph; None if it has none (see the module doc)."""
        try:
            res = self.reader.get(uid)
        except (ResourceError, AccessDeniedError):
            return None
        return bytes(res.serialize(rdfio.N_TRIPLES))

    def writes(self, uids: Iterable[str]) -> list[GraphWrite]:
        """The writes that bring the graphs of ``uids`` to the current state, all read
        from one snapshot."""
        with self.repo.snapshot():
            return [GraphWrite(self.iri(uid), self.graph(uid)) for uid in uids]


def live_uids(repo: Any) -> Iterator[str]:
    """The uids of every live resource, from one snapshot (names only: the graphs
    are read later, a batch at a time)."""
    with repo.snapshot() as ctx:
        names = [uid_of_graph(g) for g in ctx.txn.graphs() if graph_kind(g) == "res"]
    return iter(names)
