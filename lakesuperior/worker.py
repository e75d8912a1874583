"""The gunicorn worker of ``lsup-server``: gunicorn's threaded worker (``gthread``),
with request headers read by the worker's event loop instead of a thread.

Gunicorn's threaded worker gives a connection to a thread as soon as it has a
byte to read; the thread then blocks until the whole header has arrived, so a
few clients sending their headers one byte at a time hold every thread and the
server answers no one (slowloris). Here, a connection waiting for a request
(new, or kept alive after one) stays in the worker's selector loop, which reads
what arrives without blocking, until the header is complete (an empty line
ends it); only then does a thread get it, with the bytes read so far. So:

* the header must be complete within ``server.header_timeout`` seconds of its
  first byte's wait (408 and the connection closed otherwise; a connection that
  sent nothing is closed silently), and at most ``MAX_HEADER`` bytes
  (431 otherwise); slow headers cost a socket and a buffer, never a thread;
* once a thread serves the request, every read of the body and every write of
  the response waits at most ``server.body_timeout`` seconds for the client: a
  body that stops is ``ClientTimeoutError`` in the application (408), a client
  that stops reading the response is dropped;
* a body of known length (``Content-Length``) is read by ``SocketBody``: each
  read fills one buffer straight from the socket, where gunicorn's reader copies
  every byte about six times through its buffers (a GiB costs about 0.1 s of CPU
  instead of 0.9 s; ``docs/performance.md``, "Large uploads"); chunked bodies
  keep gunicorn's reader;
* a worker holds at most gunicorn's ``worker_connections`` connections
  (``etc.defaults/gunicorn.py``); past it, new ones wait in the listen backlog;
* new connections go to the worker holding the fewest. Every worker's loop
  wakes when one arrives and the first to call ``accept`` takes it; left to
  that race, a burst of connections mostly goes to one worker (8 kept-alive
  clients: 8 to 0 or 7 to 1 across two workers), whose one interpreter then
  serves them all while the other core idles. So each worker posts how many
  connections it holds on a ``ConnectionBoard`` (shared memory made by
  ``lsup-server`` before the workers start); a worker that sees another live
  one holding fewer lets it take the connection, and accepts it itself only if
  it is still waiting ``ACCEPT_DEFER`` seconds later (a busy or stuck worker
  delays no one longer);
* a stopping worker (SIGTERM) reads what its waiting connections have
  received: a complete request header is served (its response says
  ``Connection: close``), and every other waiting connection, an idle kept-alive
  one included, is closed at once. Gunicorn's own worker keeps idle kept-alive
  connections open for two seconds more, so that a request already on its way
  gets an answer; that is what the reading does here without the wait (a client
  whose request is still on the network then sees the connection close before an
  answer, as with nginx: RFC 9112 section 9.3.1 lets it send an idempotent
  request again). The worker then exits as soon as the requests being served
  are answered.

It extends the ``ThreadWorker`` of gunicorn 27 (``accept``, ``nr_conns``,
``set_accept_enabled``, ``wait_for_and_dispatch_events``, ``enqueue_req``, the
``data_ready`` flag, ``murder_pending``, ``murder_keepalived``, ``_cap_keepalive``
and ``keepalived_conns``, ``on_client_socket_readable``, the unreader's
``take_buffered``): ``pyproject.toml`` requires that release. Connections that the loop cannot
read in clear are left to gunicorn's own handling: TLS terminated by gunicorn
itself (``--certfile``), HTTP/2 with prior knowledge, the uWSGI protocol.
"""
from __future__ import annotations

import mmap
import os
import selectors
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gunicorn.http.body import Body, LengthReader
from gunicorn.workers.gthread import ThreadWorker

from lakesuperior.config import Config
from lakesuperior.exceptions import ClientTimeoutError

__all__ = ["ACCEPT_DEFER", "ConnectionBoard", "HeaderReadingWorker", "MAX_HEADER",
           "SocketBody"]

#: Most bytes of one request's header (request line and fields).
MAX_HEADER = 65536
#: Seconds a worker leaves a new connection to a worker holding fewer (module doc).
ACCEPT_DEFER = 0.002
_RECV = 16384


@dataclass(eq=False)
class _Head:
    """A connection whose next request's header is being read."""

    conn: Any
    deadline: float
    data: bytearray = field(default_factory=bytearray)


class _TimedReader:
    """A request body reader whose socket timeout is ``ClientTimeoutError``."""

    def __init__(self, reader: Any, timeout: float):
        self.reader = reader
        self.timeout = timeout

    def read(self, size: int) -> bytes:
        try:
            return self.reader.read(size)
        except TimeoutError:
            raise _timed_out(self.timeout) from None


def _timed_out(timeout: float) -> ClientTimeoutError:
    return ClientTimeoutError(f"The request body stopped arriving for {timeout:g} seconds "
                              "(server.body_timeout)")


class _SocketLengthReader:
    """The rest of a body of ``length`` bytes: first what the connection's unreader
    holds (read with the header), then straight from ``sock`` into one buffer."""

    def __init__(self, unreader: Any, length: int, sock: socket.socket, timeout: float):
        self.unreader = unreader
        self.length = length       #: bytes of the body not read yet (gunicorn's name)
        self.sock = sock
        self.timeout = timeout
        self._buffer = bytearray()

    def read(self, size: int) -> bytes:
        size = min(self.length, size)
        if size <= 0:
            return b""
        held = self.unreader.take_buffered()
        if held:
            if len(held) > size:
                self.unreader.unread(held[size:])
                held = held[:size]
            self.length -= len(held)
            return held
        if len(self._buffer) < size:
            self._buffer = bytearray(size)
        view = memoryview(self._buffer)
        got = 0
        try:
            while got < size:
                n = self.sock.recv_into(view[got:size])
                if not n:                     # the client closed: the body ends short
                    break
                got += n
        except TimeoutError:
            raise _timed_out(self.timeout) from None
        finally:
            self.length -= got                # what was taken off the connection
        return bytes(view[:got])


class SocketBody(Body):
    """``wsgi.input`` for a body of known length: gunicorn's ``Body`` (lines,
    iteration, reads past the end) whose sized reads go straight to a
    ``_SocketLengthReader`` while nothing is buffered here."""

    def __init__(self, unreader: Any, length: int, sock: socket.socket, timeout: float):
        super().__init__(_SocketLengthReader(unreader, length, sock, timeout))

    def read(self, size: int | None = None) -> bytes:
        if size is not None and size > 0 and not self.buf.tell():
            return self._read_reader(size)
        return super().read(size)


def _complete(data: bytearray) -> bool:
    """Whether ``data`` holds a whole request header (blank lines before the request
    line do not count)."""
    start = 0
    while start < len(data) and data[start] in b"\r\n":
        start += 1
    return data.find(b"\r\n\r\n", start) >= 0 or data.find(b"\n\n", start) >= 0


def _received(sock: socket.socket) -> bool:
    """Whether a non-blocking socket has bytes to read, or its end of stream."""
    try:
        sock.recv(1, socket.MSG_PEEK)
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True
    return True


def _reply(sock: socket.socket, status: str, message: str) -> None:
    """Send a short error response on a non-blocking socket, as much of it as fits."""
    body = f"{status}: {message}\n".encode()
    head = (f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    try:
        sock.send(head + body)
    except OSError:
        pass


class ConnectionBoard:
    """How many connections each worker of one server holds, in memory shared by
    the processes forked after it is made: a slot per worker (its pid and its
    count), taken by worker age modulo ``slots``. The figures steer where
    connections go; a stale or torn one costs balance, never a connection."""

    def __init__(self, slots: int = 64):
        self.slots = slots
        self._mem = mmap.mmap(-1, 8 * slots)      # anonymous and shared: inherited by fork
        self._cells = memoryview(self._mem).cast("i")

    def take(self, age: int) -> int:
        """The slot of the worker of ``age``, claimed for this process."""
        slot = age % self.slots
        self._cells[2 * slot + 1] = 0
        self._cells[2 * slot] = os.getpid()
        return slot

    def post(self, slot: int, count: int) -> None:
        self._cells[2 * slot + 1] = count

    def leave(self, slot: int) -> None:
        """Free ``slot`` if this process holds it (a worker exiting)."""
        if self._cells[2 * slot] == os.getpid():
            self._cells[2 * slot] = 0

    def fewer_elsewhere(self, slot: int, count: int) -> bool:
        """Whether a live worker other than ``slot``'s holds fewer than ``count``."""
        cells = self._cells
        for other in range(self.slots):
            pid = cells[2 * other]
            if other == slot or not pid or cells[2 * other + 1] >= count:
                continue
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                cells[2 * other] = 0              # a worker that died without leaving
                continue
            except OSError:
                pass
            return True
        return False


class HeaderReadingWorker(ThreadWorker):
    """Gunicorn's ``gthread`` worker, reading request headers in its event loop
    (see the module doc). Its timeouts come from the Lakesuperior configuration of
    the ``lsup-server`` application it runs."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        config = getattr(self.app, "lsup_config", None) or Config.load()
        self.header_timeout: float = config.server_header_timeout
        self.body_timeout: float = config.server_body_timeout
        self.heads: deque[_Head] = deque()   #: in the order of their deadlines
        #: The server's board (None: no other worker to leave connections to).
        self.board: ConnectionBoard | None = getattr(self.app, "connection_board", None)
        self.slot = -1    #: this worker's on the board, taken in its own process (``run``)
        #: Until when a new connection is left to a worker holding fewer.
        self.accept_at: float | None = None

    @property
    def nr_conns(self) -> int:
        """Connections held (gunicorn counts them here): posted on the board."""
        return self._nr_conns

    @nr_conns.setter
    def nr_conns(self, count: int) -> None:
        self._nr_conns = count
        board = getattr(self, "board", None)
        if board is not None and self.slot >= 0:
            board.post(self.slot, count)

    def _in_clear(self, conn: Any) -> bool:
        cfg = self.cfg
        return not (cfg.is_ssl or getattr(conn, "is_http2", False)
                    or getattr(cfg, "protocol", "http") != "http"
                    or getattr(cfg, "http2_cleartext", "off") in ("prior-knowledge", "both"))

    # -- the event loop (main thread) -------------------------------------------------

    def accept(self, listener: Any) -> None:
        """Take a new connection, unless a live worker holding fewer may take it
        (then only if it is still waiting ``ACCEPT_DEFER`` seconds later)."""
        now = time.monotonic()
        if self.accept_at is not None and now > self.accept_at + ACCEPT_DEFER:
            self.accept_at = None        # that wait is over: another worker took it
        if self.accept_at is None:
            if (self.board is not None and self.slot >= 0
                    and self.board.fewer_elsewhere(self.slot, self.nr_conns)):
                self.accept_at = now + ACCEPT_DEFER
                self.set_accept_enabled(False)
                return
        elif now < self.accept_at:
            return
        self.accept_at = None
        super().accept(listener)

    def set_accept_enabled(self, enabled: bool) -> None:
        """Gunicorn's loop enables accepting on each turn: not before ``accept_at``."""
        if enabled and self.accept_at is not None and time.monotonic() < self.accept_at:
            return
        super().set_accept_enabled(enabled)

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        """Wait no longer than until ``accept_at``, when accepting starts again."""
        if self.accept_at is not None:
            left = self.accept_at - time.monotonic()
            if left > 0:
                timeout = min(timeout, left)
        super().wait_for_and_dispatch_events(timeout)

    def run(self) -> None:
        # The arbiter made this object: the slot is taken here, once the app is
        # loaded, in the worker's process (the others tell a dead worker by its pid).
        if self.board is not None:
            self.slot = self.board.take(self.age)
            self.board.post(self.slot, self.nr_conns)
        try:
            super().run()
        finally:
            if self.board is not None:
                self.board.leave(self.slot)

    def enqueue_req(self, conn: Any) -> None:
        """Read ``conn``'s next request header in the loop; a thread gets it once
        the header is complete."""
        if not self._in_clear(conn):
            super().enqueue_req(conn)
            return
        head = _Head(conn, time.monotonic() + self.header_timeout)
        if conn.parser is not None:            # bytes read ahead by the last request
            head.data += conn.parser.unreader.take_buffered()
        if _complete(head.data):
            self._hand_over(head)
            return
        conn.sock.setblocking(False)
        self.heads.append(head)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._readable, head))

    def _readable(self, head: _Head, _sock: Any) -> None:
        self._take(head)

    def _take(self, head: _Head) -> bool | None:
        """Read what has arrived on ``head``'s connection. True: done with it (the
        header handed over, or the connection dropped); False: more to wait for;
        None: nothing had arrived."""
        try:
            chunk = head.conn.sock.recv(_RECV)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            chunk = b""
        if not chunk:
            self._drop(head)
            return True
        head.data += chunk
        if _complete(head.data):
            self._forget(head)
            self._hand_over(head)
            return True
        if len(head.data) > MAX_HEADER:
            _reply(head.conn.sock, "431 Request Header Fields Too Large",
                   f"the request header is larger than {MAX_HEADER} bytes")
            self._drop(head)
            return True
        return False

    def _hand_over(self, head: _Head) -> None:
        head.conn.lsup_head = bytes(head.data)
        head.conn.data_ready = True
        super().enqueue_req(head.conn)

    def _forget(self, head: _Head) -> None:
        self.heads.remove(head)
        try:
            self.poller.unregister(head.conn.sock)
        except (KeyError, ValueError, OSError):
            pass

    def _drop(self, head: _Head) -> None:
        self._forget(head)
        self.nr_conns -= 1
        head.conn.close()

    def murder_pending(self) -> None:
        """Also close the connections whose header is late; when the worker stops,
        serve those whose header has arrived whole and close the others."""
        super().murder_pending()
        if not self.alive:
            for head in list(self.heads):
                while (done := self._take(head)) is False:
                    pass
                if done is None:
                    self._drop(head)
            return
        now = time.monotonic()
        while self.heads and self.heads[0].deadline <= now:
            head = self.heads[0]
            if head.data:
                _reply(head.conn.sock, "408 Request Timeout",
                       f"the request header did not arrive within {self.header_timeout:g} "
                       "seconds (server.header_timeout)")
            self._drop(head)

    # -- stopping (see the module doc) ----------------------------------------------------

    def _cap_keepalive(self, deadline: float) -> None:
        """The worker stops: instead of keeping idle kept-alive connections until
        ``deadline`` (gunicorn's linger), serve what they have received, close the rest."""
        self.murder_keepalived()
        self.murder_pending()

    def murder_keepalived(self, force: bool = False) -> None:
        """Also, when the worker stops: a kept-alive connection that has received
        bytes goes to the header reading (``murder_pending`` serves or closes it),
        an idle one is closed."""
        if not self.alive:
            for conn in list(self.keepalived_conns):
                if _received(conn.sock):
                    self.on_client_socket_readable(conn, conn.sock)
                else:
                    self.keepalived_conns.remove(conn)
                    try:
                        self.poller.unregister(conn.sock)
                    except (KeyError, ValueError, OSError):
                        pass
                    self.nr_conns -= 1
                    conn.close()
        super().murder_keepalived(force)

    # -- the threads ------------------------------------------------------------------

    def handle(self, conn: Any) -> Any:
        data = conn.__dict__.pop("lsup_head", None)
        if data is not None:
            conn.sock.setblocking(True)
            conn.init()
            conn.parser.unreader.unread(data)
        return super().handle(conn)

    def handle_request(self, req: Any, conn: Any) -> Any:
        conn.sock.settimeout(self.body_timeout)
        body = req.body
        if (body is not None and type(body.reader) is LengthReader and not body.buf.tell()
                and self._in_clear(conn)):
            req.body = SocketBody(body.reader.unreader, body.reader.length, conn.sock,
                                  self.body_timeout)
        elif body is not None:
            body.reader = _TimedReader(body.reader, self.body_timeout)
        return super().handle_request(req, conn)

