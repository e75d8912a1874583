"""Who is acting: the agent an HTTP request or a Python view speaks for.

Authentication (HTTP Basic, a trusted proxy header) produces an ``Agent``; Web
Access Control decides what it may do. ``Agent`` is immutable and carries no
credentials.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Agent:
    """A user (``name`` and ``webid``), or the anonymous agent (both ``None``).

    ``admin`` agents bypass access control; ``groups`` are extra group URIs the
    agent is known to belong to (besides the ``vcard:Group`` resources naming it);
    ``origin``: the web origin (``scheme://host:port``, ``authorizations.origin_of``)
    of the browser page the request came from (its ``Origin`` header), None for a
    request without one: an authorization with ``acl:origin`` grants only to the
    origins it names.
    """

    name: str | None = None
    webid: str | None = None
    admin: bool = False
    groups: tuple[str, ...] = ()
    origin: str | None = None

    @property
    def authenticated(self) -> bool:
        """True for a known user, False for the anonymous agent."""
        return self.name is not None


#: The agent of a request without credentials.
ANONYMOUS = Agent()
