"""GET, HEAD and OPTIONS: resources, binaries (ranges, digests), descriptions,
TimeMaps, mementos, the TimeGate, and the HTML view.

Each request reads in one snapshot: a single ``Repository`` call.
"""
from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import IO, Any, BinaryIO, cast

from flask import Response, current_app, render_template, request
from werkzeug.wsgi import wrap_file

from lakesuperior import rdfio
from lakesuperior.endpoints import html
from lakesuperior.endpoints import memento as mto
from lakesuperior.endpoints.access import reads_everything, require_read
from lakesuperior.endpoints.body_cache import BodyCache, Kept, Key
from lakesuperior.endpoints.call import (
    CHUNK,
    Call,
    negotiate,
    require_tombstone,
    tombstone_links,
)
from lakesuperior.endpoints.errors import BadGateway, MethodNotAllowed, NotAcceptable
from lakesuperior.endpoints.origins import mark_page
from lakesuperior.endpoints.paths import Target
from lakesuperior.endpoints.preconditions import if_range_holds
from lakesuperior.endpoints.representation import (
    HTML,
    RDF_OUT,
    TIMEMAP_OUT,
    VARY_POST,
    allowed_methods,
    content_protection,
    content_type_of,
    external_headers,
    get_options,
    modified_of,
    needs_triples,
    not_modified_headers,
    read_options,
    representation_parts,
    resource_headers,
    timegate_headers,
    timemap_headers,
)
from lakesuperior.endpoints.ui.pages import ui_context
from lakesuperior.endpoints.ui.versions import version_date
from lakesuperior.exceptions import ExternalContentError, UnsupportedDigestError
from lakesuperior.http import digests, mediatypes
from lakesuperior.http import headers as hdr
from lakesuperior.model.external import HANDLINGS
from lakesuperior.model.namespaces import DEFAULT_NAMESPACES, LDP_CONTAINS, RDF_TYPE
from lakesuperior.store import pipeline
from lakesuperior.store.binaries import is_supported, normalize_algorithm
from lakesuperior.store.external import Source
from lakesuperior.version import __version__


@tombstone_links
def read(call: Call, head: bool) -> Response:
    target = call.target
    if target.kind == "tombstone":
        require_tombstone(call)
        raise MethodNotAllowed(f"{call.url(kind='tombstone')} only accepts DELETE (purge) "
                               "and POST (resurrect)", allowed_methods(None, target))
    if target.kind == "timemap":
        return _timemap(call, head)
    if target.kind == "memento":
        return _memento(call, head)
    options, applied = read_options(call.prefer)
    when = hdr.parse_accept_datetime(request.headers.get("Accept-Datetime"))
    res: Any
    key: Key | None = None
    if (head and not needs_triples(options)) or when is not None:
        res = call.repo.info(call.uid, base_uri=call.base)   # headers only: no triples
    else:
        kwargs: dict[str, Any] = dict(get_options(options))
        page = not head and _wants_html()
        if page:
            # a page of children, not all of them (html.children_range)
            kwargs["children_range"] = html.children_range(_page_number())
        ext = current_app.extensions["lakesuperior"]
        with ext.repository.snapshot():      # one snapshot: the kept answer's key and the read
            if not head and not page:
                key = _answer_key(call, ext.repository.snapshot_id(), options)
                kept = ext.bodies.get(key)
                if kept is not None and (kept.shared or reads_everything(call.repo)):
                    return _kept_answer(call, kept, applied)
            res = call.repo.get(call.uid, base_uri=call.base, **kwargs)
    call.check_described(res)
    if when is not None:
        return _timegate(call, res, when)
    if res.is_binary and target.kind == "resource":
        return _binary(call, res, target, head)
    return _rdf(call, res, target, head, applied, options, key)


def _answer_key(call: Call, snapshot: int | None, options: dict[str, bool]) -> Key | None:
    """The key of the RDF answer to this GET (``body_cache``); None if it may not be
    kept, or if the request's ``Accept`` chooses nothing (judged after the read: a
    404 comes first, and a binary ignores it)."""
    media_type = mediatypes.negotiate(request.headers.get("Accept"), RDF_OUT)
    if media_type is None:
        return None
    return BodyCache.key(snapshot, call.target, call.base, media_type, options)


def _kept_answer(call: Call, kept: Kept, applied: bool) -> Response:
    """A GET answered from a kept answer: the agent's access checked, then the
    preconditions against its validators."""
    require_read(call.repo, call.uid)
    media_type = negotiate(RDF_OUT)
    headers = dict(kept.headers)
    if call.not_modified("GET", headers["ETag"], kept.modified):
        return _not_modified(headers)
    return _rdf_answer(call, headers, applied, media_type, kept.body)


def _rdf_answer(call: Call, headers: dict[str, str], applied: bool, media_type: str,
                body: str | bytes | None) -> Response:
    """The answer of a GET (``body``) or HEAD (None) of an RDF representation."""
    if applied:
        headers["Preference-Applied"] = f"return={call.prefer.return_}"
    headers["Content-Type"] = content_type_of(media_type, request.headers.get("Accept"))
    return Response(iter(()) if body is None else body, headers=headers)


def _rdf(call: Call, res: Any, target: Target, head: bool, applied: bool,
         options: dict[str, bool] | None = None, key: Key | None = None) -> Response:
    media_type = negotiate(RDF_OUT)
    headers = resource_headers(call.urls, res, target, options)
    page = media_type == HTML
    # A page shows what this agent may do and carries fresh form ids: never answered
    # 304 from a copy made for another agent (nor kept: ``session._not_stored``).
    if call.not_modified("GET", headers["ETag"], modified_of(res)) and not page:
        return _not_modified(headers)
    if page:
        mark_page()             # its HEAD too gets the page's headers (no framing)
    if head:
        return _rdf_answer(call, headers, applied, media_type, None)
    if page:
        return _rdf_answer(call, headers, applied, media_type, _html(call, res, target))
    triples, lists = representation_parts(res, options)
    body = rdfio.serialize(triples, media_type, namespaces=DEFAULT_NAMESPACES, lists=lists)
    if not res.per_agent:      # filtered for this agent: not every reader's answer
        current_app.extensions["lakesuperior"].bodies.keep(
            key, Kept(body, dict(headers), modified_of(res), not res.has_membership))
    return _rdf_answer(call, headers, applied, media_type, body)


def _not_modified(headers: dict[str, str]) -> Response:
    response = Response(status=304, headers=not_modified_headers(headers))
    del response.headers["Content-Type"]
    return response


def _timegate(call: Call, res: Any, when: datetime) -> Response:
    """A TimeGate answer (RFC 7089 section 4.1.1): 302 to the best memento."""
    chosen = mto.choose_memento(res.version_ids, when)
    if chosen is None:
        raise NotAcceptable(f"{call.url()} has no versions to match Accept-Datetime",
                            [("Vary", "Accept-Datetime")])
    headers = timegate_headers(call.urls, call.target, chosen)
    return Response(headers["Location"] + "\n", status=302, headers=headers)


def _binary(call: Call, res: Any, target: Target, head: bool) -> Response:
    headers = resource_headers(call.urls, res, target)
    headers["Vary"] = headers["Vary"].replace("Accept, Prefer", "Range, Want-Digest")
    if call.not_modified("GET", headers["ETag"], modified_of(res)):
        return _not_modified(headers)
    handling = res.external_handling
    if handling is not None:
        headers.update(external_headers(res))
    if handling == "redirect":
        # Fedora API 3.9: the content is at the URL; a Want-Digest is answered from it.
        _source_digest(call, res, headers)
        return Response(status=307, headers=headers)
    size = res.size
    headers["Content-Type"] = res.mimetype or "application/octet-stream"
    headers["Accept-Ranges"] = "bytes"
    if res.filename:
        headers["Content-Disposition"] = hdr.content_disposition(res.filename)
    _protect(headers)
    store = current_app.extensions["lakesuperior"].repository.binaries
    redirect = (handling is None and not head and not request.headers.get("Want-Digest")
                and res.digest and store.redirect_url(
                    res.digest, content_type=headers["Content-Type"],
                    disposition=headers.get("Content-Disposition")))
    if redirect:
        # binaries.s3.redirect: the bytes come from the object store, not through here.
        headers["Location"] = redirect
        headers["Cache-Control"] = "private, no-store"
        return Response(status=307, headers=headers)
    source = None
    if handling == "proxy":
        if not res.external_url.startswith("file:"):
            return _relay(call, res, headers, head)
        source = _proxy_source(call, res)       # a local file: read like stored content
        size = source.length or 0
    opener: Any = (lambda: source.stream) if source is not None else (lambda: res.content)
    try:
        ranges = _digest_and_ranges(opener, headers, size, head, source)
    except BaseException:
        if source is not None:
            source.close()
        raise
    if head:
        if source is not None:
            source.close()
        headers["Content-Length"] = str(size)
        return Response(iter(()), headers=headers)
    stream = opener()
    if not ranges:
        headers["Content-Length"] = str(size)
        return Response(wrap_file(request.environ, stream, CHUNK), headers=headers,
                        direct_passthrough=True)
    if len(ranges) == 1:
        start, end = ranges[0]
        headers["Content-Range"] = hdr.content_range(start, end, size)
        headers["Content-Length"] = str(end - start + 1)
        return Response(wrap_file(request.environ, cast(IO[bytes], FileRange(stream, start, end)),
                                  CHUNK),
                        status=206, headers=headers, direct_passthrough=True)
    boundary = uuid.uuid4().hex
    parts = [(start, end, (f"--{boundary}\r\nContent-Type: {headers['Content-Type']}\r\n"
                           f"Content-Range: {hdr.content_range(start, end, size)}\r\n\r\n"
                           ).encode("latin-1")) for start, end in ranges]
    closing = f"--{boundary}--\r\n".encode("ascii")
    length = sum(len(head_) + (end - start + 1) + 2 for start, end, head_ in parts) + len(closing)
    headers["Content-Type"] = f"multipart/byteranges; boundary={boundary}"
    headers["Content-Length"] = str(length)
    return Response(_multipart(stream, parts, closing), status=206, headers=headers,
                    direct_passthrough=True)


def _protect(headers: dict[str, str]) -> None:
    """The headers that keep served content from scripting this origin
    (``http.binary_protection``: ``representation.content_protection``)."""
    policy = current_app.extensions["lakesuperior"].config.http_binary_protection
    headers.update(content_protection(headers["Content-Type"],
                                      headers.get("Content-Disposition"), policy))


def _digest_and_ranges(opener: Callable[[], Any], headers: dict[str, str], size: int,
                       head: bool, source: Source | None) -> list[tuple[int, int]] | None:
    """Set ``Digest`` for a ``Want-Digest``; the ranges of a ``Range`` to answer."""
    want = request.headers.get("Want-Digest")
    if want:
        digest = _want_digest(opener, want, close=source is None)
        if digest:
            headers["Digest"] = digest
            if source is not None:
                source.stream.seek(0)
    range_header = request.headers.get("Range")
    if range_header and not head and if_range_holds(
            request.headers.get("If-Range"), headers["ETag"], headers.get("Last-Modified")):
        return sane_ranges(hdr.parse_range(range_header, size))
    return None


#: The ``Want-Digest`` algorithms a binary's ``Digest`` can carry (RFC 3230, RFC 5843).
WANT_DIGEST_ALGORITHMS = tuple(digests.HTTP_NAMES[a] for a in reversed(digests.ALGORITHMS))

#: Most parts of a multipart/byteranges answer; a Range header asking for more
#: (after coalescing) is ignored and the whole content is sent.
MAX_RANGES = 20


def sane_ranges(ranges: list[tuple[int, int]] | None) -> list[tuple[int, int]] | None:
    """Ranges worth answering (RFC 7233 section 6.1): overlapping or adjacent ranges
    are coalesced (in ascending order) so no byte is sent twice; more than
    ``MAX_RANGES`` of them, and the header is ignored (None)."""
    if not ranges or len(ranges) == 1:
        return ranges
    ordered = sorted(ranges)
    if all(a[1] + 1 < b[0] for a, b in itertools.pairwise(ordered)):
        merged = ranges                     # disjoint: the request's order stays
    else:
        merged = [ordered[0]]
        for start, end in ordered[1:]:
            last_start, last_end = merged[-1]
            if start <= last_end + 1:
                merged[-1] = (last_start, max(last_end, end))
            else:
                merged.append((start, end))
    return merged if len(merged) <= MAX_RANGES else None


def _chunks(stream: BinaryIO, start: int, end: int) -> Iterator[bytes]:
    """Bytes ``start``..``end`` (inclusive) of an open stream, in chunks."""
    stream.seek(start)
    left = end - start + 1
    while left > 0:
        chunk = stream.read(min(CHUNK, left))
        if not chunk:
            break
        left -= len(chunk)
        yield chunk


class FileRange:
    """Bytes ``start``..``end`` (inclusive) of an open file, as the file a
    ``wsgi.file_wrapper`` serves: the file is at ``start``, so a server that sends
    it with ``sendfile`` (gunicorn: from the file's position, ``Content-Length``
    bytes) sends the range without copying it; ``read`` stops at ``end`` for one
    that reads it."""

    def __init__(self, stream: BinaryIO, start: int, end: int):
        stream.seek(start)
        self._stream = stream
        self._left = end - start + 1

    def fileno(self) -> int:
        """The file's descriptor (``sendfile`` reads from its position)."""
        return self._stream.fileno()

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of the range (all that is left with ``size < 0``)."""
        size = self._left if size < 0 else min(size, self._left)
        data = self._stream.read(size) if size else b""
        self._left -= len(data)
        return data

    def close(self) -> None:
        """Close the file."""
        self._stream.close()


def _multipart(stream: BinaryIO, parts: list[tuple[int, int, bytes]],
               closing: bytes) -> Iterator[bytes]:
    try:
        for start, end, head in parts:
            yield head
            yield from _chunks(stream, start, end)
            yield b"\r\n"
        yield closing
    finally:
        stream.close()


def _want_digest(opener: Callable[[], Any], header: str, close: bool = True) -> str | None:
    """``Digest`` for the supported algorithms of a ``Want-Digest`` (RFC 3230 4.3.1),
    computed from the content ``opener()`` opens (Fedora API 3.2.3): the stored
    content, or a proxied source (closed after unless ``close`` is false)."""
    wanted = hdr.parse_want_digest(header)
    algos = list(dict.fromkeys(normalize_algorithm(a) for a in wanted if is_supported(a)))
    if not algos:
        if wanted:   # Fedora API 3.3.1, RFC 3230 section 4.3.1
            raise UnsupportedDigestError(
                f"Want-Digest names no supported algorithm ({', '.join(wanted)}); "
                f"supported: {', '.join(WANT_DIGEST_ALGORITHMS)}")
        return None
    f = opener()
    try:
        return hdr.format_digest(pipeline.run(f.read, algos).digests)
    except ExternalContentError as e:
        raise BadGateway(str(e)) from None
    finally:
        if close:
            f.close()


def _proxy_source(call: Call, res: Any, range_header: str | None = None,
                  method: str = "GET") -> Source:
    """The external source of ``res`` (proxy or redirect), checked against the
    allow-list (502 Bad Gateway if it fails: the content is not ours to answer for)."""
    try:
        return call.repo.external.open(res.external_url, method=method,
                                       range_header=range_header)
    except ExternalContentError as e:
        raise BadGateway(f"The external content of {call.url()} cannot be read: {e}") from None


def _source_digest(call: Call, res: Any, headers: dict[str, str]) -> None:
    """Set ``Digest`` for the request's ``Want-Digest`` from a whole read of the
    external source of ``res`` (fetched only when asked; 502 if it fails)."""
    want = request.headers.get("Want-Digest")
    if want:
        digest = _want_digest(lambda: _proxy_source(call, res), want)
        if digest:
            headers["Digest"] = digest


def _relay(call: Call, res: Any, headers: dict[str, str], head: bool) -> Response:
    """A proxied ``http:`` source: its answer relayed (``Range`` passed on, a 206 or
    416 kept), streamed; ``Want-Digest`` hashes a first whole read of it."""
    _source_digest(call, res, headers)
    range_header = request.headers.get("Range") if not head else None
    if range_header and not if_range_holds(request.headers.get("If-Range"), headers["ETag"],
                                           headers.get("Last-Modified")):
        range_header = None
    src = _proxy_source(call, res, range_header, "HEAD" if head else "GET")
    for name, value in (("Content-Length", src.length), ("Content-Range", src.content_range)):
        if value is not None:
            headers[name] = str(value)
    if src.status == 206 and src.content_type:
        headers["Content-Type"] = src.content_type     # multipart/byteranges keeps its own
        _protect(headers)
    if head:
        src.close()
        return Response(iter(()), status=src.status, headers=headers)
    return Response(_relayed(src), status=src.status, headers=headers,
                    direct_passthrough=True)


def _relayed(src: Source) -> Iterator[bytes]:
    """A source's body in chunks; a source failing midway cuts the response."""
    try:
        while chunk := src.read(CHUNK):
            yield chunk
    except ExternalContentError:
        return
    finally:
        src.close()


def _timemap(call: Call, head: bool) -> Response:
    target = call.target
    if target.description:
        res = call.repo.info(call.uid, base_uri=call.base)
        call.check_described(res)
        versions = res.version_info
    else:
        versions = call.repo.versions(call.uid)
    description = target.description
    original = call.url(kind="metadata") if description else call.url()
    timemap = call.url(kind="timemap", description=description)
    mementos = [(call.url(kind="memento", version=v.id, description=description), v)
                for v in versions]
    media_type = negotiate(TIMEMAP_OUT)
    headers = timemap_headers(call.urls, target, [v.id for v in versions], media_type,
                              request.headers.get("Accept"))
    if call.not_modified("GET", headers["ETag"], None):
        return _not_modified(headers)
    if media_type == HTML:
        mark_page()
    if head:
        return Response(iter(()), headers=headers)
    if media_type == mto.LINK_FORMAT:
        return Response(mto.timemap_link_format(original, timemap,
                                                [(uri, v.id) for uri, v in mementos]),
                        headers=headers)
    triples = mto.timemap_triples(timemap, [(uri, v.id, v.label) for uri, v in mementos])
    if media_type == HTML:
        page = render_template(
            "resource.html", **_page_context(call, call.uid, timemap, triples, f"<{timemap}>"),
            title=f"Versions of {call.uid}", children=None, types=[],
            versions=[(v.label, uri, version_date(v.id)) for uri, v in mementos],
            timemap=None, ui=ui_context(call.repo, call.uid, versionable=True))
        return Response(page, headers=headers)
    return Response(rdfio.serialize(triples, media_type, namespaces=DEFAULT_NAMESPACES),
                    headers=headers)


def _read_memento(call: Call) -> Any:
    """The memento the request names (``parse_target`` gives mementos a version)."""
    return call.repo.get_version(call.uid, call.target.version or "", base_uri=call.base)


def _memento(call: Call, head: bool) -> Response:
    target = call.target
    res = _read_memento(call)
    call.check_described(res)
    if res.is_binary and not target.description:
        return _binary(call, res, target, head)
    return _rdf(call, res, target, head, False)


@tombstone_links
def options(call: Call) -> Response:
    target = call.target
    if target.kind == "tombstone":
        require_tombstone(call)
        return _empty({"Allow": ", ".join(allowed_methods(None, target))})
    if target.kind == "timemap":
        call.repo.versions(call.uid)
        return _empty({"Allow": ", ".join(allowed_methods(None, target)),
                       "Accept-Post": "*/*", "Vary-Post": VARY_POST,
                       "Link": call.constrained_by})
    res: Any
    if target.kind == "memento":
        res = _read_memento(call)
    else:
        res = call.repo.info(call.uid, base_uri=call.base)
        call.check_described(res)
    headers = resource_headers(call.urls, res, target)
    for name in ("ETag", "Last-Modified", "Vary", "Memento-Datetime"):
        headers.pop(name, None)
    # Fedora API 3.9.1: advertised by a server that takes external content; with an
    # empty allow-list it takes none (each such request is 4xx with constrainedBy, 3.9)
    if target.kind == "resource" and call.repo.external.allow \
            and ("POST" in headers["Allow"] or res.is_binary):
        headers["Accept-External-Content-Handling"] = ",".join(HANDLINGS)
    return _empty(headers)


def _empty(headers: dict[str, str]) -> Response:
    """An OPTIONS answer: headers only."""
    response = Response(b"", headers=headers)
    del response.headers["Content-Type"]
    return response


def _wants_html() -> bool:
    """Whether the request's ``Accept`` chooses the HTML page (a malformed one is
    judged where the representation is chosen: a binary ignores it)."""
    return mediatypes.negotiate(request.headers.get("Accept"), RDF_OUT) == HTML


def _page_number() -> int:
    """The ``page`` query parameter (1 when absent or not a number; at most
    ``html.MAX_PAGE``, past which no container has pages)."""
    try:
        return min(int(request.args.get("page", "1")), html.MAX_PAGE)
    except ValueError:
        return 1


def _page_context(call: Call, uid: str, uri: str, triples: list, subject: str) -> dict[str, Any]:
    return {"uid": uid, "uri": uri, "crumbs": html.breadcrumbs(call.base, uid),
            "root_url": call.base + "/", "version": __version__,
            "subjects": html.group(triples, subject, skip=(LDP_CONTAINS, RDF_TYPE)),
            "memento": None, "description_of": None, "binary": None}


def _html(call: Call, res: Any, target: Target) -> str:
    subject = f"<{call.url(res.uid)}>"
    triples = res.triples
    description = target.kind == "metadata" or target.description
    uri = call.url(kind=target.kind, version=target.version, description=target.description)
    ctx = _page_context(call, res.uid, uri, triples, subject)
    ctx["types"] = [html.term(o) for s, p, o in triples if s == subject and p == RDF_TYPE]
    ctx["title"] = res.uid if not description else f"{res.uid} (description)"
    if target.kind == "memento":
        ctx["memento"] = call.url(res.uid, "metadata") if description else call.url(res.uid)
        ctx["title"] += f" at {target.version}"
    if description:
        ctx["description_of"] = call.url(res.uid)
    if res.is_binary:
        download = (call.url(res.uid, "memento", target.version) if target.kind == "memento"
                    else call.url(res.uid))
        ctx["binary"] = {"mimetype": res.mimetype, "size": html.human_size(res.size),
                         "filename": res.filename, "download": download,
                         "digests": sorted(res.digests.items())}
    if res.is_container and target.kind == "resource":
        uids, page, pages = html.page_of(res.children, res.child_count, _page_number())
        binaries = call.repo.binary_uids(uids)    # a binary opens its description page
        ctx.update(children=[(u.rsplit("/", 1)[-1], call.url(u, "metadata") if u in binaries
                              else call.url(u), call.url(u) if u in binaries else None)
                             for u in uids],
                   child_count=res.child_count, page=page, pages=pages)
    else:
        ctx["children"] = None
    if target.kind == "memento":
        ctx["versions"] = None
        ctx["timemap"] = None
        ctx["ui"] = ui_context(call.repo, res.uid, version=target.version)
    else:
        ctx["versions"] = [(v.label, call.url(res.uid, "memento", v.id, description),
                            version_date(v.id)) for v in res.version_info]
        ctx["timemap"] = call.url(res.uid, "timemap", description=description)
        ctx["ui"] = ui_context(call.repo, res.uid, actions=True, versionable=True)
    return render_template("resource.html", **ctx)
