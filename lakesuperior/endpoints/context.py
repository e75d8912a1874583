"""What every LDP request shares: the ``Call`` (repository, public base URI, target,
preferences), preconditions, validators and the headers of a resource.

Public URIs are the request's own host URL root plus the prefix (``/rest`` or
``/ldp``) plus the uid; the repository gets them as ``base_uri``.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from flask import Response, current_app, request

from lakesuperior import headers as hdr
from lakesuperior import rdfio
from lakesuperior.endpoints import memento as mto
from lakesuperior.endpoints.errors import (
    CONSTRAINED_BY,
    CONSTRAINTS_PATH,
    BadRequest,
    NotAcceptable,
    NotFound,
    PreconditionFailed,
)
from lakesuperior.endpoints.paths import Target, parse_target, target_path, to_bytes
from lakesuperior.exceptions import TombstoneError
from lakesuperior.model.namespaces import LDP_NS

#: Blueprint registration name -> URL prefix (see ``app.create_app``).
PREFIXES = {"rest": "/rest", "ldp": "/ldp"}

# --- vocabulary ---------------------------------------------------------------------------

LDP_RESOURCE = LDP_NS + "Resource"
LDP_RDF_SOURCE = LDP_NS + "RDFSource"
LDP_NON_RDF_SOURCE = LDP_NS + "NonRDFSource"
LDP_CONTAINER = LDP_NS + "Container"
LDP_BASIC = LDP_NS + "BasicContainer"
LDP_DIRECT = LDP_NS + "DirectContainer"
LDP_INDIRECT = LDP_NS + "IndirectContainer"
CONTAINERS = frozenset((LDP_BASIC, LDP_DIRECT, LDP_INDIRECT))
PREFER_CONTAINMENT = LDP_NS + "PreferContainment"
PREFER_MEMBERSHIP = LDP_NS + "PreferMembership"
PREFER_MINIMAL = LDP_NS + "PreferMinimalContainer"
PREFER_INBOUND = frozenset(("http://fedora.info/definitions/fcrepo#PreferInboundReferences",
                            "http://fedora.info/definitions/v4/repository#InboundReferences"))
PREFER_SERVER_MANAGED = frozenset(("http://fedora.info/definitions/fcrepo#ServerManaged",
                                   "http://fedora.info/definitions/v4/repository#ServerManaged"))
PREFER_CONTAINED = "http://www.w3.org/ns/oa#PreferContainedDescriptions"

# --- media types ------------------------------------------------------------------------

HTML = "text/html"
RDF_OUT = (rdfio.TURTLE, rdfio.JSON_LD, rdfio.N_TRIPLES, rdfio.RDF_XML, HTML)
ACCEPT_POST = ", ".join((rdfio.TURTLE, rdfio.JSON_LD, rdfio.N_TRIPLES, rdfio.RDF_XML,
                         rdfio.N3, "*/*"))
SPARQL_UPDATE = "application/sparql-update"
_TEXT_TYPES = (rdfio.TURTLE, rdfio.N_TRIPLES, HTML, mto.LINK_FORMAT)

_CONDITIONAL = ("If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since")
_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
                   r"(?::[0-9]{1,5})?")
CHUNK = 1 << 16


# --- the request -------------------------------------------------------------------------

def _repo():
    return current_app.extensions["lakesuperior"].repository


def _base() -> str:
    """Public base URI of the resources for this request (no trailing slash)."""
    host = request.host
    if not _HOST.fullmatch(host):
        raise BadRequest(f"Invalid Host header: {host!r}")
    prefix = PREFIXES[request.blueprint or "rest"]
    return f"{request.scheme}://{host}{request.script_root}{prefix}"


def _raw_path() -> bytes:
    """The request path below the prefix, percent-encoded as the client sent it."""
    environ = request.environ
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    prefix = (request.script_root + PREFIXES[request.blueprint or "rest"]).encode()
    if raw:
        data = to_bytes(raw).split(b"?", 1)[0]
        if data[:1] != b"/":  # absolute-form request target
            scheme_end = data.find(b"://")
            data = data[data.find(b"/", scheme_end + 3):] if scheme_end >= 0 else b""
        if data.startswith(prefix):
            return data[len(prefix):]
    # No raw URI from the server: re-encode the decoded path (a %2F cannot be told apart).
    path = to_bytes(request.environ.get("PATH_INFO", ""))
    full = to_bytes(request.script_root) + path
    rest = full[len(prefix):] if full.startswith(prefix) else path
    return re.sub(rb"[^A-Za-z0-9\-._~!$&'()*+,;=:@/\x80-\xff]",
                  lambda m: b"%%%02X" % m.group()[0], rest)


def link_value(uri: str, rel: str) -> str:
    """A ``Link`` value for a URI this server built (validated host, normalized path:
    nothing to escape), without ``headers.format_link``'s checks, on every response."""
    return f'<{uri}>; rel="{rel}"'


class Call:
    """What one request is about: the repository, the public base URI, the target."""

    __slots__ = ("repo", "base", "target", "prefer", "constrained_by")

    def __init__(self) -> None:
        self.repo = _repo()
        self.base = _base()
        self.target = parse_target(_raw_path())
        self.prefer = hdr.parse_prefer(request.headers.getlist("Prefer"))
        root = self.base[:-len(PREFIXES[request.blueprint or "rest"])]
        #: ``Link`` to the constraints document (LDP 4.2.1.6), on every response.
        self.constrained_by = link_value(root + CONSTRAINTS_PATH, CONSTRAINED_BY)

    @property
    def uid(self) -> str:
        return self.target.uid

    def url(self, uid: str | None = None, kind: str = "resource", version: str | None = None,
            description: bool = False) -> str:
        """Public URL of a target."""
        t = Target(self.uid if uid is None else uid, kind,  # type: ignore[arg-type]
                   version, description)
        path = target_path(t)
        return self.base + path if path != "/" else self.base + "/"

    def here(self) -> str:
        """Public URL of the request's target."""
        t = self.target
        return self.url(t.uid, t.kind, t.version, t.description)

    @property
    def handling(self) -> str | None:
        return self.prefer.handling


def conditional() -> bool:
    return any(name in request.headers for name in _CONDITIONAL)


def check_preconditions(method: str, *, exists: bool, etag: str | None,
                        last_modified: datetime | None, weak: bool) -> int | None:
    h = request.headers
    result = hdr.evaluate_preconditions(
        method, exists=exists, etag=etag, last_modified=last_modified,
        if_match=h.get("If-Match"), if_none_match=h.get("If-None-Match"),
        if_modified_since=h.get("If-Modified-Since"),
        if_unmodified_since=h.get("If-Unmodified-Since"), weak_if_match=weak)
    if result == 412:
        raise PreconditionFailed("A precondition of the request (If-Match, If-None-Match or "
                                 "If-Unmodified-Since) does not hold for the current state")
    return result


def modified_of(res: Any) -> datetime | None:
    value = res.last_modified
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


#: ``Repository.get`` options of a representation with no ``Prefer`` (``read_options``).
DEFAULT_OPTIONS = {"incl_children": True, "incl_membership": True, "incl_inbound": False,
                   "incl_srv_mgd": True, "embed_children": False}


def etag_of(res: Any, target: Target, options: dict[str, bool] | None = None) -> str:
    """Strong for a binary's content (its digest and media type), weak for RDF.

    ``res``: a resource or its ``Repository.info``; ``options``: the ``get``
    options of the representation (None: the default one, as preconditions of
    writes compare). The weak tag of an RDF representation is the repository's
    tag (the resource's ``fcrepo:lastModified``, which every change of its own,
    containment or membership triples sets), the options that differ from the
    default, and the latest version (the HTML view lists them). Inbound
    references and embedded children are not the resource's: with those, the
    triples themselves are hashed (the store reads a state's triples in a fixed
    order: equal states give equal tags).
    """
    if res.is_binary and target.kind in ("resource", "memento") and not target.description:
        seed = f"{res.digest}|{res.mimetype}"
        return '"' + hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest() + '"'
    flags = "" if not options else ",".join(
        f"{k}={v:d}" for k, v in options.items() if DEFAULT_OPTIONS.get(k) != v)
    versions = res.version_info
    seed = f"{res.etag}|{flags}|{versions[-1].id if versions else ''}"
    digest = hashlib.sha1(seed.encode(), usedforsecurity=False)
    if options and (options.get("incl_inbound") or options.get("embed_children")):
        digest.update("\n".join(map(" ".join, res.triples)).encode())
    return 'W/"' + digest.hexdigest() + '"'


def needs_triples(options: dict[str, bool]) -> bool:
    """Whether the headers of a representation need its triples (``etag_of``), not
    only the resource's ``Repository.info``."""
    return options["incl_inbound"] or options["embed_children"]


def is_weak(etag: str) -> bool:
    return etag.startswith("W/")


def allowed_methods(res: Any, target: Target) -> list[str]:
    if target.kind == "metadata":
        return ["GET", "HEAD", "OPTIONS", "PUT", "PATCH"]
    if target.kind == "timemap":
        return ["GET", "HEAD", "OPTIONS", "POST"]
    if target.kind == "memento":
        return ["GET", "HEAD", "OPTIONS"]
    if target.kind == "tombstone":
        return ["OPTIONS", "POST", "DELETE"]
    methods = ["GET", "HEAD", "OPTIONS"]
    if res.interaction_model and res.interaction_model[1:-1] in CONTAINERS:
        methods.append("POST")
    methods.append("PUT")
    if not res.is_binary:
        methods.append("PATCH")
    if target.uid != "/":
        methods.append("DELETE")
    return methods


def type_links(types: Iterable[str]) -> list[str]:
    return [link_value(t, "type") for t in types]


def advertised_types(res: Any, target: Target) -> list[str]:
    """The LDP types to advertise (``rel="type"``) for a target."""
    if target.kind == "metadata" or target.description:
        return [LDP_RESOURCE, LDP_RDF_SOURCE]
    types = {t[1:-1] for t in res.ldp_types}
    if target.kind == "memento":
        types &= {LDP_RESOURCE, LDP_RDF_SOURCE, LDP_NON_RDF_SOURCE}
    types.add(LDP_RESOURCE)
    return sorted(types, key=lambda t: (t != LDP_RESOURCE, t))


def resource_links(call: Call, res: Any, target: Target) -> list[str]:
    uid = target.uid
    links = type_links(advertised_types(res, target))
    description = target.kind == "metadata" or target.description
    original = call.url(uid, "metadata") if description else call.url(uid)
    timemap = call.url(uid, "timemap", description=description)
    if target.kind == "memento":
        links.append(link_value(mto.MEMENTO, "type"))
        links.append(link_value(original, "original timegate"))
        links.append(link_value(timemap, "timemap"))
    else:
        links.extend(type_links((mto.ORIGINAL_RESOURCE, mto.TIMEGATE)))
        links.append(link_value(original, "original timegate"))
        links.append(link_value(timemap, "timemap"))
    if res.is_binary:
        if description:
            links.append(link_value(call.url(uid), "describes"))
        elif target.kind == "memento":
            links.append(link_value(
                call.url(uid, "memento", target.version, description=True), "describedby"))
        else:
            links.append(link_value(call.url(uid, "metadata"), "describedby"))
    links.append(call.constrained_by)
    return links


def resource_headers(call: Call, res: Any, target: Target,
                     options: dict[str, bool] | None = None) -> dict[str, str]:
    etag = etag_of(res, target, options)
    headers = {"ETag": etag, "Link": ", ".join(resource_links(call, res, target)),
               "Allow": ", ".join(allowed_methods(res, target))}
    modified = modified_of(res)
    if modified is not None:
        headers["Last-Modified"] = hdr.format_http_date(modified)
    if "POST" in headers["Allow"]:
        headers["Accept-Post"] = ACCEPT_POST
    if "PATCH" in headers["Allow"]:
        headers["Accept-Patch"] = SPARQL_UPDATE
    if target.kind == "memento":
        headers["Memento-Datetime"] = hdr.format_http_date(mto.version_datetime(target.version))
        headers["Vary"] = "Accept, Prefer"
    else:
        headers["Vary"] = "Accept, Prefer, Accept-Datetime"
    return headers


def read_options(prefer: hdr.Prefer) -> tuple[dict[str, bool], bool]:
    """``Repository.get`` options from LDP / Fedora preferences (LDP 7.2.2, Fedora 3.2.1),
    and whether a ``return`` preference was applied."""
    inc, omit = prefer.include, prefer.omit
    minimal = prefer.return_ == "minimal" or PREFER_MINIMAL in inc
    options = {
        "incl_children": (not minimal and PREFER_CONTAINMENT not in omit)
        or PREFER_CONTAINMENT in inc,
        "incl_membership": (not minimal and PREFER_MEMBERSHIP not in omit)
        or PREFER_MEMBERSHIP in inc,
        "incl_inbound": bool(inc & PREFER_INBOUND) and not omit & PREFER_INBOUND,
        "incl_srv_mgd": not omit & PREFER_SERVER_MANAGED,
        "embed_children": PREFER_CONTAINED in inc and PREFER_CONTAINED not in omit,
    }
    return options, prefer.return_ is not None


def no_content(headers: dict[str, str] | None = None) -> Response:
    """A 204 response: no body, no Content-Type."""
    response = Response(status=204, headers=headers)
    del response.headers["Content-Type"]
    return response


def content_type_of(media_type: str) -> str:
    return media_type + "; charset=utf-8" if media_type in _TEXT_TYPES else media_type


def negotiate(offered: Iterable[str]) -> str:
    offered = tuple(offered)
    chosen = hdr.negotiate(request.headers.get("Accept"), offered)
    if chosen is None:
        raise NotAcceptable(f"None of the media types in Accept can be served; available: "
                            f"{', '.join(offered)}")
    return chosen


def _tombstone_headers(call: Call, error: TombstoneError) -> None:
    """Attach ``Link: <top>/fcr:tombstone; rel="hasTombstone"`` to a tombstone error
    (``error.top``: the uid whose tombstone can be purged or resurrected)."""
    top = error.top or call.uid
    error.http_headers = [("Link", link_value(call.url(top, "tombstone"), "hasTombstone"))]


def tombstone_links(func):
    def wrapper(call: Call, *args, **kwargs):
        try:
            return func(call, *args, **kwargs)
        except TombstoneError as e:
            _tombstone_headers(call, e)
            raise
    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def require_tombstone(call: Call) -> None:
    """Raise unless ``call.uid`` is deleted (then ``fcr:tombstone`` exists)."""
    try:
        live = call.repo.exists(call.uid)
    except TombstoneError:
        return
    raise NotFound(f"{call.url()} {'is not deleted' if live else 'does not exist'}: "
                   "it has no tombstone")
