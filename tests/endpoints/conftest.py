"""Fixtures for the HTTP layer (``app`` and ``client``: tests/conftest.py, with a
body size limit here), and helpers."""
from __future__ import annotations

import pytest

from lakesuperior import rdfio
from lakesuperior.http import headers as hdr

ROOT = "http://localhost/rest"
LDP = "http://www.w3.org/ns/ldp#"
FCREPO = "http://fedora.info/definitions/v4/repository#"
MEMENTO = "http://mementoweb.org/ns#"
DC_TITLE = "<http://purl.org/dc/terms/title>"
TTL = "text/turtle"
NT = "application/n-triples"
MAX_BODY = 200_000


@pytest.fixture
def app_config():
    return {"auth_enabled": False, "max_body_size": MAX_BODY}


@pytest.fixture
def repo(app):
    return app.extensions["lakesuperior"].repository


def links(response) -> list[hdr.Link]:
    return hdr.parse_link(response.headers.getlist("Link"))


def link_targets(response, rel: str) -> list[str]:
    return [lk.uri for lk in links(response) if lk.has_rel(rel)]


def types(response) -> set[str]:
    return set(link_targets(response, "type"))


def graph(response, base: str = ROOT + "/") -> set[tuple[str, str, str]]:
    """The triples of an RDF response body."""
    ctype = response.headers["Content-Type"]
    return set(rdfio.parse(response.data, ctype, base))


def put_ttl(client, path: str, body: str = "", **headers):
    return client.put(path, data=body.encode(), content_type=TTL, headers=headers)


def post_ttl(client, path: str, body: str = "", **headers):
    return client.post(path, data=body.encode(), content_type=TTL, headers=headers)
