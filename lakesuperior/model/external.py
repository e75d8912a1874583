"""External content (Fedora API 1.0 section 3.9): which URLs a binary's content
may come from, and how a binary refers to it.

A URL is accepted only under a prefix of the allow-list (configuration
``external_content.allowed`` and the file ``external_content.allowed_file``,
like Fedora's ``allowed-external-content.txt``; empty: nothing is accepted).
Schemes: ``http``, ``https``, ``file``. Before the check a URL is normalized:
scheme and host lower-cased, the default port dropped, the fragment dropped;
a URL with user information or a ``.`` / ``..`` path segment (also
percent-encoded) is refused; a ``file:`` path is resolved with
``os.path.realpath`` (symbolic links followed), so that neither ``..`` nor a
link leads out of an allowed directory. A prefix matches on a boundary:
``http://a.org/x`` allows ``http://a.org/x``, ``http://a.org/x/y`` and
``http://a.org/x?q``, never ``http://a.org/xyz``.

The description of a ``redirect`` or ``proxy`` binary records where the content
is, as two server-managed triples (kept by versions, and by a GET-modify-PUT of
the description)::

    <res> fcsystem:externalContent "https://example.org/a.tif" ;
          fcsystem:externalHandling "proxy" .

A ``copy`` is an ordinary binary once stored: nothing of its source is kept.
"""
from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from lakesuperior.exceptions import ConfigError, ExternalContentError
from lakesuperior.model.interaction import (
    NON_RDF_SOURCE,
    model_name,
    normalize_interaction_model,
)
from lakesuperior.model.namespaces import FCSYSTEM

#: ``Link`` relation of external content, and the handlings this server supports
#: (``Accept-External-Content-Handling``).
EXTERNAL_CONTENT_REL = "http://fedora.info/definitions/fcrepo#ExternalContent"
HANDLINGS = ("copy", "redirect", "proxy")

#: Description predicates of a redirect / proxy binary (server-managed literals).
EXTERNAL_URL = FCSYSTEM.externalContent
EXTERNAL_HANDLING = FCSYSTEM.externalHandling

SCHEMES = ("http", "https", "file")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_HOW_TO_ALLOW = ("add a prefix of it to external_content.allowed (LSUP_EXTERNAL_CONTENT_ALLOWED) "
                 "or to the file named by external_content.allowed_file")


@dataclass(frozen=True)
class ExternalRef:
    """A binary's external content: its normalized URL and how it is served."""

    url: str
    handling: str


def check_handling(handling: str | None) -> str:
    """``handling`` if this server supports it; ``ExternalContentError`` otherwise."""
    if handling not in HANDLINGS:
        given = "no handling" if handling is None else f"handling {str(handling)[:50]!r}"
        raise ExternalContentError(f"External content needs a handling of "
                                   f"{', '.join(HANDLINGS)}, not {given}")
    return handling


def external_ref(url: str | None, handling: str, *inputs: Any,
                 model: Any = None) -> ExternalRef | None:
    """The external content a write names (None without ``url``); it takes no
    other input (``inputs``: the write's graph, data, stream...) and makes a
    binary (``model``: the interaction model asked for)."""
    if url is None:
        return None
    if any(i is not None for i in inputs):
        raise ExternalContentError("External content takes no graph, triples, data or stream: "
                                   "its content is at its URL")
    if normalize_interaction_model(model) not in (None, NON_RDF_SOURCE):
        raise ExternalContentError(f"External content makes a binary (ldp:NonRDFSource), not "
                                   f"a {model_name(normalize_interaction_model(model))}")
    if not isinstance(url, str):
        raise ExternalContentError(f"An external content URL is a string, not "
                                   f"{type(url).__name__}")
    return ExternalRef(url, check_handling(handling))


def normalize_url(url: str) -> str:
    """The normalized form of an external content URL (see the module's doc);
    ``ExternalContentError`` for one that is malformed or of another scheme."""
    if not isinstance(url, str) or not url or len(url) > 8000 or _UNSAFE.search(url):
        raise ExternalContentError(f"Not a usable external content URL: {str(url)[:200]!r}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise ExternalContentError(f"Malformed external content URL {url[:200]!r}: {e}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise ExternalContentError(f"External content URLs are {', '.join(SCHEMES)}: "
                                   f"not {url[:200]!r}")
    if scheme == "file":
        if parts.netloc not in ("", "localhost") or parts.query:
            raise ExternalContentError(f"A file: URL is file:///absolute/path, not {url[:200]!r}")
        path = unquote(parts.path)
        if not path.startswith("/") or "\x00" in path:
            raise ExternalContentError(f"A file: URL names an absolute path: {url[:200]!r}")
        _no_dot_segments(url, path)
        return "file://" + quote(posixpath.normpath(path) if path != "/" else "/")
    host = parts.hostname
    if not host or "@" in parts.netloc:
        raise ExternalContentError(f"An external content URL has a host and no user "
                                   f"information: {url[:200]!r}")
    _no_dot_segments(url, unquote(parts.path))
    netloc = host if ":" not in host else f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def _no_dot_segments(url: str, path: str) -> None:
    if any(seg in (".", "..") for seg in path.split("/")):
        raise ExternalContentError(f"An external content URL may not hold . or .. path "
                                   f"segments: {url[:200]!r}")


def file_path(url: str) -> str:
    """The local path a normalized ``file:`` URL names."""
    return unquote(urlsplit(url).path)


class AllowList:
    """The URL prefixes external content may come from."""

    def __init__(self, prefixes: Iterable[str] = ()):
        self.prefixes: tuple[str, ...] = ()
        urls: list[str] = []
        for prefix in prefixes:
            try:
                urls.append(normalize_url(prefix.strip()))
            except ExternalContentError as e:
                raise ConfigError(f"external_content.allowed: {e}") from None
        self.prefixes = tuple(urls)
        #: the resolved directories / files of the file: prefixes
        self._paths = tuple(os.path.realpath(file_path(u)) for u in urls
                            if u.startswith("file:"))

    @classmethod
    def from_config(cls, allowed: Iterable[str], allowed_file: str = "") -> AllowList:
        """The prefixes of ``external_content.allowed`` and of the file
        ``external_content.allowed_file`` (one per line; ``#`` comments)."""
        items = list(allowed)
        if allowed_file:
            try:
                with open(allowed_file, encoding="utf-8") as fh:
                    lines = fh.read().splitlines()
            except OSError as e:
                raise ConfigError(f"Cannot read external_content.allowed_file "
                                  f"{allowed_file}: {e.strerror}") from None
            items += [ln.split("#", 1)[0].strip() for ln in lines]
        return cls(i for i in items if i)

    def __bool__(self) -> bool:
        return bool(self.prefixes)

    def check(self, url: str) -> str:
        """The normalized ``url`` if it is under an allowed prefix (a ``file:``
        URL after its path is resolved); ``ExternalContentError`` otherwise."""
        norm = normalize_url(url)
        if not self.prefixes:
            raise ExternalContentError(f"External content is not allowed on this server "
                                       f"(the allow-list is empty): to allow {norm[:200]}, "
                                       + _HOW_TO_ALLOW)
        if norm.startswith("file:"):
            real = os.path.realpath(file_path(norm))
            if any(real == p or real.startswith(p.rstrip("/") + "/") for p in self._paths):
                return norm
        elif any(_under(norm, p) for p in self.prefixes if not p.startswith("file:")):
            return norm
        raise ExternalContentError(f"{norm[:200]} is not under an allowed external content "
                                   f"prefix: to allow it, " + _HOW_TO_ALLOW)


def _under(url: str, prefix: str) -> bool:
    if url == prefix:
        return True
    if not url.startswith(prefix):
        return False
    return prefix.endswith("/") or url[len(prefix)] in "/?#"
