"""Fixtures of the OCFL tests: repositories on tmp dirs (real LMDB), exported and
imported for real, every export checked by ocfl-py (``validator.py``)."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakesuperior import Repository
from lakesuperior.config import Config
from lakesuperior.model.namespaces import FCSYSTEM_TOMBSTONE, RDF_TYPE
from lakesuperior.model.uids import graph_kind, uid_of_graph
from tests.clock import FakeClock

BASE = "http://test.example/rest"
DC_TITLE = "<http://purl.org/dc/terms/title>"
LINK = "<http://ex.org/link>"
ACL_TTL = (b"@prefix acl: <http://www.w3.org/ns/auth/acl#> .\n"
           b"<#r> a acl:Authorization ; acl:agentClass <http://xmlns.com/foaf/0.1/Agent> ; "
           b"acl:mode acl:Read ; acl:accessTo <%s> .")


def ttl(text: str) -> bytes:
    return text.encode()


def fill(repo: Repository, clock: FakeClock) -> None:
    """Every kind of resource, with versions a second apart (``clock``: the
    repository's), an ACL, an Archival Group with a deleted member, a tombstone,
    binaries with versions."""
    repo.create_or_replace("/coll", data=ttl(f'<> {DC_TITLE} "A collection"@en .'),
                           media_type="text/turtle")
    repo.create_or_replace("/coll/doc", data=ttl(
        f'<> {DC_TITLE} "Doc \\"quoted\\" ᚠ α" ; {LINK} <{BASE}/coll> , '
        f'<http://example.org/ext> ; <http://ex.org/n> 42 .\n<#part> {DC_TITLE} "part" .'),
        media_type="text/turtle")
    repo.create_or_replace("/coll/file.bin", data=b"\x00\x01binary content" * 50,
                           media_type="application/octet-stream", filename="file.bin")
    repo.update_delta("/coll/file.bin", None, [("<>", DC_TITLE, '"a binary"')])
    repo.create_or_replace("/dc", data=ttl(
        f"<> <http://www.w3.org/ns/ldp#membershipResource> <{BASE}/coll> ; "
        "<http://www.w3.org/ns/ldp#hasMemberRelation> <http://purl.org/dc/terms/hasPart> ."),
        media_type="text/turtle", interaction_model="http://www.w3.org/ns/ldp#DirectContainer")
    repo.create_or_replace("/dc/m1", data=ttl(f'<> {DC_TITLE} "member" .'),
                           media_type="text/turtle")
    repo.create_or_replace("/caf%C3%A9%20x", data=ttl(f'<> {DC_TITLE} "encoded" .'),
                           media_type="text/turtle")
    repo.create_or_replace("/ag", data=ttl(f'<> {DC_TITLE} "group" .'),
                           media_type="text/turtle", archival_group=True)
    repo.create_or_replace("/ag/part", data=ttl(f'<> {DC_TITLE} "part 1" .'),
                           media_type="text/turtle")
    repo.create_or_replace("/ag/part/img", data=b"image bytes", media_type="image/png")
    repo.create_or_replace("/ag/old", data=ttl(f'<> {DC_TITLE} "old" .'),
                           media_type="text/turtle")
    repo.create_or_replace("/gone", data=ttl(f'<> {DC_TITLE} "gone" .'),
                           media_type="text/turtle")
    repo.create_or_replace("/gone/child", data=ttl(f'<> {DC_TITLE} "buried" .'),
                           media_type="text/turtle")
    repo.set_acl("/coll", data=ACL_TTL % f"{BASE}/coll".encode(), media_type="text/turtle")
    repo.set_acl("/coll/file.bin", data=ACL_TTL % f"{BASE}/coll/file.bin".encode(),
                 media_type="text/turtle")
    clock.advance()             # versions are a second apart
    repo.create_or_replace("/coll/doc", data=ttl(f'<> {DC_TITLE} "Doc, second state" .'),
                           media_type="text/turtle")
    repo.create_or_replace("/coll/file.bin", data=b"second content",
                           media_type="text/plain", filename="second.txt")
    repo.create_or_replace("/ag/part", data=ttl(f'<> {DC_TITLE} "part 2" .'),
                           media_type="text/turtle")
    repo.delete("/ag/old")
    repo.delete("/gone")


@pytest.fixture
def source(tmp_path, binary_store, clock) -> Iterator[Repository]:
    """A filled repository (automatic versioning on, as by default), this test's own;
    its binaries in S3 for tests marked ``both_backends`` (``tests/conftest.py``)."""
    binaries, options = binary_store({}, "source")
    with Repository(config=config(tmp_path / "source", **options), binaries=binaries,
                    clock=clock) as repo:
        fill(repo, clock)
        yield repo


@pytest.fixture(scope="module")
def shared_source(tmp_path_factory) -> Iterator[Repository]:
    """The ``source`` of every test of a module that only reads it."""
    clock = FakeClock()
    with Repository(config=config(tmp_path_factory.mktemp("ocfl") / "source"),
                    clock=clock) as repo:
        fill(repo, clock)
        yield repo


def config(path: Path, **settings) -> Config:
    """The configuration of a test repository in ``path`` (the indexer a thread:
    a process per repository would cost a Python start each; tests/store tests it)."""
    return Config().with_(data_dir=str(path), base_uri=BASE, sync=False,
                          indexer_process=False, **settings)


def uids(repo: Repository) -> tuple[list[str], list[str]]:
    """(live uids, tombstone tops) of a repository."""
    with repo.snapshot() as ctx:
        live, tombs = [], []
        for g in ctx.txn.graphs():
            kind = graph_kind(g)
            if kind == "res":
                live.append(uid_of_graph(g))
            elif kind == "tomb" and ctx.txn.count(None, RDF_TYPE, FCSYSTEM_TOMBSTONE, g):
                tombs.append(uid_of_graph(g))
    return sorted(live), sorted(tombs)


def summary(repo: Repository) -> dict:
    """What a round trip must keep: per resource its model, user triples, binary
    digests, media type and file name, ACL, version datetimes; the tombstones."""
    live, tombs = uids(repo)
    out: dict = {"tombstones": tombs, "resources": {}}
    for uid in live:
        res = repo.get(uid, incl_children=False, incl_membership=False)
        entry = {"model": res.interaction_model, "user": sorted(res.user_data),
                 "versions": res.version_ids,
                 "acl": sorted(repo.acl(uid)) if repo.has_acl(uid) else None}
        if getattr(res, "is_binary", False):
            entry.update(digests=res.digests, mimetype=res.mimetype, filename=res.filename,
                         size=res.size)
        out["resources"][uid] = entry
    return out


@pytest.fixture
def fs_calls() -> Iterator[list[tuple[str, tuple]]]:
    """The file-system calls (audit events ``open``, ``os.mkdir``, ``os.rename``)
    made while the test runs. An audit hook cannot be removed: it stops recording
    when the test ends."""
    calls: list[tuple[str, tuple]] = []
    recording = [True]

    def hook(event: str, args: tuple) -> None:
        if recording[0] and event in ("open", "os.mkdir", "os.rename"):
            calls.append((event, args))
    sys.addaudithook(hook)
    yield calls
    recording[0] = False
