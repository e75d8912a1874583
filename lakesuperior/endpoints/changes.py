"""``GET /changes``: the change feed over HTTP, as Activity Streams 2.0.

``/changes`` is an ``OrderedCollection`` (how many events are retained, and
links to its ``first`` and ``last`` pages); ``/changes?since=SEQ`` (events after
that seq) or ``?since=DATETIME`` (at or after that ISO 8601 time) is an
``OrderedCollectionPage`` of up to ``PAGE_SIZE`` events, the same activities the
broker gets (``messaging.fedora.activity``), oldest first. ``next`` follows a
page that has events; a page without events is the feed's head (poll it).
A ``since`` older than what the feed retains is 410 (the events in between are
gone: nothing is skipped silently). For administrators and the agent named by
``messaging.feed_reader``; 401 without credentials, 403 for anyone else.
"""
from __future__ import annotations

import json
from itertools import islice
from typing import Any

from flask import Blueprint, Response, current_app, request

from lakesuperior.endpoints import authn
from lakesuperior.endpoints.errors import NotAcceptable
from lakesuperior.exceptions import AccessDeniedError, FeedGapError, InvalidResourceError
from lakesuperior.http import mediatypes
from lakesuperior.messaging.fedora import AS_NS, CONTEXT, activity
from lakesuperior.messaging.replay import parse_since
from lakesuperior.messaging.status import lost_after
from lakesuperior.repository import Repository

bp = Blueprint("changes", __name__)

PAGE_SIZE = 100
JSON_LD = f'application/ld+json; profile="{AS_NS}"'
_OFFERED = mediatypes.Offers(("application/ld+json", "application/activity+json",
                              "application/json"))


def _repository() -> Repository:
    return current_app.extensions["lakesuperior"].repository


def _require_reader() -> None:
    agent = authn.request_agent()
    if agent.admin:
        return
    reader = current_app.extensions["lakesuperior"].config.messaging_feed_reader
    if reader and reader in (agent.name, agent.webid):
        return
    raise AccessDeniedError(None, "Read", agent.authenticated,
                            "The change feed is for administrators (and the agent of "
                            "messaging.feed_reader) only")


bp.before_request(_require_reader)


@bp.get("")
def changes() -> Response:
    """The collection, or one page of it (see the module doc)."""
    media_type = mediatypes.negotiate(request.headers.get("Accept"), _OFFERED)
    if media_type is None:
        raise NotAcceptable("None of the media types in Accept can be served: /changes "
                            f"is available as {', '.join(_OFFERED)}")
    repo = _repository()
    feed = repo.feed_state()
    since = request.args.get("since")
    body = _collection(feed) if since is None else _page(repo, feed, since)
    ctype = JSON_LD if media_type == "application/ld+json" else media_type
    return Response(json.dumps(body, ensure_ascii=False, separators=(",", ":")),
                    content_type=ctype, headers={"Vary": "Accept"})


def _url(since: int | None = None) -> str:
    return request.base_url + ("" if since is None else f"?since={since}")


def _collection(feed: dict[str, int]) -> dict[str, Any]:
    start = (feed["first"] or feed["seq"] + 1) - 1
    return {"@context": CONTEXT, "id": _url(), "type": "OrderedCollection",
            "totalItems": feed["entries"], "first": _url(start),
            "last": _url(max(start, feed["seq"] - PAGE_SIZE))}


def _position(repo: Repository, text: str) -> int:
    """The seq after which the page starts; ``InvalidResourceError`` (400) for a
    ``since`` that is neither a seq nor an ISO 8601 time."""
    try:
        since = parse_since(text)
    except ValueError as e:
        raise InvalidResourceError(None, f"since: {e}") from None
    if isinstance(since, int):
        return since
    first = next(iter(repo.changes(since, batch=1)), None)
    return first.seq - 1 if first is not None else repo.feed_state()["seq"]


def _page(repo: Repository, feed: dict[str, int], text: str) -> dict[str, Any]:
    after = _position(repo, text)
    if after > feed["seq"]:
        raise FeedGapError(f"The change feed ends at seq {feed['seq']}: seq {after} was never "
                           "handed out here (a position from a replaced repository?)")
    if lost_after(feed, after):
        raise FeedGapError(f"The change feed no longer holds the events after seq {after}: "
                           f"they are older than the retention; it now starts at seq "
                           f"{feed['first'] or feed['seq'] + 1}")
    items = list(islice(repo.changes(after, batch=PAGE_SIZE), PAGE_SIZE))
    page: dict[str, Any] = {
        "@context": CONTEXT, "id": _url(after), "type": "OrderedCollectionPage",
        "partOf": _url(), "orderedItems": [_item(a) for a in map(activity, items)]}
    if items:
        page["next"] = _url(items[-1].seq)
    start = (feed["first"] or feed["seq"] + 1) - 1
    if after > start:
        page["prev"] = _url(max(start, after - PAGE_SIZE))
    return page


def _item(body: dict[str, Any]) -> dict[str, Any]:
    """An activity inside a page: the page's context applies."""
    body.pop("@context", None)
    return body
