"""The Python API: a ``Repository`` on a data directory.

Usage::

    from lakesuperior import Repository

    repo = Repository("/var/lib/lsup")          # created and bootstrapped if new
    repo.create_or_replace("/photos", data=b"<> a <http://ex.org/Album> .",
                           media_type="text/turtle")
    child = repo.create("/photos", stream=open("a.jpg", "rb"), media_type="image/jpeg")
    res = repo.get("/photos")
    res.children, res.triples, res.imr           # imr: an rdflib Graph, built on demand
    with repo.transaction():                     # several calls, one atomic write
        repo.delete("/photos/x")
        repo.create_or_replace("/photos/y")
    repo.close()

Every call runs in one store transaction (a read snapshot or the write
transaction); a call that raises has written nothing. Inside
``transaction()`` the calls share one write transaction, committed at the end
of the block; if any call inside it fails, the whole block is rolled back even
if the caller caught the error. ``transact(fn)`` runs a function that way.
The writes of concurrent threads share one commit and one sync (group commit,
``transactions``, ``store.group``), each still atomic on its own.

Terms are canonical N-Triples strings (``<http://...>``, ``_:b``, ``"lit"@en``)
with public URIs (``base_uri + uid``). rdflib is used only when asked (an
input Graph, ``resource.imr``) and by SPARQL Update.
"""
from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from lakesuperior.auth import access, acl
from lakesuperior.config import Config
from lakesuperior.exceptions import IncompatibleLdpTypeError, InvalidResourceError
from lakesuperior.model import archival, interaction, lifecycle, tombstones
from lakesuperior.model import sparql_update as sparql_mod
from lakesuperior.model import versions as versions_mod
from lakesuperior.model.containment import write_graph
from lakesuperior.model.context import Context, Settings, WriteContext, system_clock
from lakesuperior.model.external import external_ref
from lakesuperior.model.inputs import BinaryInput, RdfInput, is_binary, read_input
from lakesuperior.model.lookup import is_tombstone, model_at, require_model, tombstone_error
from lakesuperior.model.nonrdf import ExternalSources, external_input
from lakesuperior.model.resource import (
    RdfSource,
    ResourceInfo,
    load,
    load_info,
    load_state,
    view,
)
from lakesuperior.model.server_managed import server_triples
from lakesuperior.model.uids import ROOT_UID, UriMap, check_slug, child_uid, normalize_uid, res_uri
from lakesuperior.model.versions import VersionInfo
from lakesuperior.repository import access_control, feed, maintenance, querying
from lakesuperior.repository.transactions import Transactions
from lakesuperior.store import private
from lakesuperior.store.backends import BinaryBackend, open_backend
from lakesuperior.store.background import IndexerThread
from lakesuperior.store.group import WriteGroups
from lakesuperior.store.indexer_process import IndexerProcess
from lakesuperior.store.quadstore import QuadStore, Reader

__all__ = ["Repository"]

_T = TypeVar("_T")


class Repository:
    """An LDP repository on a data directory (LMDB quad store + binary files).

    ``Repository(path)`` uses the default configuration with ``data_dir=path``;
    ``Repository.from_config(Config.load())`` reads the YAML file and the
    ``LSUP_*`` environment. Keyword arguments override configuration fields
    (``Repository(path, base_uri="https://example.org/rest")``). ``binaries``: a
    binary store to use instead of the one the configuration names
    (``store.backends.open_backend``), e.g. one sharing an S3 client. ``clock``:
    the function giving the current time (an aware UTC ``datetime``) that writes
    record (versions, ``lastModified``, tombstones, change events); default the
    system clock.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, config: Config | None = None,
                 agent: str = "admin", binaries: BinaryBackend | None = None,
                 clock: Callable[[], datetime] = system_clock, **overrides: Any):
        cfg = config or Config()
        if path is not None:
            overrides["data_dir"] = os.fspath(path)
        if overrides:
            cfg = cfg.with_(**overrides)
        self.config = cfg
        self.settings = Settings.of(cfg, agent)
        self.urimap = UriMap(cfg.base_uri)
        private.make_dirs(cfg.store_dir)
        # First: a missing bucket or refused credentials stop here, nothing opened.
        self.binaries: BinaryBackend = binaries or open_backend(cfg)
        store_options: dict[str, Any] = dict(
            map_size=cfg.map_size, sync=cfg.sync, index_batch=cfg.index_batch,
            iri_cache=cfg.iri_cache, resident_map_limit=cfg.resident_map_limit)
        self.store = QuadStore(cfg.store_dir, **store_options)
        self.indexer: IndexerThread | IndexerProcess | None = None
        self.map_trimmer = self.store.map_trimmer
        self.external = ExternalSources.from_config(cfg)
        self._tx = Transactions(self.store, retention_s=self.settings.event_retention_s,
                                publishing=self.settings.publishing, clock=clock)
        self._bootstrap()
        with self.snapshot() as ctx:
            self.acl_state = access.AclState(acl.load_root(ctx, cfg.auth_root_acl))
        if cfg.background_index and not self.store.readonly:     # stopped by close()
            self.indexer = (IndexerProcess(cfg.store_dir, store_options).start()
                            if cfg.indexer_process else
                            IndexerThread(self.store, after_batch=self.map_trimmer.check).start())

    @classmethod
    def from_config(cls, config: Config, **kw: Any) -> Repository:
        return cls(config=config, **kw)

    # -- access control: ACLs, decisions, agent views (``access_control.py``) --------
    acl = access_control.acl
    effective_acl = access_control.effective_acl
    has_acl = access_control.has_acl
    set_acl = access_control.set_acl
    update_acl = access_control.update_acl
    delete_acl = access_control.delete_acl
    access = access_control.access
    as_user = access_control.as_user
    as_agent = access_control.as_agent

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        if self.indexer is not None:
            self.indexer.stop()
        self.store.close()

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Repository({self.config.data_dir!r})"

    @property
    def base_uri(self) -> str:
        return self.urimap.base

    def _bootstrap(self) -> None:
        """Create the root container of a new repository."""
        with self.store.read() as txn:
            if txn.has_graph(res_uri(ROOT_UID)):
                return

        def make_root(ctx: WriteContext) -> None:
            if not ctx.txn.has_graph(res_uri(ROOT_UID)):
                write_graph(ctx, ROOT_UID,
                            server_triples(ctx, ROOT_UID, interaction.BASIC_CONTAINER))
        self._write(make_root)

    # -- transactions --------------------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        """Whether the calling code runs inside this repository's write transaction
        (a ``transaction()`` block, or a ``transact`` call's function)."""
        return self._tx.owned()

    @property
    def write_groups(self) -> WriteGroups:
        """The group commit of this process's writes (``store.group``): its
        counters ``commits`` and ``writes``, and ``waiting``."""
        return self._tx.groups

    def _ctx(self, txn: Reader, base_uri: str | None) -> Context:
        return Context(txn, self.settings, self.binaries, self._urimap(base_uri),
                       now=self._tx.clock())

    def _write(self, fn: Callable[[WriteContext], _T], base_uri: str | None = None) -> _T:
        """``fn(ctx)`` in the write transaction: the one this thread runs in (a
        ``transaction()`` block, a ``transact`` call), else as one write of a group
        (``transact``). A call that raises inside a transaction rolls it back."""
        tx = self._tx
        if not tx.owned():
            return self._grouped(lambda: self._write(fn, base_uri))
        ctx = WriteContext(tx.current(), self.settings, self.binaries, self._urimap(base_uri),
                           now=tx.time(), events=tx.events)
        try:
            return fn(ctx)
        except BaseException as e:
            tx.failed(e)
            raise
        finally:
            tx.written()

    def transact(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` as one atomic write: the calls it makes share one
        write transaction, as in a ``transaction()`` block (if any of them fails the
        whole is rolled back, with that error, even if ``fn`` caught it), but its
        commit and durability sync are shared with the writes other threads make
        meanwhile (group commit, docs/storage.md): it returns ``fn``'s result once
        the write is committed and durable. ``fn`` may run in another thread of this
        process, under a copy of the caller's ``contextvars`` context (Flask's
        ``request`` included), while the caller waits: it must not depend on which
        thread runs it. Inside a transaction, ``fn`` simply runs in it."""
        if not callable(fn):
            raise TypeError(f"transact takes a callable, not {type(fn).__name__}")
        if self._tx.owned():
            return fn(*args, **kwargs)
        return self._grouped(lambda: fn(*args, **kwargs))

    def _grouped(self, work: Callable[[], _T]) -> _T:
        out = self._tx.run(work)
        self.map_trimmer.tick()
        return out

    @contextmanager
    def snapshot(self, base_uri: str | None = None) -> Iterator[Context]:
        """A read snapshot as a model ``Context`` (or, inside ``transaction()``, the
        open write transaction, so that reads see the block's own writes), with
        public URIs under ``base_uri`` (default: configured). A snapshot opened
        inside another one by the same thread is the outer one: several calls
        made inside ``with repo.snapshot():`` read the same state."""
        tx = self._tx
        if tx.owned():
            yield self._ctx(tx.current(), base_uri)
            return
        me = threading.get_ident()
        outer = tx.reads.get(me)
        if outer is not None:
            yield self._ctx(outer, base_uri)
            return
        with self.store.read() as txn:
            try:
                tx.reads[me] = txn
                yield self._ctx(txn, base_uri)
            finally:
                tx.reads.pop(me, None)
        self.map_trimmer.tick()

    def snapshot_id(self) -> int | None:
        """The id of the read snapshot this thread is in (inside ``with
        repo.snapshot()``): two reads at the same id read the same stored state,
        and any write gives later snapshots a new id. None outside a snapshot and
        in a write transaction (``transaction()``), whose state is its own."""
        tx = self._tx
        if tx.owned():
            return None
        txn = tx.reads.get(threading.get_ident())
        return None if txn is None else txn.snapshot_id()

    def _urimap(self, base_uri: str | None) -> UriMap:
        if base_uri is None:
            return self.urimap
        if not isinstance(base_uri, str):
            raise InvalidResourceError(None, f"base_uri must be a string, not "
                                             f"{type(base_uri).__name__}")
        if base_uri.rstrip("/") == self.urimap.base:
            return self.urimap
        try:
            return UriMap(base_uri)
        except ValueError as e:
            raise InvalidResourceError(None, str(e)) from None

    @contextmanager
    def transaction(self) -> Iterator[Repository]:
        """Run several calls in one atomic write transaction, held by this thread
        for the block (``transact`` runs a function the same way, sharing the
        commit with other threads' writes).

        Nested ``transaction()`` blocks join the outer one. The block commits when
        it ends normally; it is rolled back when it raises, and also when any
        call inside it raised (even if the caller caught the error), in which
        case leaving the block raises that error again.
        """
        tx = self._tx
        if tx.owned():
            yield self
            return
        with tx.block():
            yield self
        self.map_trimmer.tick()

    @contextmanager
    def clock(self, now: datetime) -> Iterator[None]:
        """Inside ``transaction()``: the writes of the block record ``now`` as their
        time (an HTTP transaction runs its staged requests again at their own times)."""
        if not self._tx.owned():
            raise RuntimeError("Repository.clock() is for use inside transaction()")
        with self._tx.pinned(now):
            yield

    def now(self) -> datetime:
        """The current time by this repository's clock (aware, UTC)."""
        return self._tx.clock()

    # -- reading ----------------------------------------------------------------------------

    def exists(self, uid: str) -> bool:
        """Whether a live resource is at ``uid``; ``TombstoneError`` if it was
        deleted and left a tombstone."""
        uid = normalize_uid(uid)
        with self.snapshot() as ctx:
            if ctx.txn.has_graph(res_uri(uid)):
                return True
            if is_tombstone(ctx.txn, uid):
                raise tombstone_error(ctx.txn, uid)
            return False

    def get(self, uid: str, *, incl_children: bool = True, incl_inbound: bool = False,
            incl_srv_mgd: bool = True, embed_children: bool = False,
            incl_membership: bool = True, base_uri: str | None = None,
            children_range: tuple[int, int] | None = None) -> RdfSource:
        """The resource at ``uid`` (an ``RdfSource``, ``Container`` or ``Binary``).

        ``incl_children``: containment triples; ``incl_inbound``: triples of
        other resources that point here; ``incl_srv_mgd``: server-managed
        triples; ``embed_children``: the children's own triples;
        ``incl_membership``: membership triples about the resource;
        ``base_uri``: public base for this call's output (default: configured);
        ``children_range``: ``(start, stop)``, only those children are read (a
        page of a large container, in the store's order of its children, the
        order they were added in); ``child_count`` still counts them all.
        """
        uid = normalize_uid(uid)
        with self.snapshot(base_uri) as ctx:
            return load(ctx, uid, incl_children=incl_children, incl_inbound=incl_inbound,
                        incl_srv_mgd=incl_srv_mgd, embed_children=embed_children,
                        incl_membership=incl_membership, children_range=children_range)

    def info(self, uid: str, *, base_uri: str | None = None,
             own_triples: bool = False) -> ResourceInfo:
        """What the resource at ``uid`` is, cheaply: interaction model and types,
        etag, ``created`` / ``last_modified``, versions, and for a binary its size,
        mimetype, filename and digests; without reading its triples (a container's
        children included). ``ResourceNotExistsError`` / ``TombstoneError`` as ``get``.
        ``own_triples``: read its own triples too (``ResourceInfo.own``; containment
        excepted), for a write about to replace them: read in a ``transact`` function
        or ``transaction()`` block, the info passed as ``current`` to
        ``create_or_replace`` spares that write reading them again."""
        uid = normalize_uid(uid)
        with self.snapshot(base_uri) as ctx:
            if not own_triples:
                return load_info(ctx, uid)
            info = load_state(ctx, uid)
            if self._tx.owned():
                info.read_in = self._tx.mark
            return info

    def binary_uids(self, uids: Iterable[str]) -> set[str]:
        """Those of ``uids`` that are live binaries (ldp:NonRDFSource), in one snapshot."""
        with self.snapshot() as ctx:
            return {u for u in map(normalize_uid, uids)
                    if model_at(ctx.txn, u) == interaction.NON_RDF_SOURCE}

    # -- writing ----------------------------------------------------------------------------

    def _input(self, uid: str, base: UriMap, *, graph: Any, data: Any, media_type: Any,
               stream: Any, interaction_model: Any, digests: Any, filename: Any,
               triples: Any, iri: str | None = None, external: Any = None):
        if external is not None:
            return external_input(self.external, external, media_type=media_type,
                                  binaries=self.binaries, digests=digests,
                                  filename=filename, uid=uid)
        return read_input(iri or base.public_iri(uid), graph=graph, data=data,
                          media_type=media_type, stream=stream,
                          interaction_model=interaction_model, binaries=self.binaries,
                          digests=digests, filename=filename, uid=uid, triples=triples)

    def _check_binary_target(self, uid: str, parent: str | None, interaction_model: Any,
                             graph: Any, body: Any, media_type: Any,
                             archival_group: bool = False) -> None:
        """Refuse a binary where none can be made before its content is stored (a
        refused write would leave the file behind)."""
        if is_binary(interaction_model, graph=graph, body=body, media_type=media_type):
            if archival_group:
                raise archival.not_for_binary(uid)
            with self.snapshot() as ctx:
                lifecycle.check_binary_target(ctx, uid, parent=parent)

    def create(self, parent_uid: str, *, slug: str | None = None, graph: Any = None,
               data: bytes | None = None, media_type: str | None = None, stream: Any = None,
               interaction_model: Any = None, handling: str = "strict",
               digests: Mapping[str, str] | None = None, filename: str | None = None,
               base_uri: str | None = None,
               triples: Iterable[tuple[str, str, str]] | None = None,
               resolved_against: str | None = None,
               archival_group: bool = False, external: str | None = None,
               external_handling: str = "copy") -> RdfSource:
        """POST: create a new resource under ``parent_uid`` with a server-minted
        uid (the ``slug`` if it is free, else a uuid4 segment); return it.

        Input: an rdflib ``graph``; or ``triples`` already parsed (canonical term
        strings as ``rdfio.parse`` yields, relative IRIs resolved against
        ``resolved_against``, by default the public URI of ``parent_uid/slug``:
        parse before a ``transaction()`` to keep parsing out of the write lock,
        against a fresh IRI such as ``parent_uid/<uuid4>``, so that a link to the
        slug's URI stays a link if the slug is taken); or ``data`` / ``stream`` with a
        ``media_type`` (RDF types are parsed; any other type makes a binary
        with that mimetype); ``interaction_model`` (``ldp:BasicContainer`` by
        default for RDF; ``ldp:NonRDFSource`` forces a binary). For a binary:
        ``digests`` (algorithm -> hex/base64) are verified, ``filename`` is
        recorded. ``handling``: ``'strict'`` refuses server-managed triples,
        ``'lenient'`` drops them, ``'tolerant'`` (a GET-modify-PUT round trip)
        drops those that change nothing (identical to the stored ones, the
        types of the interaction model, the parent, fcrepo timestamps and
        agents, membership triples given by containers) and refuses the others.
        Only ``<>`` (and ``<#hash>`` IRIs) of the input stand for the new
        resource: other IRIs, the slug's URI included, are kept as they are.
        ``archival_group``: make the new container an Archival Group (versioned
        with its descendants as one unit; not inside another group).
        ``external``: a binary whose content is at this URL (Fedora's external
        content; ``external_handling`` ``copy``, ``redirect`` or ``proxy``,
        ``media_type`` its type; docs/python-api.md); ``ExternalContentError``.
        """
        parent = normalize_uid(parent_uid)
        segment = check_slug(slug) if slug is not None else str(uuid.uuid4())
        candidate = child_uid(parent, segment)
        umap = self._urimap(base_uri)
        ext = external_ref(external, external_handling, graph, data, stream, triples,
                           model=interaction_model)
        self._check_binary_target(candidate, parent, interaction_model, graph,
                                  ext or (data if data is not None else stream), media_type,
                                  archival_group)
        if resolved_against is not None and not isinstance(resolved_against, str):
            raise InvalidResourceError(candidate, f"resolved_against must be an IRI string, "
                                                  f"not {type(resolved_against).__name__}")
        # With a slug, RDF is read against a fresh IRI, moved to the resource's.
        iri = resolved_against if triples is not None else (
            f"{umap.public_iri(candidate)}-{uuid.uuid4().hex}" if slug is not None else None)
        inp = self._input(candidate, umap, graph=graph, data=data, media_type=media_type,
                          stream=stream, interaction_model=interaction_model,
                          digests=digests, filename=filename, triples=triples, iri=iri,
                          external=ext)
        return self._write(lambda ctx: lifecycle.create_child(
            ctx, parent, candidate, inp, handling, archival_group=archival_group), base_uri)

    def create_or_replace(self, uid: str, *, graph: Any = None, data: bytes | None = None,
                          media_type: str | None = None, stream: Any = None,
                          interaction_model: Any = None, handling: str = "strict",
                          digests: Mapping[str, str] | None = None,
                          filename: str | None = None,
                          base_uri: str | None = None,
                          triples: Iterable[tuple[str, str, str]] | None = None,
                          archival_group: bool = False, external: str | None = None,
                          external_handling: str = "copy",
                          current: ResourceInfo | None = None,
                          created: datetime | None = None,
                          created_by: str | None = None) -> tuple[str, RdfSource]:
        """PUT: create the resource at ``uid`` or replace its state; return
        ``('create' | 'replace', resource)``. Missing intermediate path segments
        become basic containers. Inputs as for ``create`` (``triples`` resolved
        against the public URI of ``uid``). The interaction model
        of an existing resource cannot change; a binary cannot be replaced with
        RDF (update its description instead) nor an RDF source with a binary.
        ``archival_group`` and ``external`` as for ``create`` (an existing resource
        must already be a group, or a binary). ``current``: ``info(uid,
        own_triples=True)`` read in the same write, nothing written since (otherwise
        it is not used: the state is read again). ``created``, ``created_by``: the
        creation date (aware, not after the call's time) and agent to record (a
        migration's: the call's time and agent are the last modification's);
        each not given is the call's, or a replaced resource's own.
        """
        uid = normalize_uid(uid)
        umap = self._urimap(base_uri)
        ext = external_ref(external, external_handling, graph, data, stream, triples,
                           model=interaction_model)
        self._check_binary_target(uid, None, interaction_model, graph,
                                  ext or (data if data is not None else stream), media_type,
                                  archival_group)
        inp = self._input(uid, umap, graph=graph, data=data, media_type=media_type,
                          stream=stream, interaction_model=interaction_model,
                          digests=digests, filename=filename, triples=triples, external=ext)
        tx = self._tx

        def write(ctx: WriteContext) -> tuple[str, RdfSource]:
            state = current if current is not None and current.read_in is tx.mark else None
            if state is not None and state.uid != uid:
                state = None
            return lifecycle.create_or_replace(ctx, uid, inp, handling,
                                               archival_group=archival_group, current=state,
                                               created=created, created_by=created_by)
        return self._write(write, base_uri)

    def update(self, uid: str, sparql_update: str | bytes, *, handling: str = "strict",
               base_uri: str | None = None) -> RdfSource:
        """PATCH with SPARQL Update (INSERT DATA, DELETE DATA, DELETE WHERE,
        DELETE/INSERT WHERE); ``<>`` is the resource. On a binary it updates the
        description. Its parse and its ``WHERE`` each stop at ``query_timeout``
        (``QueryTimeoutError``, nothing changed)."""
        uid = normalize_uid(uid)
        # Parsed before the write, which a long parse would hold; the parse and the
        # evaluation each have query_timeout.
        timeout = self.config.query_timeout
        request = sparql_mod.parse(sparql_update, self._urimap(base_uri).public_iri(uid),
                                   timeout)
        return self._write(lambda ctx: sparql_mod.update(ctx, uid, request, handling, timeout),
                           base_uri)

    def update_delta(self, uid: str, remove: Iterable[Any] | None, add: Iterable[Any] | None,
                     *, handling: str = "strict", base_uri: str | None = None) -> RdfSource:
        """Remove the triples matching ``remove`` (patterns; ``None`` is a
        wildcard) and add the triples ``add``. Terms: canonical N-Triples strings
        or rdflib terms; either may be an rdflib Graph."""
        uid = normalize_uid(uid)
        return self._write(lambda ctx: lifecycle.update_delta(ctx, uid, remove, add, handling),
                           base_uri)

    def delete(self, uid: str, *, soft: bool = True) -> None:
        """Delete a resource and its descendants: ``soft`` leaves a tombstone
        (``resurrect`` undoes it), hard delete purges everything."""
        uid = normalize_uid(uid)

        def delete(ctx: WriteContext) -> None:
            if soft:
                tombstones.bury(ctx, uid)
            else:
                tombstones.purge(ctx, uid)
                acl.purge_tree(ctx, uid)
        self._write(delete)

    def resurrect(self, uid: str) -> RdfSource:
        """Undo a soft delete of ``uid`` (the top of a tombstone); return it."""
        uid = normalize_uid(uid)

        def resurrect(ctx: WriteContext) -> RdfSource:
            tombstones.resurrect(ctx, uid)
            return load(ctx, uid)
        return self._write(resurrect)

    def forget(self, uid: str) -> None:
        """Purge the tombstone at ``uid`` and everything under it, versions included."""
        uid = normalize_uid(uid)

        def forget(ctx: WriteContext) -> None:
            tombstones.forget(ctx, uid)
            acl.purge_tree(ctx, uid)
        self._write(forget)

    # -- versions ----------------------------------------------------------------------------

    def create_version(self, uid: str, *, label: str | None = None) -> str:
        """Make a kept version of the current state; return its id (the Memento
        datetime ``yyyyMMddHHmmss``, UTC): now, or the next free second when a kept
        version already holds this second (docs/versioning.md). It never changes.
        In an Archival Group, a version of the whole group."""
        uid = normalize_uid(uid)
        return self._write(lambda ctx: lifecycle.make_version(ctx, uid, label))

    def versions(self, uid: str) -> list[VersionInfo]:
        """The versions of a resource, oldest first (of its Archival Group's, those
        since it exists)."""
        uid = normalize_uid(uid)
        with self.snapshot() as ctx:
            require_model(ctx.txn, uid)
            return list(versions_mod.list_versions(ctx, uid))

    def get_version(self, uid: str, version_id: str, *,
                    base_uri: str | None = None) -> RdfSource:
        """A version of a resource, as a read-only view of its state then."""
        uid = normalize_uid(uid)
        with self.snapshot(base_uri) as ctx:
            require_model(ctx.txn, uid)
            triples = versions_mod.read_snapshot(ctx, uid, version_id)
            return view(ctx, uid, triples, version_of=version_id)

    def delete_version(self, uid: str, version_id: str) -> None:
        """Remove a version (``ResourceNotExistsError`` if there is none); the
        resource's current state is unchanged."""
        uid = normalize_uid(uid)

        def delete(ctx: WriteContext) -> None:
            require_model(ctx.txn, uid)
            versions_mod.delete(ctx, uid, version_id)
        self._write(delete)

    def import_version(self, uid: str, when: datetime, *, graph: Any = None,
                       data: bytes | None = None, media_type: str | None = None,
                       stream: Any = None, digests: Mapping[str, str] | None = None,
                       filename: str | None = None, base_uri: str | None = None,
                       triples: Iterable[tuple[str, str, str]] | None = None,
                       handling: str = "lenient") -> str:
        """Add a version dated ``when`` (an aware datetime, not in the future; a
        migration's historic version); return its id. Its state is the input
        (as for ``create_or_replace``: RDF for an RDF source, content for a
        binary), or without input the current state. ``VersionExistsError`` if
        the resource has a version at that second. The current state is unchanged."""
        inputs = dict(graph=graph, data=data, media_type=media_type, stream=stream,
                      digests=digests, filename=filename, triples=triples)
        return self.import_versions(uid, [(when, inputs)], base_uri=base_uri,
                                    handling=handling)[0]

    def import_versions(self, uid: str, versions: Iterable[tuple[datetime, Mapping[str, Any]]],
                        *, base_uri: str | None = None, handling: str = "lenient") -> list[str]:
        """Add several versions in one write: each ``(when, inputs)`` as
        ``import_version(uid, when, **inputs)`` adds it (``inputs``: ``graph``,
        ``data``, ``media_type``, ``stream``, ``digests``, ``filename``,
        ``triples``; none: the current state), in the order given (each stream is
        read in that order); their ids. If one is refused, none is added. The
        resource is looked up once for all of them (a migration's versions)."""
        uid = normalize_uid(uid)
        items = [(when, dict(inputs)) for when, inputs in versions]
        tx = self._tx
        with self.snapshot() as ctx:
            model = require_model(ctx.txn, uid)
            vids = [versions_mod.id_of_datetime(ctx, when) for when, _ in items]
            read_in = tx.mark if tx.owned() else None   # the model read in the write
        umap = self._urimap(base_uri)
        inps = [self._version_input(uid, model, umap, **inputs) for _, inputs in items]
        return self._write(lambda ctx: lifecycle.import_versions(
            ctx, uid, model, list(zip(vids, inps, strict=True)), handling,
            known=read_in is not None and read_in is tx.mark), base_uri)

    def _version_input(self, uid: str, model: str, umap: UriMap, *, graph: Any = None,
                       data: bytes | None = None, media_type: str | None = None,
                       stream: Any = None, digests: Mapping[str, str] | None = None,
                       filename: str | None = None,
                       triples: Iterable[tuple[str, str, str]] | None = None
                       ) -> RdfInput | BinaryInput | None:
        """The input of a version of the resource ``uid`` (interaction model
        ``model``): RDF, a binary's content (stored now), or None (its current state)."""
        body = data if data is not None else stream
        if all(x is None for x in (graph, body, triples)):
            return None
        binary = model == interaction.NON_RDF_SOURCE
        if not binary and is_binary(None, graph=graph, media_type=media_type, body=body):
            raise IncompatibleLdpTypeError(uid, f"{uid} is an RDF source: a version of "
                                                "it is RDF, not binary content")
        return self._input(uid, umap, graph=graph, data=data, media_type=media_type,
                           stream=stream, interaction_model=model if binary else None,
                           digests=digests, filename=filename, triples=triples)

    def revert_to_version(self, uid: str, version_id: str) -> RdfSource:
        """Restore a version's state (user triples, and for a binary its content);
        the current state stays a version."""
        uid = normalize_uid(uid)
        return self._write(lambda ctx: lifecycle.revert_to_version(ctx, uid, version_id))

    # -- queries (``querying.py``) -----------------------------------------------------
    sparql_query = querying.sparql_query
    triple_match = querying.triple_match
    term_search = querying.term_search

    # -- the change feed (``feed.py``) ---------------------------------------------------
    changes = feed.changes
    feed_state = feed.feed_state
    mark_published = feed.mark_published

    # -- the store beneath: what admin and front doors may ask of it ----------------------

    def index(self, batches: int = 0) -> int:
        """Bring the union-graph indices up to date (at most ``batches`` index
        transactions; 0: all of them); how many log entries were applied."""
        return self.store.index(batches)

    def index_state(self) -> tuple[int, int]:
        """``(applied, last)``: the last log entry the union-graph indices took in,
        and the last one committed."""
        return self.store.index_state()

    def index_pending(self) -> int:
        """How many committed writes the union-graph indices have not taken in yet."""
        return self.store.pending()

    def disk_size(self) -> int:
        """Bytes of the store's LMDB files on disk (binaries not counted)."""
        return self.store.disk_size()

    def make_durable(self) -> None:
        """Return once every write committed before the call is on disk."""
        self.store.make_durable()

    def copy_store(self, dest: str, *, compact: bool = True) -> None:
        """A consistent copy of the store (one snapshot) into ``dest``, which must
        not exist; the copy rebuilds its union-graph index on first use."""
        self.store.copy(dest, compact=compact)

    # -- admin (``maintenance.py``) -----------------------------------------------------
    fixity_check = maintenance.fixity_check
    integrity_check = maintenance.integrity_check
    stats = maintenance.stats
    cleanup = maintenance.cleanup

