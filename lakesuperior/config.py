"""Configuration: defaults <- YAML file (``LSUP_CONFIG``) <- ``LSUP_*`` variables.

Nothing is read at import time: call ``Config.load()``.

Environment variables follow one rule: ``LSUP_`` and the key's path in
``etc.defaults/application.yml``, upper-cased and joined by ``_`` (``store.sync``
is ``LSUP_STORE_SYNC``, ``server.bind`` is ``LSUP_SERVER_BIND``). ``LSUP_CONFIG``
names the YAML file. The names of older releases in ``ENV_ALIASES`` still work.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from lakesuperior.exceptions import ConfigError
from lakesuperior.http import digests

REFINT_MODES = ("off", "lenient", "strict")
BINARY_BACKENDS = ("file", "s3")
#: S3's smallest part of a multipart upload (but the last).
S3_MIN_PART = 5 << 20
#: S3's largest part, and the longest life of a presigned URL (seven days, SigV4).
S3_MAX_PART = 5 << 30
S3_MAX_EXPIRES = 7 * 86400
BINARY_PROTECTIONS = ("attachment", "sandbox", "off")
#: The most connections a replica target may be sent requests on at once.
MAX_REPLICA_CONNECTIONS = 64
ENV_PREFIX = "LSUP_"
ENV_CONFIG = "LSUP_CONFIG"
# Older names, still accepted: variable -> configuration key.
ENV_ALIASES = {"LSUP_SYNC": "sync", "LSUP_MAP_SIZE": "map_size",
               "LSUP_INDEX_BATCH": "index_batch"}

log = logging.getLogger(__name__)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml's, if built with it
#: A field of ``Config`` not given: filled from the default YAML when it is built.
_DEFAULT: Any = type("_Default", (), {"__repr__": lambda self: "<default>"})()
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BASE_PATH = re.compile(r"(?:/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+")
#: The signature algorithms ``auth.jwt.algorithm`` may name.
JWT_ALGORITHMS = ("HS256", "HS384", "HS512", "RS256", "RS384", "RS512")
#: First path segments the application serves itself: no base path goes under them.
RESERVED_PATHS = ("query", "admin", "constraints", "static", "login", "logout", "search",
                  "health", "metrics", "ui")
_ORIGIN = re.compile(r"https?://(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")


@dataclass(frozen=True)
class Config:
    """All settings of a repository. A value not given is the default of
    ``etc.defaults/application.yml`` (inside the package): that file is the one
    place the defaults are written."""

    data_dir: str = _DEFAULT
    map_size: int = _DEFAULT
    sync: bool = _DEFAULT
    index_batch: int = _DEFAULT
    iri_cache: int = _DEFAULT
    background_index: bool = _DEFAULT
    indexer_process: bool = _DEFAULT
    resident_map_limit: int = _DEFAULT
    base_uri: str = _DEFAULT
    digest_algorithm: str = _DEFAULT
    binaries_backend: str = _DEFAULT
    binaries_s3_endpoint: str = _DEFAULT
    binaries_s3_bucket: str = _DEFAULT
    binaries_s3_region: str = _DEFAULT
    binaries_s3_prefix: str = _DEFAULT
    binaries_s3_access_key_id: str = _DEFAULT
    binaries_s3_secret_access_key: str = field(default=_DEFAULT, repr=False)
    binaries_s3_redirect: bool = _DEFAULT
    binaries_s3_redirect_expires: int = _DEFAULT
    binaries_s3_part_size: int = _DEFAULT
    binaries_s3_timeout: float = _DEFAULT
    binaries_s3_attempts: int = _DEFAULT
    referential_integrity: str = _DEFAULT
    allow_foreign_subjects: bool = _DEFAULT
    max_body_size: int = _DEFAULT
    max_rdf_body_size: int = _DEFAULT
    http_require_if_match: bool = _DEFAULT
    http_base_path: str = _DEFAULT
    http_allowed_origins: tuple[str, ...] = _DEFAULT
    http_binary_protection: str = _DEFAULT
    http_body_cache: int = _DEFAULT
    query_timeout: float = _DEFAULT
    query_max_per_agent: int = _DEFAULT
    query_max_rows: int = _DEFAULT
    versioning_auto: bool = _DEFAULT
    server_bind: str = _DEFAULT
    server_workers: int = _DEFAULT
    server_threads: int = _DEFAULT
    server_header_timeout: float = _DEFAULT
    server_body_timeout: float = _DEFAULT
    auth_enabled: bool = _DEFAULT
    auth_webid_base: str = _DEFAULT
    auth_proxy_header: str = _DEFAULT
    auth_trusted_proxies: tuple[str, ...] = _DEFAULT
    auth_guessing_free_failures: int = _DEFAULT
    auth_guessing_backoff: float = _DEFAULT
    auth_guessing_max_backoff: float = _DEFAULT
    auth_guessing_tracked: int = _DEFAULT
    auth_guessing_max_verifying: int = _DEFAULT
    auth_guessing_verify_wait: float = _DEFAULT
    messaging_broker_url: str = _DEFAULT
    messaging_destination: str = _DEFAULT
    messaging_user: str = _DEFAULT
    messaging_password: str = field(default=_DEFAULT, repr=False)
    messaging_retention_days: float = _DEFAULT
    messaging_feed_reader: str = _DEFAULT
    auth_root_acl: str = _DEFAULT
    auth_session_lifetime: float = _DEFAULT
    health_index_stall: float = _DEFAULT
    metrics_allowed: tuple[str, ...] = _DEFAULT
    auth_jwt_key: str = field(default=_DEFAULT, repr=False)
    auth_jwt_key_file: str = _DEFAULT
    auth_jwt_algorithm: str = _DEFAULT
    auth_jwt_user_claim: str = _DEFAULT
    auth_jwt_role_claim: str = _DEFAULT
    auth_jwt_admin_role: str = _DEFAULT
    auth_jwt_issuer: str = _DEFAULT
    auth_jwt_audience: str = _DEFAULT
    external_content_allowed: tuple[str, ...] = _DEFAULT
    external_content_allowed_file: str = _DEFAULT
    external_content_timeout: float = _DEFAULT
    external_content_total_timeout: float = _DEFAULT
    transactions_lifetime: float = _DEFAULT
    transactions_max_open: int = _DEFAULT
    transactions_max_operations: int = _DEFAULT
    transactions_max_bytes: int = _DEFAULT
    transactions_max_per_agent: int = _DEFAULT
    transactions_max_lifetime: float = _DEFAULT
    replicas_user: str = _DEFAULT
    replicas_password: str = field(default=_DEFAULT, repr=False)
    replicas_token: str = field(default=_DEFAULT, repr=False)
    replicas_timeout: float = _DEFAULT
    replicas_batch: int = _DEFAULT
    replicas_connections: int = _DEFAULT
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unset = [f.name for f in fields(self) if getattr(self, f.name) is _DEFAULT]
        if unset:
            found = defaults()
            for name in unset:
                object.__setattr__(self, name, found[name])

    # -- building -----------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike | None = None,
             environ: Mapping[str, str] | None = None, **overrides: Any) -> Config:
        """Defaults, then the YAML file ``path`` (or ``$LSUP_CONFIG``), then the
        environment, then keyword ``overrides``."""
        env = os.environ if environ is None else environ
        defaults = _read_yaml(_default_file())
        values = _flatten(defaults)
        path = path or env.get(ENV_CONFIG)
        if path:
            values.update(_flatten(_read_yaml(Path(path))))
        names = env_names(defaults)
        for var in sorted(v for v in env if v.startswith(ENV_PREFIX)):
            key = names.get(var) or ENV_ALIASES.get(var)
            if key is not None:
                values[key] = env[var]
            elif var != ENV_CONFIG:
                log.warning("Unknown environment variable %s ignored: the configuration "
                            "variables are %s", var, ", ".join(sorted(names)))
        values.update(overrides)
        return cls.from_mapping(values)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Config:
        """Build from flat keys, converting and checking each value."""
        known = {f.name: f for f in fields(cls)}
        kinds = _kinds()
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in values.items():
            f = known.get(key)
            if f is None or key == "extra":
                extra[key] = value
                continue
            kwargs[key] = _convert(key, value, kinds[key])
        cfg = cls(**kwargs, extra=extra)
        cfg.check()
        return cfg

    def with_(self, **changes: Any) -> Config:
        """A copy with some values changed."""
        cfg = replace(self, **changes)
        cfg.check()
        return cfg

    def check(self) -> None:
        if self.digest_algorithm not in digests.ALGORITHMS:
            raise ConfigError(f"digest_algorithm must be one of {digests.ALGORITHMS}, "
                              f"not {self.digest_algorithm!r}")
        if self.http_binary_protection not in BINARY_PROTECTIONS:
            raise ConfigError(f"http.binary_protection must be one of {BINARY_PROTECTIONS}, "
                              f"not {self.http_binary_protection!r}")
        self._check_binaries()
        if self.referential_integrity not in REFINT_MODES:
            raise ConfigError(f"referential_integrity must be one of {REFINT_MODES}, "
                              f"not {self.referential_integrity!r}")
        for name in ("map_size", "index_batch", "iri_cache", "max_body_size",
                     "max_rdf_body_size", "server_workers", "server_threads"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
        if self.http_body_cache < 0:
            raise ConfigError("http.body_cache must be 0 (none kept) or positive")
        if self.resident_map_limit < 0:
            raise ConfigError("store.resident_map_limit must be 0 (no bound) or positive")
        if self.query_timeout <= 0:
            raise ConfigError("query_timeout must be positive")
        if self.query_max_per_agent < 0:
            raise ConfigError("query_max_per_agent must be 0 (no bound) or positive")
        if self.query_max_rows < 0:
            raise ConfigError("query_max_rows must be 0 (no bound) or positive")
        if self.external_content_timeout <= 0:
            raise ConfigError("external_content.timeout must be positive")
        if self.external_content_total_timeout <= 0:
            raise ConfigError("external_content.total_timeout must be positive")
        for name in ("transactions_lifetime", "transactions_max_open",
                     "transactions_max_operations", "transactions_max_bytes",
                     "transactions_max_per_agent", "transactions_max_lifetime",
                     "server_header_timeout", "server_body_timeout"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name.replace('_', '.', 1)} must be positive")
        check_base_path(self.http_base_path)
        for name in ("backoff", "max_backoff", "tracked", "max_verifying", "verify_wait"):
            if getattr(self, "auth_guessing_" + name) <= 0:
                raise ConfigError(f"auth.guessing.{name} must be positive")
        if self.auth_guessing_free_failures < 0:
            raise ConfigError("auth.guessing.free_failures must be zero or positive")
        for origin in self.http_allowed_origins:
            check_origin(origin)
        if not _URI_SCHEME.match(self.auth_webid_base):
            raise ConfigError("auth.webid_base must be an absolute URI (a user's WebID is "
                              f"it plus the user name), not {self.auth_webid_base!r}")
        if self.auth_proxy_header and not _TOKEN.fullmatch(self.auth_proxy_header):
            raise ConfigError("auth.proxy_header must be an HTTP header name, not "
                              f"{self.auth_proxy_header!r}")
        for key, entries in (("auth.trusted_proxies", self.auth_trusted_proxies),
                             ("metrics.allowed", self.metrics_allowed)):
            for entry in entries:
                try:
                    ipaddress.ip_network(entry, strict=False)
                except ValueError:
                    raise ConfigError(f"{key}: {entry!r} is not an IP address or network "
                                      "(CIDR)") from None
        if self.auth_session_lifetime <= 0 or self.health_index_stall <= 0:
            raise ConfigError("auth.session.lifetime and health.index_stall must be positive")
        if self.auth_jwt_algorithm not in JWT_ALGORITHMS:
            raise ConfigError(f"auth.jwt.algorithm must be one of {', '.join(JWT_ALGORITHMS)}, "
                              f"not {self.auth_jwt_algorithm!r}")
        if self.auth_jwt_key and self.auth_jwt_key_file:
            raise ConfigError("Set auth.jwt.key or auth.jwt.key_file, not both")
        if not self.auth_jwt_user_claim:
            raise ConfigError("auth.jwt.user_claim must name a claim")
        if self.replicas_timeout <= 0 or self.replicas_batch <= 0:
            raise ConfigError("replicas.timeout and replicas.batch must be positive")
        if not 1 <= self.replicas_connections <= MAX_REPLICA_CONNECTIONS:
            raise ConfigError(f"replicas.connections must be 1 to {MAX_REPLICA_CONNECTIONS}")
        if self.messaging_retention_days < 0:
            raise ConfigError("messaging_retention_days must be zero or positive")
        if self.messaging_broker_url:
            broker_address(self.messaging_broker_url)
        if not self.messaging_destination.startswith(("/topic/", "/queue/")) or (
                len(self.messaging_destination.split("/", 2)[2]) == 0):
            raise ConfigError(f"messaging_destination must be /topic/NAME or /queue/NAME, "
                              f"not {self.messaging_destination!r}")

    def _check_binaries(self) -> None:
        if self.binaries_backend not in BINARY_BACKENDS:
            raise ConfigError(f"binaries.backend must be one of {', '.join(BINARY_BACKENDS)}, "
                              f"not {self.binaries_backend!r}")
        if self.binaries_s3_endpoint and not re.fullmatch(r"https?://\S+",
                                                          self.binaries_s3_endpoint):
            raise ConfigError("binaries.s3.endpoint must be an http:// or https:// URL, not "
                              f"{self.binaries_s3_endpoint!r}")
        if not S3_MIN_PART <= self.binaries_s3_part_size <= S3_MAX_PART:
            raise ConfigError(f"binaries.s3.part_size must be between {S3_MIN_PART} and "
                              f"{S3_MAX_PART} bytes (S3's limits)")
        if not 0 < self.binaries_s3_redirect_expires <= S3_MAX_EXPIRES:
            raise ConfigError("binaries.s3.redirect_expires must be between 1 and "
                              f"{S3_MAX_EXPIRES} seconds")
        if self.binaries_s3_timeout <= 0 or self.binaries_s3_attempts <= 0:
            raise ConfigError("binaries.s3.timeout and binaries.s3.attempts must be positive")

    # -- derived paths --------------------------------------------------------

    @property
    def store_dir(self) -> str:
        return os.path.join(self.data_dir, "ldprs")

    @property
    def binary_dir(self) -> str:
        return os.path.join(self.data_dir, "ldpnr")

    @property
    def sessions_dir(self) -> str:
        """The sessions of the login page and their signing key (``auth.sessions``)."""
        return os.path.join(self.data_dir, "sessions")

    @property
    def metrics_dir(self) -> str:
        """The figures each ``lsup-server`` worker counts, summed by ``GET /metrics``."""
        return os.path.join(self.data_dir, "metrics")

    @property
    def staging_dir(self) -> str:
        """The staged operations of open HTTP transactions (``fcr:tx``)."""
        return os.path.join(self.data_dir, "transactions")


def check_base_path(path: str) -> None:
    """``ConfigError`` unless ``path`` can be ``http.base_path``: ``/`` and one or
    more plain path segments, no trailing ``/``, no ``.``/``..`` or ``fcr:``
    segment, and not under a path the application serves itself."""
    segments = path.split("/")[1:]
    if (not _BASE_PATH.fullmatch(path) or any(s in (".", "..") for s in segments)
            or any(s[:4].lower() == "fcr:" for s in segments)):
        raise ConfigError(f"http.base_path must be a path like /rest or /fcrepo/rest (plain "
                          f"segments, no trailing '/'), not {path!r}")
    if segments[0] in RESERVED_PATHS:
        raise ConfigError(f"http.base_path {path!r} is under /{segments[0]}, which the "
                          "server uses for itself")


def check_origin(origin: str) -> str:
    """``origin`` if it is a serialized web origin, ``scheme://host[:port]`` (http or
    https, lower case, no path), else ``ConfigError`` saying why."""
    if not _ORIGIN.fullmatch(origin):
        raise ConfigError(f"http.allowed_origins: {origin!r} is not an origin such as "
                          "https://app.example.org or http://localhost:3000 (scheme, host "
                          "and optional port, lower case, no path; no '*')")
    return origin


def broker_address(url: str) -> tuple[str, int]:
    """(host, port) of a ``stomp://HOST:PORT`` broker URL; ``ConfigError`` otherwise."""
    scheme, sep, rest = url.partition("://")
    host, colon, port = rest.rstrip("/").rpartition(":")
    if scheme != "stomp" or not sep or not colon or not host or not port.isdigit() or (
            not 0 < int(port) < 65536):
        raise ConfigError(f"messaging_broker_url must be stomp://HOST:PORT (empty: "
                          f"messaging off), not {url!r}")
    return host.strip("[]"), int(port)


def env_names(defaults: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Environment variable -> configuration key, for every key of the default
    YAML (``defaults``, else ``etc.defaults/application.yml``): ``LSUP_`` and the
    key's path upper-cased, joined by ``_``."""
    data = _read_yaml(_default_file()) if defaults is None else defaults
    return {ENV_PREFIX + "_".join(str(p).upper() for p in path): _flat_key(path)
            for path, _value in _leaves(data)}


def _leaves(data: Mapping[str, Any], path: tuple[str, ...] = ()
            ) -> list[tuple[tuple[str, ...], Any]]:
    """(key path, value) of every leaf of a nested mapping."""
    out: list[tuple[tuple[str, ...], Any]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += _leaves(value, path + (key,))
        else:
            out.append((path + (key,), value))
    return out


def _flat_key(path: tuple[str, ...]) -> str:
    """The configuration key of a YAML key path: ``store.sync`` -> ``sync``;
    ``server.bind`` -> ``server_bind``."""
    return "_".join(str(p) for p in path if p != "store" or p == path[-1])


def defaults() -> dict[str, Any]:
    """Every configuration key's default, from ``etc.defaults/application.yml``
    (read at each call: nothing is read at import)."""
    kinds = _kinds()
    return {key: _convert(key, value, kinds[key])
            for key, value in _flatten(_read_yaml(_default_file())).items() if key in kinds}


def _kinds() -> dict[str, type]:
    """Each ``Config`` field's type, as ``_convert`` takes it."""
    named = {"str": str, "int": int, "bool": bool, "float": float, "tuple[str, ...]": tuple}
    return {f.name: named[str(f.type)] for f in fields(Config) if str(f.type) in named}


def _default_file() -> Path:
    """``etc.defaults/application.yml``, shipped inside the package as well."""
    ref = resources.files("lakesuperior").joinpath("etc.defaults/application.yml")
    return Path(str(ref))


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=_LOADER) or {}
    except OSError as e:
        raise ConfigError(f"Cannot read configuration file {path}: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"Configuration file {path} is not valid YAML: "
                          + " ".join(str(e).split())) from e
    if not isinstance(data, dict):
        raise ConfigError(f"Configuration file {path} must hold a mapping")
    return data


def _flatten(data: Mapping[str, Any]) -> dict[str, Any]:
    """``{'store': {'sync': x}}`` -> ``{'sync': x}``; ``server.bind`` -> ``server_bind``."""
    return {_flat_key(path): value for path, value in _leaves(data)}


def _convert(key: str, value: Any, kind: type) -> Any:
    try:
        if kind is tuple:
            # A YAML list, or a string of items separated by commas or blanks (env).
            items = value.replace(",", " ").split() if isinstance(value, str) else value
            if not isinstance(items, (list, tuple)):
                raise TypeError(value)
            return tuple(str(item).strip() for item in items if str(item).strip())
        if kind is bool:
            if isinstance(value, str):
                low = value.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    return True
                if low in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if kind is int:
            return int(value)
        if kind is float:
            return float(value)
        return str(value)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"Invalid value for {key}: {value!r}") from e
