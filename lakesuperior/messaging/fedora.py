"""Fedora 6's message format: what a ``Change`` of the feed looks like on the wire.

A message is an Activity Streams 2.0 JSON-LD body (``activity``, ``body``) and
the ``org.fcrepo.jms.*`` headers JMS/STOMP consumers of Fedora read
(``headers``). The feed itself (what changed, kept with the change in one LMDB
transaction) is ``model/events.py``; see ``docs/events.md``.
"""
from __future__ import annotations

import json
from typing import Any

from lakesuperior.model.events import Change
from lakesuperior.version import __version__

#: The Activity Streams type of each kind (Fedora 6's ``EventType``): a resurrected
#: resource is created again; a new version is an update of the resource.
AS_TYPES = {"create": "Create", "update": "Update", "delete": "Delete", "purge": "Purge",
            "resurrect": "Create", "version": "Update"}
#: Fedora 6's event names.
AS_NAMES = {"Create": "create resource", "Update": "update resource",
            "Delete": "delete resource", "Purge": "remove resource tombstone"}
AS_NS = "https://www.w3.org/ns/activitystreams"
PROV_ENTITY = "http://www.w3.org/ns/prov#Entity"
#: Fedora 6's base for user names that are not URIs.
LOCAL_USER = "info:fedora/local-user#"
#: The application in each event's ``actor``.
APPLICATION = f"Lakesuperior/{__version__}"
#: The JSON-LD context of every body: Activity Streams, plus Fedora's prefixes.
CONTEXT: list[Any] = [AS_NS, {"prov": "http://www.w3.org/ns/prov#",
                              "dcterms": "http://purl.org/dc/terms/",
                              "type": "@type", "id": "@id",
                              "isPartOf": {"@id": "dcterms:isPartOf", "@type": "@id"}}]
HEADER_PREFIX = "org.fcrepo.jms."


def activity_type(change: Change) -> str:
    """The Activity Streams type of the change (``Create``, ``Update``, ...)."""
    return AS_TYPES[change.kind]


def user_uri(change: Change) -> str:
    """The acting user as a URI (Fedora 6: a URI as is, else ``info:fedora/local-user#``)."""
    return change.user if ":" in change.user else LOCAL_USER + change.user


def object_types(change: Change) -> list[str]:
    """The resource's types, with ``prov:Entity`` as Fedora adds it."""
    types = list(dict.fromkeys(change.types))
    if PROV_ENTITY not in types:
        types.append(PROV_ENTITY)
    return types


def activity(change: Change) -> dict[str, Any]:
    """The Activity Streams 2.0 JSON-LD body, as Fedora 6 writes it."""
    t = activity_type(change)
    return {
        "@context": CONTEXT,
        "id": change.id,
        "type": [t],
        "name": AS_NAMES[t],
        "published": change.timestamp.isoformat(timespec="milliseconds")
                                     .replace("+00:00", "Z"),
        "actor": [{"type": ["Person"], "id": user_uri(change)},
                  {"type": ["Application"], "name": APPLICATION}],
        "object": {"type": object_types(change), "id": change.uri, "isPartOf": change.base},
    }


def body(change: Change) -> str:
    """The message body: ``activity`` as compact JSON."""
    return json.dumps(activity(change), separators=(",", ":"), ensure_ascii=False)


def headers(change: Change) -> dict[str, str]:
    """The message headers Fedora 6 sets for JMS consumers (``org.fcrepo.jms.*``)."""
    p = HEADER_PREFIX
    return {p + "identifier": change.uid, p + "eventType": AS_NS + "#" + activity_type(change),
            p + "resourceType": ",".join(object_types(change)), p + "user": change.user,
            p + "userAgent": APPLICATION, p + "baseURL": change.base,
            p + "timestamp": str(change.millis), p + "eventID": change.id}
