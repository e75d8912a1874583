"""Interoperability with the real Fedora 6.1.0 (``make interop-ocfl``, which fetches
the ``org.fcrepo:fcrepo-webapp:6.1.0`` war and ``jetty-runner`` 9.4 from Maven
Central and runs Fedora with Java 17 on 127.0.0.1):

* Fedora started on an export (OCFL 1.0) rebuilds from it and serves every
  resource with the same client triples, binary digests, versions and
  tombstones;
* a storage root Fedora wrote itself (resources, a binary, an ACL, an Archival
  Group, versions, a deletion made through its HTTP API) imports with the same
  content.
"""
from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from lakesuperior import Repository, rdfio
from lakesuperior.bench.ports import free_port
from lakesuperior.config import Config
from lakesuperior.http import headers as hdr
from lakesuperior.model.namespaces import EBUCORE_FILENAME, LDP_CONTAINS
from lakesuperior.model.server_managed import is_server_managed
from lakesuperior.ocfl.export import export_ocfl
from lakesuperior.ocfl.imports import import_ocfl

M2 = Path(os.environ.get("M2_REPO", Path.home() / ".m2" / "repository"))
WAR = M2 / "org/fcrepo/fcrepo-webapp/6.1.0/fcrepo-webapp-6.1.0.war"
JETTY = M2 / "org/eclipse/jetty/jetty-runner/9.4.53.v20231009/jetty-runner-9.4.53.v20231009.jar"
USER = "fedoraAdmin"
AUTH = "Basic " + base64.b64encode(f"{USER}:{USER}".encode()).decode()
TITLE = "<http://purl.org/dc/terms/title>"
OMIT = 'return=representation; omit="http://fedora.info/definitions/fcrepo#ServerManaged"'
REALM_XML = """<?xml version="1.0"?>
<!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "http://www.eclipse.org/jetty/configure_9_3.dtd">
<Configure id="Server" class="org.eclipse.jetty.server.Server">
  <Call name="addBean"><Arg>
    <New class="org.eclipse.jetty.security.HashLoginService">
      <Set name="name">fcrepo</Set><Set name="config">{realm}</Set>
    </New>
  </Arg></Call>
</Configure>
"""


class Fedora:
    """Fedora 6.1.0 in jetty-runner on 127.0.0.1, its home in ``home``."""

    def __init__(self, home: Path, work: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/fcrepo/rest"
        (work / "realm.properties").write_text(f"{USER}: {USER},fedoraAdmin\n")
        (work / "jetty.xml").write_text(REALM_XML.format(realm=work / "realm.properties"))
        self.log_path = work / f"fedora-{self.port}.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            ["java", "-Xmx768m", f"-Dfcrepo.home={home}", "-Dfcrepo.rebuild.on.start=true",
             "-jar", str(JETTY), "--host", "127.0.0.1", "--port", str(self.port),
             "--path", "/fcrepo", "--config", str(work / "jetty.xml"), str(WAR)],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 240
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("Fedora exited:\n" + self.log_path.read_text()[-3000:])
            try:
                if self.request("HEAD", "")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("Fedora did not start:\n" + self.log_path.read_text()[-3000:])
            time.sleep(1)

    def request(self, method: str, path: str, data: bytes | None = None,
                headers: dict | None = None) -> tuple[int, dict, bytes]:
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Authorization": AUTH, **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def user_triples(self, path: str) -> list:
        status, _, body = self.request("GET", path, headers={
            "Accept": "application/n-triples", "Prefer": OMIT})
        assert status == 200, (path, status, body[:300])
        return sorted(t for t in rdfio.parse(body, rdfio.N_TRIPLES, self.base + path)
                      if t[1] != LDP_CONTAINS and not is_server_managed(t[1], t[2]))

    def mementos(self, path: str) -> list[str]:
        status, _, body = self.request("GET", path + "/fcr:versions",
                                       headers={"Accept": "application/link-format"})
        assert status == 200, (path, status)
        # distinct datetimes: Fedora lists two versions made in one second twice,
        # which are one version here (a Memento names the state at its second)
        return sorted({hdr.parse_http_date(link.params["datetime"]).strftime("%Y%m%d%H%M%S")
                       for link in hdr.parse_link(body.decode()) if link.has_rel("memento")})

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture
def fedora_home(tmp_path):
    started: list[Fedora] = []

    def start(home: Path) -> Fedora:
        f = Fedora(home, tmp_path)
        started.append(f)
        return f
    yield start
    for f in started:
        if f.proc.poll() is None:
            f.stop()


def test_fedora_serves_an_export(tmp_path, fedora_home):
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    base = "http://lsup.example/rest"     # the export names resources info:fedora/...
    with Repository(tmp_path / "src", base_uri=base, sync=False) as repo:
        repo.create_or_replace("/coll", data=f'<> {TITLE} "coll" . <#h> {TITLE} "hash" .'
                               .encode(), media_type="text/turtle")
        repo.create_or_replace("/coll/bin", data=b"first bytes", media_type="text/plain",
                               filename="a.txt")
        repo.update_delta("/coll/bin", None, [("<>", TITLE, '"a binary"')])
        repo.create_or_replace("/ag", data=f'<> {TITLE} "group" .'.encode(),
                               media_type="text/turtle", archival_group=True)
        repo.create_or_replace("/ag/part", data=f'<> {TITLE} "part" .'.encode(),
                               media_type="text/turtle")
        repo.create_or_replace("/gone", data=f'<> {TITLE} "gone" .'.encode(),
                               media_type="text/turtle")
        time.sleep(1.05)
        repo.create_or_replace("/coll", data=f'<> {TITLE} "coll, second" .'.encode(),
                               media_type="text/turtle")
        repo.create_or_replace("/coll/bin", data=b"second bytes", media_type="text/plain")
        repo.delete("/gone")
        expected = {}
        for uid in ("/coll", "/coll/bin", "/ag", "/ag/part"):
            res = repo.get(uid)
            # a binary's file name is in Fedora's headers (Content-Disposition), not
            # among the client's triples
            expected[uid] = (sorted(t for t in res.user_data if t[1] != EBUCORE_FILENAME),
                             res.version_ids, getattr(res, "digests", {}).get("sha512"),
                             getattr(res, "filename", None))
        export_ocfl(repo, home / "data" / "ocfl-root", ocfl_version="1.0")
    fedora = fedora_home(home)
    log = fedora.log_path.read_text()
    assert "0 objects had errors" in log, log[-3000:]
    for uid, (user, versions, sha512, filename) in expected.items():
        path = uid + ("/fcr:metadata" if sha512 else "")
        got = [tuple(t.replace(fedora.base, base) for t in tr) for tr in fedora.user_triples(path)]
        assert got == user, uid
        assert len(fedora.mementos(uid)) == len(versions), (uid, fedora.mementos(uid), versions)
        if sha512:
            status, headers, body = fedora.request("GET", uid)
            assert status == 200 and hashlib.sha512(body).hexdigest() == sha512
            assert f'filename="{filename}"' in headers["Content-Disposition"]
    assert fedora.request("GET", "/gone")[0] == 410


def test_a_root_fedora_wrote_imports(tmp_path, fedora_home):
    home = tmp_path / "home"
    home.mkdir()
    fedora = fedora_home(home)
    b = fedora.base
    turtle = {"Content-Type": "text/turtle"}

    def put(path, body, headers=turtle):
        status = fedora.request("PUT", path, body.encode() if isinstance(body, str) else body,
                                headers)[0]
        assert status in (201, 204), (path, status)
    put("/coll", f'<> {TITLE} "coll" .')
    put("/coll/bin", b"fedora bytes", {"Content-Type": "text/plain"})
    time.sleep(1.05)      # the ACL in a version of its own, which is no Memento of /coll
    put("/coll/fcr:acl", "@prefix acl: <http://www.w3.org/ns/auth/acl#> .\n"
        f"<#r> a acl:Authorization ; acl:agentClass <http://xmlns.com/foaf/0.1/Agent> ; "
        f"acl:mode acl:Read ; acl:accessTo <{b}/coll> .")
    put("/ag", f'<> {TITLE} "group" .', {**turtle, "Link": '<http://fedora.info/definitions/'
                                          'v4/repository#ArchivalGroup>;rel="type"'})
    put("/ag/part", f'<> {TITLE} "part" .')
    put("/gone", f'<> {TITLE} "gone" .')
    time.sleep(1.05)
    put("/coll", f'<> {TITLE} "coll, second" .')
    assert fedora.request("DELETE", "/gone")[0] == 204
    expected = {uid: (fedora.user_triples(uid + ("/fcr:metadata" if uid == "/coll/bin"
                                                 else "")), fedora.mementos(uid))
                for uid in ("/coll", "/coll/bin", "/ag", "/ag/part")}
    fedora_bytes = fedora.request("GET", "/coll/bin")[2]
    fedora.stop()
    cfg = Config().with_(data_dir=str(tmp_path / "dest"), base_uri=b, sync=False)
    report = import_ocfl(str(home / "data" / "ocfl-root"), cfg)
    assert report.failed == [], report.failed
    with Repository(config=cfg) as repo:
        for uid, (user, mementos) in expected.items():
            res = repo.get(uid)
            assert sorted(res.user_data) == user, uid
            assert res.version_ids == mementos, (uid, res.version_ids, mementos)
        binary = repo.get("/coll/bin")
        assert binary.digests["sha512"] == hashlib.sha512(fedora_bytes).hexdigest()
        assert binary.mimetype == "text/plain"
        assert repo.has_acl("/coll") and any("Authorization" in t[2] for t in repo.acl("/coll"))
        assert "ArchivalGroup" in " ".join(repo.get("/ag").types)
        with pytest.raises(Exception, match="tombstone"):
            repo.exists("/gone")
