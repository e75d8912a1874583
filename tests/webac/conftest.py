"""Fixtures for Web Access Control: an app whose requests act as a chosen agent.

``act(agent)`` makes every following request of the test act as ``agent``
(``authn.request_agent`` is replaced: who the agent is, is authentication's
business, tested in its own suite); the default is the administrator. ``admin_put_acl``
writes an ACL through the trusted repository.
"""
from __future__ import annotations

import pytest

from lakesuperior.auth.agents import ANONYMOUS, Agent
from lakesuperior.endpoints import authn

ROOT = "http://localhost/rest"
TTL = "text/turtle"
SPARQL_UPDATE = "application/sparql-update"
ACL = "http://www.w3.org/ns/auth/acl#"
PREFIXES = """@prefix acl: <http://www.w3.org/ns/auth/acl#> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .
@prefix vcard: <http://www.w3.org/2006/vcard/ns#> .
"""
ALICE = Agent(name="alice", webid="http://example.org/people/alice")
BOB = Agent(name="bob", webid="http://example.org/people/bob")
ADMIN = Agent(name="admin", admin=True)


@pytest.fixture
def app_config():
    """Authentication on (the default configuration)."""
    return {}


@pytest.fixture(autouse=True)
def acting_as_admin(monkeypatch):
    """Requests act as the administrator until a test calls ``act``."""
    monkeypatch.setattr(authn, "request_agent", lambda: ADMIN)


@pytest.fixture
def repo(app):
    return app.extensions["lakesuperior"].repository


@pytest.fixture
def act(monkeypatch):
    """``act(agent)``: the following requests act as ``agent``."""
    def use(agent: Agent) -> None:
        monkeypatch.setattr(authn, "request_agent", lambda: agent)
    return use


def authorization(name: str, modes: str, *, agent: str = "", agent_class: str = "",
                  group: str = "", access_to: str = "", default: str = "",
                  access_to_class: str = "") -> str:
    """One ``acl:Authorization`` in Turtle (targets are IRIs or ``<...>`` terms)."""
    lines = [f"<#{name}> a acl:Authorization", "acl:mode " + modes]
    for pred, value in (("acl:agent", agent), ("acl:agentClass", agent_class),
                        ("acl:agentGroup", group), ("acl:accessTo", access_to),
                        ("acl:default", default), ("acl:accessToClass", access_to_class)):
        if value:
            lines.append(f"{pred} {value}")
    return " ;\n    ".join(lines) + " .\n"


def acl_doc(*auths: str) -> str:
    return PREFIXES + "".join(auths)


def grant(uid: str, modes: str, *, who: str = "acl:agentClass foaf:Agent",
          default: bool = True, name: str = "a") -> str:
    """An ACL for ``uid`` granting ``modes`` to ``who`` (a predicate and object)."""
    pred, obj = who.split(" ", 1)
    key = {"acl:agent": "agent", "acl:agentClass": "agent_class",
           "acl:agentGroup": "group"}[pred]
    target = f"<{ROOT}{uid}>"
    return acl_doc(authorization(name, modes, access_to=target,
                                 default=target if default else "", **{key: obj}))


def put_acl(repo, uid: str, body: str) -> None:
    """Write an ACL through the trusted repository (as an administrator would)."""
    repo.set_acl(uid, data=body.encode(), media_type=TTL, base_uri=ROOT)


__all__ = ["ROOT", "TTL", "SPARQL_UPDATE", "ACL", "PREFIXES", "ALICE", "BOB", "ADMIN",
           "ANONYMOUS", "authorization", "acl_doc", "grant", "put_acl"]
