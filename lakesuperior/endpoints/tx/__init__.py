"""HTTP transactions, as in Fedora 6: ``/rest/fcr:tx`` (``<http.base_path>/fcr:tx``)
and the ``Atomic-ID`` header.

``POST /rest/fcr:tx`` opens a transaction (201, ``Location`` its URI,
``Atomic-Expires``); ``GET`` of its URI reports it (204 and ``Atomic-Expires``
while open), ``POST`` extends it (204), ``PUT`` commits it (204), ``DELETE``
rolls it back (204). An unknown transaction is 404 and a closed one (committed,
rolled back, expired) 410 there; an LDP request whose ``Atomic-ID`` names one
gets 409, as in Fedora 6 (its ``TransactionRuntimeException``).

How it works (``staging`` keeps the state on disk, shared by every worker):
an LDP request with ``Atomic-ID`` takes the repository's write transaction, runs
again the staged requests of the transaction (a read: all of them; a write: those
that touched its target, an ancestor or a descendant of it, and all of them if it
then fails or drops links), each as a request of its own, then runs itself (in
its own request context, the view reading the body as it was received); a write
that succeeded is staged (its body kept in the transaction's directory); then
the write transaction is rolled back. Nothing is in the store until ``PUT``, which
checks that no resource the transaction touched was changed since it first did
(409 otherwise), then runs every staged request again, in order, in one write
transaction that commits (with the change events of all of them), or in none.
A staged request runs again with its preconditions already checked (they were,
when it was staged) and as the agent of the request that runs it again, which is
the transaction's owner (no one else may use it): access is checked again with the
owner's rights of the moment, so a right revoked since the request was staged
makes the commit fail (409 naming the refused access) and nothing is applied.
Anonymous agents cannot open transactions (401); ``Staging`` limits how many
one agent holds open and how long one may be extended.
"""
from __future__ import annotations

import io
import sys
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime
from email.utils import formatdate
from typing import IO, Any
from urllib.parse import SplitResult, unquote_to_bytes, urlsplit

from flask import Blueprint, Flask, Response, current_app, request
from flask.typing import ResponseReturnValue

from lakesuperior.auth.agents import Agent
from lakesuperior.endpoints import authn
from lakesuperior.endpoints.bodies import PARSED_KEY
from lakesuperior.endpoints.call import no_content, public_root, request_path, request_uid
from lakesuperior.endpoints.errors import NotFound, TransactionGone
from lakesuperior.endpoints.paths import TX_SEGMENT, parse_atomic_id, parse_target
from lakesuperior.endpoints.tx.staging import (
    COMMITTED,
    ROLLED_BACK,
    Operation,
    Received,
    Staging,
    TxInfo,
    load_parsed,
    open_part,
)
from lakesuperior.exceptions import (
    AccessDeniedError,
    ResourceNotExistsError,
    TombstoneError,
    TransactionClosedError,
    TransactionConflictError,
    TransactionNotFoundError,
)
from lakesuperior.http import headers as hdr
from lakesuperior.repository import Repository

ATOMIC_ID = "Atomic-ID"
ATOMIC_EXPIRES = "Atomic-Expires"
#: Fedora 6's link from a new transaction to where it is committed.
COMMIT_REL = "http://fedora.info/definitions/v4/transaction#commitEndpoint"
WRITES = frozenset(("POST", "PUT", "PATCH", "DELETE"))
#: The response header of a write whose links lenient referential integrity dropped.
DROPPED_HEADER = "Lakesuperior-Dropped-Triples"
#: Request headers not staged: credentials, the transaction itself, hop-by-hop
#: and framing headers, and preconditions (checked when the request was staged).
_NOT_STAGED = frozenset(("atomic-id", "authorization", "cookie", "host", "content-length",
                         "transfer-encoding", "connection", "keep-alive", "expect",
                         "if-match", "if-none-match", "if-modified-since",
                         "if-unmodified-since", "te", "trailer", "upgrade"))

#: Request headers the request itself does not run with (it runs inside the
#: transaction, on a body already read).
_NOT_RUN = frozenset(("atomic-id", "content-length", "transfer-encoding"))

bp = Blueprint("tx", __name__)


class _Rollback(Exception):
    """Raised to roll back the write transaction a request in a transaction ran in."""


# --- the fcr:tx endpoint -------------------------------------------------------------------

def _state() -> tuple[Repository, Staging]:
    state = current_app.extensions["lakesuperior"]
    return state.repository, state.staging


def _owner() -> str:
    return authn.recorded_name(authn.request_agent())


def _tx_url(tx_id: str) -> str:
    prefix = current_app.extensions[TX_PREFIXES][request.blueprint or "rest_tx"]
    return f"{public_root()}{prefix}/{TX_SEGMENT}/{tx_id}"


def _expires(info: TxInfo) -> dict[str, str]:
    return {ATOMIC_EXPIRES: formatdate(info.expires, usegmt=True)}


def _open_tx(tx_id: str) -> TxInfo:
    """The open transaction ``tx_id`` of this request's user: 404 unknown, 410 closed,
    403 another user's."""
    _, staging = _state()
    try:
        return staging.get(tx_id, _owner())
    except TransactionNotFoundError as e:
        raise NotFound(str(e)) from None
    except TransactionClosedError as e:
        raise TransactionGone(str(e)) from None


@bp.post("")
def create() -> Response:
    repo, staging = _state()
    agent = authn.request_agent()
    if not agent.authenticated:
        raise AccessDeniedError(None, "Write", False, "Anonymous agents cannot open "
                                "transactions: authenticate to open one")
    with repo.transaction():
        info = staging.open(authn.recorded_name(agent))
    url = _tx_url(info.id)
    headers = {"Location": url, "Link": hdr.format_link(url, COMMIT_REL), **_expires(info)}
    return Response(status=201, headers=headers, content_type="text/plain; charset=utf-8",
                    response=url)


@bp.get("/<tx_id>")
def status(tx_id: str) -> Response:
    repo, _ = _state()
    with repo.transaction():
        info = _open_tx(tx_id)
    return no_content(_expires(info))


@bp.post("/<tx_id>")
def extend(tx_id: str) -> Response:
    repo, staging = _state()
    with repo.transaction():
        info = staging.extend(_open_tx(tx_id))
    return no_content(_expires(info))


@bp.put("/<tx_id>")
def commit(tx_id: str) -> Response:
    repo, staging = _state()
    info: TxInfo | None = None
    try:
        with repo.transaction():
            info = _open_tx(tx_id)
            agent = authn.request_agent()     # the owner (``_open_tx`` checked it)
            try:
                _check_conflicts(repo, info)
                for op in staging.operations(info):
                    response = _run(op, agent)
                    if response.status_code >= 400:
                        raise TransactionConflictError(
                            f"The staged {op.method} {op.path} no longer applies "
                            f"({response.status_code}: "
                            f"{response.get_data(as_text=True)[:300].strip()}); "
                            "nothing was committed")
            except TransactionConflictError:
                staging.finish(info, ROLLED_BACK)
                raise
            # Closed while the write lock is held: no request of the transaction
            # can slip in between the commit and the close.
            staging.finish(info, COMMITTED)
    except Exception:
        if info is not None and info.state == COMMITTED:   # the store's commit failed
            with repo.transaction():   # under the write lock, as every change of it
                staging.finish(info, ROLLED_BACK)
        raise
    return no_content()


@bp.delete("/<tx_id>")
def rollback(tx_id: str) -> Response:
    repo, staging = _state()
    with repo.transaction():
        staging.finish(_open_tx(tx_id), ROLLED_BACK)
    return no_content()


def _check_conflicts(repo: Repository, info: TxInfo) -> None:
    for uid, etag in info.touched.items():
        if _etag(repo, uid) != etag:
            raise TransactionConflictError(
                f"{uid} was changed outside transaction {info.id} after the transaction "
                "first read or wrote it; nothing was committed")


def _etag(repo: Repository, uid: str) -> str | None:
    try:
        return repo.info(uid).etag
    except ResourceNotExistsError:
        return None
    except TombstoneError:
        return "tombstone"


# --- LDP requests with Atomic-ID -----------------------------------------------------------

def within(serve: Callable[[], ResponseReturnValue]) -> Response:
    """Answer the current LDP request inside the transaction its ``Atomic-ID`` names
    (``serve``: the view's answer to the request, without the transaction).

    A read runs after every staged write of the transaction. A write runs first after
    the staged writes on its branch of the tree only; if it then fails, or drops links
    (lenient referential integrity), while other staged writes were left out, it runs
    again after all of them and that answer stands: what it depends on elsewhere in
    the tree (a resource created on another branch, membership triples) is seen."""
    tx_id = parse_atomic_id(request.headers[ATOMIC_ID])
    repo, staging = _state()
    agent = authn.request_agent()
    owner = authn.recorded_name(agent)
    uid = request_uid()
    method = request.method
    write = method in WRITES
    response: Response | None = None
    with ExitStack() as stack:
        body: Received | None = None
        for every in ((False, True) if write else (True,)):
            try:
                with repo.transaction():
                    info = staging.get(tx_id, owner)
                    if body is None:
                        if write:
                            staging.check_room(info)
                        body = stack.enter_context(
                            staging.receive(info, request.stream if write else None))
                    response = _attempt(info, uid, method, agent, body, every, serve)
                    raise _Rollback
            except _Rollback:
                pass
            if response is not None:
                break
    assert response is not None
    return response


def _attempt(info: TxInfo, uid: str, method: str, agent: Agent, body: Received,
             every: bool, serve: Callable[[], ResponseReturnValue]) -> Response | None:
    """Run the staged writes (``every`` one, else those on ``uid``'s branch), then the
    request; stage it if it is a successful write. None: run it again with ``every``."""
    repo, staging = _state()
    first = {} if uid in info.touched else {uid: _etag(repo, uid)}
    ops = staging.operations(info, None if every else uid)
    for op in ops:
        _run(op, agent)
    sent = list(request.headers.items())
    own = Operation(method, request_path(), public_root(),
                    [(k, v) for k, v in sent if k.lower() not in _NOT_STAGED],
                    [uid], authn.recorded_name(agent), repo.now().isoformat(),
                    None if body.path is None else (body.path, 0, body.size))
    seen: dict[str, Any] = {}
    if request.content_length is None and body.size:   # chunked: runs with a length
        response = _run(own, agent, [(k, v) for k, v in sent if k.lower() not in _NOT_RUN],
                        body.data, seen)
    else:
        response = _serve_here(own, body, serve)
        seen = request.environ
    failed = response.status_code >= 400 or DROPPED_HEADER in response.headers
    if failed and not every and len(ops) < info.operations:
        return None
    if method in WRITES and response.status_code < 400:
        _name_new_child(own, response, first)
        staging.stage(info, own, body, first,
                      seen.get(PARSED_KEY) if method == "PUT" else None)
    else:
        staging.touch(info, first)
    return response


def _serve_here(op: Operation, body: Received, serve: Callable[[], ResponseReturnValue]
                ) -> Response:
    """Answer the current request with ``serve``, in its own request context, reading
    its body as received (again, if it runs twice) and recording ``op``'s time; its
    response, read to the end."""
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    stream: IO[bytes] | None = None
    if body.data is not None:
        stream = io.BytesIO(body.data)
    elif body.path is not None:
        stream = open(body.path, "rb")
    if stream is not None:    # the view reads the body from here (it was read once)
        request.environ["wsgi.input"] = stream
        request.stream = stream
    repo: Repository = app.extensions["lakesuperior"].repository
    try:
        with repo.clock(datetime.fromisoformat(op.at)):
            try:
                response = app.make_response(serve())
            except Exception as e:  # the error response, as the app answers it
                response = app.make_response(app.handle_user_exception(e))
            response.direct_passthrough = False
            response.make_sequence()
            return response
    finally:
        if stream is not None:
            stream.close()


def _name_new_child(op: Operation, response: Response, first: dict[str, str | None]) -> None:
    """A POST runs again with its new child's name as ``Slug``: the same uid."""
    location = response.headers.get("Location")
    base = op.root + "/" + op.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]
    if op.method != "POST" or not location or not location.startswith(base + "/"):
        return
    child = parse_target(location[len(base):]).uid
    op.headers = [(k, v) for k, v in op.headers if k.lower() != "slug"]
    op.headers.append(("Slug", child.rpartition("/")[2]))
    op.uids.append(child)
    first.setdefault(child, None)


def _run(op: Operation, agent: Agent, headers: list[tuple[str, str]] | None = None,
         data: bytes | None = None, seen: dict[str, Any] | None = None) -> Response:
    """Run ``op`` as a request of its own (in the current write transaction, as
    ``agent``, with ``headers`` and the body ``data`` if given, its staged parsed
    triples if any); its response, read to the end. ``seen`` gets the request's
    WSGI environ as the request left it."""
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    root = urlsplit(op.root)
    path, _, query = op.path.partition("?")
    raw = root.path + op.path
    body: IO[bytes] | None = None
    length = 0
    if data is not None:
        body, length = io.BytesIO(data), len(data)
    elif op.body is not None:
        body, length = open_part(op.body), op.body[2]
    try:
        environ = _environ(op.method, root, path, query, headers or op.headers, body, length)
        environ.update({"RAW_URI": raw, "REQUEST_URI": raw, authn.AGENT_KEY: agent})
        parsed = load_parsed(op)
        if parsed is not None:
            environ[PARSED_KEY] = parsed
        repo: Repository = app.extensions["lakesuperior"].repository
        with repo.clock(datetime.fromisoformat(op.at)), app.request_context(environ):
            try:
                response = app.make_response(app.dispatch_request())
            except Exception as e:  # the error response, as the app answers it
                response = app.make_response(app.handle_user_exception(e))
            response.direct_passthrough = False
            response.make_sequence()
            if seen is not None:
                seen.update(environ)
            return response
    finally:
        if body is not None:
            body.close()


def _environ(method: str, root: SplitResult, path: str, query: str,
             headers: list[tuple[str, str]], body: IO[bytes] | None, length: int
             ) -> dict[str, Any]:
    """The WSGI environ of a request (PEP 3333) to ``root`` + ``path``."""
    secure = root.scheme == "https"
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": unquote_to_bytes(root.path).decode("latin-1"),
        "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
        "QUERY_STRING": query,
        "SERVER_NAME": root.hostname or "localhost",
        "SERVER_PORT": str(root.port or (443 if secure else 80)),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": root.netloc,
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": root.scheme,
        "wsgi.input": body if body is not None else io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for name, value in headers:
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_TYPE", "CONTENT_LENGTH", "HOST"):
            if key == "CONTENT_TYPE":
                environ[key] = value
            continue
        key = "HTTP_" + key
        environ[key] = f"{environ[key]}, {value}" if key in environ else value
    if body is not None:
        environ["CONTENT_LENGTH"] = str(length)
    return environ


#: Where the app keeps its ``fcr:tx`` blueprint names -> LDP prefixes.
TX_PREFIXES = "lakesuperior.tx_prefixes"


def register(app: Flask, prefixes: dict[str, str]) -> None:
    """Mount the ``fcr:tx`` endpoint under each LDP prefix (``prefixes``: blueprint
    name -> prefix, as ``app.endpoint_prefixes`` gives them)."""
    mounted = app.extensions[TX_PREFIXES] = {}
    for name, prefix in prefixes.items():
        mounted[f"{name}_tx"] = prefix
        app.register_blueprint(bp, url_prefix=f"{prefix}/{TX_SEGMENT}", name=f"{name}_tx")
