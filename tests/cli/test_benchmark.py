"""lsup-benchmark (util/benchmark.py) and the workload generator it shares with
benchmarks/: both modes, the JSON keys of WORKLOAD.md, the plot, Ctrl-C, errors."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from lakesuperior.bench import workload

from .conftest import free_port, script

REPO_ROOT = Path(__file__).resolve().parents[2]
LATENCY_KEYS = {"median", "p95", "p99", "mean", "first_1k_median", "last_1k_median"}
TOP_KEYS = {"mode", "method", "count", "graph_size", "latency_ms", "wall_s", "requests_per_s",
            "store_bytes", "bytes_per_triple", "post_run", "machine"}
POST_KEYS = {"container_get_s", "python_retrieval_s", "sparql_count_s"}
MACHINE_KEYS = {"cpu", "cores", "python", "lmdb"}


# --- the workload ----------------------------------------------------------------------------

def test_workload_graph_matches_the_spec():
    rng = random.Random(3)
    internal = [f"http://repo/rest/ref{i}" for i in range(5)]
    triples = workload.workload_triples("<http://repo/rest/x>", internal, rng)
    assert len(triples) == 200 and len(set(triples)) == 200
    assert {s for s, _, _ in triples} == {"<http://repo/rest/x>"}
    ext = [(p, o) for _, p, o in triples if p.startswith("<http://ex.org/exturi_p#")]
    inn = [(p, o) for _, p, o in triples if p.startswith("<http://ex.org/inturi_p#")]
    lit = [(p, o) for _, p, o in triples if p.startswith("<http://ex.org/lit_p#")]
    assert len(ext) == 50 and len({p for p, _ in ext}) == 50
    assert {o for _, o in ext} == {f"<http://example.edu/res/{i}>" for i in range(5)}
    assert len(inn) == 50 and len({p for p, _ in inn}) == 50
    assert {o for _, o in inn} == {f"<{i}>" for i in internal}
    assert len(lit) == 100 and len({o for _, o in lit}) == 100
    assert set(Counter(p for p, _ in lit).values()) == {2} and len({p for p, _ in lit}) == 50
    from lakesuperior.rdfio import to_rdflib
    for _, o in lit:
        text = str(to_rdflib(o))
        assert len(text) == 64 and set(text) <= set(workload.ALPHABET)


def test_alphabet_covers_the_scripts():
    blocks = {"ascii": (0x20, 0x7F), "latin1": (0xA1, 0x100), "latin_ext": (0x100, 0x250),
              "greek": (0x370, 0x400), "runic": (0x16A0, 0x16F1)}
    for lo, hi in blocks.values():
        assert any(lo <= ord(c) < hi for c in workload.ALPHABET)
    assert all(c.isprintable() for c in workload.ALPHABET)


def test_literal_escaping_matches_the_store():
    from lakesuperior.store.terms import literal
    rng = random.Random(5)
    for text in ['plain', 'quote " and \\ backslash', '\\"', "ᚠα\\\\"] + [
            "".join(rng.choices(workload.ALPHABET + '"\\', k=64)) for _ in range(200)]:
        assert workload.nt_literal(text) == literal(text)


def test_turtle_and_graph_forms_are_the_same_graph():
    from rdflib.compare import isomorphic

    from lakesuperior.rdfio import parse, triples_to_graph
    internal = ["http://repo/rest/a", "http://repo/rest/b"]
    subject = "http://repo/rest/x"
    ttl = workload.workload_turtle(random.Random(9), internal)
    nt = workload.workload_triples(f"<{subject}>", internal, random.Random(9))
    g = workload.workload_graph(random.Random(9), internal, subject)
    assert sorted(parse(ttl, "text/turtle", subject)) == sorted(nt)
    assert isomorphic(triples_to_graph(nt), g)


@pytest.mark.parametrize("size", [4, 10, 201])
def test_other_graph_sizes(size):
    pairs = workload.workload_pairs(random.Random(1), ["http://r/a"], size)
    assert len(pairs) == size and len(set(pairs)) == size


def test_workload_refuses_nonsense():
    with pytest.raises(ValueError):
        workload.workload_pairs(random.Random(1), ["http://r/a"], 3)
    with pytest.raises(ValueError):
        workload.workload_pairs(random.Random(1), [], 200)


def test_benchmarks_share_the_generator():
    """benchmarks/store_ingest.py and api_ingest.py use lakesuperior.bench.workload."""
    for name in ("store_ingest.py", "api_ingest.py"):
        text = (REPO_ROOT / "benchmarks" / name).read_text()
        assert "from lakesuperior.bench.workload import" in text
        assert "ALPHABET =" not in text and "def workload_" not in text


# --- python mode ------------------------------------------------------------------------------

@pytest.fixture
def bench(runner, monkeypatch):
    from lakesuperior.bench.benchmark import command
    monkeypatch.delenv("LSUP_CONFIG", raising=False)

    def run(*args: str, env: dict | None = None):
        return runner.invoke(command, [str(a) for a in args],
                             env={"LSUP_SYNC": "false", **(env or {})})

    return run


def _check_keys(res: dict) -> None:
    assert TOP_KEYS <= set(res)
    assert set(res["latency_ms"]) == LATENCY_KEYS
    assert POST_KEYS <= set(res["post_run"])
    assert MACHINE_KEYS <= set(res["machine"])


def test_python_mode_json_and_plot(bench, tmp_path):
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    res = bench("--count", 25, "--data-dir", tmp_path / "d", "--output", out, "--plot", png)
    assert res.exit_code == 0, res.output
    line = res.stdout.strip()
    assert line.startswith("lsup-benchmark python put rdf n=25 | median ")
    assert "SPARQL count" in line
    # 25 requests: no first and last thousand to compare (not both the overall median)
    assert "first1k n/a last1k n/a (xn/a)" in line
    data = json.loads(out.read_text())
    _check_keys(data)
    assert data["mode"] == "python" and data["method"] == "put" and data["count"] == 25
    assert data["graph_size"] == 200 and data["triples"] == 5000
    lat = data["latency_ms"]
    assert lat["first_1k_median"] is None and lat["last_1k_median"] is None
    assert data["last_first_ratio"] is None
    assert all(v > 0 for k, v in lat.items() if not k.endswith("1k_median"))
    assert data["store_bytes"] > 0 and data["bytes_per_triple"] > 0
    post = data["post_run"]
    assert post["container_children"] == 25
    assert post["container_get_s"] >= 0 and post["python_retrieval_s"] >= 0
    assert post["sparql_count_s"] >= 0 and post["sparql_count"] >= 25
    assert data["machine"]["cores"] >= 1 and data["machine"]["lmdb"].count(".") == 2
    assert len(data["latencies_ms"]) == 25 and not data["interrupted"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a second run into the same container adds to it; --delete-container starts afresh
    res = bench("--count", 5, "--data-dir", tmp_path / "d", "--output", out, "-q")
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["post_run"]["container_children"] == 30
    res = bench("--count", 5, "--data-dir", tmp_path / "d", "--output", out, "-q",
                "--delete-container", "--method", "post")
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["post_run"]["container_children"] == 5


@pytest.mark.parametrize("auto", ["true", "false"])
def test_python_mode_with_either_versioning_setting(bench, tmp_path, auto):
    out = tmp_path / "r.json"
    res = bench("--count", 20, "--data-dir", tmp_path / "d", "--output", out, "-q",
                env={"LSUP_VERSIONING_AUTO": auto})
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["versioning_auto"] is (auto == "true") and data["store_bytes"] > 0
    from lakesuperior import Repository
    with Repository(tmp_path / "d") as repo:
        children = repo.get(data["parent"]).children
        assert len(children) == 20
        assert all(bool(repo.versions(c)) is (auto == "true") for c in children)


def test_python_mode_binaries_and_both(bench, tmp_path):
    out = tmp_path / "r.json"
    res = bench("--count", 6, "--resource-type", "both", "--binary-size", 1000,
                "--method", "post", "--output", out, "-q", "--parent", "/a/b")
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["triples"] == 600 and data["binary_bytes"] >= 3000
    assert data["post_run"]["container_children"] == 6
    res = bench("--count", 4, "--resource-type", "binary", "--output", out, "-q",
                "--no-post-run")
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["bytes_per_triple"] is None and data["post_run"]["container_get_s"] is None


def test_no_sparql_skips_the_index_catch_up(bench, tmp_path):
    out = tmp_path / "r.json"
    res = bench("--count", 5, "--no-sparql", "--output", out, "-q",
                env={"LSUP_STORE_BACKGROUND_INDEX": "false"})
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    post = data["post_run"]
    assert post["container_children"] == 5 and post["python_retrieval_s"] is not None
    assert post["sparql_count_s"] is None and "index_catch_up_s" not in post
    assert post["first_query_s"] is None
    assert data["index_pending"] > 0


@pytest.mark.parametrize("background", ["true", "false"])
def test_the_first_query_after_the_ingest_and_the_index_lag(bench, tmp_path, background):
    out = tmp_path / "r.json"
    res = bench("--count", 20, "--output", out, "-q",
                env={"LSUP_STORE_BACKGROUND_INDEX": background})
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    post = data["post_run"]
    # root, the parent, its -refs container and 5 references, 20 children
    assert post["first_query_count"] == post["sparql_count"] == 28
    assert post["first_query_s"] >= 0 and post["first_query_pending"] >= 0
    if background == "false":
        assert post["first_query_pending"] >= 20     # answered from the log's tail
    assert data["index_pending"] == 0
    lag = data["index_lag"]
    assert lag["samples"] >= 1
    assert set(lag) == {"samples", "interval_s", "median_entries", "p95_entries",
                        "max_entries", "median_s", "p95_s", "max_s"}


@pytest.mark.parametrize("n", [1, 999, 1000, 1500, 1999])
def test_first_and_last_thousand_need_two_thousands(n):
    from lakesuperior.bench.figures import summarize
    lat = summarize([1.0] * n)
    assert lat["first_1k_median"] is None and lat["last_1k_median"] is None
    assert lat["median"] == 1.0


def test_first_and_last_thousand_medians():
    from lakesuperior.bench.figures import summarize, summary_line
    lat = summarize([1.0] * 1000 + [2.0] * 500 + [3.0] * 1000)
    assert (lat["first_1k_median"], lat["last_1k_median"], lat["median"]) == (1.0, 3.0, 2.0)
    res = {"mode": "python", "method": "put", "resource_type": "rdf", "count": 2500,
           "interrupted": False, "latency_ms": lat, "last_first_ratio": 3.0,
           "requests_per_s": 10.0, "wall_s": 1.0, "store_bytes": None,
           "bytes_per_triple": None, "post_run": {}}
    assert "first1k 1.000 last1k 3.000 (x3.00)" in summary_line(res)


def test_the_index_lag_summary():
    from lakesuperior.bench.lag import summarize_lag
    assert summarize_lag([]) is None
    # (t, applied, last): entry 11 committed half-way between t=0 and t=1
    # (seqs 10 -> 12); at t=2 the index has applied 10: 1.5 s behind.
    lag = summarize_lag([(0.0, 10, 10), (1.0, 10, 12), (2.0, 10, 14), (3.0, 14, 14)])
    assert lag["max_s"] == 1.5 and lag["max_entries"] == 4
    assert lag["median_entries"] == 1.0 and lag["samples"] == 4
    assert lag["median_s"] == 0.25      # 0, 0.5, 1.5, 0


def test_ctrl_c_prints_what_ran(bench, tmp_path, monkeypatch):
    from lakesuperior.bench import targets
    calls = []
    real = targets.PythonTarget.put

    def put(self, *args):
        calls.append(1)
        if len(calls) == 10:
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(targets.PythonTarget, "put", put)
    out = tmp_path / "r.json"
    res = bench("--count", 50, "--output", out)
    assert res.exit_code == 130
    assert "n=9 (interrupted)" in res.stdout and "median" in res.stdout
    data = json.loads(out.read_text())
    assert data["interrupted"] and data["count"] == 9 and data["requested_count"] == 50


def test_plot_without_matplotlib(bench, monkeypatch, tmp_path):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    res = bench("--count", 2, "--plot", tmp_path / "x.png")
    assert res.exit_code == 2
    assert "pip install 'lakesuperior[bench]'" in res.output
    assert not (tmp_path / "x.png").exists()


def test_bad_options(bench):
    assert bench("--mode", "http").exit_code == 2
    assert bench("--count", 0).exit_code == 2
    res = bench("--mode", "http", "--endpoint", "ftp://x/rest")
    assert res.exit_code == 1 and "http(s) URL" in res.output
    res = bench("--mode", "http", "--endpoint", "http://x/", "--auth", "nocolon")
    assert res.exit_code == 2 and "USER:PASS" in res.output


def test_console_script_and_thin_runner(tmp_path):
    out = subprocess.run([script("lsup-benchmark"), "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "--resource-type" in out.stdout
    env = {**os.environ, "LSUP_SYNC": "false"}
    env.pop("LSUP_CONFIG", None)
    out = subprocess.run([sys.executable, str(REPO_ROOT / "util" / "benchmark.py"), "--count",
                          "3", "-q", "--output", str(tmp_path / "r.json")],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["count"] == 3


# --- http mode --------------------------------------------------------------------------------

@pytest.mark.slow
def test_http_mode_against_our_server(bench, tmp_path, start_server):
    data = tmp_path / "srv"
    srv = start_server(data)
    out = tmp_path / "h.json"
    res = bench("--mode", "http", "--endpoint", srv.url + "/", "--count", 20, "--data-dir",
                data, "--output", out, "--plot", tmp_path / "h.png")
    assert res.exit_code == 0, res.output + srv.log_text()
    assert res.stdout.startswith("lsup-benchmark http put rdf n=20")
    d = json.loads(out.read_text())
    _check_keys(d)
    assert d["mode"] == "http" and d["count"] == 20
    assert d["post_run"]["container_children"] == 20
    assert d["post_run"]["python_retrieval_s"] is not None and d["store_bytes"] > 0
    # POST, both kinds, a fresh container; no data dir: sizes unknown
    res = bench("--mode", "http", "--endpoint", srv.url, "--count", 6, "--method", "post",
                "--resource-type", "both", "--delete-container", "--output", out, "-q")
    assert res.exit_code == 0, res.output + srv.log_text()
    d = json.loads(out.read_text())
    assert d["post_run"]["container_children"] == 6
    assert d["store_bytes"] is None and d["post_run"]["python_retrieval_s"] is None
    from lakesuperior import Repository
    with Repository(data, sync=False) as repo:
        kids = [repo.get(u) for u in repo.get("/bench").children]
    assert sorted(k.is_binary for k in kids) == [False] * 3 + [True] * 3
    assert all(len(k.user_data) == 200 for k in kids if not k.is_binary)


def test_http_mode_errors(bench, stub_server):
    url = stub_server({"/rest/bench": (200, {}, b""),
                       "/rest/bench-refs": (200, {}, b""),
                       **{f"/rest/bench-refs/r{i}": (200, {}, b"") for i in range(5)}})
    res = bench("--mode", "http", "--endpoint", url + "/rest/", "--count", 5)
    assert res.exit_code == 1
    assert "Stopped: PUT" in res.output and "501" in res.output
    assert "n=0" in res.stdout
    res = bench("--mode", "http", "--endpoint", f"http://127.0.0.1:{free_port()}/rest/",
                "--count", 5)
    assert res.exit_code == 1 and "Error:" in res.output


def test_write_json_writes_the_results_or_nothing(tmp_path):
    from lakesuperior.bench.figures import write_json
    out = tmp_path / "r.json"
    write_json(str(out), {"count": 3, "write_ms": {"median": 0.5}}, indent=1)
    assert json.loads(out.read_text(encoding="utf-8")) == {"count": 3, "write_ms": {"median": 0.5}}
    assert out.read_text(encoding="utf-8").startswith('{\n "count"')     # indent 1
    write_json(None, {"x": 1})                                          # no path: no file
    write_json("", {"x": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
