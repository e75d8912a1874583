"""The configuration defaults are written once, in ``etc.defaults/application.yml``:
``Config``, the model's ``Settings``, the binary store and the reference page
(docs/configuration.md) all agree with it, and a second copy fails here."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from lakesuperior.config import Config, defaults, env_names
from lakesuperior.model.context import Settings
from lakesuperior.store.binaries import BinaryStore

ROOT = Path(__file__).resolve().parents[2]


def test_one_yaml_file():
    """The package's defaults are the project's file (a link to it), not a copy."""
    packaged = ROOT / "lakesuperior" / "etc.defaults" / "application.yml"
    assert packaged.resolve() == (ROOT / "etc.defaults" / "application.yml").resolve()


def test_config_takes_every_default_from_the_yaml():
    values = defaults()
    cfg = Config()
    assert {f.name for f in dataclasses.fields(Config)} - {"extra"} == set(values)
    assert {k: getattr(cfg, k) for k in values} == values
    source = (ROOT / "lakesuperior" / "config.py").read_text(encoding="utf-8")
    body = source[source.index("class Config:"):source.index("def __post_init__")]
    literal = re.findall(r"^    (\w+): [^=\n]+ = (?!_DEFAULT\b|field\(default=_DEFAULT"
                         r"|field\(default_f)", body, re.MULTILINE)
    assert literal == []


def test_a_value_given_wins_and_the_rest_are_defaults():
    cfg = Config(data_dir="/srv/x", sync=False)
    assert (cfg.data_dir, cfg.sync) == ("/srv/x", False)
    assert cfg.base_uri == defaults()["base_uri"]
    assert dataclasses.replace(cfg, sync=True).sync is True


def test_settings_and_binary_store_take_the_configuration_defaults(tmp_path):
    values = defaults()
    s = Settings()
    assert (s.base_uri, s.referential_integrity, s.allow_foreign_subjects,
            s.digest_algorithm, s.versioning_auto) == (
        values["base_uri"], values["referential_integrity"],
        values["allow_foreign_subjects"], values["digest_algorithm"],
        values["versioning_auto"])
    assert s.event_retention_s == values["messaging_retention_days"] * 86400.0
    assert s.publishing is bool(values["messaging_broker_url"])
    assert BinaryStore(tmp_path / "b").algorithm == values["digest_algorithm"]


def _shown(text: str) -> object:
    text = text.strip().strip("`")
    if text.startswith("empty"):
        return ""
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text)
    except ValueError:
        return text


def _value(v: object) -> object:
    if isinstance(v, tuple):
        return ", ".join(v)
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    return v


#: (YAML key, its variable, the default shown) of each row of the reference table.
ROWS = re.findall(r"^\| `([\w.]+)` \| `(LSUP_\w+)` \| ([^|]*) \|",
                  (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8"),
                  re.MULTILINE)


def test_the_reference_page_lists_every_key():
    names = env_names()
    assert sorted(names[var] for _, var, _ in ROWS) == sorted(defaults())


@pytest.mark.parametrize("key, var, shown", ROWS, ids=[k for k, _, _ in ROWS])
def test_the_reference_page_shows_the_default(key, var, shown):
    assert _shown(shown) == _value(defaults()[env_names()[var]])


def test_settings_of_a_configuration():
    cfg = Config(base_uri="http://x.test/rest", referential_integrity="strict",
                 messaging_retention_days=2.0, messaging_broker_url="stomp://127.0.0.1:1")
    s = Settings.of(cfg, "alice")
    assert (s.base_uri, s.referential_integrity, s.agent) == (
        "http://x.test/rest", "strict", "alice")
    assert s.event_retention_s == 2 * 86400.0 and s.publishing is True
    assert Settings.of(Config()) == Settings()      # the defaults agree both ways
