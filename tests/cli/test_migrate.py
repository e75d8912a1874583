"""lsup-admin migrate: against a real lsup-server on loopback (every migrated graph
isomorphic to its source, every binary with the same digest), and against a stub
LDP server on loopback for the sources that fail or send garbage."""
from __future__ import annotations

import base64
import csv
import hashlib
import http.client
import os

import pytest
import rdflib
from rdflib.compare import isomorphic

from lakesuperior.config import Config

from .conftest import free_port, populate, running_server

pytestmark = pytest.mark.slow

LDP = "http://www.w3.org/ns/ldp#"
DEST_BASE = Config().base_uri
TTL = {"Content-Type": "text/turtle"}


def _request(url: str, method: str = "GET", body: bytes | None = None,
             headers: dict | None = None) -> tuple[int, dict, bytes]:
    from urllib.parse import urlsplit
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.netloc, timeout=30)
    try:
        conn.request(method, parts.path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def _user_graph(triples, old_base: str | None = None, new_base: str | None = None):
    """An rdflib Graph of the client triples (server-managed and containment dropped),
    with ``old_base`` IRIs rewritten under ``new_base``."""
    from lakesuperior.model.server_managed import is_server_managed
    from lakesuperior.rdfio import to_rdflib
    g = rdflib.Graph()
    for s, p, o in triples:
        if is_server_managed(p, o):
            continue
        if old_base:
            s, o = (t.replace("<" + old_base, "<" + new_base, 1) for t in (s, o))
        g.add((to_rdflib(s), to_rdflib(p), to_rdflib(o)))
    return g


def _source_triples(url: str):
    from lakesuperior import rdfio
    status, _, body = _request(url, headers={
        "Accept": "text/turtle",
        "Prefer": f'return=representation; omit="{LDP}PreferMembership"'})
    assert status == 200, (url, status)
    return rdfio.parse(body, "text/turtle", url)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A populated repository served by lsup-server, with one more resource linked
    only from another (not contained by a start point); the module's tests only
    read it."""
    tmp = tmp_path_factory.mktemp("migrate-source")
    uids = populate(tmp / "source")
    with running_server(tmp / "source", tmp / "server.log") as srv:
        status, _, _ = _request(srv.url + "/coll/linker", "PUT",
                                f"<> <http://ex.org/see> <{srv.url}/flat> .".encode(), TTL)
        assert status == 201
        yield srv, uids


def test_migrate_our_server(invoke, source, tmp_path):
    srv, uids = source
    dest = tmp_path / "dest"
    res = invoke("migrate", srv.url, dest, "--report", tmp_path / "report.csv")
    assert res.exit_code == 0, res.output + srv.log_text()
    assert "Migrated 9 resources" in res.output          # root + 8 (tombstone not copied)
    assert "Skipped 0, failed 0" in res.output
    assert (tmp_path / "report.csv").read_text().strip() == "status,url,reason"

    from lakesuperior import Repository
    with Repository(srv.data_dir, sync=False, indexer_process=False) as src_repo:
        src_uids = sorted(_all_uids(src_repo))
    with Repository(dest, base_uri=DEST_BASE, sync=False, indexer_process=False) as repo:
        assert sorted(_all_uids(repo)) == src_uids
        for uid in src_uids:
            mine = repo.get(uid, incl_membership=False)
            src_res = _source_triples(srv.url + uid
                                      + ("/fcr:metadata" if mine.is_binary else ""))
            want = _user_graph(src_res, srv.url, DEST_BASE)
            got = _user_graph(mine.triples)
            assert isomorphic(want, got), (uid, sorted(want), sorted(got))
            assert len(want) == len(got)
            status, headers, _ = _request(srv.url + uid, "HEAD")
            src_types = {t.strip().split(">")[0].lstrip("<")
                         for t in headers["link"].split(",") if 'rel="type"' in t}
            assert mine.interaction_model[1:-1] in src_types, uid
        # binaries: same content digest, media type and file name
        binary = repo.get("/coll/file.bin")
        assert binary.digest == uids["digest"]
        assert binary.filename == "file.bin"
        assert binary.mimetype == "application/octet-stream"
        with binary.content as fh:
            assert hashlib.sha512(fh.read()).hexdigest() == uids["digest"]
        note = repo.get("/coll/note.txt")
        assert note.mimetype == "text/plain"
        assert note.digest == hashlib.sha512(b"hello world\n").hexdigest()
        assert ("<" + DEST_BASE + "/coll/file.bin>", "<http://purl.org/dc/terms/title>",
                '"a binary"') in binary.triples
        # the direct container makes its membership triples again
        assert ("<" + DEST_BASE + "/coll>", "<http://purl.org/dc/terms/hasPart>",
                "<" + DEST_BASE + "/dc/m1>") in repo.get("/coll").triples
        assert repo.integrity_check().ok
        for uid in ("/coll/file.bin", "/coll/note.txt"):
            assert repo.fixity_check(uid).ok
    assert invoke("check-fixity", "--all", "--data-dir", dest).exit_code == 0


def _all_uids(repo) -> list[str]:
    out, todo = [], ["/"]
    while todo:
        uid = todo.pop()
        out.append(uid)
        todo.extend(repo.get(uid).children)
    return out


def test_migrate_from_a_start_point_follows_links(invoke, source, tmp_path):
    srv, _ = source
    dest = tmp_path / "dest"
    res = invoke("migrate", srv.url + "/", dest, "--start", "/coll")
    assert res.exit_code == 0, res.output
    from lakesuperior import Repository
    with Repository(dest, sync=False, indexer_process=False) as repo:
        got = sorted(_all_uids(repo))
    # /flat only through the link from /coll/linker; /dc not reachable
    assert got == ["/", "/coll", "/coll/doc", "/coll/file.bin", "/coll/linker",
                   "/coll/note.txt", "/flat"]


def test_migrate_list_file(invoke, source, tmp_path):
    srv, _ = source
    listing = tmp_path / "list.txt"
    listing.write_text(f"# starting points\n{srv.url}/dc\n\n/flat\n")
    res = invoke("migrate", srv.url, tmp_path / "dest", "--list-file", listing,
                 "--start", "/dc")
    assert res.exit_code == 0, res.output
    from lakesuperior import Repository
    with Repository(tmp_path / "dest", sync=False, indexer_process=False) as repo:
        # /dc links to its membership resource /coll, which contains the rest
        assert "/coll/doc" in _all_uids(repo) and "/flat" in _all_uids(repo)


def test_migrate_refusals(invoke, source, tmp_path):
    srv, _ = source
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    res = invoke("migrate", srv.url, full)
    assert res.exit_code == 2 and "not empty" in res.output
    assert os.listdir(full) == ["x"]
    res = invoke("migrate", "ftp://example.org/rest", tmp_path / "d")
    assert res.exit_code == 2 and "http(s) URL" in res.output
    res = invoke("migrate", f"http://127.0.0.1:{free_port()}/rest", tmp_path / "d")
    assert res.exit_code == 2 and "Cannot reach the migration source" in res.output
    res = invoke("migrate", srv.url, tmp_path / "d", "--start", "http://elsewhere.org/x")
    assert res.exit_code == 2 and "not under the source" in res.output
    res = invoke("migrate", srv.url, tmp_path / "d", "--start", "/no/such/thing")
    assert res.exit_code == 2 and "404" in res.output
    res = invoke("migrate", srv.url, tmp_path / "d", "--list-file", tmp_path / "nolist")
    assert res.exit_code == 2 and "Cannot read the list file" in res.output
    res = invoke("migrate", srv.url, tmp_path / "d", "--auth", "nocolon")
    assert res.exit_code == 2 and "USER:PASS" in res.output
    res = invoke("migrate", srv.url, tmp_path / "d", "--data-dir", tmp_path / "other")
    assert res.exit_code == 2
    assert not (tmp_path / "d").exists()
    assert not [p for p in os.listdir(tmp_path) if ".migrating-" in p]


# --- a stub source on loopback ------------------------------------------------------------

def _ldp(body: bytes, model: str = "BasicContainer", ctype: str = "text/turtle",
         extra: dict | None = None):
    headers = {"Content-Type": ctype, "Link": f'<{LDP}{model}>; rel="type"', **(extra or {})}
    return (200, headers, body)


def _stub_routes(contains: list[str]) -> dict:
    body = "".join(f"<> <{LDP}contains> </rest/{c}> .\n" for c in contains).encode()
    return {"/rest/": _ldp(body),
            "/rest/good": _ldp(b'<> <http://purl.org/dc/terms/title> "good" .'),
            "/rest/bad": (500, {"Content-Type": "text/plain"}, b"internal error"),
            "/rest/garbage": _ldp(b"this is <<< not turtle"),
            "/rest/html": _ldp(b"<html></html>", ctype="text/html"),
            "/rest/missing": (404, {}, b"")}


def test_migrate_failing_source_stops_cleanly(invoke, stub_server, tmp_path):
    url = stub_server(_stub_routes(["good", "bad"]))
    res = invoke("migrate", url + "/rest", tmp_path / "d")
    assert res.exit_code == 2
    assert "/rest/bad: HEAD answered 500" in res.output
    assert not (tmp_path / "d").exists()
    assert not [p for p in os.listdir(tmp_path) if ".migrating-" in p]


@pytest.mark.parametrize("name, message", [
    ("garbage", "not valid RDF"),
    ("html", "text/html, which is not RDF"),
])
def test_migrate_garbage_stops_cleanly(invoke, stub_server, tmp_path, name, message):
    url = stub_server(_stub_routes(["good", name]))
    res = invoke("migrate", url + "/rest", tmp_path / "d")
    assert res.exit_code == 2
    assert message in res.output
    assert not (tmp_path / "d").exists()


def test_migrate_skip_errors_reports_everything(invoke, stub_server, tmp_path):
    url = stub_server(_stub_routes(["good", "bad", "garbage", "html", "missing"]))
    report = tmp_path / "report.csv"
    res = invoke("migrate", url + "/rest", tmp_path / "d", "--skip-errors", "--report", report)
    assert res.exit_code == 1, res.output
    assert "Migrated 2 resources" in res.output and "Skipped 1, failed 3" in res.output
    with report.open(newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["status", "url", "reason"]
    assert sorted((r[0], r[1].rsplit("/", 1)[1]) for r in rows[1:]) == [
        ("failed", "bad"), ("failed", "garbage"), ("failed", "html"), ("skipped", "missing")]
    from lakesuperior import Repository
    with Repository(tmp_path / "d", sync=False, indexer_process=False) as repo:
        assert repo.get("/").children == ["/good"]
        assert ("<http://purl.org/dc/terms/title>", '"good"') in {
            (p, o) for s, p, o in repo.get("/good").triples}


def test_migrate_interrupted_leaves_nothing(invoke, stub_server, tmp_path, monkeypatch):
    from lakesuperior.admin import migrate
    url = stub_server(_stub_routes(["good"]))

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(migrate, "_migrate_one", interrupt)
    res = invoke("migrate", url + "/rest", tmp_path / "d")
    assert res.exit_code == 130 and "Interrupted" in res.output
    assert not (tmp_path / "d").exists()
    assert not [p for p in os.listdir(tmp_path) if ".migrating-" in p]


def test_migrate_not_ldp_and_auth(invoke, stub_server, tmp_path):
    url = stub_server({"/rest/": (200, {"Content-Type": "text/html"}, b"<html/>")})
    res = invoke("migrate", url + "/rest", tmp_path / "d")
    assert res.exit_code == 2 and "does not answer like an LDP server" in res.output

    token = "Basic " + base64.b64encode(b"alice:secret").decode()
    root = _ldp(b'<> <http://purl.org/dc/terms/title> "locked" .')

    def guarded(handler):
        if handler.headers.get("Authorization") != token:
            return (401, {"WWW-Authenticate": 'Basic realm="x"'}, b"")
        return root

    url = stub_server({"/rest/": guarded})
    res = invoke("migrate", url + "/rest", tmp_path / "d")
    assert res.exit_code == 2 and "--auth" in res.output
    res = invoke("migrate", url + "/rest", tmp_path / "d", "--auth", "alice:secret")
    assert res.exit_code == 0, res.output


def test_migrate_verifies_binary_digests(invoke, stub_server, tmp_path):
    content = b"binary payload"
    good = base64.b64encode(hashlib.sha512(content).digest()).decode()
    bad = base64.b64encode(hashlib.sha512(b"other").digest()).decode()
    md5 = hashlib.md5(content).hexdigest()

    def binary(digest):
        return (200, {"Content-Type": "image/png", "Digest": f"sha-512={digest}",
                      "Link": f'<{LDP}NonRDFSource>; rel="type", '
                              '</rest/b/fcr:metadata>; rel="describedby"'}, content)

    desc = (b'<http://S/rest/b> <http://www.loc.gov/premis/rdf/v1#hasMessageDigest> '
            b'<urn:md5:' + md5.encode() + b'> ; '
            b'<http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#filename> "pic.png" ; '
            b'<http://purl.org/dc/terms/title> "picture" .')
    routes = {"/rest/": _ldp(f"<> <{LDP}contains> </rest/b> .".encode()),
              "/rest/b": binary(good),
              "/rest/b/fcr:metadata": _ldp(desc, "RDFSource")}
    url = stub_server(routes)
    routes["/rest/b/fcr:metadata"] = _ldp(desc.replace(b"http://S", url.encode()), "RDFSource")
    res = invoke("migrate", url + "/rest", tmp_path / "ok")
    assert res.exit_code == 0, res.output
    from lakesuperior import Repository
    with Repository(tmp_path / "ok", sync=False, indexer_process=False) as repo:
        b = repo.get("/b")
        assert b.digest == hashlib.sha512(content).hexdigest()
        assert b.digests["md5"] == md5
        assert b.filename == "pic.png" and b.mimetype == "image/png"
        assert any(p == "<http://purl.org/dc/terms/title>" for s, p, o in b.triples)
    routes["/rest/b"] = binary(bad)
    res = invoke("migrate", url + "/rest", tmp_path / "bad")
    assert res.exit_code == 2 and "digest mismatch" in res.output
    assert not (tmp_path / "bad").exists()
    routes["/rest/b"] = (200, {"Content-Type": "image/png",
                               "Link": f'<{LDP}NonRDFSource>; rel="type"'}, content)
    routes["/rest/b/fcr:metadata"] = _ldp(b"", "RDFSource")
    res = invoke("migrate", url + "/rest", tmp_path / "unverified")
    assert res.exit_code == 0, res.output
    assert "UNVERIFIED" in res.output


def test_migrate_copies_versions(invoke, tmp_path, start_server):
    from datetime import UTC, datetime

    from lakesuperior import Repository
    data = tmp_path / "source"
    populate(data)
    old = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)
    with Repository(data, sync=False, indexer_process=False) as repo:
        repo.import_version("/coll/doc", old, data=b'<> <http://ex.org/v> "old" .\n'
                            b'<#part> <http://ex.org/v> "old part" .', media_type="text/turtle")
        repo.import_version("/coll/note.txt", old, data=b"old note", media_type="text/csv",
                            filename="old.csv")
        want = {uid: [v.id for v in repo.versions(uid)]
                for uid in ("/coll", "/coll/doc", "/coll/note.txt", "/flat")}
    srv = start_server(data)
    dest = tmp_path / "dest"
    res = invoke("migrate", srv.url, dest)
    assert res.exit_code == 0, res.output + srv.log_text()
    with Repository(data, sync=False, indexer_process=False) as repo:
        total = sum(len(repo.versions(u)) for u in _all_uids(repo) if u != "/")
    assert f" {total:,} versions, " in res.output
    with Repository(dest, base_uri=DEST_BASE, sync=False, indexer_process=False) as repo:
        for uid, ids in want.items():
            assert [v.id for v in repo.versions(uid)] == ids, uid
        doc = repo.get_version("/coll/doc", "20010203040506")
        assert {(s, o) for s, p, o in doc.triples if p == "<http://ex.org/v>"} == {
            (f"<{DEST_BASE}/coll/doc>", '"old"'), (f"<{DEST_BASE}/coll/doc#part>", '"old part"')}
        note = repo.get_version("/coll/note.txt", "20010203040506")
        assert note.digest == hashlib.sha512(b"old note").hexdigest()
        assert note.mimetype == "text/csv" and note.filename == "old.csv"
        assert repo.get("/coll/note.txt").digest == hashlib.sha512(b"hello world\n").hexdigest()
        newest = repo.get_version("/coll/doc", want["/coll/doc"][-1])
        assert isomorphic(_user_graph(newest.triples), _user_graph(repo.get("/coll/doc").triples))


# --- ACLs ------------------------------------------------------------------------------------

ACL_NS = "http://www.w3.org/ns/auth/acl#"
ALICE = "http://example.org/people/alice"


def _acl(uid: str, who: str, *, default: bool = True, extra: str = "") -> bytes:
    """An ACL of ``uid`` in the populated source (base ``BASE``) granting ``who`` Read."""
    from .conftest import BASE
    target = f"<{BASE}{uid}>"
    return (f"@prefix acl: <{ACL_NS}> .\n@prefix foaf: <http://xmlns.com/foaf/0.1/> .\n"
            f"<#read> a acl:Authorization ; acl:mode acl:Read ; {who} ; acl:accessTo {target}"
            + (f" ; acl:default {target}" if default else "") + " .\n" + extra).encode()


@pytest.fixture(scope="module")
def guarded_source(tmp_path_factory):
    """The populated source with ACLs: /coll and what is below it readable by Alice
    only, the binary /coll/note.txt by everyone, /flat by Alice without acl:default,
    plus an untyped node and an accessTo naming a resource below (the module's
    tests only read it)."""
    from lakesuperior import Repository

    from .conftest import BASE
    tmp = tmp_path_factory.mktemp("guarded-source")
    data = tmp / "source"
    populate(data)
    with Repository(data, base_uri=BASE, sync=False, indexer_process=False) as repo:
        repo.set_acl("/coll", data=_acl("/coll", f"acl:agent <{ALICE}>", extra=(
            f"<#doc> a acl:Authorization ; acl:mode acl:Write ; acl:agent <{ALICE}> ; "
            f"acl:accessTo <{BASE}/coll/doc> ; acl:default <{BASE}/coll> .\n"
            '<#note> <http://purl.org/dc/terms/description> "not an authorization" .\n')),
            media_type="text/turtle")
        repo.set_acl("/coll/note.txt", data=_acl("/coll/note.txt", "acl:agentClass foaf:Agent"),
                     media_type="text/turtle")
        repo.set_acl("/flat", data=_acl("/flat", f"acl:agent <{ALICE}>", default=False),
                     media_type="text/turtle")
    with running_server(data, tmp / "server.log") as srv:
        yield srv


def _acl_graph(triples, old_base: str | None = None, new_base: str | None = None):
    return _user_graph(triples, old_base, new_base)


def test_migrate_copies_acls(invoke, guarded_source, tmp_path):
    from lakesuperior import Repository
    from lakesuperior.exceptions import AccessDeniedError
    srv = guarded_source
    dest = tmp_path / "dest"
    res = invoke("migrate", srv.url, dest)
    assert res.exit_code == 0, res.output + srv.log_text()
    assert " 4 ACLs, " in res.output                    # the root's, /coll, the binary, /flat
    with Repository(dest, base_uri=DEST_BASE, sync=False, indexer_process=False) as repo:
        for uid in ("/", "/coll", "/coll/note.txt", "/flat"):
            status, _, body = _request(srv.url + uid.rstrip("/") + "/fcr:acl",
                                       headers={"Accept": "text/turtle"})
            assert status == 200
            from lakesuperior import rdfio
            want = _acl_graph(rdfio.parse(body, "text/turtle", srv.url), srv.url, DEST_BASE)
            got = _acl_graph(repo.acl(uid))
            assert isomorphic(want, got), (uid, sorted(want), sorted(got))
        assert not repo.has_acl("/coll/doc") and not repo.has_acl("/dc")
        anonymous, alice = repo.as_agent(None), repo.as_agent(ALICE)
        for uid in ("/coll", "/coll/doc", "/coll/file.bin", "/flat"):
            with pytest.raises(AccessDeniedError):
                anonymous.get(uid)
            assert alice.get(uid).uid == uid
        assert anonymous.get("/coll/note.txt").uid == "/coll/note.txt"
        assert anonymous.get("/dc/m1").uid == "/dc/m1"        # the root's ACL
        assert alice.modes("/coll/doc") == {"Read", "Write", "Append"}
        assert alice.modes("/coll/file.bin") == {"Read"}


def test_migrate_from_a_start_point_copies_the_acls_above_it(invoke, guarded_source, tmp_path):
    from lakesuperior import Repository
    from lakesuperior.exceptions import AccessDeniedError
    srv = guarded_source
    dest = tmp_path / "dest"
    res = invoke("migrate", srv.url, dest, "--start", "/coll/file.bin")
    assert res.exit_code == 0, res.output
    assert "Migrated 1 resources" in res.output
    assert " 2 ACLs, " in res.output                    # /coll's and the root's
    with Repository(dest, base_uri=DEST_BASE, sync=False, indexer_process=False) as repo:
        assert repo.has_acl("/coll") and repo.has_acl("/")
        assert repo.get("/coll").children == ["/coll/file.bin"]
        with pytest.raises(AccessDeniedError):
            repo.as_agent(None).get("/coll/file.bin")
        assert repo.as_agent(ALICE).get("/coll/file.bin").uid == "/coll/file.bin"


def _webac_routes(acl_answer) -> dict:
    """A stub WebAC source: the root and /rest/good link their ACLs, the root's ACL
    answers ``acl_answer``."""
    def linked(path: str, body: bytes, model: str = "BasicContainer"):
        return _ldp(body, model, extra={"Link": f'<{LDP}{model}>; rel="type", '
                                                f'<{path}/fcr:acl>; rel="acl"'})
    return {"/rest/": linked("/rest", f"<> <{LDP}contains> </rest/good> .".encode()),
            "/rest/fcr:acl": acl_answer,
            "/rest/good": linked("/rest/good", b'<> <http://purl.org/dc/terms/title> "g" .'),
            "/rest/good/fcr:acl": (404, {}, b"")}


@pytest.mark.parametrize("answer, message", [
    ((403, {"Content-Type": "text/plain"}, b"no"), "refused to show its ACL"),
    ((401, {"WWW-Authenticate": 'Basic realm="x"'}, b""), "refused to show its ACL"),
    ((500, {"Content-Type": "text/plain"}, b"boom"), "answered 500"),
    ((200, {"Content-Type": "text/html"}, b"<html/>"), "text/html, not RDF"),
    ((200, {"Content-Type": "text/turtle"}, b"<<< nope"), "not valid RDF"),
    ((200, {"Content-Type": "text/turtle"},
      f"<#a> a <{ACL_NS}Authorization> ; <{ACL_NS}mode> <{ACL_NS}Read> ; "
      f"<{ACL_NS}agentGroup> <http://elsewhere.org/group> .".encode()),
     "cannot be kept here"),
], ids=["403", "401", "500", "html", "garbage", "refused"])
@pytest.mark.parametrize("skip", [False, True], ids=["stop", "skip-errors"])
def test_migrate_stops_on_an_acl_it_cannot_copy(invoke, stub_server, tmp_path, answer,
                                                message, skip):
    url = stub_server(_webac_routes(answer))
    res = invoke("migrate", url + "/rest", tmp_path / "d", *(["--skip-errors"] if skip else []))
    assert res.exit_code == 2, res.output
    assert message in res.output and "/rest/fcr:acl" in res.output
    assert not (tmp_path / "d").exists()
    assert not [p for p in os.listdir(tmp_path) if ".migrating-" in p]


def test_migrate_stops_below_a_resource_whose_acl_was_not_copied(invoke, stub_server,
                                                                 tmp_path):
    routes = _webac_routes(_ldp(b"", "RDFSource"))
    routes["/rest/"] = _ldp(f"<> <{LDP}contains> </rest/good>, </rest/box> .".encode(),
                            extra={"Link": f'<{LDP}BasicContainer>; rel="type", '
                                           '</rest/fcr:acl>; rel="acl"'})
    routes["/rest/good"] = _ldp(b"<> <http://ex.org/see> </rest/box/item> .",
                                extra={"Link": f'<{LDP}BasicContainer>; rel="type"'})
    routes["/rest/box"] = (500, {"Content-Type": "text/plain"}, b"boom")
    routes["/rest/box/item"] = _ldp(b'<> <http://purl.org/dc/terms/title> "private?" .')
    url = stub_server(routes)
    res = invoke("migrate", url + "/rest", tmp_path / "d", "--skip-errors")
    assert res.exit_code == 2, res.output
    assert "/rest/box/item" in res.output and "failed before its ACL" in res.output
    assert not (tmp_path / "d").exists()
    del routes["/rest/box/item"]                       # nothing below it: skipped as before
    routes["/rest/good"] = _ldp(b"<> <http://ex.org/see> <http://elsewhere.org/x> .")
    res = invoke("migrate", url + "/rest", tmp_path / "d", "--skip-errors")
    assert res.exit_code == 1, res.output
    assert "failed 1" in res.output and " 1 ACLs, " in res.output
