"""The resource objects the API returns, and how ``get`` loads them.

A view is a snapshot: it holds the canonical (internal) triples read in one
transaction and turns them into public form only when asked. Nothing builds an
rdflib object unless ``imr`` is read.

A container's children are held apart, as the list of their internal URIs the
store read in one range (``containment.contained``): ``children`` and
``serialize`` use it as it is, and only ``triples`` makes a tuple per child.
The view a write returns has its own triples only (its containment is not read).

Attributes of every view: ``uid``, ``uri``, ``interaction_model``, ``types``,
``ldp_types``, ``triples`` (the representation, public URIs), ``metadata``
(server-managed triples), ``user_data`` (the client's triples), ``imr`` (an
rdflib Graph of ``triples``), ``children`` (uids), ``version_info``,
``version_ids``, ``created``, ``last_modified``, ``etag``. A ``Binary`` adds ``content`` (a new
readable stream on each access; the caller closes it), ``size``,
``mimetype``, ``filename``, ``digest`` (hex, in the store's algorithm) and
``digests`` (algorithm -> hex, every digest recorded).
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import cached_property
from typing import Any, BinaryIO, TypedDict

import rdflib

from lakesuperior import rdfio
from lakesuperior.exceptions import BinaryNotFoundError
from lakesuperior.model import archival, interaction, membership
from lakesuperior.model.containment import contained, contained_page, own_triples
from lakesuperior.model.context import Context
from lakesuperior.model.external import EXTERNAL_HANDLING, EXTERNAL_URL
from lakesuperior.model.literals import lexical
from lakesuperior.model.lookup import model_in, require_model
from lakesuperior.model.namespaces import (
    DEFAULT_NAMESPACES,
    EBUCORE_FILENAME,
    EBUCORE_HAS_MIME_TYPE,
    FCREPO_CREATED,
    FCREPO_CREATED_BY,
    FCREPO_HAS_PARENT,
    FCREPO_LAST_MODIFIED,
    FCREPO_LAST_MODIFIED_BY,
    LDP,
    LDP_CONTAINS,
    PREMIS_HAS_MESSAGE_DIGEST,
    PREMIS_HAS_SIZE,
    RDF_TYPE,
)
from lakesuperior.model.nonrdf import parse_digest_urn
from lakesuperior.model.server_managed import first_value, is_server_managed
from lakesuperior.model.uids import RES_PREFIX, UriMap, graph, res_uri, uid_of
from lakesuperior.model.versions import VersionInfo, VersionList, list_versions, no_versions
from lakesuperior.rdfio import Triple
from lakesuperior.store.reads import Reader


class RdfSource:
    """An LDP RDF Source (and the base of every view)."""

    is_binary = False
    is_container = False
    #: For the view a write returns: the triples (public URIs) lenient referential
    #: integrity dropped from the input (links to repository resources that do not
    #: exist); empty otherwise.
    dropped: list[Triple] | tuple[()] = ()
    #: True for a view read for one agent (``AgentView``) whose membership triples,
    #: embedded children or inbound references come only from resources it may
    #: read: another agent may be shown other triples.
    per_agent = False
    #: Whether the view holds membership triples (``load``).
    has_membership = False

    def __init__(self, uid: str, own: list[Triple], *, urimap: UriMap,
                 extra: list[Triple] | None = None, incl_children: bool = True,
                 incl_srv_mgd: bool = True, versions: VersionList | None = None,
                 model: str | None = None, version_of: str | None = None,
                 contained: list[str] | None = None):
        self.uid = uid
        self._own = own
        self._contained = contained or []
        #: How many children the container has (``load``'s ``children_range`` reads
        #: only some of them: ``children`` are those).
        self.child_count = len(self._contained)
        self._extra = extra or []
        self._urimap = urimap
        self._incl_children = incl_children
        self._incl_srv_mgd = incl_srv_mgd
        self._versions = versions if versions is not None else no_versions(uid)
        self._model = model
        self.version_of = version_of
        """For a version: the version id (the view then shows the snapshot)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.uid}>"

    # -- identity ---------------------------------------------------------------------

    @property
    def uri(self) -> str:
        """The public IRI (bare)."""
        if self.version_of:
            return (self._urimap.public_iri(self.uid).rstrip("/") + "/fcr:versions/"
                    + self.version_of)
        return self._urimap.public_iri(self.uid)

    @property
    def internal_uri(self) -> str:
        return res_uri(self.uid)

    @cached_property
    def types(self) -> frozenset[str]:
        """rdf:type objects of the resource (canonical terms, public URIs)."""
        res = res_uri(self.uid)
        to_public = self._urimap.to_public
        return frozenset(to_public(o) for s, p, o in self._own if p == RDF_TYPE and s == res)

    @cached_property
    def ldp_types(self) -> frozenset[str]:
        return frozenset(t for t in self.types if t.startswith(LDP.prefix))

    @property
    def interaction_model(self) -> str | None:
        if self._model is None:
            self._model = interaction.model_of(self.types)
        return self._model

    # -- triples ------------------------------------------------------------------------

    @cached_property
    def triples(self) -> list[Triple]:
        """The representation: what ``get`` was asked to include, public URIs."""
        triples, lists = self.parts
        for ol in lists:
            triples = triples + ol.triples()
        return triples

    @cached_property
    def parts(self) -> tuple[list[Triple], list[rdfio.ObjectList]]:
        """``triples`` in two parts: all but the containment, and the containment
        as ``rdfio.ObjectList`` s (public URIs), which ``rdfio.serialize`` writes
        without a tuple per child."""
        own = self._own
        if not self._incl_srv_mgd:
            own = [t for t in own if not is_server_managed(t[1], t[2])]
        if self._extra:
            own = own + self._extra
        urimap = self._urimap
        triples = urimap.triples_to_public(own)
        if not (self._incl_children and self._contained):
            return triples, []
        pub, cut = urimap.pub_prefix, len(RES_PREFIX)
        objects = [pub + c[cut:] for c in self._contained]
        return triples, [rdfio.ObjectList(urimap.to_public(res_uri(self.uid)), LDP_CONTAINS,
                                          objects)]

    @cached_property
    def user_data(self) -> list[Triple]:
        """The client's triples (public URIs)."""
        return self._urimap.triples_to_public(
            [t for t in self._own if not is_server_managed(t[1], t[2])])

    @cached_property
    def metadata(self) -> list[Triple]:
        """Server-managed triples, containment excluded (public URIs)."""
        return self._urimap.triples_to_public(
            [t for t in self._own if is_server_managed(t[1], t[2])])

    @cached_property
    def imr(self) -> rdflib.Graph:
        """An rdflib Graph of ``triples`` (built on first access, on rdflib's
        ``SimpleMemory`` store: twice as fast to fill as the default one)."""
        return rdfio.triples_to_graph(self.triples, rdflib.Graph(store="SimpleMemory"))

    @cached_property
    def children(self) -> list[str]:
        """Uids of the contained resources."""
        cut = len(RES_PREFIX)
        return [c[cut:-1] for c in self._contained]

    @property
    def version_info(self) -> list[VersionInfo]:
        return list(self._versions)

    @property
    def version_ids(self) -> list[str]:
        """The version ids (yyyyMMddHHmmss), oldest first: ``version_info``'s ids,
        without making its entries."""
        return list(self._versions.ids)

    # -- server-managed values ---------------------------------------------------------------

    def _value(self, predicate: str) -> str | None:
        return first_value(self._own, res_uri(self.uid), predicate)

    def _text(self, predicate: str) -> str | None:
        """The lexical form of the resource's first value of ``predicate``."""
        return lexical(self._value(predicate))

    @property
    def created(self) -> str | None:
        """``fcrepo:created`` (lexical xsd:dateTime)."""
        return self._text(FCREPO_CREATED)

    @property
    def last_modified(self) -> str | None:
        """``fcrepo:lastModified`` (lexical xsd:dateTime)."""
        return self._text(FCREPO_LAST_MODIFIED)

    @property
    def etag(self) -> str:
        """A weak entity tag that changes with every write to the resource."""
        seed = f"{self.uid}|{self.version_of or ''}|{self._value(FCREPO_LAST_MODIFIED)}"
        return 'W/"' + hashlib.sha1(seed.encode(), usedforsecurity=False).hexdigest() + '"'

    def serialize(self, media_type: str = "text/turtle", *,
                  namespaces: Mapping[str, str] | None = None) -> bytes:
        """The representation in an RDF format (``rdfio.serialize``)."""
        triples, lists = self.parts
        return rdfio.serialize(triples, media_type,
                               namespaces=DEFAULT_NAMESPACES if namespaces is None
                               else namespaces, lists=lists)


class Container(RdfSource):
    """An LDP Basic, Direct or Indirect Container."""

    is_container = True


class Binary(RdfSource):
    """An LDP Non-RDF Source: content plus its description (the triples)."""

    is_binary = True

    def __init__(self, uid: str, own: list[Triple], *, binaries: Any = None, **kw: Any):
        super().__init__(uid, own, **kw)
        self._binaries = binaries

    @property
    def content(self) -> BinaryIO:
        """A new readable stream of the content; close it when done. For a
        redirect or proxy binary, whose content is not stored,
        ``BinaryNotFoundError``: its content is at ``external_url``."""
        if self.external_url is not None:
            raise BinaryNotFoundError(f"The content of {self.uid} is not stored: it is at "
                                      f"{self.external_url} ({self.external_handling})")
        if self._binaries is None:
            raise RuntimeError("This view has no binary store")
        return self._binaries.open(self.digest)

    @property
    def external_url(self) -> str | None:
        """Where a redirect or proxy binary's content is (None for stored content)."""
        return self._text(EXTERNAL_URL)

    @property
    def external_handling(self) -> str | None:
        """``redirect`` or ``proxy`` for external content, else None."""
        return self._text(EXTERNAL_HANDLING)

    @property
    def size(self) -> int:
        value = self._text(PREMIS_HAS_SIZE)
        return int(value) if value is not None else 0

    @property
    def mimetype(self) -> str | None:
        return self._text(EBUCORE_HAS_MIME_TYPE)

    @property
    def filename(self) -> str | None:
        return self._text(EBUCORE_FILENAME)

    @cached_property
    def digests(self) -> dict[str, str]:
        """Every recorded digest: hashlib algorithm name -> hex."""
        res = res_uri(self.uid)
        out: dict[str, str] = {}
        for s, p, o in self._own:
            if p == PREMIS_HAS_MESSAGE_DIGEST and s == res:
                algo, value = parse_digest_urn(o)
                if algo:
                    out[algo] = value
        return out

    @property
    def digest_algorithm(self) -> str | None:
        algo = getattr(self._binaries, "algorithm", None)
        if algo in self.digests:
            return algo
        return next(iter(self.digests), None)

    @property
    def digest(self) -> str | None:
        """Hex digest of the content in the store's algorithm (its address)."""
        algo = self.digest_algorithm
        return self.digests.get(algo) if algo else None


# --- loading -------------------------------------------------------------------------------

class _ViewOptions(TypedDict):
    urimap: UriMap
    extra: list[Triple] | None
    incl_children: bool
    incl_srv_mgd: bool
    versions: VersionList | None
    model: str | None
    version_of: str | None
    contained: list[str] | None


#: ``view``'s ``contained`` when the caller gives none: found among ``own``.
_IN_OWN: Any = object()


def view(ctx: Context, uid: str, own: list[Triple], *, model: str | None = None,
         extra: list[Triple] | None = None, incl_children: bool = True,
         incl_srv_mgd: bool = True, versions: VersionList | None = None,
         version_of: str | None = None, contained: list[str] | None = _IN_OWN
         ) -> RdfSource:
    """Build the right view class for a resource's triples. ``contained``: the
    internal URIs of its children, ``own`` then holding no containment (None:
    not read); by default the containment triples among ``own``."""
    if contained is _IN_OWN:
        contained = [o for _s, p, o in own if p == LDP_CONTAINS]
        if contained:
            own = [t for t in own if t[1] != LDP_CONTAINS]
    if model is None:
        model = model_in(own, uid)
    kw: _ViewOptions = {"urimap": ctx.urimap, "extra": extra, "incl_children": incl_children,
                        "incl_srv_mgd": incl_srv_mgd, "versions": versions, "model": model,
                        "version_of": version_of, "contained": contained}
    if model == interaction.NON_RDF_SOURCE:
        return Binary(uid, own, binaries=ctx.binaries, **kw)
    if model in interaction.CONTAINERS:
        return Container(uid, own, **kw)
    return RdfSource(uid, own, **kw)


def load(ctx: Context, uid: str, *, incl_children: bool = True, incl_inbound: bool = False,
         incl_srv_mgd: bool = True, embed_children: bool = False,
         incl_membership: bool = True,
         children_range: tuple[int, int] | None = None) -> RdfSource:
    """Read a resource in ``ctx.txn``; ``ResourceNotExistsError`` / ``TombstoneError``.
    ``children_range``: ``(start, stop)``, read only those children (in the store's
    order; ``child_count`` still counts them all)."""
    txn = ctx.txn
    own = own_triples(txn, uid)
    if not own:
        require_model(txn, uid)  # raises the right error
    children, total = read_children(txn, uid, children_range)
    extra: list[Triple] = []
    found = membership.triples_about(txn, uid) if incl_membership else []
    extra.extend(found)
    if incl_inbound:
        extra.extend(inbound(txn, uid))
    if embed_children:
        for child in children:
            extra.extend(t for t in txn.triples(child, omit=LDP_CONTAINS)
                         if incl_srv_mgd or not is_server_managed(t[1], t[2]))
    v = view(ctx, uid, own, extra=extra, incl_children=incl_children,
             incl_srv_mgd=incl_srv_mgd, versions=list_versions(ctx, uid),
             contained=children)
    v.child_count = total
    v.has_membership = bool(found)
    return v


def read_children(txn: Reader, uid: str,
                  children_range: tuple[int, int] | None) -> tuple[list[str], int]:
    """The children ``load`` reads (all, or those of ``children_range``) and their count."""
    if children_range is None:
        children = contained(txn, uid)
        return children, len(children)
    start, stop = children_range
    return contained_page(txn, uid, max(start, 0), max(stop, start, 0))


class ResourceInfo:
    """What a resource is, read without its triples (``Repository.info``).

    Attributes: ``uid``, ``uri``, ``interaction_model``, ``types``,
    ``ldp_types``, ``is_binary``, ``is_container``, ``created``,
    ``last_modified``, ``etag`` (the same as the full view's), ``version_info``,
    ``version_ids``, ``has_versions``, ``has_membership``, ``parent`` (uid or None); for a binary
    also ``size``, ``mimetype``, ``filename``, ``digest``, ``digests``,
    ``digest_algorithm`` and ``content`` (None / empty otherwise).
    """

    __slots__ = ("_view", "has_membership", "own", "group", "read_in")

    def __init__(self, v: RdfSource, has_membership: bool, own: list[Triple] | None = None,
                 group: str | None = None):
        self._view = v
        #: Whether Direct/Indirect containers point membership triples at the
        #: resource (its representation may then hold triples it does not own).
        self.has_membership = has_membership
        #: The resource's own triples, containment excepted (``load_state``; None
        #: from ``load_info``, which does not read them), and its Archival Group.
        self.own = own
        self.group = group
        #: Which write read it (``Repository``: a state read in a write transaction
        #: may stand for the resource in a write of that transaction).
        self.read_in: object = None

    def __repr__(self) -> str:
        return f"<ResourceInfo {self._view.uid} {interaction.model_name(self.interaction_model)}>"

    uid = property(lambda self: self._view.uid)
    uri = property(lambda self: self._view.uri)
    interaction_model = property(lambda self: self._view.interaction_model)
    types = property(lambda self: self._view.types)
    ldp_types = property(lambda self: self._view.ldp_types)
    is_binary = property(lambda self: self._view.is_binary)
    is_container = property(lambda self: self._view.is_container)
    created = property(lambda self: self._view.created)
    last_modified = property(lambda self: self._view.last_modified)
    etag = property(lambda self: self._view.etag)
    version_info = property(lambda self: self._view.version_info)
    version_ids = property(lambda self: self._view.version_ids)
    version_of = None

    @property
    def has_versions(self) -> bool:
        return bool(self._view._versions)

    @property
    def version_list(self) -> VersionList:
        """The versions as read (``VersionList``: their ids, and the resource's own)."""
        return self._view._versions

    @property
    def parent(self) -> str | None:
        value = self._view._value(FCREPO_HAS_PARENT)
        return uid_of(value) if value else None

    def _binary_attr(self, name: str, default: Any = None) -> Any:
        return getattr(self._view, name) if self._view.is_binary else default

    size = property(lambda self: self._binary_attr("size"))
    mimetype = property(lambda self: self._binary_attr("mimetype"))
    filename = property(lambda self: self._binary_attr("filename"))
    digest = property(lambda self: self._binary_attr("digest"))
    digests = property(lambda self: self._binary_attr("digests", {}))
    digest_algorithm = property(lambda self: self._binary_attr("digest_algorithm"))
    external_url = property(lambda self: self._binary_attr("external_url"))
    external_handling = property(lambda self: self._binary_attr("external_handling"))

    @property
    def content(self) -> BinaryIO | None:
        """For a binary, a new readable stream of the content (the caller closes it)."""
        v = self._view
        return v.content if isinstance(v, Binary) else None


#: The predicates ``load_info`` reads, each with one bound lookup.
_INFO_PREDICATES = (FCREPO_CREATED, FCREPO_CREATED_BY, FCREPO_LAST_MODIFIED,
                    FCREPO_LAST_MODIFIED_BY, FCREPO_HAS_PARENT)
_BINARY_INFO_PREDICATES = (PREMIS_HAS_MESSAGE_DIGEST, PREMIS_HAS_SIZE, EBUCORE_HAS_MIME_TYPE,
                           EBUCORE_FILENAME, EXTERNAL_URL, EXTERNAL_HANDLING)


def load_info(ctx: Context, uid: str) -> ResourceInfo:
    """A resource's ``ResourceInfo`` in ``ctx.txn``: a few bound (subject,
    predicate) lookups, never the container's containment triples;
    ``ResourceNotExistsError`` / ``TombstoneError``."""
    txn = ctx.txn
    res = res_uri(uid)
    own = [q[:3] for q in txn.match(res, RDF_TYPE, None, res)]
    model = interaction.model_of(t[2] for t in own)
    if model is None:
        require_model(txn, uid)  # raises the right error
    preds = (_INFO_PREDICATES + _BINARY_INFO_PREDICATES if model == interaction.NON_RDF_SOURCE
             else _INFO_PREDICATES)
    for p in preds:
        own.extend(q[:3] for q in txn.match(res, p, None, res))
    v = view(ctx, uid, own, model=model, incl_children=False,
             versions=list_versions(ctx, uid))
    return ResourceInfo(v, txn.has_graph(graph("midx", uid)))


def load_state(ctx: Context, uid: str) -> ResourceInfo:
    """``load_info`` for a write about to replace the resource's own triples: they
    are read whole (one read, containment excepted) and kept in ``own``, with the
    resource's Archival Group in ``group``, so the write reads none of it again."""
    txn = ctx.txn
    own = own_triples(txn, uid)
    model = model_in(own, uid)
    if model is None:
        require_model(txn, uid)  # raises the right error
    group = archival.group_in(txn, uid, own)
    v = view(ctx, uid, own, model=model, incl_children=False,
             versions=list_versions(ctx, uid, group))
    return ResourceInfo(v, txn.has_graph(graph("midx", uid)), own, group)


def inbound(txn: Reader, uid: str) -> list[Triple]:
    """Triples of other live resources whose object is this resource (containment
    excluded)."""
    res = res_uri(uid)
    out: list[Triple] = []
    for s, p, o, g in txn.match(None, None, res, None):
        if g != res and p != LDP_CONTAINS and g.startswith(RES_PREFIX):
            out.append((s, p, o))
    return out


__all__ = ["RdfSource", "Container", "Binary", "ResourceInfo", "load", "load_info",
           "load_state", "view",
           "inbound"]
