"""What an export holds, file by file, as Fedora 6 writes it (fcrepo-storage-ocfl's
PersistencePaths, ResourceHeaders and DefaultHeadersValidator)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from lakesuperior.ocfl import fedora
from lakesuperior.ocfl.export import export_ocfl
from lakesuperior.ocfl.storage import object_path

NT = "application/n-triples"


@pytest.fixture(scope="module")
def out(shared_source, tmp_path_factory) -> Path:
    """The export of ``shared_source``: one per module, the tests only read it."""
    root = tmp_path_factory.mktemp("format") / "ocfl"
    export_ocfl(shared_source, root)
    return root


def newest(root: Path, oid: str) -> tuple[Path, dict, dict[str, str]]:
    """(object dir, newest inventory, logical path -> content path)."""
    d = root / object_path(oid)
    head = d / "extensions" / "0005-mutable-head" / "head"
    inv = json.loads(((head if head.exists() else d) / "inventory.json").read_text())
    state = inv["versions"][inv["head"]]["state"]
    files = {p: inv["manifest"][dg][0] for dg, paths in state.items() for p in paths}
    return d, inv, files


def read(root: Path, oid: str, logical: str) -> bytes:
    d, _, files = newest(root, oid)
    return (d / files[logical]).read_bytes()


def header(root: Path, oid: str, logical: str) -> dict:
    return json.loads(read(root, oid, logical))


def test_root_declarations(out):
    assert (out / "0=ocfl_1.1").read_text() == "ocfl_1.1\n"
    assert json.loads((out / "ocfl_layout.json").read_text())["extension"] == \
        "0004-hashed-n-tuple-storage-layout"
    assert json.loads((out / "extensions" / "0004-hashed-n-tuple-storage-layout" /
                       "config.json").read_text()) == {
        "extensionName": "0004-hashed-n-tuple-storage-layout", "digestAlgorithm": "sha256",
        "tupleSize": 3, "numberOfTuples": 3, "shortObjectRoot": False}
    h = hashlib.sha256(b"info:fedora/coll").hexdigest()
    assert (out / h[:3] / h[3:6] / h[6:9] / h / "0=ocfl_object_1.1").exists()


def test_every_header_passes_fedoras_checks(out):
    count = 0
    for inv_file in out.rglob("inventory.json"):
        if inv_file.parent.name.startswith("v"):
            continue
        d = inv_file.parent if inv_file.parent.name != "head" else inv_file.parents[3]
        inv = json.loads(inv_file.read_text())
        for v in inv["versions"].values():
            files = {p: inv["manifest"][dg][0] for dg, paths in v["state"].items()
                     for p in paths}
            root = json.loads((d / files[".fcrepo/fcr-root.json"]).read_text())
            for logical, rel in files.items():
                if logical.startswith(".fcrepo/"):
                    h = json.loads((d / rel).read_text())
                    assert fedora.validate_headers(h, root, None) == [], (logical, h)
                    assert list(h)[-1] == "headersVersion" and None not in h.values()
                    assert (d / rel).read_bytes() == json.dumps(
                        h, separators=(",", ":"), ensure_ascii=False).encode()   # compact
                    if h.get("contentPath"):
                        assert h["contentPath"] in files
                        body = (d / files[h["contentPath"]]).read_bytes()
                        assert h["contentSize"] == len(body)
                        assert f"urn:sha-512:{hashlib.sha512(body).hexdigest()}" in h["digests"]
                    count += 1
    assert count > 30


def test_container_rdf_is_fedoras(out):
    body = read(out, "info:fedora/coll", "fcr-container.nt").decode()
    assert body == '<info:fedora/coll> <http://purl.org/dc/terms/title> "A collection"@en .\n'
    h = header(out, "info:fedora/coll", ".fcrepo/fcr-root.json")
    assert h["id"] == "info:fedora/coll" and h["parent"] == "info:fedora"
    assert h["interactionModel"] == "http://www.w3.org/ns/ldp#BasicContainer"
    assert h["objectRoot"] is True and h["archivalGroup"] is False and h["deleted"] is False
    assert h["contentPath"] == "fcr-container.nt" and h["headersVersion"] == "1.0"
    root = header(out, "info:fedora", ".fcrepo/fcr-root.json")
    assert root["id"] == "info:fedora" and root["parent"] == "info:fedora"   # as Fedora


def test_hash_iris_and_links_are_info_fedora(out):
    body = read(out, "info:fedora/coll/doc", "fcr-container.nt").decode()
    assert "<info:fedora/coll/doc>" in body and "test.example" not in body
    assert "fcrepo" not in body and "ldp#contains" not in body


def test_binary_description_and_acl(out):
    oid = "info:fedora/coll/file.bin"
    assert read(out, oid, "file.bin") == b"second content"
    h = header(out, oid, ".fcrepo/fcr-root.json")
    assert h["interactionModel"] == fedora.NON_RDF
    assert (h["mimeType"], h["filename"], h["contentSize"]) == ("text/plain", "second.txt", 14)
    assert h["contentPath"] == "file.bin"
    assert f"urn:sha-512:{hashlib.sha512(b'second content').hexdigest()}" in h["digests"]
    desc = header(out, oid, ".fcrepo/fcr-root~fcr-desc.json")
    assert desc["id"] == oid + "/fcr:metadata" and desc["parent"] == oid
    assert desc["interactionModel"] == fedora.DESCRIPTION
    assert desc["contentPath"] == "file.bin~fcr-desc.nt" and desc["objectRoot"] is False
    assert read(out, oid, "file.bin~fcr-desc.nt") == \
        b'<info:fedora/coll/file.bin> <http://purl.org/dc/terms/title> "a binary" .\n'
    acl = header(out, oid, ".fcrepo/fcr-root~fcr-acl.json")
    assert acl["id"] == oid + "/fcr:acl" and acl["interactionModel"] == fedora.ACL
    assert acl["contentPath"] == "file.bin~fcr-acl.nt"
    assert b"<info:fedora/coll/file.bin/fcr:acl#r>" in read(out, oid, "file.bin~fcr-acl.nt")
    assert header(out, "info:fedora/coll", ".fcrepo/fcr-root~fcr-acl.json")["contentPath"] \
        == "fcr-container~fcr-acl.nt"


def test_versions_are_mementos_oldest_first(out):
    _, inv, _ = newest(out, "info:fedora/coll/file.bin")
    created = [v["created"] for v in inv["versions"].values()]
    assert created == sorted(created) and len(created) >= 2
    d = out / object_path("info:fedora/coll/file.bin")
    first = json.loads((d / "v1" / "inventory.json").read_text())
    assert first["head"] == "v1" and list(first["versions"]) == ["v1"]
    v1 = {p: first["manifest"][dg][0] for dg, ps in first["versions"]["v1"]["state"].items()
          for p in ps}
    h = json.loads((d / v1[".fcrepo/fcr-root.json"]).read_text())
    assert h["mementoCreatedDate"] == first["versions"]["v1"]["created"]
    assert (d / v1["file.bin"]).read_bytes() == b"\x00\x01binary content" * 50


def test_content_is_stored_once(out):
    """The description header changes in every version, the unchanged content does
    not: it is in the manifest (and on disk) once."""
    _, inv, _ = newest(out, "info:fedora/ag")
    for paths in inv["manifest"].values():
        assert len(paths) == 1
    img = hashlib.sha512(b"image bytes").hexdigest()
    assert sum(1 for v in inv["versions"].values() if img in v["state"]) >= 2
    assert len(inv["manifest"][img]) == 1


def test_archival_group_is_one_object(out):
    assert not (out / object_path("info:fedora/ag/part")).exists()
    _, inv, files = newest(out, "info:fedora/ag")
    assert {"fcr-container.nt", "part/fcr-container.nt", "part/img", ".fcrepo/part.json",
            ".fcrepo/part/img.json", ".fcrepo/part/img~fcr-desc.json",
            "part/img~fcr-desc.nt", ".fcrepo/old.json"} <= set(files)
    ag = header(out, "info:fedora/ag", ".fcrepo/fcr-root.json")
    assert ag["archivalGroup"] is True and ag["objectRoot"] is True
    part = header(out, "info:fedora/ag", ".fcrepo/part.json")
    assert part["archivalGroupId"] == "info:fedora/ag" and part["objectRoot"] is False
    old = header(out, "info:fedora/ag", ".fcrepo/old.json")
    assert old["deleted"] is True and "old/fcr-container.nt" not in files


def test_tombstone(out):
    d, inv, files = newest(out, "info:fedora/gone")
    h = header(out, "info:fedora/gone", ".fcrepo/fcr-root.json")
    assert h["deleted"] is True and "contentPath" not in h
    assert h["contentSize"] == -1 and h["digests"] == []     # as Fedora writes a delete
    assert set(files) == {".fcrepo/fcr-root.json"}
    child = header(out, "info:fedora/gone/child", ".fcrepo/fcr-root.json")
    assert child["deleted"] is True


def test_encoded_path(out):
    oid = "info:fedora/café x"
    d = out / object_path(oid)
    assert json.loads((d / "inventory.json").read_text())["id"] == oid
    assert header(out, oid, ".fcrepo/fcr-root.json")["id"] == oid
    assert read(out, oid, "fcr-container.nt").startswith(b"<info:fedora/caf%C3%A9%20x>")


def test_content_paths_are_percent_encoded_as_fedoras_mapper():
    from lakesuperior.ocfl.storage import content_path
    assert content_path("a b/c\x01d%é") == "a%20b/c%01d%25é"


def test_rdf_content_is_the_sorted_n_triples_of_fedoras_triples():
    """Lines sorted as the triples are: terms that are prefixes of others (a
    literal and its tagged or typed forms, blank nodes), IRIs of the repository
    (its root, hash IRIs), text beyond the BMP and with escapes."""
    from lakesuperior import rdfio
    from lakesuperior.model.uids import RES_PREFIX
    res = RES_PREFIX + "/a>"
    p, q = "<http://ex.org/p>", "<http://ex.org/p2>"
    triples = [(res, p, '"x"@en'), (res, p, '"x"'), (res, p, '"x"^^<http://ex.org/t>'),
               (res, p, '"x y"'), (res, p, '"x\\"q"'), (res, p, '"\U0001f600"'),
               (res, p, '"\uffff"'), (res, p, '"line\\nbreak \u2028"'), (res, q, "_:b1"),
               ("_:b1", p, "_:b10"), ("_:b10", p, "_:b1"), ("_:b1", q, RES_PREFIX + "/>"),
               (RES_PREFIX + "/a#h>", p, RES_PREFIX + "/a/b>"), (res, p, "<info:fd>"),
               (res, p, "<info:fcres>"), ("<info:fe>", p, res)]
    want = rdfio.serialize(sorted(fedora.to_fedora(triples)), rdfio.N_TRIPLES)
    assert fedora.rdf_content(triples) == want
    assert fedora.rdf_content(reversed(triples)) == want
    assert fedora.rdf_content([]) == b""


def test_from_fedora_reads_what_to_fedora_wrote():
    """Fedora's IRIs of the repository (its root, hash IRIs, paths) come back as
    the public ones; other IRIs, predicates and literals as they were."""
    from lakesuperior.model.uids import RES_PREFIX, UriMap
    umap = UriMap("http://h:8000/rest")
    res = RES_PREFIX + "/a>"
    p = "<http://ex.org/p>"
    triples = [(res, p, RES_PREFIX + "/>"), (RES_PREFIX + "/a#h>", p, RES_PREFIX + "/a/b>"),
               (res, p, '"<info:fedora/a>"'), (res, p, "<info:fedoraX>"),
               (res, "<info:fedora/p>", '"x"@en')]
    got = fedora.from_fedora(fedora.rdf_content(triples), umap)
    assert sorted(got) == sorted(umap.triples_to_public(triples))
    assert got.distinct


def test_ids_known_valid_are_not_checked_again_and_others_still_are():
    """``validate_headers(..., valid_ids=)``: the ids that pass are remembered; a
    header naming another, broken one is still refused, and it is not remembered."""
    root = {"id": "info:fedora/a", "parent": "info:fedora", "stateToken": "t",
            "interactionModel": "http://www.w3.org/ns/ldp#BasicContainer",
            "createdDate": "2024-01-01T00:00:00Z", "lastModifiedDate": "2024-01-01T00:00:00Z",
            "objectRoot": True, "deleted": True, "headersVersion": "1.0"}
    valid: set[str] = set()
    assert fedora.validate_headers(root, root, None, valid_ids=valid) == []
    assert valid == {"info:fedora/a", "info:fedora"}
    broken = dict(root, parent="info:fedora/ /x")
    problems = fedora.validate_headers(broken, root, None, valid_ids=valid)
    assert any("blank parts" in p for p in problems), problems
    assert valid == {"info:fedora/a", "info:fedora"}
    assert fedora.validate_headers(broken, root, None) == problems
