"""Publishing the change feed to a message broker (STOMP 1.2, e.g. ActiveMQ).

``broker``     one STOMP connection: send events, wait for the broker's receipts
``publisher``  the loop that drains the outbox in commit order, its backoff, and
               the data-directory lock that keeps it to one per repository
``replay``     republishing retained events (``lsup-admin events replay``)
``fedora``     Fedora 6's message format: the Activity Streams body and JMS headers
``status``     the publisher's state, for ``lsup-admin events status``

What is recorded for each write (the feed, kept in the write's own transaction) is
``lakesuperior.model.events``; see ``docs/events.md``.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: The Activity Streams 2.0 context document, bundled: never fetched.
AS_CONTEXT_FILE = "activitystreams.jsonld"


def activitystreams_context() -> dict[str, Any]:
    """The bundled ``https://www.w3.org/ns/activitystreams`` context document."""
    text = resources.files(__name__).joinpath(AS_CONTEXT_FILE).read_text(encoding="utf-8")
    return json.loads(text)
