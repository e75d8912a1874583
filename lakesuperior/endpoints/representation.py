"""What the headers of an LDP response say, as pure functions: entity tags,
allowed methods, advertised types, ``Link`` headers, the ``Prefer`` options of
a read, and the header sets of resources, writes, TimeMaps and the TimeGate.

No Flask here: the views pass plain values in (a resource or its
``Repository.info``, a ``Target``, the request's ``Urls``) and put what comes
back on their responses. Vocabulary comes from ``model.namespaces`` as
canonical terms (``<iri>``); ``iri`` gives the bare IRI a header carries.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from lakesuperior import jsonld, rdfio
from lakesuperior.endpoints.memento import LINK_FORMAT, TIMEMAP_TYPES, version_datetime
from lakesuperior.endpoints.paths import Target, Urls
from lakesuperior.http import headers as hdr
from lakesuperior.http import mediatypes
from lakesuperior.model.archival import ARCHIVAL_GROUP
from lakesuperior.model.interaction import CONTAINERS
from lakesuperior.model.namespaces import (
    FCREPO,
    FCREPO_API,
    LDP,
    LDP_NON_RDF_SOURCE,
    LDP_RDF_SOURCE,
    LDP_RESOURCE,
    MEMENTO,
    OA,
)
from lakesuperior.model.namespaces import bare_iri as iri

# --- vocabulary of the HTTP API only --------------------------------------------------------

PREFER_CONTAINMENT = iri(LDP.PreferContainment)
PREFER_MEMBERSHIP = iri(LDP.PreferMembership)
PREFER_MINIMAL = iri(LDP.PreferMinimalContainer)
PREFER_INBOUND = frozenset((iri(FCREPO_API.PreferInboundReferences),
                            iri(FCREPO.InboundReferences)))
PREFER_SERVER_MANAGED = frozenset((iri(FCREPO_API.ServerManaged), iri(FCREPO.ServerManaged)))
PREFER_CONTAINED = iri(OA.PreferContainedDescriptions)
CONSTRAINED_BY = iri(LDP.constrainedBy)

# --- media types ----------------------------------------------------------------------------

HTML = "text/html"
SPARQL_UPDATE = "application/sparql-update"
#: JSON-LD in the profiles Fedora serves, compacted (the default) first.
JSON_LD_OUT = tuple(f'{rdfio.JSON_LD}; profile="{profile}"' for profile in jsonld.PROFILES)
#: What a resource's RDF (or a description) is served as, first choice first.
RDF_OUT = mediatypes.Offers((rdfio.TURTLE, *JSON_LD_OUT, rdfio.N_TRIPLES, rdfio.RDF_XML, HTML))
#: What a TimeMap is served as.
TIMEMAP_OUT = mediatypes.Offers((rdfio.TURTLE, *JSON_LD_OUT, rdfio.N_TRIPLES, rdfio.RDF_XML,
                          LINK_FORMAT, HTML))
ACCEPT_POST = ", ".join((rdfio.TURTLE, rdfio.JSON_LD, rdfio.N_TRIPLES, rdfio.RDF_XML,
                         rdfio.N3, "*/*"))
_TEXT_TYPES = (rdfio.TURTLE, rdfio.N_TRIPLES, HTML, LINK_FORMAT)


def content_type_of(media_type: str, accept: str | None = None) -> str:
    """The ``Content-Type`` of a served media type: ``charset`` on text types; a
    JSON-LD profile only if the request's ``accept`` asked for one (as Fedora
    6 does: a client that asked for plain ``application/ld+json`` gets it back
    plain, compacted)."""
    if media_type.startswith(rdfio.JSON_LD + ";") and not _asks_profile(accept):
        return rdfio.JSON_LD
    return media_type + "; charset=utf-8" if media_type in _TEXT_TYPES else media_type


def _asks_profile(accept: str | None) -> bool:
    return any(r.type == "application" and r.subtype == "ld+json" and "profile" in r.params
               for r in mediatypes.parse_accept(accept, strict=False))


# --- Prefer (LDP 7.2.2, Fedora API 3.2.1) -----------------------------------------------------

#: ``Repository.get`` options of a representation with no ``Prefer``, and
#: ``incl_user_data`` (False: the client's own triples are left out).
DEFAULT_OPTIONS: Mapping[str, bool] = MappingProxyType({
    "incl_children": True, "incl_membership": True, "incl_inbound": False,
    "incl_srv_mgd": True, "embed_children": False, "incl_user_data": True})


def read_options(prefer: hdr.Prefer) -> tuple[dict[str, bool], bool]:
    """The representation the LDP / Fedora preferences of a request ask for, as
    Fedora 6 reads them, and whether a ``return`` preference was applied.

    ``return=minimal`` (or ``include`` of ``ldp:PreferMinimalContainer``) leaves
    out containment and membership; ``return=minimal`` also the server-managed
    triples unless ``include``d. An ``include`` of containment or membership
    brings it back; ``omit`` of ``ldp:PreferMinimalContainer`` leaves out the
    client's own triples, and an ``omit`` of the server-managed triples also
    leaves out containment (``ldp:contains`` is server-managed). Inbound
    references and embedded children are only there when ``include``d.
    """
    inc, omit = prefer.include, prefer.omit
    minimal = prefer.return_ == "minimal"
    minimal_container = PREFER_MINIMAL not in omit and (PREFER_MINIMAL in inc or minimal)
    srv_mgd_omitted = bool(omit & PREFER_SERVER_MANAGED)
    options = {
        "incl_children": PREFER_CONTAINMENT in inc or not (
            minimal_container or PREFER_CONTAINMENT in omit or srv_mgd_omitted),
        "incl_membership": PREFER_MEMBERSHIP in inc or not (
            minimal_container or PREFER_MEMBERSHIP in omit),
        "incl_inbound": bool(inc & PREFER_INBOUND),
        "incl_srv_mgd": bool(inc & PREFER_SERVER_MANAGED) or not (srv_mgd_omitted or minimal),
        "embed_children": PREFER_CONTAINED in inc,
        "incl_user_data": PREFER_MINIMAL not in omit,
    }
    if minimal:   # Fedora: the client's triples, server-managed ones if asked, no more
        options.update(incl_children=False, incl_membership=False, incl_inbound=False,
                       embed_children=False)
    return options, prefer.return_ is not None


def get_options(options: Mapping[str, bool]) -> dict[str, bool]:
    """The ``Repository.get`` keywords of ``read_options``."""
    return {k: v for k, v in options.items() if k != "incl_user_data"}


def needs_triples(options: Mapping[str, bool]) -> bool:
    """Whether the headers of a representation need its triples (``etag_of``), not
    only the resource's ``Repository.info``."""
    return bool(options.get("incl_inbound") or options.get("embed_children"))


def representation_parts(res: Any, options: Mapping[str, bool] | None
                         ) -> tuple[list, list[rdfio.ObjectList]]:
    """What a representation shows, as ``res.parts`` gives it (its triples but
    containment, and the containment as object lists: ``rdfio.serialize``'s
    ``lists``), less the client's own triples when ``incl_user_data`` is False."""
    triples, lists = res.parts
    if options is None or options.get("incl_user_data", True):
        return triples, lists
    user = set(res.user_data)
    return [t for t in triples if t not in user], lists


# --- validators -----------------------------------------------------------------------------

def _sha1(seed: str) -> str:
    return hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest()


def state_token(res: Any) -> str:
    """Fedora's ``X-State-Token``: changes with every change of the resource (its
    ``fcrepo:lastModified`` and latest version), whatever the representation."""
    versions = res.version_ids
    return _sha1(f"{res.etag}|{versions[-1] if versions else ''}")


def etag_of(res: Any, target: Target, options: Mapping[str, bool] | None = None) -> str:
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
        return '"' + _sha1(f"{res.digest or res.external_url}|{res.mimetype}") + '"'
    flags = "" if not options else ",".join(
        f"{k}={v:d}" for k, v in options.items() if DEFAULT_OPTIONS.get(k) != v)
    versions = res.version_ids
    seed = f"{res.etag}|{flags}|{versions[-1] if versions else ''}"
    digest = hashlib.sha1(seed.encode(), usedforsecurity=False)
    if options and needs_triples(options):
        digest.update("\n".join(map(" ".join, res.triples)).encode())
    return 'W/"' + digest.hexdigest() + '"'


def is_weak(etag: str) -> bool:
    return etag.startswith("W/")


def modified_of(res: Any) -> datetime | None:
    """A resource's ``fcrepo:lastModified`` as a datetime (None if it has none)."""
    value = res.last_modified
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def timemap_etag(timemap: str, version_ids: Iterable[str]) -> str:
    """The weak tag of a TimeMap: its URL and its mementos."""
    return 'W/"' + _sha1("|".join([timemap, *version_ids])) + '"'


# --- methods and types ----------------------------------------------------------------------

def allowed_methods(res: Any, target: Target) -> list[str]:
    """The ``Allow`` list of a target (``res`` is only read for resources and
    descriptions)."""
    if target.kind == "metadata":
        return ["GET", "HEAD", "OPTIONS", "PUT", "PATCH"]
    if target.kind == "timemap":
        return ["GET", "HEAD", "OPTIONS", "POST"]
    if target.kind == "memento":
        return ["GET", "HEAD", "OPTIONS", "DELETE"]
    if target.kind == "tombstone":
        return ["OPTIONS", "POST", "DELETE"]
    methods = ["GET", "HEAD", "OPTIONS"]
    if res.interaction_model in CONTAINERS:
        methods.append("POST")
    methods.append("PUT")
    if not res.is_binary:
        methods.append("PATCH")
    if target.uid != "/":
        methods.append("DELETE")
    return methods


def advertised_types(res: Any, target: Target) -> list[str]:
    """The LDP types (terms) to advertise with ``rel="type"`` for a target,
    ``ldp:Resource`` first."""
    if target.kind == "metadata" or target.description:
        return [LDP_RESOURCE, LDP_RDF_SOURCE]
    types = set(res.ldp_types)
    if target.kind == "resource" and ARCHIVAL_GROUP in res.types:
        types.add(ARCHIVAL_GROUP)
    if target.kind == "memento":
        types &= {LDP_RESOURCE, LDP_RDF_SOURCE, LDP_NON_RDF_SOURCE}
    types.add(LDP_RESOURCE)
    return sorted(types, key=lambda t: (t != LDP_RESOURCE, t))


# --- Link -----------------------------------------------------------------------------------

def link_value(uri: str, rel: str) -> str:
    """A ``Link`` value for a URI this server built (validated host, normalized path:
    nothing to escape), without ``headers.format_link``'s checks, on every response."""
    return f'<{uri}>; rel="{rel}"'


def type_links(types: Iterable[str]) -> list[str]:
    """``rel="type"`` links to type terms."""
    return [link_value(iri(t), "type") for t in types]


def constrained_by(urls: Urls) -> str:
    """The ``Link`` to the constraints document (LDP 4.2.1.6), on every LDP response."""
    return link_value(urls.constraints, CONSTRAINED_BY)


def resource_links(urls: Urls, res: Any, target: Target) -> list[str]:
    """The ``Link`` values of a resource, description or memento: types, Memento
    relations, the binary / description pair, the ACL, the constraints."""
    uid = target.uid
    links = type_links(advertised_types(res, target))
    description = target.kind == "metadata" or target.description
    original = urls.url(uid, "metadata") if description else urls.url(uid)
    if target.kind == "memento":
        links += type_links((MEMENTO.Memento,))
    else:
        links += type_links((MEMENTO.OriginalResource, MEMENTO.TimeGate))
    links.append(link_value(original, "original timegate"))
    links.append(link_value(urls.url(uid, "timemap", description=description), "timemap"))
    if res.is_binary:
        if description:
            links.append(link_value(urls.url(uid), "describes"))
        elif target.kind == "memento":
            links.append(link_value(
                urls.url(uid, "memento", target.version, description=True), "describedby"))
        else:
            links.append(link_value(urls.url(uid, "metadata"), "describedby"))
    links.append(acl_link(urls, uid))
    links.append(constrained_by(urls))
    return links


def acl_link(urls: Urls, uid: str) -> str:
    """``rel="acl"``: where the ACL of ``uid`` is (or would be), on every response
    about the resource (Fedora API 1.0 section 5)."""
    return link_value(urls.url(uid, "acl"), "acl")


# --- header sets ----------------------------------------------------------------------------

def resource_headers(urls: Urls, res: Any, target: Target,
                     options: Mapping[str, bool] | None = None) -> dict[str, str]:
    """The headers of a resource's representation (GET, HEAD; OPTIONS drops the
    validators): ETag, Last-Modified, Link, Allow, Accept-Post / -Patch, Vary and,
    for a memento, Memento-Datetime."""
    headers = {"ETag": etag_of(res, target, options), "X-State-Token": state_token(res),
               "Link": ", ".join(resource_links(urls, res, target)),
               "Allow": ", ".join(allowed_methods(res, target))}
    modified = modified_of(res)
    if modified is not None:
        headers["Last-Modified"] = hdr.format_http_date(modified)
    if "POST" in headers["Allow"]:
        headers["Accept-Post"] = ACCEPT_POST
    if "PATCH" in headers["Allow"]:
        headers["Accept-Patch"] = SPARQL_UPDATE
    if target.kind == "memento" and target.version is not None:
        headers["Memento-Datetime"] = hdr.format_http_date(version_datetime(target.version))
        headers["Vary"] = "Accept, Prefer"
    else:
        headers["Vary"] = "Accept, Prefer, Accept-Datetime"
    return headers


def external_headers(res: Any) -> dict[str, str]:
    """Where a redirect or proxy binary's content lives (Fedora API 3.9):
    ``Content-Location``, and for a redirect ``Location``."""
    url = res.external_url
    headers = {"Content-Location": url}
    if res.external_handling == "redirect":
        headers["Location"] = url
    return headers


#: Media types a browser runs script in (or as), as the binary's own document.
ACTIVE_TYPES = frozenset((
    "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml",
    "text/xsl", "application/xslt+xml", "text/javascript", "application/javascript",
    "application/ecmascript", "text/ecmascript", "application/x-javascript",
    "multipart/x-mixed-replace"))


def is_active(content_type: str) -> bool:
    """Whether a browser would run a document of this type (HTML, SVG, XML, script)."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type in ACTIVE_TYPES or media_type.endswith("+xml")


def content_protection(content_type: str, disposition: str | None, policy: str
                       ) -> dict[str, str]:
    """What keeps served content from scripting the repository's origin: never
    sniffed (``nosniff``), a sandbox of its own (``Content-Security-Policy:
    sandbox``: an opaque origin, no script) unless ``policy`` is ``off``, and with
    ``attachment`` an active type downloaded, not shown (``Content-Disposition``).
    ``policy``: ``http.binary_protection`` (``config.BINARY_PROTECTIONS``)."""
    headers = {"X-Content-Type-Options": "nosniff"}
    if policy == "off":
        return headers
    headers["Content-Security-Policy"] = "sandbox"
    if policy == "attachment" and is_active(content_type) and not (
            disposition or "").lower().startswith("attachment"):
        headers["Content-Disposition"] = "attachment"
    return headers


#: What a 304 keeps of the headers of the 200 it stands for (RFC 7232 section 4.1).
NOT_MODIFIED_KEEP = ("ETag", "Last-Modified", "Vary", "Link", "Memento-Datetime")


def not_modified_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k in NOT_MODIFIED_KEEP}


def write_headers(urls: Urls, res: Any, target: Target | None = None,
                  handling: str | None = None, *, created: bool = False) -> dict[str, str]:
    """Last-Modified, Link and Preference-Applied of a write response (no ETag:
    the tag of the next GET's representation is only known to that GET).

    ``target``: what was written (default: the resource ``res``). Its ``Link``
    values are those a GET of it gives (``resource_links``: types, the Memento
    relations, the ACL, the binary / description pair), whatever the request
    URI (a POST's is the container). As Fedora 6 does, only the ``describedby``
    link of a binary just ``created`` carries an ``anchor`` naming the binary
    (RFC 8288 section 3.2); no other link is anchored."""
    target = target or Target(res.uid)
    headers = {}
    modified = modified_of(res)
    if modified is not None:
        headers["Last-Modified"] = hdr.format_http_date(modified)
    if handling:
        headers["Preference-Applied"] = f"handling={handling}"
    links = resource_links(urls, res, target)
    if created and res.is_binary and target.kind == "resource":
        described = link_value(urls.url(res.uid, "metadata"), "describedby")
        anchor = f'; anchor="{urls.url(res.uid)}"'
        links = [link + anchor if link == described else link for link in links]
    headers["Link"] = ", ".join(links)
    return headers


#: A TimeMap's ``Vary-Post`` (Fedora API 4.3.1): a POST with ``Memento-Datetime``
#: imports a version of that date, one without makes one of now.
VARY_POST = "Memento-Datetime"


def timemap_headers(urls: Urls, target: Target, version_ids: Sequence[str],
                    media_type: str, accept: str | None = None) -> dict[str, str]:
    """The headers of a TimeMap (``target``) listing ``version_ids``, oldest first."""
    description = target.description
    original = urls.url(target.uid, "metadata") if description else urls.url(target.uid)
    timemap = urls.url(target.uid, "timemap", description=description)
    links = type_links(TIMEMAP_TYPES)
    links += [link_value(original, "original timegate"), acl_link(urls, target.uid),
              constrained_by(urls)]
    headers = {"ETag": timemap_etag(timemap, version_ids), "Link": ", ".join(links),
               "Vary": "Accept", "Vary-Post": VARY_POST,
               "Allow": ", ".join(allowed_methods(None, target)),
               "Accept-Post": "*/*", "Content-Type": content_type_of(media_type, accept)}
    if version_ids:
        headers["Last-Modified"] = hdr.format_http_date(version_datetime(version_ids[-1]))
    return headers


def timegate_headers(urls: Urls, target: Target, version_id: str) -> dict[str, str]:
    """The headers of a TimeGate's 302 to the memento ``version_id`` of a resource
    or description (RFC 7089 section 4.1.1)."""
    uid, description = target.uid, target.kind == "metadata"
    original = urls.url(uid, "metadata") if description else urls.url(uid)
    links = [link_value(original, "original timegate"),
             link_value(urls.url(uid, "timemap", description=description), "timemap"),
             constrained_by(urls)]
    return {"Location": urls.url(uid, "memento", version_id, description),
            "Vary": "Accept-Datetime", "Link": ", ".join(links),
            "Content-Type": "text/plain; charset=utf-8"}
