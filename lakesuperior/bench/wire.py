"""A lean HTTP/1.1 client connection for the concurrent benchmark clients.

The load generator runs on the machine it measures, so every CPU cycle it spends
is taken from the server. ``http.client`` parses each response's headers with
the ``email`` package; this connection does the least an honest client does:
it writes the request line, the headers and the body in one ``sendall`` on a
keep-alive socket (``TCP_NODELAY``), then reads the whole response (status
line, headers, a body delimited by ``Content-Length``, chunked coding or the
end of the connection) and returns its status and body. A connection the
server closed between two requests (keep-alive timeout) is opened again and
the request sent once more; a failure in the middle of a response is raised.
"""
from __future__ import annotations

import socket
import ssl
from typing import BinaryIO
from urllib.parse import urlsplit

__all__ = ["Connection", "WireError"]

_RETRYABLE = (ConnectionResetError, BrokenPipeError)
_NO_BODY = (204, 304)
_MAX_LINE = 65536


class WireError(ConnectionError):
    """The server sent something that is not an HTTP/1.1 response, or closed the
    connection in the middle of one."""


class Connection:
    """One keep-alive connection to the server of ``url`` (http or https)."""

    def __init__(self, url: str, timeout: float = 600.0):
        parts = urlsplit(url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if self.tls else 80)
        self.timeout = timeout
        authority = self.host if ":" not in self.host else f"[{self.host}]"
        default = 443 if self.tls else 80
        self.authority = authority if self.port == default else f"{authority}:{self.port}"
        self.sock: socket.socket | None = None
        self.rfile: BinaryIO | None = None

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)
        self.sock = sock
        self.rfile = sock.makefile("rb")

    def close(self) -> None:
        if self.rfile is not None:
            self.rfile.close()
        if self.sock is not None:
            self.sock.close()
        self.sock = self.rfile = None

    def request(self, method: str, path: str, headers: dict[str, str],
                body: bytes | None = None) -> tuple[int, bytes]:
        """Send one request and read its whole response: ``(status, body)``."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.authority}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body or b'')}")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
        for attempt in (1, 2):
            if self.sock is None:
                self.connect()
            try:
                assert self.sock is not None
                self.sock.sendall(data)
                status_line = self._line()
                if not status_line:      # closed by the server before it answered
                    raise ConnectionResetError("the server closed the connection")
            except _RETRYABLE:
                self.close()
                if attempt == 2:
                    raise
                continue
            return self._response(status_line, method)
        raise AssertionError("unreachable")

    def _line(self) -> bytes:
        assert self.rfile is not None
        line = self.rfile.readline(_MAX_LINE)
        if len(line) >= _MAX_LINE:
            raise WireError("a response line longer than 64 KiB")
        return line

    def _response(self, status_line: bytes, method: str) -> tuple[int, bytes]:
        try:
            version, code, *_ = status_line.split(None, 2)
            status = int(code)
        except ValueError:
            raise WireError(f"not an HTTP status line: {status_line[:80]!r}") from None
        if not version.startswith(b"HTTP/1."):
            raise WireError(f"not an HTTP/1.x response: {status_line[:80]!r}")
        length = None
        chunked = close = False
        while True:
            line = self._line()
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise WireError("the connection closed in the response's headers")
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                close = b"close" in value.lower()
        if status < 200:                      # an interim response: the real one follows
            return self._response(self._line(), method)
        if method == "HEAD" or status in _NO_BODY:
            body = b""
        elif chunked:
            body = self._chunked()
        elif length is not None:
            body = self._exactly(length)
        else:
            assert self.rfile is not None
            body = self.rfile.read()
            close = True
        if close or version == b"HTTP/1.0":
            self.close()
        return status, body

    def _exactly(self, n: int) -> bytes:
        assert self.rfile is not None
        data = self.rfile.read(n)
        if len(data) != n:
            raise WireError(f"the connection closed after {len(data)} of {n} body bytes")
        return data

    def _chunked(self) -> bytes:
        parts: list[bytes] = []
        while True:
            line = self._line()
            try:
                size = int(line.split(b";", 1)[0], 16)
            except ValueError:
                raise WireError(f"not a chunk size: {line[:80]!r}") from None
            if size == 0:
                while self._line() not in (b"\r\n", b"\n", b""):
                    pass                       # trailers
                return b"".join(parts)
            parts.append(self._exactly(size))
            self._line()                       # the CRLF after the chunk
