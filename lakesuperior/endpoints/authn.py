"""Who the current request speaks for.

Until authentication is configured, every request acts as the administrator
``admin``, as the repository always has.
"""
from __future__ import annotations

from lakesuperior.agents import Agent


def request_agent() -> Agent:
    """The agent of the current request."""
    return Agent(name="admin", admin=True)
