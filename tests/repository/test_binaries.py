"""Binaries (LDP-NRs): content, digests, descriptions."""
from __future__ import annotations

import base64
import hashlib
import io

import pytest

from lakesuperior.exceptions import (
    ChecksumValidationError,
    IncompatibleLdpTypeError,
    ServerManagedTermError,
    UnsupportedDigestError,
)
from lakesuperior.model.namespaces import EBUCORE, LDP, PREMIS

pytestmark = pytest.mark.both_backends

BASE = "http://test.example/rest"
DATA = b"\x89PNG fake image bytes \x00\x01\x02" * 100


def pub(uid):
    return f"<{BASE}{uid}>"


def read(res):
    with res.content as f:
        return f.read()


def test_create_binary_from_stream(repo):
    action, res = repo.create_or_replace("/img", stream=io.BytesIO(DATA), media_type="image/png",
                                         filename="pic.png")
    assert action == "create"
    assert res.is_binary and not res.is_container
    assert LDP.NonRDFSource in res.ldp_types
    assert res.size == len(DATA)
    assert res.mimetype == "image/png"
    assert res.filename == "pic.png"
    assert res.digest == hashlib.sha512(DATA).hexdigest()
    assert res.digest_algorithm == "sha512"
    assert read(res) == DATA
    got = repo.get("/img")
    assert read(got) == DATA and got.size == len(DATA) and got.mimetype == "image/png"
    triples = set(got.triples)
    assert (pub("/img"), PREMIS.hasMessageDigest,
            f"<urn:sha-512:{hashlib.sha512(DATA).hexdigest()}>") in triples
    assert (pub("/img"), PREMIS.hasSize,
            f'"{len(DATA)}"^^<http://www.w3.org/2001/XMLSchema#long>') in triples
    assert (pub("/img"), EBUCORE.hasMimeType, '"image/png"') in triples
    assert repo.get("/").children == ["/img"]


def test_non_rdf_media_type_makes_a_binary(repo):
    res = repo.create("/", data=b"plain text", media_type="text/plain")
    assert res.is_binary and read(res) == b"plain text" and res.mimetype == "text/plain"
    res = repo.create("/", data=b"no type")
    assert res.is_binary and res.mimetype == "application/octet-stream"


def test_interaction_model_forces_binary(repo):
    ttl = b'<> <http://ex.org/p> "x" .'
    _, res = repo.create_or_replace("/raw.ttl", data=ttl, media_type="text/turtle",
                                    interaction_model="ldp:NonRDFSource")
    assert res.is_binary and read(res) == ttl and res.mimetype == "text/turtle"


def test_client_digests_verified(repo, state):
    sha256 = hashlib.sha256(DATA).hexdigest()
    md5_b64 = base64.b64encode(hashlib.md5(DATA).digest()).decode()
    _, res = repo.create_or_replace("/ok", data=DATA, media_type="image/png",
                                    digests={"SHA-256": sha256, "md5": md5_b64})
    assert res.digests["sha256"] == sha256
    assert res.digests["md5"] == hashlib.md5(DATA).hexdigest()
    assert res.digests["sha512"] == res.digest
    before = state(repo)
    for algo, value in [("sha-256", hashlib.sha256(b"other").hexdigest()),
                        ("sha1", hashlib.sha1(b"other").hexdigest()),
                        ("sha512", hashlib.sha512(b"other").hexdigest())]:
        with pytest.raises(ChecksumValidationError) as e:
            repo.create_or_replace("/bad", data=b"new content", media_type="text/plain",
                                   digests={algo: value})
        assert e.value.uid == "/bad"
    with pytest.raises(UnsupportedDigestError):
        repo.create_or_replace("/bad", data=b"new content", digests={"crc32": "00"})
    assert state(repo) == before          # no resource, and no file either


def test_replace_binary_content(repo):
    repo.create_or_replace("/f", data=b"v1", media_type="text/plain", filename="a.txt")
    repo.update("/f", 'INSERT DATA { <> <http://purl.org/dc/terms/title> "described" }')
    action, res = repo.create_or_replace("/f", data=b"version two", media_type="text/markdown")
    assert action == "replace"
    assert read(res) == b"version two" and res.size == 11 and res.mimetype == "text/markdown"
    assert res.filename == "a.txt"                                # kept
    assert (pub("/f"), "<http://purl.org/dc/terms/title>", '"described"') in res.user_data
    assert len([t for t in res.triples if t[1] == PREMIS.hasMessageDigest]) == 1


def test_binary_description_update(repo):
    repo.create_or_replace("/f", data=b"content", media_type="text/plain")
    res = repo.update("/f", 'PREFIX dc: <http://purl.org/dc/terms/> '
                            'INSERT DATA { <> dc:title "T" ; '
                            '<http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#filename> '
                            '"n.txt" }')
    assert res.is_binary and res.filename == "n.txt"
    assert read(res) == b"content"
    with pytest.raises(ServerManagedTermError):
        repo.update("/f", 'INSERT DATA { <> <http://www.loc.gov/premis/rdf/v1#hasSize> 1 }')
    assert repo.get("/f").size == 7


def test_binary_cannot_become_rdf_or_contain(repo, state):
    repo.create_or_replace("/bin", data=b"x", media_type="application/octet-stream")
    repo.create_or_replace("/rdf")
    before = state(repo)
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/bin", data=b'<> <http://ex.org/p> "x" .', media_type="text/turtle")
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/bin/child")
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create("/bin", data=b'<> <http://ex.org/p> "x" .', media_type="text/turtle")
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/bin", interaction_model="ldp:BasicContainer")
    after = state(repo)
    assert after["graphs"] == before["graphs"]
    # replacing an RDF source with a binary is refused too (its file may stay as an
    # orphan until cleanup, but no resource changes)
    with pytest.raises(IncompatibleLdpTypeError):
        repo.create_or_replace("/rdf", data=b"bytes", media_type="image/png")
    assert state(repo)["graphs"] == before["graphs"]


def test_same_content_is_stored_once(repo):
    repo.create_or_replace("/a", data=DATA, media_type="image/png")
    repo.create_or_replace("/b", data=DATA, media_type="image/png")
    assert len(list(repo.binaries)) == 1
    repo.delete("/a", soft=False)
    assert read(repo.get("/b")) == DATA
