"""Fetching external content: the server's only outbound traffic.

``open_source`` opens an allowed ``http:``, ``https:`` or ``file:`` URL
(``model.external.AllowList``) for reading, with the standard library's
``http.client``: one connection per request, ``timeout`` seconds to connect
and between bytes, no content coding asked for. A redirect (301, 302, 303, 307,
308) is followed only to a URL that is itself on the allow-list, at most
``MAX_REDIRECTS`` times. A source that cannot be reached, answers an error
status, is too slow or ends early raises ``ExternalContentError``.
"""
from __future__ import annotations

import http.client
import mimetypes
import os
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import urljoin, urlsplit

from lakesuperior.exceptions import ExternalContentError
from lakesuperior.model.external import AllowList, file_path
from lakesuperior.version import __version__

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
