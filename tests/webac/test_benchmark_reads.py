"""The read phase of the benchmark (``--gets``): GETs of a resource four levels
deep, an ACL at each level, several clients, anonymous; tiny runs through
both doors (the figures themselves are measured on a quiet machine)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lakesuperior.bench.benchmark import command
from lakesuperior.bench.reads import get_path

from ..servers import lsup_server


def test_get_path():
    assert get_path(1) == ["/bench-get"]
    assert get_path(4) == ["/bench-get", "/bench-get/l2", "/bench-get/l2/l3",
                           "/bench-get/l2/l3/l4"]


def _run(*args, env=None):
    return CliRunner().invoke(command, [str(a) for a in args],
                              env={"LSUP_SYNC": "false", "LSUP_CONFIG": None, **(env or {})})


def test_python_reads_with_an_acl_at_each_level(tmp_path):
    out = tmp_path / "r.json"
    data = tmp_path / "data"
    res = _run("--count", 5, "--gets", 30, "--get-clients", 3, "--acl-each-level",
               "--get-anonymous", "--no-sparql", "-q", "--data-dir", data, "--output", out)
    assert res.exit_code == 0, res.output
    reads = json.loads(out.read_text())["reads"]
    assert reads["count"] == 30 and reads["clients"] == 3 and reads["depth"] == 4
    assert reads["path"] == "/bench-get/l2/l3/l4"
    assert reads["latency_ms"]["median"] > 0
    assert "GET /bench-get/l2/l3/l4 (depth 4, an ACL at each level, anonymous)" in res.stdout
    from lakesuperior import Repository
    with Repository(data, sync=False) as repo:
        assert all(repo.has_acl(p) for p in get_path(4))


def test_no_reads_by_default(tmp_path):
    out = tmp_path / "r.json"
    res = _run("--count", 3, "--no-sparql", "-q", "--output", out)
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["reads"] is None


def test_bad_read_options():
    assert _run("--gets", -1).exit_code == 2
    assert _run("--get-depth", 0).exit_code == 2
    assert _run("--get-clients", 0).exit_code == 2


@pytest.mark.slow
def test_http_reads_with_an_acl_at_each_level(tmp_path):
    with lsup_server(tmp_path, {"LSUP_STORE_SYNC": "false", "LSUP_AUTH_ENABLED": "false"}
                     ) as (_proc, port, log):
        out = tmp_path / "h.json"
        res = _run("--mode", "http", "--endpoint", f"http://127.0.0.1:{port}/rest/",
                   "--count", 5, "--gets", 16, "--get-clients", 8, "--acl-each-level",
                   "--get-anonymous", "--no-sparql", "-q", "--output", out)
        assert res.exit_code == 0, res.output + log.read_text()
        reads = json.loads(out.read_text())["reads"]
        assert reads["count"] == 16 and reads["clients"] == 8
        from lakesuperior.http.client import HttpClient
        with HttpClient() as client:
            resp = client.request("GET", f"http://127.0.0.1:{port}/rest/bench-get/l2/fcr:acl")
        assert resp.status == 200 and b"acl:Read" in resp.body
