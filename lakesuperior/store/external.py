"""External content sources (Fedora API 1.0 section 3.9): which URLs a binary's
content may come from, and fetching it: the server's only outbound traffic.

A URL is accepted only under a prefix of the allow-list (configuration
``external_content.allowed`` and the file ``external_content.allowed_file``,
like Fedora's ``allowed-external-content.txt``; empty: nothing is accepted).
Schemes: ``http``, ``https``, ``file``. Before the check a URL is normalized:
scheme and host lower-cased, the default port dropped, the fragment dropped;
a URL with user information or a ``.`` / ``..`` path segment (also
percent-encoded) is refused, and so is an ``http(s):`` URL holding a backslash
(browsers and many servers take it for ``/``: ``/x/\\..\\y`` is ``/y`` to them)
or whose path, decoded, has a dot segment between backslashes (``%5C..%5C``).
The directory of a ``file:`` prefix is resolved when the list is read (the
administrator's links are followed); below it no
symbolic link is followed, so that neither ``..`` nor a link leads out of an
allowed directory. A prefix matches on a boundary:
``http://a.org/x`` allows ``http://a.org/x``, ``http://a.org/x/y`` and
``http://a.org/x?q``, never ``http://a.org/xyz``. An entry that is a scheme
alone, ``http://`` or ``https://``, allows every URL of that scheme (any host
and port), as the same line does in Fedora's list.

``open_source`` opens an allowed URL for reading. A ``file:`` URL is opened
once, by descriptor, from its allowed directory down (``open_file``): every
component without following a symbolic link (``O_NOFOLLOW``, relative to the
directory above it), the file without blocking (``O_NONBLOCK``: a FIFO does not
hang the request) and kept only if it is a regular file; what was checked is
what is read, whatever is renamed or linked meanwhile. An ``http(s):`` URL is
fetched with the standard library's ``http.client``: one connection per
request, ``timeout`` seconds to connect and between bytes, no content coding
asked for, and ``total_timeout`` seconds for everything from connecting to the
last byte (a source that sends one byte a second is cut there: its connection
is shut down by a timer). A redirect (301, 302, 303, 307, 308) is followed only
to a URL that is itself on the allow-list, at most ``MAX_REDIRECTS`` times. A
source that cannot be reached, answers an error status, is too slow or ends
early raises ``ExternalContentError``. How a binary refers to its external
content is ``model/external.py``.
"""
from __future__ import annotations

import errno
import http.client
import mimetypes
import os
import posixpath
import re
import socket
import stat
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

from lakesuperior.exceptions import ConfigError, ExternalContentError
from lakesuperior.version import __version__

SCHEMES = ("http", "https", "file")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
#: how many times an http(s) path is percent-decoded to look for dot segments (a
#: server may decode what a proxy in front of it decoded already)
_DECODINGS = 3
#: An allow-list entry that is a scheme alone: every URL of it is allowed.
_WHOLE_SCHEME = re.compile(r"(https?)://", re.IGNORECASE)
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
    limit: TotalLimit | None = None   #: the time limit of an ``http(s):`` source

    def read(self, size: int = -1) -> bytes:
        try:
            chunk = self.stream.read(size if size >= 0 else None)
        except (OSError, http.client.HTTPException) as e:
            if self.limit is not None:
                self.limit.check(self.url)
            raise ExternalContentError(f"Reading {self.url[:200]} failed: "
                                       f"{_reason(e)}") from None
        if self.limit is not None:
            self.limit.check(self.url)     # a cut connection reads as its end
        return chunk

    def close(self) -> None:
        if self.limit is not None:
            self.limit.cancel()
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


class TotalLimit:
    """The end of an ``http(s):`` source's time: at ``seconds`` from its start a
    timer shuts its connection down (a read blocked on it returns, a TLS
    handshake too), and ``check`` raises ``ExternalContentError`` from then on."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.expired = False
        self._fd = -1                 #: the connection's descriptor (TLS wraps the same)
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def connect(self, address: Any, timeout: Any = None, source_address: Any = None
                ) -> socket.socket:
        """``socket.create_connection``, its socket watched (one at a time:
        redirects); ``http.client`` calls it to connect."""
        sock = socket.create_connection(address, timeout, source_address)
        with self._lock:
            self._fd = sock.fileno()
            expired = self.expired
        if expired:
            sock.shutdown(socket.SHUT_RDWR)
        return sock

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._fd >= 0:
                # by descriptor: TLS moves it to a socket object of its own
                sock = socket.socket(fileno=self._fd)
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                finally:
                    sock.detach()

    def check(self, url: str) -> None:
        if self.expired:
            raise ExternalContentError(
                f"{url[:200]} did not arrive within the {self.seconds:g} s allowed for an "
                f"external source (external_content.total_timeout)")

    def release(self) -> None:
        """Forget the connection: called before it is closed, so that its
        descriptor is never shut down once another file may have it."""
        with self._lock:
            self._fd = -1

    def cancel(self) -> None:
        """Stop the timer and forget the connection (before it is closed)."""
        self._timer.cancel()
        self.release()


def open_source(allow: AllowList, url: str, *, timeout: float, total_timeout: float,
                method: str = "GET", range_header: str | None = None) -> Source:
    """Open ``url`` (normalized and allowed: ``AllowList.check``); the caller
    closes the result. ``timeout``: seconds to connect and between bytes;
    ``total_timeout``: seconds from the start to the last byte. ``range_header``
    is passed on to an ``http:`` source, whose 206 / 416 answer is kept; a
    ``file:`` source is opened whole."""
    url = allow.check(url)
    if url.startswith("file:"):
        return allow.open_file(url)
    limit = TotalLimit(total_timeout)
    try:
        return _open_http(allow, url, timeout, limit, method, range_header)
    except BaseException:
        limit.cancel()
        raise


def _open_http(allow: AllowList, url: str, timeout: float, limit: TotalLimit, method: str,
               range_header: str | None) -> Source:
    for _ in range(MAX_REDIRECTS + 1):
        conn, resp = _request(url, method, timeout, range_header, limit)
        location = resp.getheader("Location")
        if resp.status in _REDIRECTS and location:
            limit.release()
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
            limit.release()
            resp.close()
            conn.close()
            raise ExternalContentError(f"{url[:200]} answered {resp.status} {resp.reason}")
        length = resp.getheader("Content-Length")
        return Source(url, resp.status, resp, resp.getheader("Content-Type"),
                      int(length) if length and length.strip().isdigit() else None,
                      resp.getheader("Content-Range"), conn=conn, limit=limit)
    raise ExternalContentError(f"{url[:200]}: more than {MAX_REDIRECTS} redirects")


def _request(url: str, method: str, timeout: float, range_header: str | None,
             limit: TotalLimit) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    parts = urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname or "", parts.port, timeout=timeout)
    conn._create_connection = limit.connect      # type: ignore[attr-defined]
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if range_header:
        headers["Range"] = range_header
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request(method, target, headers=headers)
        return conn, conn.getresponse()
    except (OSError, http.client.HTTPException, ValueError) as e:
        limit.release()
        conn.close()
        limit.check(url)
        raise ExternalContentError(f"Cannot reach {url[:200]}: {_reason(e)}") from None


def _open_below(root: str, parts: list[str], url: str) -> int:
    """A descriptor of the regular file ``root/parts...``, each component opened
    relative to the one above without following a symbolic link."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(root, flags | os.O_DIRECTORY)      # resolved when the list was read
    try:
        for name in parts[:-1]:
            child = os.open(name, flags | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        found = os.open(parts[-1], flags | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=fd)
    finally:
        os.close(fd)
    mode = os.fstat(found).st_mode
    if not stat.S_ISREG(mode):
        os.close(found)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise ExternalContentError(f"{url[:200]} is {kind}: external content is read "
                                   "from regular files only")
    return found


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
    if "\\" in url:
        raise ExternalContentError(f"An external content URL may not hold a backslash (a "
                                   f"path separator to browsers and many servers): "
                                   f"{url[:200]!r}")
    # Decoded, a %5C is a separator to servers that take a backslash for one; a
    # server that decodes again reads %252e%252e as ..; a Java servlet container
    # (Tomcat, Jetty) drops a segment's ;parameters, so ..;/ is .. to it.
    path = parts.path
    for _ in range(_DECODINGS):
        decoded = unquote(path)
        _no_dot_segments(url, decoded.replace("\\", "/"), params=True)
        if decoded == path:
            break
        path = decoded
    netloc = host if ":" not in host else f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def _no_dot_segments(url: str, path: str, params: bool = False) -> None:
    """``ExternalContentError`` if ``path`` has a ``.`` or ``..`` segment (with
    ``params``, also one followed by ``;parameters``)."""
    segments = path.split("/")
    if params:
        segments = [seg.split(";", 1)[0] for seg in segments]
    if any(seg in (".", "..") for seg in segments):
        raise ExternalContentError(f"An external content URL may not hold . or .. path "
                                   f"segments: {url[:200]!r}")


def file_path(url: str) -> str:
    """The local path a normalized ``file:`` URL names."""
    return unquote(urlsplit(url).path)


class AllowList:
    """The URL prefixes external content may come from, and the schemes it may come
    from whole (entries ``http://``, ``https://``)."""

    def __init__(self, prefixes: Iterable[str] = ()):
        self.prefixes: tuple[str, ...] = ()
        urls: list[str] = []
        schemes: set[str] = set()
        for prefix in prefixes:
            whole = _WHOLE_SCHEME.fullmatch(prefix.strip())
            if whole:
                schemes.add(whole.group(1).lower())
                continue
            try:
                urls.append(normalize_url(prefix.strip()))
            except ExternalContentError as e:
                raise ConfigError(f"external_content.allowed: {e}") from None
        self.prefixes = tuple(urls)
        #: the schemes allowed whole (entries ``http://``, ``https://``)
        self.schemes = frozenset(schemes)
        #: (as written, resolved) of each file: prefix: where ``open_file`` starts
        self._roots = tuple((posixpath.normpath(file_path(u)), os.path.realpath(file_path(u)))
                            for u in urls if u.startswith("file:"))

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
        return bool(self.prefixes or self.schemes)

    def check(self, url: str) -> str:
        """The normalized ``url`` if it is under an allowed prefix (a ``file:``
        path under a prefix's directory as written or resolved: the links below
        it are refused when the file is opened); ``ExternalContentError``
        otherwise."""
        norm = normalize_url(url)
        if not self:
            raise ExternalContentError(f"External content is not allowed on this server "
                                       f"(the allow-list is empty): to allow {norm[:200]}, "
                                       + _HOW_TO_ALLOW)
        if norm.startswith("file:"):
            if self._below(file_path(norm)) is not None:
                return norm
        elif norm.split(":", 1)[0] in self.schemes or any(
                _under(norm, p) for p in self.prefixes if not p.startswith("file:")):
            return norm
        raise ExternalContentError(f"{norm[:200]} is not under an allowed external content "
                                   f"prefix: to allow it, " + _HOW_TO_ALLOW)

    def open_file(self, url: str) -> Source:
        """Open the file of an allowed ``file:`` URL (normalized): from the
        allowed directory down, no symbolic link followed, without blocking, a
        regular file only (the module's doc); ``ExternalContentError`` otherwise."""
        found = self._below(file_path(url))
        if found is None:
            raise ExternalContentError(f"{url[:200]} is not under an allowed external "
                                       "content prefix: to allow it, " + _HOW_TO_ALLOW)
        return _open_file(url, *found)

    def _below(self, path: str) -> tuple[str, list[str]] | None:
        """(resolved allowed directory, path components below it) of a local path
        under a ``file:`` prefix, as written or resolved; None if under none."""
        for written, real in self._roots:
            for root in dict.fromkeys((written, real)):
                if path == root:
                    return os.path.dirname(real), [os.path.basename(real)]
                if path.startswith(root.rstrip("/") + "/"):
                    return real, path[len(root.rstrip("/")) + 1:].split("/")
        return None


def _open_file(url: str, base: str, parts: list[str]) -> Source:
    """The ``Source`` of the regular file ``base/parts...`` (``_open_below``)."""
    parts = [p for p in parts if p]
    if not parts:
        raise ExternalContentError(f"{url[:200]} is a directory: external content is read "
                                   "from regular files only")
    try:
        fd = _open_below(base, parts, url)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ExternalContentError(f"Cannot read {url[:200]}: its path holds a symbolic "
                                       "link, which external content does not follow") \
                from None
        raise ExternalContentError(f"Cannot read {url[:200]}: {e.strerror}") from None
    os.set_blocking(fd, True)
    fh: BinaryIO = os.fdopen(fd, "rb")
    return Source(url, 200, fh, mimetypes.guess_type(parts[-1])[0], os.fstat(fd).st_size,
                  seekable=True)


def _under(url: str, prefix: str) -> bool:
    if url == prefix:
        return True
    if not url.startswith(prefix):
        return False
    return prefix.endswith("/") or url[len(prefix)] in "/?#"
