"""The header MUSTs of LDP 1.0 and the Fedora API 1.0 that issue 13 completes:
``Prefer`` read as Fedora 6 reads it, ``Accept-Datetime`` in every HTTP date form,
``Want-Digest`` naming only unsupported algorithms, Turtle without its final dot.
Bad values are 4xx with a body that says why, and change nothing."""
from __future__ import annotations

import base64
import hashlib

import pytest

from lakesuperior.http import headers as hdr

from .conftest import LDP, ROOT, TTL, graph, link_targets, post_ttl, put_ttl

FCREPO = "http://fedora.info/definitions/v4/repository#"
FCREPO_API = "http://fedora.info/definitions/fcrepo#"
TITLE = "<http://purl.org/dc/terms/title>"
CONTAINS = f"<{LDP}contains>"
MEMBER = f"<{LDP}member>"


@pytest.fixture
def seeded(client, repo, state):
    """``/c`` (a container with a title and a child ``k``), ``/mr`` (the membership
    resource of the direct container ``/dc``, with the member ``/dc/m1``), ``/ref``
    pointing at ``/c``, and a binary ``/c/bin``."""
    assert put_ttl(client, "/rest/c", f'<> {TITLE} "c" .').status_code == 201
    assert post_ttl(client, "/rest/c", f'<> {TITLE} "kid" .', Slug="k").status_code == 201
    assert put_ttl(client, "/rest/mr", f'<> {TITLE} "mr" .').status_code == 201
    body = (f"@prefix ldp: <{LDP}> . <> ldp:membershipResource <{ROOT}/mr> ; "
            "ldp:hasMemberRelation ldp:member .")
    r = put_ttl(client, "/rest/dc", body, Link=f'<{LDP}DirectContainer>; rel="type"')
    assert r.status_code == 201, r.data
    assert post_ttl(client, "/rest/dc", Slug="m1").status_code == 201
    assert put_ttl(client, "/rest/ref", f"<> <http://ex.org/see> <{ROOT}/c> .").status_code == 201
    r = client.post("/rest/c", data=b"content", content_type="text/plain",
                    headers={"Slug": "bin"})
    assert r.status_code == 201
    return state(repo)


def _get(client, path: str, prefer: str | None = None):
    r = client.get(path, headers={"Prefer": prefer} if prefer else {})
    assert r.status_code == 200, r.data
    return r, graph(r)


def _kinds(triples, uri: str) -> set[str]:
    """What a representation of ``uri`` holds: user, server-managed, containment,
    membership, inbound, embedded triples."""
    subject = f"<{uri}>"
    kinds = set()
    for s, p, o in triples:
        if p == CONTAINS:
            kinds.add("containment")
        elif p == MEMBER:
            kinds.add("membership")
        elif s != subject and o == subject:
            kinds.add("inbound" if p != f"<{FCREPO}hasParent>" else "children's parent")
        elif s != subject:
            kinds.add("embedded")
        elif p.startswith(f"<{FCREPO}") or o.startswith((f"<{LDP}", f"<{FCREPO}")):
            kinds.add("server-managed")
        else:
            kinds.add("user")
    return kinds


def _rep(ldp: str = "", fcrepo: str = "", *, omit: str = "") -> str:
    include = " ".join([*(f"{LDP}{n}" for n in ldp.split()),
                        *(n if "#" in n else f"{FCREPO_API}{n}" for n in fcrepo.split())])
    value = "return=representation"
    if include:
        value += f'; include="{include}"'
    if omit:
        value += f'; omit="{omit}"'
    return value


ALL = {"user", "server-managed", "containment"}
SM = f"{FCREPO}ServerManaged"
PMC = f"{LDP}PreferMinimalContainer"


# --- Prefer (LDP 1.0 section 7.2.2, Fedora API 3.2.1; Fedora 6 LdpPreferTag) -------------------

@pytest.mark.parametrize("prefer, kinds", [
    (None, ALL),
    ("return=representation", ALL),
    (_rep("PreferContainment"), ALL),
    (_rep(omit=f"{LDP}PreferContainment"), {"user", "server-managed"}),
    (_rep("PreferMinimalContainer"), {"user", "server-managed"}),
    (_rep("PreferMinimalContainer PreferContainment"), ALL),
    (_rep(omit=PMC), {"server-managed", "containment"}),             # no user triples
    (_rep(omit=f"{PMC} {LDP}PreferContainment"), {"server-managed"}),
    (_rep(omit=SM), {"user"}),                      # ldp:contains is server-managed too
    (_rep("PreferContainment", omit=SM), {"user", "containment"}),
    (_rep(omit=f"{FCREPO_API}ServerManaged"), {"user"}),
    (_rep("", "PreferInboundReferences"), ALL | {"inbound", "children's parent"}),
    (_rep("", f"{FCREPO_API}PreferInboundReferences", omit=f"{FCREPO_API}PreferInboundReferences"),
     ALL | {"inbound", "children's parent"}),                      # include wins, as in Fedora
    (_rep("", "http://www.w3.org/ns/oa#PreferContainedDescriptions"),
     ALL | {"embedded", "children's parent"}),
    ("return=minimal", {"user"}),                                  # Fedora: the client's triples
    (f'return=minimal; include="{SM}"', {"user"}),   # include/omit only with representation
    (_rep(omit="http://ex.org/unknown"), ALL),                      # unknown URIs are ignored
])
def test_ldp_7_2_2_prefer_on_a_container(client, seeded, prefer, kinds):
    r, triples = _get(client, "/rest/c", prefer)
    assert _kinds(triples, f"{ROOT}/c") == kinds, triples
    if prefer and "return=" in prefer:
        applied = prefer.split(";")[0].strip()
        assert r.headers["Preference-Applied"] == applied
    else:
        assert "Preference-Applied" not in r.headers
    assert "Prefer" in r.headers["Vary"]


@pytest.mark.parametrize("prefer, has_member", [
    (None, True),
    (_rep(omit=f"{LDP}PreferMembership"), False),
    (_rep("PreferMinimalContainer"), False),
    (_rep("PreferMinimalContainer PreferMembership"), True),
    (_rep(omit=PMC), True),
    ("return=minimal", False),
])
def test_ldp_7_2_2_prefer_membership(client, seeded, prefer, has_member):
    _, triples = _get(client, "/rest/mr", prefer)
    assert ((f"<{ROOT}/mr>", MEMBER, f"<{ROOT}/dc/m1>") in triples) is has_member
    assert ((f"<{ROOT}/mr>", TITLE, '"mr"') in triples) is (prefer != _rep(omit=PMC))


def test_ldp_7_2_2_omit_minimal_container_on_a_description(client, seeded):
    _, triples = _get(client, "/rest/c/bin/fcr:metadata", _rep(omit=PMC))
    assert triples and all(p.startswith(("<http://www.loc.gov/premis", "<http://www.ebu.ch",
                                         f"<{FCREPO}", "<http://www.w3.org/1999/02/22"))
                           for _, p, _ in triples), triples


def test_ldp_7_2_2_representations_have_their_own_etags(client, seeded):
    tags = set()
    for p in (None, _rep(omit=PMC), _rep("PreferMinimalContainer"), "return=minimal"):
        headers = {"Prefer": p} if p else {}
        get, head = client.get("/rest/c", headers=headers), client.head("/rest/c", headers=headers)
        assert get.headers["ETag"] == head.headers["ETag"]
        assert get.headers.get("Preference-Applied") == head.headers.get("Preference-Applied")
        tags.add(get.headers["ETag"])
    assert len(tags) == 4


@pytest.mark.parametrize("prefer, says", [
    (f'return=representation; include="{LDP}PreferContainment', "not closed"),
    ("return=representation; =x", "'' is not a parameter name"),
    ("return=representation; include=a b", "neither a token nor a quoted string"),
    ('"return"=minimal', "is not a preference name"),
    ("return=", "neither a token nor a quoted string"),
])
def test_rfc7240_2_malformed_prefer_is_400(client, repo, state, seeded, prefer, says):
    """A Prefer that does not follow RFC 7240's grammar: 400 saying why; nothing written."""
    for r in (client.get("/rest/c", headers={"Prefer": prefer}),
              put_ttl(client, "/rest/c", f'<> {TITLE} "changed" .', Prefer=prefer),
              post_ttl(client, "/rest/c", "", Prefer=prefer),
              client.delete("/rest/c/k", headers={"Prefer": prefer})):
        text = r.get_data(as_text=True)
        assert r.status_code == 400, text
        assert "Malformed Prefer header" in text and says in text, text
        assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == seeded


# --- Accept-Datetime (RFC 7089 section 4.1, RFC 7231 section 7.1.1.1) ---------------------------

@pytest.fixture
def versioned(client, repo, state):
    assert put_ttl(client, "/rest/v", f'<> {TITLE} "v" .').status_code == 201
    r = client.post("/rest/v/fcr:versions")
    assert r.status_code == 201
    return r.headers["Location"], state(repo)


@pytest.mark.parametrize("value, which", [
    ("Fri, 01 Jan 2100 00:00:00 GMT", "last"),        # IMF-fixdate
    ("Sunday, 01-Jan-51 00:00:00 GMT", "last"),       # RFC 850: 2051, under 50 years ahead
    ("Friday, 01-Jan-99 00:00:00 GMT", "first"),      # RFC 850: 2099 is more than 50 years
                                                      # ahead: 1999 (RFC 7231 7.1.1.1)
    ("Fri Jan  1 00:00:00 2100", "last"),             # asctime
    ("Fri Jan 1 00:00:00 2100", "last"),
    ("Fri, 1 Jan 2100 00:00:00 GMT", "last"),         # one-digit day
    ("01 Jan 2100 00:00:00 GMT", "last"),             # no weekday (RFC 1123)
    ("Thu, 31 Dec 2099 23:00:00 -0100", "last"),      # a numeric zone (RFC 1123)
    ("Thu, 01 Jan 1970 00:00:00 GMT", "first"),       # before the first memento: the first one
])
def test_rfc7089_4_1_accept_datetime_forms(client, repo, versioned, value, which):
    memento, _ = versioned
    # The PUT may have made a version of its own (auto-versioning), in an earlier
    # second than the POST's: then the first memento is that one.
    ids = [v.id for v in repo.versions("/v")]
    assert memento.rsplit("/", 1)[1] == ids[-1]
    expected = memento if which == "last" else memento.rsplit("/", 1)[0] + "/" + ids[0]
    r = client.get("/rest/v", headers={"Accept-Datetime": value})
    assert r.status_code == 302, r.data
    assert r.headers["Location"] == expected
    assert "Accept-Datetime" in r.headers["Vary"]
    assert client.head("/rest/v", headers={"Accept-Datetime": value}).status_code == 302


def test_rfc7089_4_1_accept_datetime_without_mementos_is_406(client, repo, state, seeded):
    # the root has no versions (every other resource has, with versioning.auto)
    r = client.get("/rest/", headers={"Accept-Datetime": "Sun, 6 Nov 1994 08:49:37 GMT"})
    assert r.status_code == 406
    assert "no versions" in r.get_data(as_text=True)
    assert state(repo) == seeded


def test_rfc7089_4_1_blank_accept_datetime_is_absent(client, seeded):
    r = client.get("/rest/c", headers={"Accept-Datetime": "  "})
    assert r.status_code == 200


@pytest.mark.parametrize("value, says", [
    ("yesterday", "none of the HTTP date forms"),
    ("2100-01-01T00:00:00Z", "none of the HTTP date forms"),
    ("Fri, 01 Jan 2100 00:00:00 EST", "none of the HTTP date forms"),
    ("Fri, 30 Feb 2100 00:00:00 GMT", "no calendar date"),
    ("Fri, 01 Jan 2100 24:00:00 GMT", "no calendar date"),
])
def test_rfc7089_4_1_malformed_accept_datetime_is_400(client, repo, versioned, state, value,
                                                       says):
    _, before = versioned
    r = client.get("/rest/v", headers={"Accept-Datetime": value})
    text = r.get_data(as_text=True)
    assert r.status_code == 400, text
    assert "is not an HTTP date" in text and says in text and value in text
    assert link_targets(r, LDP + "constrainedBy")
    assert state(repo) == before


# --- Want-Digest (Fedora API 3.2.3 GET, 3.3.1 HEAD; RFC 3230 section 4.3.1) ----------------------

def _b64(algo: str, data: bytes) -> str:
    return base64.b64encode(hashlib.new(algo, data).digest()).decode()


@pytest.mark.parametrize("want", ["crc32", "crc32, adler32;q=0.5", "UNIXsum", "sha-3;q=1"])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_fedora_3_2_3_want_digest_of_only_unsupported_algorithms_is_400(
        client, repo, state, seeded, method, want):
    r = client.open("/rest/c/bin", method=method, headers={"Want-Digest": want})
    assert r.status_code == 400
    assert "Digest" not in r.headers
    if method == "GET":
        text = r.get_data(as_text=True)
        assert "Want-Digest names no supported algorithm" in text
        assert "sha-256" in text and "md5" in text
    assert state(repo) == seeded


@pytest.mark.parametrize("want, expected", [
    ("crc32, sha-256", {"sha-256": "sha256"}),
    ("md5;q=0.3, crc32;q=1", {"md5": "md5"}),
    ("SHA-512, sha", {"sha-512": "sha512", "sha": "sha1"}),
])
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_fedora_3_3_1_want_digest_supported_algorithms(client, seeded, method, want, expected):
    r = client.open("/rest/c/bin", method=method, headers={"Want-Digest": want})
    assert r.status_code == 200
    digests = hdr.parse_digest(r.headers["Digest"])
    assert digests == {name: _b64(algo, b"content") for name, algo in expected.items()}


def test_rfc3230_4_3_1_want_digest_refusing_every_algorithm_is_no_digest(client, seeded):
    """``q=0`` names what the client does not want: nothing unsupported is asked for."""
    r = client.get("/rest/c/bin", headers={"Want-Digest": "sha-256;q=0"})
    assert r.status_code == 200 and "Digest" not in r.headers


# --- Turtle without the final dot (as Fedora's parser reads it) ----------------------------------

@pytest.mark.parametrize("body", [
    f'<> {TITLE} "no dot"',
    f'<> {TITLE} "no dot" # a comment',
    f'<> {TITLE} "no dot"\n\n',
    f'<> {TITLE} "a" .\n<> {TITLE} "no dot"',
    f'<> {TITLE} "no dot" ;',
    f'<> {TITLE} [ {TITLE} "inner" ]',
])
def test_fedora_3_6_turtle_without_its_final_dot_is_read(client, body):
    r = client.put("/rest/t", data=body.encode(), content_type=TTL)
    assert r.status_code == 201, r.data
    _, triples = _get(client, "/rest/t")
    assert any(p == TITLE for _, p, _ in triples)
    r = client.post("/rest/", data=body.encode(), content_type=TTL)
    assert r.status_code == 201, r.data


@pytest.mark.parametrize("body, says", [
    (f'<> {TITLE} "open', "line 1"),
    (f"<> {TITLE} ( 1 2", "Unexpected end"),
    (f"<> {TITLE} [ {TITLE} 1", "line 1"),
    (f"<> {TITLE}", "line 1"),
    (f'<> {TITLE} "a" <> .', "line 1"),
    (f'<> {TITLE} "a" .. ', "line 1"),
])
def test_fedora_3_6_other_malformed_turtle_stays_400(client, repo, state, seeded, body, says):
    for r in (client.put("/rest/c", data=body.encode(), content_type=TTL),
              client.put("/rest/new", data=body.encode(), content_type=TTL),
              client.post("/rest/c", data=body.encode(), content_type=TTL)):
        text = r.get_data(as_text=True)
        assert r.status_code == 400, text
        assert says in text, text
    assert state(repo) == seeded


# --- state tokens (Fedora 6: X-State-Token, X-If-State-Token) ------------------------------

TITLE = "<http://purl.org/dc/terms/title>"
UPDATE = "application/sparql-update"


def test_state_token_on_reads_changes_with_every_change(client):
    put_ttl(client, "/rest/st", f'<> {TITLE} "one" .')
    first = client.get("/rest/st").headers["X-State-Token"]
    assert first and client.head("/rest/st").headers["X-State-Token"] == first
    # the same state, whatever the representation
    assert client.get("/rest/st", headers={"Accept": "application/n-triples"}) \
        .headers["X-State-Token"] == first
    assert client.patch("/rest/st", data=f'INSERT DATA {{ <> {TITLE} "two" }}',
                        content_type=UPDATE).status_code == 204
    second = client.get("/rest/st").headers["X-State-Token"]
    assert second != first
    client.post("/rest/st", data=b"", content_type=TTL)   # a child changes containment
    assert client.get("/rest/st").headers["X-State-Token"] not in (first, second)


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_if_state_token_that_does_not_match_is_412_and_writes_nothing(client, method):
    put_ttl(client, "/rest/st", f'<> {TITLE} "one" .')
    token = client.get("/rest/st").headers["X-State-Token"]
    body, ctype = ((f'<> {TITLE} "new" .', TTL) if method == "PUT"
                   else (f'INSERT DATA {{ <> {TITLE} "new" }}', UPDATE))
    stale = client.open("/rest/st", method=method, data=body, content_type=ctype,
                        headers={"X-If-State-Token": "not-" + token})
    assert stale.status_code == 412
    assert client.get("/rest/st").headers["X-State-Token"] == token
    assert '"new"' not in client.get("/rest/st", headers={"Accept": TTL}).get_data(as_text=True)
    fresh = client.open("/rest/st", method=method, data=body, content_type=ctype,
                        headers={"X-If-State-Token": token})
    assert fresh.status_code == 204
    assert '"new"' in client.get("/rest/st", headers={"Accept": TTL}).get_data(as_text=True)
