"""Configuration: defaults <- YAML file <- environment <- keyword overrides."""
import os
import subprocess
import sys

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError


def test_defaults_need_no_configuration():
    cfg = Config.load(environ={})
    assert cfg.data_dir == "data"
    assert cfg.sync is True
    assert cfg.digest_algorithm == "sha512"
    assert cfg.server_bind == "127.0.0.1:8000"
    assert cfg.store_dir.endswith("ldprs") and cfg.binary_dir.endswith("ldpnr")


def test_file_then_environment_then_overrides(tmp_path):
    f = tmp_path / "app.yml"
    f.write_text("data_dir: /from/file\nstore:\n  sync: false\n  map_size: 4096\n"
                 "server:\n  workers: 7\nreferential_integrity: strict\ncustom: 1\n")
    cfg = Config.load(environ={"LSUP_CONFIG": str(f)})
    assert (cfg.data_dir, cfg.sync, cfg.map_size, cfg.server_workers) == (
        "/from/file", False, 4096, 7)
    assert cfg.referential_integrity == "strict"
    assert cfg.extra == {"custom": 1}
    cfg = Config.load(environ={"LSUP_CONFIG": str(f), "LSUP_DATA_DIR": "/from/env",
                               "LSUP_SYNC": "yes", "LSUP_QUERY_TIMEOUT": "2.5"})
    assert (cfg.data_dir, cfg.sync, cfg.query_timeout) == ("/from/env", True, 2.5)
    cfg = Config.load(str(f), environ={"LSUP_DATA_DIR": "/from/env"}, data_dir="/kw")
    assert cfg.data_dir == "/kw"


def test_with_changes_a_copy():
    cfg = Config.load(environ={})
    other = cfg.with_(data_dir="/x")
    assert other.data_dir == "/x" and cfg.data_dir == "data"
    with pytest.raises(ConfigError):
        cfg.with_(digest_algorithm="crc32")


@pytest.mark.parametrize("env,msg", [
    ({"LSUP_SYNC": "maybe"}, "Invalid value for sync"),
    ({"LSUP_MAP_SIZE": "big"}, "Invalid value for map_size"),
    ({"LSUP_MAP_SIZE": "0"}, "map_size must be positive"),
    ({"LSUP_DIGEST_ALGORITHM": "crc32"}, "digest_algorithm"),
    ({"LSUP_REFERENTIAL_INTEGRITY": "sometimes"}, "referential_integrity"),
    ({"LSUP_QUERY_TIMEOUT": "-1"}, "query_timeout"),
    ({"LSUP_CONFIG": "/nonexistent/lsup.yml"}, "Cannot read configuration file"),
])
def test_bad_values_are_clear_errors(env, msg):
    with pytest.raises(ConfigError, match=msg):
        Config.load(environ=env)


def test_bad_yaml(tmp_path):
    f = tmp_path / "bad.yml"
    f.write_text("data_dir: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        Config.load(str(f), environ={})
    f.write_text("- a list\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        Config.load(str(f), environ={})


def test_nothing_is_read_at_import(tmp_path):
    env = {**os.environ, "LSUP_CONFIG": str(tmp_path / "missing.yml")}
    code = ("import lakesuperior, lakesuperior.config, lakesuperior.server, "
            "lakesuperior.endpoints.app")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=str(tmp_path))
