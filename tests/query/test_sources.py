"""What the query package takes and registers: a ``Snapshots`` source (``Repository``
or any object with ``snapshot()``), and rdflib's evaluation hook only when it
evaluates, never on import."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from contextlib import contextmanager

import pytest
from rdflib.plugins.sparql import CUSTOM_EVALS

from lakesuperior import query
from lakesuperior.exceptions import QueryTimeoutError
from lakesuperior.model.context import Context
from lakesuperior.query import fast_path

BASE = "http://test.example/rest"
TITLE = "<http://purl.org/dc/terms/title>"


def put(repo, uid: str, title: str) -> None:
    repo.create_or_replace(uid, data=f'<> {TITLE} "{title}" .'.encode(),
                           media_type="text/turtle")


def test_importing_registers_nothing_with_rdflib(tmp_path):
    """Importing the query package, the rdflib adapter and the repository leaves
    ``CUSTOM_EVALS`` alone, and the query package does not load the repository."""
    code = textwrap.dedent("""
        import sys
        from rdflib.plugins.sparql import CUSTOM_EVALS
        before = dict(CUSTOM_EVALS)
        import lakesuperior.query
        import lakesuperior.query.fast_path
        import lakesuperior.store.rdflib_store
        print("repository loaded" if "lakesuperior.repository" in sys.modules else "ok")
        import lakesuperior.repository
        print("same" if dict(CUSTOM_EVALS) == before else f"changed: {CUSTOM_EVALS}")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(tmp_path))     # the installed package, not the source tree
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok", "same"]


def test_a_query_registers_the_view_hook_once(repo, monkeypatch):
    monkeypatch.delitem(CUSTOM_EVALS, fast_path._VIEW_KEY, raising=False)
    put(repo, "/a", "A")
    assert repo.sparql_query(f'ASK {{ ?s {TITLE} "A" }}').askAnswer
    hook = CUSTOM_EVALS[fast_path._VIEW_KEY]
    keys = list(CUSTOM_EVALS)
    fast_path.register_view_eval()
    assert repo.sparql_query(f"SELECT ?s WHERE {{ ?s {TITLE} ?t }}").bindings
    assert CUSTOM_EVALS[fast_path._VIEW_KEY] is hook and list(CUSTOM_EVALS) == keys


def test_enable_and_disable_the_store_fast_path(monkeypatch):
    monkeypatch.delitem(CUSTOM_EVALS, fast_path._STORE_KEY, raising=False)
    query.enable_sparql_fast_path()
    assert CUSTOM_EVALS[fast_path._STORE_KEY] is query.native_eval
    query.disable_sparql_fast_path()
    # off: a hook that declines every part (the key stays: test_fast_path.py)
    with pytest.raises(NotImplementedError):
        CUSTOM_EVALS[fast_path._STORE_KEY](None, None)


def test_repository_snapshot(repo):
    put(repo, "/a", "A")
    with repo.snapshot() as ctx:
        assert isinstance(ctx, Context)
        assert ctx.urimap.base == BASE
        assert ctx.txn.has_graph("<info:fcres/a>")
    with repo.snapshot("https://other.example/ldp/") as ctx:
        assert ctx.urimap.base == "https://other.example/ldp"
    with repo.transaction():
        put(repo, "/b", "B")
        with repo.snapshot() as ctx:     # the open write transaction: its own writes
            assert ctx.txn.has_graph("<info:fcres/b>")
    with repo.snapshot() as ctx:
        assert ctx.txn.has_graph("<info:fcres/b>")


class OneSnapshot:
    """A ``Snapshots`` that is not a repository: counts the snapshots it gives."""

    def __init__(self, repo):
        self.repo = repo
        self.taken: list[str | None] = []

    @contextmanager
    def snapshot(self, base_uri=None):
        self.taken.append(base_uri)
        with self.repo.snapshot(base_uri) as ctx:
            yield ctx


def test_query_functions_take_any_snapshot_source(repo):
    put(repo, "/a", "A")
    put(repo, "/b", "B")
    source = OneSnapshot(repo)
    res = query.sparql_query(source, f"SELECT ?s WHERE {{ ?s {TITLE} \"A\" }}")
    assert [str(r[0]) for r in res] == [f"{BASE}/a"]
    body = query.sparql_query(source, f'ASK {{ <b> {TITLE} "B" }}', fmt="json")
    assert body == b'{"head": {}, "boolean": true}'
    assert sorted(query.triple_match(source, p=TITLE, base_uri="https://x.example/r")) == [
        ("<https://x.example/r/a>", TITLE, '"A"'), ("<https://x.example/r/b>", TITLE, '"B"')]
    assert query.term_search(source, [("dcterms:title", "=", "B")]) == ["/b"]
    assert source.taken == [None, None, "https://x.example/r", None]   # one per call


def test_query_functions_have_no_time_limit_of_their_own(repo_factory):
    """The configured ``query_timeout`` is the Repository's: the functions take
    ``timeout`` as given (None: no limit)."""
    repo = repo_factory(query_timeout=0.000001)
    put(repo, "/a", "A")
    assert query.sparql_query(repo, "ASK { ?s ?p ?o }").askAnswer
    with pytest.raises(QueryTimeoutError, match="time limit"):
        repo.sparql_query("SELECT (COUNT(*) AS ?c) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
