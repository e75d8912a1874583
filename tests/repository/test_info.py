"""``Repository.info`` (a cheap read), membership touching the membership resource,
and ``TombstoneError.top``."""
from __future__ import annotations

import hashlib

import pytest

from lakesuperior.exceptions import ResourceNotExistsError, TombstoneError
from lakesuperior.model.namespaces import LDP

BASE = "http://test.example/rest"
TTL = "text/turtle"
LDP_NS = "http://www.w3.org/ns/ldp#"


def test_info_of_a_container(repo_factory):
    repo = repo_factory(versioning_auto=False)   # versions made on request only
    repo.create_or_replace("/c", data=b'<> a <http://ex.org/Album> .', media_type=TTL)
    for i in range(3):
        repo.create_or_replace(f"/c/{i}")
    repo.create_version("/c")
    full = repo.get("/c")
    info = repo.info("/c")
    assert info.uid == "/c" and info.uri == f"{BASE}/c"
    assert info.interaction_model == LDP.term("BasicContainer")
    assert info.types == full.types and "<http://ex.org/Album>" in info.types
    assert info.ldp_types == full.ldp_types
    assert info.is_container and not info.is_binary
    assert (info.etag, info.created, info.last_modified) == (
        full.etag, full.created, full.last_modified)
    assert [v.id for v in info.version_info] == [v.id for v in full.version_info]
    assert info.has_versions and info.parent == "/"
    assert info.size is None and info.mimetype is None and info.digest is None
    assert info.content is None and info.digests == {}
    assert repo.info("/c/0").has_versions is False


def test_info_of_a_binary(repo):
    data = b"some content"
    repo.create_or_replace("/b", data=data, media_type="text/plain", filename="a.txt")
    info = repo.info("/b")
    assert info.is_binary and info.interaction_model == LDP.term("NonRDFSource")
    assert info.size == len(data) and info.mimetype == "text/plain"
    assert info.filename == "a.txt"
    assert info.digest == hashlib.sha512(data).hexdigest()
    assert info.digest_algorithm == "sha512"
    with info.content as f:
        assert f.read() == data
    assert info.etag == repo.get("/b").etag


def test_info_does_not_read_containment(repo):
    """info reads bound (subject, predicate) lookups only, never the whole graph."""
    repo.create_or_replace("/c")
    for i in range(5):
        repo.create_or_replace(f"/c/{i}")
    calls = []

    class Spy:
        def __init__(self, txn):
            self._txn = txn

        def __getattr__(self, name):
            attr = getattr(self._txn, name)
            if name in ("triples", "match") and callable(attr):
                def spy(*args, **kw):
                    calls.append((name, args))
                    return attr(*args, **kw)
                return spy
            return attr

    from lakesuperior.model.context import Context
    from lakesuperior.model.resource import load_info
    with repo.store.read() as txn:
        info = load_info(Context(Spy(txn), repo.settings, repo.binaries, repo.urimap), "/c")
    assert info.is_container
    res = "<info:fcres/c>"
    assert not any(name == "triples" and args[0] == res for name, args in calls)
    assert all(args[1] is not None for name, args in calls if name == "match")
    assert not any(name == "match" and args[1] == f"<{LDP_NS}contains>" for name, args in calls)


def test_info_errors(repo):
    with pytest.raises(ResourceNotExistsError):
        repo.info("/nothing")
    repo.create_or_replace("/t/a/x")
    repo.delete("/t/a")
    with pytest.raises(TombstoneError) as e:
        repo.info("/t/a/x")
    assert e.value.top == "/t/a"


def test_tombstone_error_top(repo):
    repo.create_or_replace("/t/a/x/y")
    repo.delete("/t/a")
    for uid in ("/t/a", "/t/a/x", "/t/a/x/y"):
        with pytest.raises(TombstoneError) as e:
            repo.exists(uid)
        assert e.value.uid == uid and e.value.top == "/t/a"
        assert e.value.ts is not None          # the deletion time of the top
    with pytest.raises(TombstoneError) as e:
        repo.create_or_replace("/t/a/x/y/new")
    assert e.value.top == "/t/a"
    assert TombstoneError("/u").top == "/u"


def _direct(repo, **kw):
    repo.create_or_replace("/mr")
    body = (f"@prefix ldp: <{LDP_NS}> . <> ldp:membershipResource <{BASE}/mr> ; "
            "ldp:hasMemberRelation <http://ex.org/has> .").encode()
    repo.create_or_replace("/dc", data=body, media_type=TTL,
                           interaction_model="ldp:DirectContainer")


def test_membership_changes_touch_the_membership_resource(repo):
    _direct(repo)
    states = [repo.info("/mr")]

    def changed():
        now = repo.info("/mr")
        assert now.last_modified > states[-1].last_modified
        assert now.etag != states[-1].etag
        assert now.last_modified == repo.get("/mr").last_modified
        states.append(now)

    assert repo.info("/mr").has_membership is False
    repo.create("/dc", slug="m1")                         # a member added
    changed()
    assert repo.info("/mr").has_membership is True
    repo.create_or_replace("/dc/m1", data=b'<> <http://ex.org/p> "x" .', media_type=TTL)
    assert repo.info("/mr").etag == states[-1].etag       # a member's own change: none
    repo.delete("/dc/m1")                                 # removed
    changed()
    repo.resurrect("/dc/m1")                              # back
    changed()
    body = (f"@prefix ldp: <{LDP_NS}> . <> ldp:membershipResource <{BASE}/mr> ; "
            "ldp:hasMemberRelation <http://ex.org/other> .").encode()
    repo.create_or_replace("/dc", data=body, media_type=TTL)   # configuration changed
    changed()
    repo.delete("/dc")                                    # the container deleted
    changed()


def test_is_member_of_touches_the_member_subjects(repo):
    repo.create_or_replace("/target")
    repo.create_or_replace("/other")
    body = (f"@prefix ldp: <{LDP_NS}> . <> ldp:membershipResource <{BASE}/target> ; "
            "ldp:isMemberOfRelation <http://ex.org/in> ; "
            "ldp:insertedContentRelation <http://ex.org/ref> .").encode()
    repo.create_or_replace("/ic", data=body, media_type=TTL,
                           interaction_model="ldp:IndirectContainer")
    repo.create_or_replace("/ic/m1")
    before = repo.info("/other")
    repo.create_or_replace("/ic/m1", data=f"<> <http://ex.org/ref> <{BASE}/other> ."
                           .encode(), media_type=TTL)
    after = repo.info("/other")
    assert after.last_modified > before.last_modified
    assert (f"<{BASE}/other>", "<http://ex.org/in>", f"<{BASE}/target>") in \
        repo.get("/other").triples


# --- tolerant handling of server-managed input ------------------------------------------------

def _nt(triples):
    return "\n".join(" ".join(t) + " ." for t in triples).encode()


def test_tolerant_round_trip(repo, state):
    from lakesuperior.exceptions import ServerManagedTermError
    repo.create_or_replace("/c", data=b'<> <http://ex.org/t> "one" .', media_type=TTL)
    repo.create_or_replace("/c/x")
    triples = repo.get("/c").triples
    edited = [t for t in triples if t[1] != "<http://ex.org/t>"]
    edited.append((f"<{BASE}/c>", "<http://ex.org/t>", '"two"'))
    with pytest.raises(ServerManagedTermError):
        repo.create_or_replace("/c", data=_nt(edited), media_type="application/n-triples")
    action, res = repo.create_or_replace("/c", data=_nt(edited), handling="tolerant",
                                         media_type="application/n-triples")
    # the view a replace returns has the container's own triples, not its children
    assert action == "replace" and res.children == []
    assert repo.get("/c").children == ["/c/x"]
    assert res.user_data == [(f"<{BASE}/c>", "<http://ex.org/t>", '"two"')]
    # timestamps and agents of the resource: ignored, whatever their value
    stale = edited + [(f"<{BASE}/c>", "<http://fedora.info/definitions/v4/repository#created>",
                       '"2000-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>')]
    repo.create_or_replace("/c", data=_nt(stale), media_type="application/n-triples",
                           handling="tolerant")
    assert repo.get("/c").created == res.created
    before = state(repo)
    for bad in [(f"<{BASE}/c>", f"<{LDP_NS}contains>", f"<{BASE}/elsewhere>"),
                (f"<{BASE}/c>", "<http://fedora.info/definitions/v4/repository#hasParent>",
                 f"<{BASE}/c/x>"),
                (f"<{BASE}/c>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
                 f"<{LDP_NS}DirectContainer>")]:
        with pytest.raises(ServerManagedTermError):
            repo.create_or_replace("/c", data=_nt(edited + [bad]), handling="tolerant",
                                   media_type="application/n-triples")
    assert state(repo) == before


def test_tolerant_drops_generated_membership(repo):
    _direct(repo)
    repo.create("/dc", slug="m1")
    triples = repo.get("/mr").triples
    member = (f"<{BASE}/mr>", "<http://ex.org/has>", f"<{BASE}/dc/m1>")
    assert member in triples
    repo.create_or_replace("/mr", data=_nt(triples), media_type="application/n-triples",
                           handling="tolerant")
    assert member not in repo.get("/mr").user_data
    repo.delete("/dc/m1")
    assert member not in repo.get("/mr").triples


def test_unknown_handling_is_refused(repo):
    from lakesuperior.exceptions import InvalidResourceError
    with pytest.raises(InvalidResourceError, match="tolerant"):
        repo.create_or_replace("/a", data=b"<> <http://ex.org/p> 1 .", media_type=TTL,
                               handling="relaxed")
