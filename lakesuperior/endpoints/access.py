"""The repository an HTTP request works on: seen by the request's agent.

Every LDP and SPARQL view gets its repository here. A non-administrator gets
``Repository.as_agent`` (Web Access Control enforced in the Python API, the one
implementation of the rules); an administrator gets the trusted repository,
recording its name on what it writes. Who the agent is, is authentication's
business (``authn.request_agent``).
"""
from __future__ import annotations

from flask import current_app

from lakesuperior.auth.agent_view import AgentView
from lakesuperior.endpoints import authn
from lakesuperior.repository import Repository


def request_repository() -> Repository | AgentView:
    """The repository as the current request's agent may use it."""
    repo: Repository = current_app.extensions["lakesuperior"].repository
    agent = authn.request_agent()
    if agent.admin:
        return repo.as_user(authn.recorded_name(agent))
    return repo.as_agent(agent)


def require_read(repo: Repository | AgentView, uid: str) -> None:
    """The check ``repo.get(uid)`` makes first, alone: Read access for an agent's
    view (``AccessDeniedError``); an administrator's repository reads everything."""
    if isinstance(repo, AgentView):
        repo.require(uid, "Read")


def reads_everything(repo: Repository | AgentView) -> bool:
    """Whether ``repo``'s agent may read every resource (then its views of a resource
    are every such agent's: ``body_cache``)."""
    return not isinstance(repo, AgentView) or repo.reads_everything()
