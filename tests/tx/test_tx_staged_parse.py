"""A staged RDF PUT keeps its body as parsed: the commit and the requests of the
transaction run it again from those triples, without parsing the body again."""
from __future__ import annotations

import glob
import json
import os

from tests.tx.conftest import TTL, open_tx

NT = "application/n-triples"
# Terms whose canonical form is easy to get wrong: escapes, a line break, a quote,
# " ." inside a literal, language tags, datatypes, non-ASCII, a blank node.
BODY = ('@prefix ex: <http://ex.org/> .\n'
        '@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n'
        '<> ex:a "line one\\nline two .\\n end" ; ex:b "say \\"hi\\" ." ;\n'
        '   ex:c "caf\u00e9 \U0001F600"@fr-BE ; ex:d "7"^^xsd:int ;\n'
        '   ex:e [ ex:f "nested" ] ; ex:g <http://ex.org/x%20y> .\n').encode()


def staged_ops(repo) -> list[dict]:
    """The staged requests in the journals of the open transactions."""
    ops = []
    for journal in glob.glob(os.path.join(repo.config.staging_dir, "*", "journal")):
        with open(journal, encoding="utf-8") as fh:
            ops += [r["op"] for r in map(json.loads, fh) if "op" in r]
    return ops


def user_lines(data: bytes) -> set[bytes]:
    return {line for line in data.splitlines() if b"http://ex.org/" in line
            and not line.startswith(b"_:")}


def test_tx_staged_put_commits_the_triples_it_staged(client, repo):
    tx = open_tx(client)
    r = client.put("/rest/a", data=BODY, content_type=TTL, headers={"Atomic-ID": tx})
    assert r.status_code == 201, r.get_data(as_text=True)
    inside = client.get("/rest/a", headers={"Atomic-ID": tx, "Accept": NT})
    assert inside.status_code == 200
    assert [op["parsed"] is not None for op in staged_ops(repo)] == [True]
    # The staged body is not parsed again: bytes that do not parse change nothing.
    (data,) = glob.glob(os.path.join(repo.config.staging_dir, "*", "data"))
    with open(data, "rb") as fh:
        staged = fh.read()
    assert staged.count(BODY) == 1
    with open(data, "wb") as fh:
        fh.write(staged.replace(BODY, b"this is not turtle <<<".ljust(len(BODY))))
    again = client.get("/rest/a", headers={"Atomic-ID": tx, "Accept": NT})
    assert user_lines(again.data) == user_lines(inside.data)
    assert client.put(tx).status_code == 204
    after = client.get("/rest/a", headers={"Accept": NT})
    assert after.status_code == 200
    assert user_lines(after.data) == user_lines(inside.data)
    assert b'"line one\\nline two .\\n end"' in after.data
    assert b'"caf\xc3\xa9 \xf0\x9f\x98\x80"@fr-be' in after.data.lower()
    assert b'"nested"' in after.data


def test_tx_staged_binary_and_patch_keep_no_triples(client, repo):
    tx = open_tx(client)
    r = client.put("/rest/bin", data=b"<> a <http://ex.org/T> .", content_type="text/plain",
                   headers={"Atomic-ID": tx})
    assert r.status_code == 201
    assert client.put("/rest/r", data=b"", content_type=TTL,
                      headers={"Atomic-ID": tx}).status_code == 201
    r = client.patch("/rest/r", data=b'INSERT DATA { <> <http://ex.org/p> "x" . }',
                     content_type="application/sparql-update", headers={"Atomic-ID": tx})
    assert r.status_code == 204
    assert [op["parsed"] for op in staged_ops(repo)] == [None, None, None]
    assert client.put(tx).status_code == 204
    assert client.get("/rest/bin").data == b"<> a <http://ex.org/T> ."
    assert b'"x"' in client.get("/rest/r", headers={"Accept": NT}).data
