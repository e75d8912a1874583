"""Environment variables: one naming rule, and the YAML comments name only
variables that really set their key."""
from __future__ import annotations

import logging
import re
from dataclasses import fields
from pathlib import Path

import pytest

from lakesuperior.config import Config, env_names

DEFAULTS = Path(__file__).resolve().parents[2] / "etc.defaults" / "application.yml"
VAR = re.compile(r"\bLSUP_[A-Z0-9_]*[A-Z0-9]\b")
KEY = re.compile(r"^(\s*)([A-Za-z_]\w*):(.*)$")
# A valid value other than the default, for keys whose values are constrained.
OTHER = {"digest_algorithm": "md5", "referential_integrity": "strict",
         "auth_webid_base": "https://example.org/users/", "auth_proxy_header": "X-Remote-User",
         "auth_trusted_proxies": ("10.0.0.1, 192.168.0.0/16", ("10.0.0.1", "192.168.0.0/16")),
         "messaging_broker_url": "stomp://127.0.0.1:61613",
         "messaging_destination": "/queue/other", "auth_jwt_algorithm": "RS256",
         "http_binary_protection": "sandbox", "binaries_backend": "s3",
         "binaries_s3_endpoint": "https://s3.example.org",
         "external_content_allowed": ("http://a.org/x, file:///srv/in",
                                      ("http://a.org/x", "file:///srv/in")),
         "http_allowed_origins": ("https://app.example.org, http://localhost:3000",
                                  ("https://app.example.org", "http://localhost:3000")),
         "metrics_allowed": ("10.0.0.7, 192.168.1.0/24", ("10.0.0.7", "192.168.1.0/24")),
         "replicas_connections": ("8", 8)}


def documented_keys() -> list[tuple[tuple[str, ...], list[str]]]:
    """(YAML key path, variables named in the comment just above it) for every
    leaf key of the default file."""
    out: list[tuple[tuple[str, ...], list[str]]] = []
    stack: list[tuple[int, str]] = []
    comment: list[str] = []
    for line in DEFAULTS.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped:
            comment = []
        elif stripped.startswith("#"):
            comment.append(stripped)
        else:
            m = KEY.match(line)
            assert m, line
            indent, key, rest = len(m.group(1)), m.group(2), m.group(3).strip()
            while stack and stack[-1][0] >= indent:
                stack.pop()
            path = tuple(k for _, k in stack) + (key,)
            if rest:
                out.append((path, VAR.findall(" ".join(comment))))
            else:
                stack.append((indent, key))
            comment = []
    return out


def other_value(key: str, default):
    if key in OTHER:
        value = OTHER[key]
        return value if isinstance(value, tuple) else (value, value)
    if isinstance(default, bool):
        return str(not default).lower(), not default
    if isinstance(default, int):
        return str(default + 4096), default + 4096
    if isinstance(default, float):
        return str(default + 1.5), default + 1.5
    return "/some/other/value", "/some/other/value"


def test_every_key_documents_its_variable_and_it_works():
    keys = documented_keys()
    defaults = {f.name: getattr(Config(), f.name) for f in fields(Config)}
    assert len(keys) >= 12
    for path, variables in keys:
        rule = "LSUP_" + "_".join(p.upper() for p in path)
        assert variables == [rule], (path, variables)
        key = "_".join(p for p in path if p != "store")
        text, expected = other_value(key, defaults[key])
        cfg = Config.load(environ={rule: text})
        assert getattr(cfg, key) == expected, (rule, key)
        assert getattr(Config.load(environ={}), key) != expected


def test_env_names_follow_the_rule():
    names = env_names()
    assert names["LSUP_STORE_SYNC"] == "sync"
    assert names["LSUP_STORE_MAP_SIZE"] == "map_size"
    assert names["LSUP_SERVER_BIND"] == "server_bind"
    assert names["LSUP_DATA_DIR"] == "data_dir"
    assert set(names.values()) == {f.name for f in fields(Config)} - {"extra"}


def test_older_names_still_work():
    cfg = Config.load(environ={"LSUP_SYNC": "false", "LSUP_MAP_SIZE": "8192",
                               "LSUP_INDEX_BATCH": "7"})
    assert (cfg.sync, cfg.map_size, cfg.index_batch) == (False, 8192, 7)


def test_unknown_variable_is_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="lakesuperior.config"):
        cfg = Config.load(environ={"LSUP_STORE_SYNK": "false", "LSUP_CONFIG": "",
                                   "OTHER_VAR": "1"})
    assert cfg.sync is True
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1, warned
    assert "LSUP_STORE_SYNK" in warned[0] and "LSUP_STORE_SYNC" in warned[0]


@pytest.mark.parametrize("var", ["LSUP_CONFIG", "LSUP_SYNC", "LSUP_SERVER_THREADS"])
def test_known_variables_do_not_warn(var, caplog, tmp_path):
    value = str(tmp_path / "c.yml") if var == "LSUP_CONFIG" else "1"
    (tmp_path / "c.yml").write_text("{}\n")
    with caplog.at_level(logging.WARNING, logger="lakesuperior.config"):
        Config.load(environ={var: value})
    assert caplog.records == []
