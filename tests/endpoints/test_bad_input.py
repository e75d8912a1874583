"""Bad input: every case is refused with the right status and leaves the repository
exactly as it was."""
from __future__ import annotations

import pytest

from .conftest import LDP, MAX_BODY, TTL, link_targets, post_ttl, put_ttl


@pytest.fixture
def seeded(client, repo, state):
    """A repository with a little content, and its state."""
    r = put_ttl(client, "/rest/c", '<> <http://purl.org/dc/terms/title> "c" .')
    assert r.status_code == 201
    assert post_ttl(client, "/rest/c", "", Slug="k").status_code == 201
    r = client.post("/rest/c", data=b"content", content_type="text/plain", headers={"Slug": "bin"})
    assert r.status_code == 201
    assert client.post("/rest/c/fcr:versions").status_code == 201
    return state(repo)


def _unchanged(repo, state, before):
    assert state(repo) == before


def test_malformed_turtle(client, repo, state, seeded):
    bad = b"<> <http://purl.org/dc/terms/title> \"unterminated .\n<> <x"
    for r in (client.put("/rest/c", data=bad, content_type=TTL),
              client.put("/rest/new", data=bad, content_type=TTL),
              client.post("/rest/c", data=bad, content_type=TTL)):
        assert r.status_code == 400
        text = r.get_data(as_text=True)
        assert "line" in text and "column" in text
        assert link_targets(r, LDP + "constrainedBy")
    _unchanged(repo, state, seeded)


@pytest.mark.parametrize("ctype, body", [
    ("application/ld+json", b'{"@id": "", "http://x/p": '),
    ("application/ld+json", b'{"@context": "http://remote.example/ctx.jsonld", "@id": ""}'),
    ("application/rdf+xml", b"<rdf:RDF"),
    ("application/n-triples", b"<a> <b> <c> ."),
    ("text/turtle", b"\xff\xfe not utf-8"),
])
def test_malformed_rdf_formats(client, repo, state, seeded, ctype, body):
    assert client.put("/rest/c", data=body, content_type=ctype).status_code == 400
    _unchanged(repo, state, seeded)


def test_unsupported_media_types(client, repo, state, seeded):
    assert client.put("/rest/c", data=b"plain", content_type="text/plain").status_code == 415
    r = client.post("/rest/c", data=b"x", content_type="text/plain",
                    headers={"Link": f'<{LDP}BasicContainer>; rel="type"'})
    assert r.status_code == 415
    r = client.patch("/rest/c", data=b"INSERT DATA {}", content_type="text/plain")
    assert r.status_code == 415
    r = client.post("/rest/c", content_type='message/external-body; access-type=URL; '
                                            'URL="http://example.org/file"')
    assert r.status_code == 415
    r = client.put("/rest/c/k", data=b"<> <http://x/p> 1 .")
    assert r.status_code == 415   # a body without Content-Type on an RDF source
    _unchanged(repo, state, seeded)


def test_server_managed_triples_strict(client, repo, state, seeded):
    body = f"<> <{LDP}contains> <http://localhost/rest/elsewhere> ."
    for r in (put_ttl(client, "/rest/c", body), put_ttl(client, "/rest/c", body,
                                                           Prefer="handling=strict"),
              post_ttl(client, "/rest/c", body)):
        assert r.status_code == 409
        assert link_targets(r, LDP + "constrainedBy")
    _unchanged(repo, state, seeded)


@pytest.mark.parametrize("path, status", [
    ("/rest/c/../c", 400), ("/rest/c/%2e%2e/c", 400), ("/rest/c/%2E%2E", 400),
    ("/rest/c%2Fk", 400), ("/rest/c/%2fk", 400), ("/rest/c%00", 400), ("/rest/c/k%0A", 404),
    ("/rest/" + "x" * 300, 400), ("/rest/c/./k", 400), ("/rest/c%5C..%5Cetc", 400),
    ("/rest//c", 404), ("/rest/c/fcr:acl", 404), ("/rest/%ff", 400),
])
def test_path_tricks(client, repo, state, seeded, path, status):
    for method in ("GET", "PUT", "POST", "DELETE", "PATCH"):
        r = client.open(path, method=method, data=b"<> <http://x/p> 1 .", content_type=TTL)
        assert r.status_code == status, (method, path, r.data)
    _unchanged(repo, state, seeded)


def test_oversized_bodies(client, repo, state, seeded):
    big = b"<> <http://x/p> " + b'"' + b"x" * MAX_BODY + b'" .'
    assert client.put("/rest/c", data=big, content_type=TTL).status_code == 413
    assert client.post("/rest/c", data=big, content_type=TTL).status_code == 413
    assert client.patch("/rest/c", data=b"INSERT DATA { <> <http://x/p> \"" + b"x" * MAX_BODY
                        + b'" }', content_type="application/sparql-update").status_code == 413
    assert client.put("/rest/c/bin", data=b"x" * (MAX_BODY + 1),
                      content_type="text/plain").status_code == 413
    _unchanged(repo, state, seeded)


def test_bad_digests(client, repo, state, seeded):
    assert client.put("/rest/c/bin", data=b"other", content_type="text/plain",
                      headers={"Digest": "sha-256=AAAA"}).status_code == 409
    assert client.put("/rest/c/bin", data=b"other", content_type="text/plain",
                      headers={"Digest": "crc32=AAAA"}).status_code == 400
    _unchanged(repo, state, seeded)


def test_failed_preconditions(client, repo, state, seeded):
    h = {"If-Match": '"stale"'}
    assert client.put("/rest/c", data=b"", content_type=TTL, headers=h).status_code == 412
    assert client.delete("/rest/c", headers=h).status_code == 412
    assert client.post("/rest/c", headers=h).status_code == 412
    assert client.patch("/rest/c", data=b"INSERT DATA {}", content_type="application/sparql-update",
                        headers=h).status_code == 412
    assert client.put("/rest/c/bin", data=b"x", content_type="text/plain",
                      headers=h).status_code == 412
    _unchanged(repo, state, seeded)


def test_unknown_methods(client, repo, state, seeded):
    for method in ("PROPFIND", "MKCOL", "TRACE", "CONNECT", "LOCK"):
        assert client.open("/rest/c", method=method).status_code == 405
    _unchanged(repo, state, seeded)


def test_patch_binary_content(client, repo, state, seeded):
    r = client.patch("/rest/c/bin", data=b"INSERT DATA { <> <http://x/p> 1 }",
                     content_type="application/sparql-update")
    assert r.status_code == 415
    _unchanged(repo, state, seeded)


def test_writes_to_mementos(client, repo, state, seeded):
    vid = client.get("/rest/c/fcr:versions", headers={"Accept": "application/link-format"}
                     ).get_data(as_text=True).split("fcr:versions/")[1][:14]
    for method in ("PUT", "POST", "PATCH", "DELETE"):
        r = client.open(f"/rest/c/fcr:versions/{vid}", method=method, data=b"",
                        content_type=TTL)
        assert r.status_code == 405
    _unchanged(repo, state, seeded)


def test_bad_sparql(client, repo, state, seeded):
    for update in ("INSERT DATA { <> <x", "LOAD <http://example.org/data>",
                   "INSERT DATA { GRAPH <http://g> { <> <http://x/p> 1 } }", ""):
        r = client.patch("/rest/c", data=update.encode(), content_type="application/sparql-update")
        assert r.status_code == 400, update
    _unchanged(repo, state, seeded)


def test_bad_host_header(client, repo, state, seeded):
    r = client.put("/rest/c/x", headers={"Host": "evil>.example"}, data=b"", content_type=TTL)
    assert r.status_code == 400
    _unchanged(repo, state, seeded)


def test_other_subjects(client, repo, state, seeded):
    r = put_ttl(client, "/rest/c", "<http://example.org/other> <http://x/p> 1 .")
    assert r.status_code == 409
    _unchanged(repo, state, seeded)


def test_bad_membership_config(client, repo, state, seeded):
    body = (f"<> <{LDP}membershipResource> <http://localhost/rest/c>, "
            "<http://localhost/rest/c/k> .")
    r = post_ttl(client, "/rest/c", body, Link=f'<{LDP}DirectContainer>; rel="type"')
    assert r.status_code == 409
    _unchanged(repo, state, seeded)


def test_bad_accept_datetime(client, repo, state, seeded):
    assert client.get("/rest/c", headers={"Accept-Datetime": "not a date"}).status_code == 400
    _unchanged(repo, state, seeded)
