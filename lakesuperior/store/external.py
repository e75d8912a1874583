"""External content sources (Fedora API 1.0 section 3.9): which URLs a binary's
content may come from, and fetching it: the server's only outbound traffic.

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

``open_source`` opens an allowed URL for reading, with the standard library's
``http.client``: one connection per request, ``timeout`` seconds to connect
and between bytes, no content coding asked for. A redirect (301, 302, 303, 307,
308) is followed only to a URL that is itself on the allow-list, at most
``MAX_REDIRECTS`` times. A source that cannot be reached, answers an error
status, is too slow or ends early raises ``ExternalContentError``. How a binary
refers to its external content is ``model/external.py``.
"""
from __future__ import annotations

import http.client
import mimetypes
import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

from lakesuperior.exceptions import ConfigError, ExternalContentError
from lakesuperior.version import __version__

SCHEMES = ("http", "https", "file")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_HOW_TO_ALLOW = ("add a prefix of it to external_content.allowed (LSUP_EXTERNAL_CONTENT_ALLOWED) "
                 "or to the file named by external_content.allowed_file")

#: Most redirects followed from one external URL.
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)
USER_AGENT = f"Lakesuperior/{__version__} (external content)"


@dataclass
class Source:
    """An open external source. ``status``: 200, or 206 / 416 for a range
    request to an ``http:`` source; ``length``: bytes the body will have (None
    if unknown); ``seekable``: a local file (ranges are read from it)."""

    url: str
    status: int
    stream: Any
    content_type: str | None = None
    length: int | None = None
    content_range: str | None = None
    seekable: bool = False
    conn: Any = None                  #: the ``http.client`` connection, closed with it

    def read(self, size: int = -1) -> bytes:
        try:
            chunk = self.stream.read(size if size >= 0 else None)
        except (OSError, http.client.HTTPException) as e:
            raise ExternalContentError(f"Reading {self.url[:200]} failed: "
                                       f"{_reason(e)}") from None
        return chunk

    def close(self) -> None:
        self.stream.close()
        if self.conn is not None:
            self.conn.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Counted:
    """A source's body that raises ``ExternalContentError`` when it ends before
    the ``Content-Length`` it announced (a copy must not keep half a file)."""

    def __init__(self, source: Source):
        self._source = source
        self._seen = 0

    def read(self, size: int = -1) -> bytes:
        chunk = self._source.read(size)
        self._seen += len(chunk)
        want = self._source.length
        if not chunk and want is not None and self._seen < want:
            raise ExternalContentError(f"{self._source.url[:200]} ended after {self._seen} of "
                                       f"its {want} bytes")
        return chunk


def open_source(allow: AllowList, url: str, *, timeout: float, method: str = "GET",
                range_header: str | None = None) -> Source:
    """Open ``url`` (normalized and allowed: ``AllowList.check``); the caller
    closes the result. ``range_header`` is passed on to an ``http:`` source,
    whose 206 / 416 answer is kept; a ``file:`` source is opened whole."""
    url = allow.check(url)
    if url.startswith("file:"):
        return _open_file(url)
    for _ in range(MAX_REDIRECTS + 1):
        conn, resp = _request(url, method, timeout, range_header)
        location = resp.getheader("Location")
        if resp.status in _REDIRECTS and location:
            resp.close()
            conn.close()
            target = urljoin(url, location.strip())
            try:
                url = allow.check(target)
            except ExternalContentError as e:
                raise ExternalContentError(f"{url[:200]} redirects to a URL that is not "
                                           f"allowed: {e}") from None
            continue
        if resp.status >= 400 and not (resp.status == 416 and range_header):
            resp.close()
            conn.close()
            raise ExternalContentError(f"{url[:200]} answered {resp.status} {resp.reason}")
        length = resp.getheader("Content-Length")
        return Source(url, resp.status, resp, resp.getheader("Content-Type"),
                      int(length) if length and length.strip().isdigit() else None,
                      resp.getheader("Content-Range"), conn=conn)
    raise ExternalContentError(f"{url[:200]}: more than {MAX_REDIRECTS} redirects")


def _request(url: str, method: str, timeout: float, range_header: str | None
             ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    parts = urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname or "", parts.port, timeout=timeout)
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if range_header:
        headers["Range"] = range_header
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request(method, target, headers=headers)
        return conn, conn.getresponse()
    except (OSError, http.client.HTTPException, ValueError) as e:
        conn.close()
        raise ExternalContentError(f"Cannot reach {url[:200]}: {_reason(e)}") from None


def _open_file(url: str) -> Source:
    path = os.path.realpath(file_path(url))
    try:
        fh: BinaryIO = open(path, "rb")
        size = os.fstat(fh.fileno()).st_size
    except OSError as e:
        raise ExternalContentError(f"Cannot read {url[:200]}: {e.strerror}") from None
    if os.path.isdir(path):
        fh.close()
        raise ExternalContentError(f"{url[:200]} is a directory, not a file")
    return Source(url, 200, fh, mimetypes.guess_type(path)[0], size, seekable=True)


def _reason(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "timed out"
    return getattr(error, "strerror", None) or type(error).__name__ + (
        f": {error}" if str(error) else "")


# -- the allow-list ------------------------------------------------------------

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
