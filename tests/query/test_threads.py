"""SPARQL from several threads of one process: the Python API, the rdflib store
plugin and the parser itself.

rdflib's grammar breaks for good in a process where two threads make its first
parses at once (``lakesuperior.rdf.sparql_parser``). This test process has parsed
long ago, so each case runs in a fresh interpreter, its threads released
together, with a short GIL switch interval that makes the race near certain.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lakesuperior.rdf import sparql_parser

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import json, sys, threading
sys.setswitchinterval(1e-5)
failures = []
def run(works, rounds=15):
    barrier = threading.Barrier(len(works))
    def thread(work):
        barrier.wait()
        for i in range(rounds):
            try:
                work(i)
            except Exception as e:
                failures.append(f"{work.__name__}: {type(e).__name__}: {e}"[:300])
    threads = [threading.Thread(target=thread, args=(w,)) for w in works]
    for t in threads: t.start()
    for t in threads: t.join()
    print(json.dumps(failures))
"""


def _failures(script: str, tmp_path: Path) -> list[str]:
    """Run ``script`` (after ``PRELUDE``) in a fresh interpreter; its failures."""
    done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(script)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_parser_from_threads(tmp_path):
    script = """
    from lakesuperior.rdf.sparql_parser import parse_query, parse_update
    from rdflib.plugins.sparql.algebra import translateQuery, translateUpdate
    def select(i):
        q = translateQuery(parse_query("SELECT ?s WHERE { ?s ?p ?o FILTER(?o > 3) } "
                                       "ORDER BY ?s LIMIT 5"))
        assert q.algebra.name == "SelectQuery"
    def ask(i):
        assert translateQuery(parse_query("ASK { ?s a <urn:x> }")).algebra.name == "AskQuery"
    def update(i):
        u = translateUpdate(parse_update('DELETE { <> <urn:p> ?t } INSERT { <> <urn:p> "x" } '
                                         'WHERE { <> <urn:p> ?t }'), base="urn:a")
        assert u.algebra[0].name == "Modify"
    run([select, ask, update, select, ask, update, select, update])
    """
    assert _failures(script, tmp_path) == []


def test_python_api_from_threads(tmp_path):
    script = """
    from lakesuperior import Repository
    repo = Repository("repo", base_uri="http://x.test/rest", sync=False,
                      indexer_process=False)
    EX = "http://example.org/ns#"
    for n in range(6):
        repo.create_or_replace(f"/s{n}", data=f'<> <{EX}n> {n} .'.encode(),
                               media_type="text/turtle")
    for i in range(3):
        repo.create_or_replace(f"/p{i}", data=f'<> <{EX}count> 0 .'.encode(),
                               media_type="text/turtle")
    P = f"PREFIX ex: <{EX}>\\n"
    def select(i):
        rows = [int(r[0]) for r in repo.sparql_query(
            P + "SELECT ?n WHERE { ?s ex:n ?n FILTER(?n > 1) } ORDER BY DESC(?n) LIMIT 3")]
        assert rows == [5, 4, 3], rows
    def ask(i):
        assert repo.sparql_query(P + "ASK { ?s ex:n 4 }").askAnswer is True
    def construct(i):
        assert len(repo.sparql_query(P + "CONSTRUCT { ?s ex:n ?n } WHERE { ?s ex:n ?n }")) == 6
    def count(i):
        rows = list(repo.sparql_query(P + "SELECT (COUNT(?s) AS ?c) WHERE { ?s ex:n ?n }"))
        assert int(rows[0][0]) == 6, rows
    def patcher(k):
        def patch(i):
            repo.update(f"/p{k}", P + "DELETE { <> ex:count ?n } INSERT { <> ex:count ?m } "
                                      "WHERE { <> ex:count ?n BIND(?n + 1 AS ?m) }")
        return patch
    run([select, ask, construct, count, patcher(0), patcher(1), patcher(2), select])
    for k in range(3):
        rows = list(repo.sparql_query(P + f"SELECT ?c WHERE {{ <p{k}> ex:count ?c }}"))
        if int(rows[0][0]) != 15 - sum(f.startswith("patch") for f in failures):
            failures.append(f"/p{k} counted {rows[0][0]}")
    repo.close()
    """
    assert _failures(script, tmp_path) == []


def test_rdflib_plugin_from_threads(tmp_path):
    script = """
    import rdflib
    from rdflib import Literal, URIRef
    EX = rdflib.Namespace("http://example.org/ns#")
    def dataset(k):
        ds = rdflib.Dataset(store="Lakesuperior", default_union=True)
        ds.open(f"store{k}", create=True)
        g = ds.graph(URIRef(f"urn:g{k}"))
        for n in range(5):
            g.add((URIRef(f"urn:s{n}"), EX.n, Literal(n)))
        ds.commit()
        return ds
    def querier(k):
        ds = dataset(k)
        def query(i):
            rows = [int(r[0]) for r in ds.query(
                "PREFIX ex: <http://example.org/ns#> "
                "SELECT ?n WHERE { GRAPH ?g { ?s ex:n ?n FILTER(?n > 2) } } ORDER BY ?n")]
            assert rows == [3, 4], rows
            assert ds.query("ASK { ?s ?p 4 }").askAnswer is True
        return query
    def updater(k):
        ds = dataset(k)
        def update(i):
            ds.update(f"INSERT DATA {{ GRAPH <urn:g{k}> {{ <urn:u{i}> <urn:p> {i} }} }}")
            ds.commit()
            assert len(ds.graph(URIRef(f"urn:g{k}"))) == 6 + i
        return update
    run([querier(0), querier(1), updater(2), updater(3), querier(4), updater(5)])
    """
    assert _failures(script, tmp_path) == []


def test_every_parse_goes_through_the_parser_module():
    """A second way into rdflib's grammar would bypass its lock."""
    own = (ROOT / "lakesuperior" / "rdf" / "sparql_parser.py").resolve()
    entries = re.compile(r"\b(?:parseQuery|parseUpdate|prepareQuery|prepareUpdate|"
                         r"processUpdate|sparql\.parser|sparql import parser)\b(?!utils)")
    found = []
    for path in sorted((ROOT / "lakesuperior").rglob("*.py")):
        if path.resolve() == own:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {m[0]}" for m in entries.finditer(text)]
    assert found == []


@pytest.mark.parametrize("text", ["SELECT ?s WHERE { ?s ?p }", "ASK {", ""])
def test_parse_query_refuses_what_does_not_parse(text):
    with pytest.raises(Exception, match="Expected"):
        sparql_parser.parse_query(text)


def test_parse_update_refuses_what_does_not_parse():
    with pytest.raises(Exception, match="Expected"):
        sparql_parser.parse_update("INSERT DATA { <a> <b> }")
    assert sparql_parser.parse_update("INSERT DATA { <urn:a> <urn:b> <urn:c> }").request
