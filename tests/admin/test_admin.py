"""Admin operations: fixity, integrity, stats, cleanup."""
from __future__ import annotations

import hashlib

import pytest

from lakesuperior.exceptions import ResourceNotExistsError
from tests.binaries import remove, rewrite

pytestmark = pytest.mark.both_backends


def test_fixity_check(repo):
    _, res = repo.create_or_replace("/f", data=b"precious", media_type="text/plain")
    result = repo.fixity_check("/f")
    assert result.ok and result.actual == result.expected == hashlib.sha512(b"precious").hexdigest()
    assert result.size == 8
    # corrupt the stored content
    rewrite(repo.binaries, res.digest, b"tampered")
    bad = repo.fixity_check("/f")
    assert not bad.ok and bad.actual == hashlib.sha512(b"tampered").hexdigest()
    assert "does not match" in bad.message
    remove(repo.binaries, res.digest)
    gone = repo.fixity_check("/f")
    assert not gone.ok and gone.actual is None and "missing" in gone.message
    with pytest.raises(ResourceNotExistsError):
        repo.fixity_check("/nope")


def test_integrity_check(repo):
    repo.create_or_replace("/a")
    repo.create_or_replace("/a/b", data=b"x", media_type="text/plain")
    repo.create_or_replace("/c", data=b"<> <http://ex.org/p> </rest/a> .", media_type="text/turtle")
    report = repo.integrity_check()
    assert report.ok and report.resources == 4
    # a link whose target is deleted later is reported, not rewritten
    repo.delete("/a", soft=False)
    report = repo.integrity_check()
    assert report.broken_links == [("/c", "/a")]
    assert not report.ok
    # break containment behind the model's back
    with repo.store.write() as txn:
        txn.remove("<info:fcres/>", "<http://www.w3.org/ns/ldp#contains>", "<info:fcres/c>",
                   "<info:fcres/>")
        txn.add([("<info:fcres/>", "<http://www.w3.org/ns/ldp#contains>", "<info:fcres/ghost>",
                  "<info:fcres/>")])
    report = repo.integrity_check()
    assert report.not_contained == ["/c"]
    assert report.dangling_children == [("/", "/ghost")]


def test_integrity_check_missing_content(repo):
    _, res = repo.create_or_replace("/f", data=b"data", media_type="text/plain")
    remove(repo.binaries, res.digest)
    assert repo.integrity_check().missing_content == ["/f"]


def test_stats(repo_factory):
    repo = repo_factory(versioning_auto=False)   # one version, made on request
    repo.create_or_replace("/a")
    repo.create_or_replace("/b", data=b"12345", media_type="text/plain")
    repo.create_or_replace("/c")
    repo.create_version("/a")
    repo.delete("/c")
    st = repo.stats()
    assert st["resources"] == 3          # root, /a, /b
    assert st["tombstones"] == 1
    assert st["versions"] == 1
    assert st["binaries"] == 1 and st["binary_bytes"] == 5
    assert st["store"]["quads"] > 0


def test_cleanup_keeps_referenced_content(repo_factory):
    repo = repo_factory(versioning_auto=False)   # the version is made on request
    repo.create_or_replace("/keep", data=b"kept", media_type="text/plain")
    repo.create_or_replace("/versioned", data=b"old", media_type="text/plain")
    repo.create_version("/versioned")
    repo.create_or_replace("/versioned", data=b"new", media_type="text/plain")
    repo.create_or_replace("/buried", data=b"buried", media_type="text/plain")
    repo.delete("/buried")
    repo.create_or_replace("/purged", data=b"purged", media_type="text/plain")
    repo.delete("/purged", soft=False)
    assert len(list(repo.binaries)) == 5
    assert repo.cleanup()["orphans"] == 0          # too young to be removed
    assert repo.cleanup(min_age=0)["orphans"] == 1  # only the purged one
    assert hashlib.sha512(b"purged").hexdigest() not in repo.binaries
    for content in (b"kept", b"old", b"new", b"buried"):
        assert hashlib.sha512(content).hexdigest() in repo.binaries
