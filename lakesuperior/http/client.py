"""A small keep-alive HTTP client on ``http.client`` (standard library only).

Used by ``lsup-admin migrate`` and ``lsup-benchmark --mode http``: one
persistent connection per scheme and host, Basic authentication, a fresh
connection (and one retry) when the server closed an idle one. ``Link``
headers are parsed by ``lakesuperior.http.headers``, as the server's are. Nothing
here knows LDP.
"""
from __future__ import annotations

import base64
import http.client
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import urljoin, urlsplit

from lakesuperior.exceptions import HttpClientError
from lakesuperior.http.headers import Link, parse_link

__all__ = ["HttpClient", "HttpResponse", "parse_auth"]

USER_AGENT = "lakesuperior-http/1"
_RETRYABLE = (http.client.RemoteDisconnected, http.client.BadStatusLine, BrokenPipeError,
              ConnectionResetError, ConnectionAbortedError)


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """``USER:PASS`` -> ``(user, password)``; ``None`` stays ``None``."""
    if value is None:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user:
        raise ValueError("credentials must be given as USER:PASS")
    return user, password


@dataclass
class HttpResponse:
    """A response read whole: status, headers (case-insensitive) and body."""

    status: int
    reason: str
    headers: Message
    body: bytes = b""
    url: str = ""
    links: list[Link] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def content_type(self) -> str:
        """The media type, without parameters, in lower case ('' if none)."""
        return (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()

    def link_targets(self, rel: str) -> list[str]:
        """Absolute targets of the ``Link`` headers with relation ``rel``."""
        return [urljoin(self.url, link.uri) for link in self.links if link.has_rel(rel)]

    def excerpt(self, size: int = 300) -> str:
        """The start of the body as text, for error messages."""
        text = self.body[:size].decode("utf-8", "replace").strip()
        return text + ("..." if len(self.body) > size else "")


class _Body:
    """A response body to stream; ``close()`` before it was read to the end drops
    the connection (its unread bytes would corrupt the next response)."""

    def __init__(self, client: HttpClient, url: str, resp: http.client.HTTPResponse):
        self._client = client
        self._url = url
        self._resp = resp

    def read(self, size: int = -1) -> bytes:
        try:
            return self._resp.read(size if size is not None and size >= 0 else None)
        except (OSError, http.client.HTTPException) as e:
            self.close()
            raise HttpClientError(
                f"GET {self._url}: the connection broke while reading: {e}") from e

    def close(self) -> None:
        if not self._resp.isclosed():
            self._resp.close()
            self._client._drop(self._url)

    def __enter__(self) -> _Body:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HttpClient:
    """Requests over persistent connections; not for use by several threads."""

    def __init__(self, auth: tuple[str, str] | None = None, timeout: float = 60.0,
                 user_agent: str = USER_AGENT):
        self.timeout = timeout
        self._headers = {"User-Agent": user_agent}
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"
        self._conns: dict[tuple[str, str], http.client.HTTPConnection] = {}

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def request(self, method: str, url: str, body: bytes | None = None,
                headers: Mapping[str, str] | None = None) -> HttpResponse:
        """Send a request and read the whole response."""
        resp = self._send(method, url, body, headers)
        try:
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            self._drop(url)
            raise HttpClientError(
                f"{method} {url}: the connection broke while reading: {e}") from e
        return self._wrap(resp, url, data)

    def open(self, method: str, url: str,
             headers: Mapping[str, str] | None = None) -> tuple[HttpResponse, _Body]:
        """Send a request and return its head and the unread body stream.

        Read the stream to its end (or call ``close()``) before the next request.
        """
        resp = self._send(method, url, None, headers)
        return self._wrap(resp, url, b""), _Body(self, url, resp)

    # -- plumbing --------------------------------------------------------------

    def _wrap(self, resp: http.client.HTTPResponse, url: str, data: bytes) -> HttpResponse:
        msg = resp.msg
        return HttpResponse(resp.status, resp.reason, msg, data, url,
                            parse_link(msg.get_all("Link") or []))

    def _key(self, url: str) -> tuple[str, str, str]:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise HttpClientError(f"Not an http(s) URL: {url!r}")
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        return parts.scheme, parts.netloc, path

    def _conn(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        conn = self._conns.get((scheme, netloc))
        if conn is None:
            cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            conn = cls(netloc, timeout=self.timeout)
            self._conns[(scheme, netloc)] = conn
        return conn

    def _drop(self, url: str) -> None:
        scheme, netloc, _ = self._key(url)
        conn = self._conns.pop((scheme, netloc), None)
        if conn is not None:
            conn.close()

    def _send(self, method: str, url: str, body: bytes | None,
              headers: Mapping[str, str] | None) -> http.client.HTTPResponse:
        scheme, netloc, path = self._key(url)
        all_headers = dict(self._headers)
        all_headers.update(headers or {})
        for attempt in (0, 1):
            conn = self._conn(scheme, netloc)
            fresh = conn.sock is None
            try:
                conn.request(method, path, body=body, headers=all_headers)
                return conn.getresponse()
            except _RETRYABLE as e:
                self._drop(url)
                if attempt or fresh:
                    raise HttpClientError(f"{method} {url}: the server closed the connection "
                                    f"({e.__class__.__name__})") from e
            except (TimeoutError, OSError, http.client.HTTPException) as e:
                self._drop(url)
                raise HttpClientError(f"{method} {url}: {e}") from e
        raise AssertionError("unreachable")
