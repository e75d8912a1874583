"""The auth.* configuration keys: defaults, YAML lists, LSUP_* strings, bad values."""
from __future__ import annotations

import pytest

from lakesuperior.config import Config
from lakesuperior.exceptions import ConfigError


def test_defaults():
    cfg = Config.load(environ={})
    assert cfg.auth_enabled is True
    assert cfg.auth_webid_base == "info:fedora/local-user#"
    assert cfg.auth_proxy_header == "" and cfg.auth_trusted_proxies == ()


def test_trusted_proxies_from_yaml_and_env(tmp_path):
    path = tmp_path / "c.yml"
    path.write_text("auth:\n  trusted_proxies: [10.0.0.1, '192.168.0.0/16', '::1']\n")
    assert Config.load(path, environ={}).auth_trusted_proxies == (
        "10.0.0.1", "192.168.0.0/16", "::1")
    env = {"LSUP_AUTH_TRUSTED_PROXIES": " 10.0.0.1,fd00::/8  127.0.0.1 "}
    assert Config.load(environ=env).auth_trusted_proxies == ("10.0.0.1", "fd00::/8",
                                                              "127.0.0.1")


@pytest.mark.parametrize("env,message", [
    ({"LSUP_AUTH_TRUSTED_PROXIES": "10.0.0.1, proxy.example.org"},
     "auth.trusted_proxies: 'proxy.example.org' is not an IP address"),
    ({"LSUP_AUTH_TRUSTED_PROXIES": "10.0.0.0/33"}, "'10.0.0.0/33' is not an IP address"),
    ({"LSUP_AUTH_PROXY_HEADER": "X Remote User"}, "auth.proxy_header must be an HTTP header"),
    ({"LSUP_AUTH_WEBID_BASE": "users/"}, "auth.webid_base must be an absolute URI"),
    ({"LSUP_AUTH_ENABLED": "maybe"}, "Invalid value for auth_enabled"),
])
def test_bad_values_name_their_key(env, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("(", r"\(")
                       .replace("[", r"\[").replace("/", "/")):
        Config.load(environ=env)


def test_yaml_trusted_proxies_must_be_a_list(tmp_path):
    path = tmp_path / "c.yml"
    path.write_text("auth:\n  trusted_proxies: 5\n")
    with pytest.raises(ConfigError, match="auth_trusted_proxies"):
        Config.load(path, environ={})
