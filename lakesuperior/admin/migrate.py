"""Migration: copy the resources of an LDP / Fedora server into a new repository.

The crawl follows containment and links under the source URL, parents before
children, over ``http.client``; the new repository is built in a staging
directory beside the destination and renamed into place only when complete.
"""
from __future__ import annotations

import heapq
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, cast
from urllib.parse import urljoin, urlsplit

from lakesuperior import rdfio
from lakesuperior.admin.files import has_content, promote, staging_dir
from lakesuperior.admin.progress import QUIET, Progress
from lakesuperior.config import Config
from lakesuperior.exceptions import (
    AdminError,
    ExternalContentError,
    HttpClientError,
    InvalidDigestError,
    LakesuperiorError,
    MigrationError,
    UnsupportedDigestError,
)
from lakesuperior.http import digests
from lakesuperior.http import headers as hdr
from lakesuperior.http.client import HttpClient, HttpResponse
from lakesuperior.model import interaction
from lakesuperior.model.literals import lexical
from lakesuperior.model.namespaces import (
    EBUCORE_FILENAME,
    IANA_DESCRIBEDBY,
    IANA_DESCRIBES,
    LDP_CONTAINS,
    LDP_NON_RDF_SOURCE,
    LDP_NS,
)
from lakesuperior.model.nonrdf import parse_digest_urn
from lakesuperior.model.resource import Binary
from lakesuperior.model.server_managed import is_server_managed
from lakesuperior.model.uids import ancestors
from lakesuperior.repository import Repository
from lakesuperior.store.binaries import normalize_algorithm, normalize_digest

__all__ = ["MigrationReport", "migrate", "iter_rows"]

LINK_FORMAT = "application/link-format"
_RDF_ACCEPT = "application/n-triples, text/turtle;q=0.9, application/ld+json;q=0.5"
_WANT_DIGEST = ", ".join(digests.HTTP_NAMES.values())
_OMIT_MEMBERSHIP = f'return=representation; omit="{LDP_NS}PreferMembership"'


@dataclass
class MigrationReport:
    """What ``migrate`` copied, skipped and failed to copy."""

    source: str
    dest: str
    rdf_sources: int = 0
    binaries: int = 0
    binary_bytes: int = 0
    triples: int = 0
    seconds: float = 0.0
    versions: int = 0
    acls: int = 0      #: ACLs (``fcr:acl``) copied
    unverified: list[str] = field(default_factory=list)   #: binaries the source gave no digest for
    skipped: list[tuple[str, str]] = field(default_factory=list)   #: (url, why)
    failed: list[tuple[str, str]] = field(default_factory=list)    #: (url, error)

    @property
    def copied(self) -> int:
        return self.rdf_sources + self.binaries

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["copied"] = self.copied
        return out


class _Failure(Exception):
    """One resource could not be copied (``MigrationError`` unless skipping errors)."""


class _AclFailure(Exception):
    """An ACL could not be copied: always a ``MigrationError``, even when skipping
    errors (what it protects would be published without it)."""


class _Source:
    """The LDP server being migrated: URL <-> uid mapping and its requests."""

    def __init__(self, url: str, client: HttpClient):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise AdminError(f"The migration source must be an http(s) URL, not {url!r}")
        self.base = url.split("#")[0].split("?")[0].rstrip("/")
        self.client = client

    def url(self, uid: str) -> str:
        return self.base + uid

    def uid(self, url_or_path: str) -> str | None:
        """The uid of a URL (or a path) under the source, or None if outside it.

        Fragments, queries and ``fcr:`` sub-paths (metadata, versions, ACLs) are
        cut off: they name parts of the resource.
        """
        text = url_or_path.strip()
        if "://" in text:
            if text == self.base:
                return "/"
            if not text.startswith(self.base + "/"):
                return None
            text = text[len(self.base):]
        elif not text.startswith("/"):
            text = "/" + text
        text = text.split("#")[0].split("?")[0]
        segments = []
        for seg in text.split("/"):
            if seg.lower().startswith("fcr:"):
                break
            if seg:
                segments.append(seg)
        return "/" + "/".join(segments)

    def term_uid(self, term: str) -> str | None:
        """The uid of an IRI term (``<...>``) under the source, or None."""
        if term.startswith("<") and term.endswith(">"):
            return self.uid(term[1:-1])
        return None


def _header_digests(value: str | None) -> dict[str, str]:
    """``Digest: sha-512=<base64>, md5=<base64>`` -> {hashlib name: hex}; algorithms
    we do not support and malformed values are ignored."""
    out: dict[str, str] = {}
    for name, val in hdr.parse_digest(value or "").items():
        try:
            algo = normalize_algorithm(name)
            out[algo] = normalize_digest(algo, val)
        except (UnsupportedDigestError, InvalidDigestError):
            continue
    return out


def _read_list_file(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        raise AdminError(f"Cannot read the list file {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise AdminError(f"The list file {path} is not UTF-8 text: {e}") from e
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def migrate(source_url: str, config: Config, *, start: Iterable[str] = ("/",),
            list_file: str | None = None, auth: tuple[str, str] | None = None,
            skip_errors: bool = False, timeout: float = 60.0,
            progress: Progress = QUIET, client: HttpClient | None = None) -> MigrationReport:
    """Copy the resources of an LDP / Fedora server into a new repository in
    ``config.data_dir`` (empty or new).

    The crawl begins at ``start`` (paths or URLs under ``source_url``) and at
    each line of ``list_file``, and follows containment and every link to
    another resource under ``source_url``, parents before children. For each
    resource it copies the client triples (server-managed ones are dropped and
    made anew; links to the source become links to the new repository) with
    the interaction model, and for a binary its content, verified against
    every digest the source gives (``Digest`` header, ``premis:hasMessageDigest``),
    its media type and file name. A resource the source answers 404 or 410
    for is skipped (a link to a deleted resource); any other error stops the
    migration with ``MigrationError`` and leaves nothing behind, unless
    ``skip_errors``, which records it and goes on. The versions (mementos) the
    source lists in each resource's TimeMap are copied with their datetimes
    (an RDF source's triples; a binary's content, media type and file name);
    the new repository makes no versions of its own while it is built.
    Tombstones are not copied.

    ACLs: the ACL the source links from a resource (``Link: <...>; rel="acl"``,
    Fedora API 5.3) is copied with the resource (404: it has none), and so are
    the ACLs of the ancestors of the starting points, which what is copied may
    inherit. An ACL that cannot be copied (the source refuses to show it, sends
    something else than RDF, or holds what this server refuses) stops the
    migration, even with ``skip_errors``; so does a resource below one that
    failed before its ACL was copied. Users are not copied: they live outside
    the API (Fedora's servlet container, Lakesuperior's ``users.json``).
    """
    t0 = time.perf_counter()
    dest = os.path.abspath(config.data_dir)
    if os.path.exists(dest) and (not os.path.isdir(dest) or has_content(dest)):
        raise AdminError(f"The migration destination {dest} is not empty: give a new or "
                         "empty directory")
    own_client = client is None
    http = client or HttpClient(auth=auth, timeout=timeout)
    src = _Source(source_url, http)
    starts = list(start)
    if list_file:
        starts += _read_list_file(list_file)
    queue: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    seq = 0

    def enqueue(uid: str) -> None:
        nonlocal seq
        if uid not in seen:
            seen.add(uid)
            seq += 1
            heapq.heappush(queue, (uid.count("/") if uid != "/" else 0, seq, uid))

    for item in starts:
        uid = src.uid(item)
        if uid is None:
            raise AdminError(f"Starting point {item!r} is not under the source {src.base}")
        enqueue(uid)
    if not queue:
        raise AdminError("Nothing to migrate: the list of starting points is empty")
    try:
        webac = _probe(src, queue[0][2])   # the source must answer before anything is created
    except BaseException:
        if own_client:
            http.close()
        raise
    start_uids = set(seen)
    report = MigrationReport(src.base, dest)
    acls = _Acls(src, report, webac)
    staging = staging_dir(dest, "migrating")
    cfg = config.with_(data_dir=staging, sync=False, referential_integrity="off",
                       allow_foreign_subjects=True, versioning_auto=False)
    try:
        with Repository(config=cfg) as repo:
            progress.start("Migrating", None)
            try:
                while queue:
                    _, _, uid = heapq.heappop(queue)
                    url = src.url(uid)
                    acls.check_above(uid)
                    try:
                        _migrate_one(src, repo, uid, url, report, enqueue,
                                     uid in start_uids, acls)
                    except _AclFailure as e:
                        raise MigrationError(f"{url}: {e}") from None
                    except _Failure as e:
                        if not skip_errors:
                            raise MigrationError(f"{url}: {e}") from None
                        acls.failed(uid)
                        report.failed.append((url, str(e)))
                    except HttpClientError as e:
                        if not skip_errors:
                            raise MigrationError(str(e)) from e
                        acls.failed(uid)
                        report.failed.append((url, str(e)))
                    except LakesuperiorError as e:
                        if not skip_errors:
                            raise MigrationError(f"{url}: {e}") from e
                        acls.failed(uid)
                        report.failed.append((url, str(e)))
                    progress.advance()
                acls.copy_above(repo, start_uids, seen)
            finally:
                progress.finish()
            progress.start("Indexing the new repository", None)
            repo.index()
            progress.finish()
        promote(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if own_client:
            http.close()
    report.seconds = time.perf_counter() - t0
    return report


def _probe(src: _Source, uid: str) -> bool:
    """Check that the source answers like an LDP server (``MigrationError`` if not);
    whether it has ACLs (it links one, ``rel="acl"``)."""
    url = src.url(uid)
    try:
        resp = src.client.request("HEAD", url, headers={"Accept": _RDF_ACCEPT})
    except HttpClientError as e:
        raise MigrationError(f"Cannot reach the migration source: {e}") from e
    if resp.status in (401, 403):
        raise MigrationError(f"The migration source refused access to {url} ({resp.status} "
                             f"{resp.reason}): give credentials with --auth USER:PASS")
    if not resp.ok:
        raise MigrationError(f"The migration source answered {resp.status} {resp.reason} "
                             f"for {url}")
    if _model_from_links(resp) is None:
        raise MigrationError(f"{url} does not answer like an LDP server (no Link header "
                             "with rel=\"type\" naming an LDP interaction model)")
    return bool(resp.link_targets("acl"))


def _model_from_links(resp: HttpResponse) -> str | None:
    types = {"<" + t + ">" for t in resp.link_targets("type")}
    return interaction.model_of(types)


def _get_rdf(src: _Source, url: str) -> list[tuple[str, str, str]]:
    """GET an RDF representation and parse it (``_Failure`` if it is not RDF)."""
    resp = src.client.request("GET", url, headers={"Accept": _RDF_ACCEPT,
                                                   "Prefer": _OMIT_MEMBERSHIP})
    if not resp.ok:
        raise _Failure(f"GET answered {resp.status} {resp.reason}: {resp.excerpt()}")
    ctype = resp.content_type
    if ctype not in rdfio.PARSEABLE:
        raise _Failure(f"GET answered {ctype or 'no media type'}, which is not RDF")
    try:
        return rdfio.parse(resp.body, ctype, url)
    except LakesuperiorError as e:
        raise _Failure(f"the {ctype} representation is not valid RDF: {e}") from e


def _migrate_one(src: _Source, repo: Repository, uid: str, url: str,
                 report: MigrationReport, enqueue: Callable[[str], None],
                 is_start: bool, acls: _Acls) -> None:
    head = src.client.request("HEAD", url, headers={"Accept": _RDF_ACCEPT})
    if head.status in (404, 410) and is_start:
        raise _Failure(f"the starting point answered {head.status} {head.reason}")
    if head.status in (404, 410):
        why = "deleted (410 Gone)" if head.status == 410 else "not found (404)"
        report.skipped.append((url, why))
        acls.settled.add(uid)
        return
    model = _model_from_links(head)
    if not head.ok and not (300 <= head.status < 400 and model == LDP_NON_RDF_SOURCE):
        raise _Failure(f"HEAD answered {head.status} {head.reason}")   # a redirect binary: ok
    if model is None:
        raise _Failure("the response has no LDP interaction model (Link rel=\"type\"): "
                       "is this an LDP server?")
    acl = acls.read(uid, head)
    if model == LDP_NON_RDF_SOURCE:
        described = head.link_targets("describedby")
        triples = _get_rdf(src, described[0] if described else url + "/fcr:metadata")
    else:
        triples = _get_rdf(src, url)
    user, digests, filename = _convert(src, repo, uid, triples, enqueue)
    if model == LDP_NON_RDF_SOURCE:
        _copy_content(src, repo, uid, url, user, digests, filename, report)
    else:
        if uid != "/" or user:
            repo.create_or_replace(uid, data=_ntriples(user), media_type=_NT,
                                   interaction_model=model, handling="lenient")
        report.rdf_sources += 1
    report.triples += len(user)
    acls.write(repo, uid, acl)
    if uid != "/":
        _copy_versions(src, repo, uid, head, model == LDP_NON_RDF_SOURCE, report)


_NT = "application/n-triples"


def _ntriples(triples: Iterable[tuple[str, str, str]]) -> bytes:
    return "".join(f"{s} {p} {o} .\n" for s, p, o in triples).encode("utf-8")


def _mementos(src: _Source, url: str, head: HttpResponse) -> list[tuple[str, datetime]]:
    """(URI, datetime) of the mementos in a resource's TimeMap, oldest first; none if
    the source has no TimeMap for it."""
    timemap = (head.link_targets("timemap") or [url + "/fcr:versions"])[0]
    resp = src.client.request("GET", timemap, headers={"Accept": LINK_FORMAT})
    if resp.status in (404, 405, 406, 410) or resp.content_type != LINK_FORMAT:
        return []
    if not resp.ok:
        raise _Failure(f"GET of the TimeMap answered {resp.status} {resp.reason}")
    out = []
    for link in hdr.parse_link(resp.body.decode("utf-8", "replace")):
        if not link.has_rel("memento"):
            continue
        when = hdr.parse_http_date(link.params.get("datetime"))
        if when is None:
            raise _Failure(f"the TimeMap's memento {link.uri} has no valid datetime")
        out.append((urljoin(timemap, link.uri), when))
    return sorted(out, key=lambda m: m[1])


def _copy_versions(src: _Source, repo: Repository, uid: str, head: HttpResponse,
                   binary: bool, report: MigrationReport) -> None:
    """Import the source's mementos of ``uid`` with their datetimes."""
    url = src.url(uid)
    for memento, when in _mementos(src, url, head):
        if binary:
            resp, stream = src.client.open("GET", memento,
                                           headers={"Want-Digest": _WANT_DIGEST})
            try:
                if _external_of(resp, memento) is not None:
                    report.skipped.append((memento, "a version of external content (its "
                                                    "current state is kept external)"))
                    continue
                if resp.status != 200:
                    raise _Failure(f"GET of the memento {memento} answered {resp.status} "
                                   f"{resp.reason}")
                mimetype = resp.headers.get("Content-Type") or "application/octet-stream"
                repo.import_version(uid, when, stream=stream, media_type=mimetype.strip(),
                                    digests=_header_digests(resp.headers.get("Digest")) or None,
                                    filename=hdr.parse_content_disposition(
                                        resp.headers.get("Content-Disposition")))
            finally:
                stream.close()
        else:
            triples = [(_url_term(s, memento, url), p, _url_term(o, memento, url))
                       for s, p, o in _get_rdf(src, memento)]
            user, _, _ = _convert(src, repo, uid, triples, lambda _uid: None)
            repo.import_version(uid, when, data=_ntriples(user), media_type=_NT)
        report.versions += 1


def _url_term(term: str, memento: str, url: str) -> str:
    """``term``, with the memento's URI (and its hash URIs) as the resource's."""
    if term == f"<{memento}>":
        return f"<{url}>"
    if term.startswith(f"<{memento}#"):
        return f"<{url}" + term[len(memento) + 1:]
    return term


def _convert(src: _Source, repo: Repository, uid: str,
             triples: list[tuple[str, str, str]], enqueue: Callable[[str], None],
             ) -> tuple[list[tuple[str, str, str]], dict[str, str], str | None]:
    """Client triples with source links rewritten to the new repository, the
    digests and file name a binary description records; enqueue linked resources."""
    rebase = _mover(src.base, repo.base_uri, "/>#?")
    user: list[tuple[str, str, str]] = []
    digests: dict[str, str] = {}
    filename: str | None = None
    for s, p, o in triples:
        if p == LDP_CONTAINS:
            child = src.term_uid(o)
            if child is not None:
                enqueue(child)
            continue
        if is_server_managed(p, o):
            algo, value = parse_digest_urn(o)
            if algo:
                digests[algo] = value.lower()
            continue
        if p in (IANA_DESCRIBEDBY, IANA_DESCRIBES):
            continue
        for term in (s, o):
            linked = src.term_uid(term)
            if linked is not None and linked != uid:
                enqueue(linked)
        if p == EBUCORE_FILENAME and filename is None and o.startswith('"'):
            filename = lexical(o)
            continue
        user.append((rebase(s), p, rebase(o)))
    return user, digests, filename


def _mover(old: str, new: str, after: str) -> Callable[[str], str]:
    """A function that moves IRI terms under ``old`` (followed by one of the
    characters ``after`` or the end) to ``new``; other terms stay."""
    old, new = "<" + old, "<" + new
    n = len(old)

    def move(term: str) -> str:
        if term.startswith(old) and (term[n:n + 1] in after or term[n:] == ">"):
            return new + term[n:]
        return term
    return move


class _Acls:
    """The ACLs of a migration: read from the source with their resource, written
    into the new repository, and what may no longer be copied safely."""

    def __init__(self, src: _Source, report: MigrationReport, webac: bool):
        self.src = src
        self.report = report
        self.webac = webac
        #: uids whose ACL is copied, or known not to exist
        self.settled: set[str] = set()
        #: uids that failed before their ACL was copied (when skipping errors)
        self.unsettled: set[str] = set()

    def failed(self, uid: str) -> None:
        """``uid`` failed (errors are skipped): what is below it may not be copied."""
        if self.webac and uid not in self.settled:
            self.unsettled.add(uid)

    def check_above(self, uid: str) -> None:
        """``MigrationError`` if an ancestor of ``uid`` failed before its ACL was copied:
        ``uid`` would be published without the ACL it may inherit."""
        for up in ancestors(uid):
            if up in self.unsettled:
                raise MigrationError(
                    f"{self.src.url(uid)}: {self.src.url(up)} above it failed before its ACL "
                    "could be copied, and what is below it may inherit that ACL: stopping "
                    "rather than publishing it without")

    def read(self, uid: str, head: HttpResponse) -> list[tuple[str, str, str]] | None:
        """The triples of the ACL the source links from ``head`` (its resource's),
        their IRIs moved to the new repository; None if it has none. ``_AclFailure``
        if it cannot be read."""
        targets = head.link_targets("acl")
        if not targets:
            return None
        url = targets[0]
        try:
            resp = self.src.client.request("GET", url, headers={"Accept": _RDF_ACCEPT})
        except HttpClientError as e:
            raise _AclFailure(f"its ACL {url} could not be read: {e}") from None
        if resp.status == 404:
            return None
        if resp.status in (401, 403):
            raise _AclFailure(f"the source refused to show its ACL {url} ({resp.status} "
                              f"{resp.reason}): migrate with an administrator's credentials "
                              "(--auth USER:PASS), who may read every ACL")
        if not resp.ok:
            raise _AclFailure(f"GET of its ACL {url} answered {resp.status} {resp.reason}: "
                              f"{resp.excerpt()}")
        if resp.content_type not in rdfio.PARSEABLE:
            raise _AclFailure(f"its ACL {url} is {resp.content_type or 'no media type'}, "
                              "not RDF")
        try:
            triples = rdfio.parse(resp.body, resp.content_type, url)
        except LakesuperiorError as e:
            raise _AclFailure(f"its ACL {url} is not valid RDF: {e}") from None
        here = self.src.url(uid) if uid != "/" else self.src.base
        own = _mover(url, here + "/fcr:acl", "#")
        return [(own(s), p, own(o)) for s, p, o in triples
                if not is_server_managed(p, o) and p not in (IANA_DESCRIBEDBY, IANA_DESCRIBES)]

    def write(self, repo: Repository, uid: str, triples: list[tuple[str, str, str]] | None
              ) -> None:
        """Store the ACL read for ``uid`` (None: it has none), its source IRIs moved to
        the new repository; ``_AclFailure`` if this server refuses it."""
        if triples is not None:
            rebase = _mover(self.src.base, repo.base_uri, "/>#?")
            try:
                repo.set_acl(uid, triples=[(rebase(s), p, rebase(o)) for s, p, o in triples])
            except LakesuperiorError as e:
                raise _AclFailure(f"its ACL cannot be kept here: {e}") from None
            self.report.acls += 1
        self.settled.add(uid)

    def copy_above(self, repo: Repository, starts: Iterable[str], seen: set[str]) -> None:
        """Copy the ACLs of the ancestors of the starting points that were not copied
        themselves (the new repository made them as empty containers): what was copied
        may inherit them."""
        above = {up for uid in starts for up in ancestors(uid)} - seen
        for uid in sorted(above, key=lambda u: (u.count("/") if u != "/" else 0, u)):
            if not repo.exists(uid):
                continue
            url = self.src.url(uid)
            try:
                head = self.src.client.request("HEAD", url, headers={"Accept": _RDF_ACCEPT})
            except HttpClientError as e:
                raise MigrationError(f"{url}: its ACL could not be read: {e}") from None
            if head.status in (404, 410):
                continue
            if not head.ok:
                raise MigrationError(f"{url}: HEAD answered {head.status} {head.reason}, so "
                                     "its ACL, which what is below it may inherit, is unknown")
            try:
                self.write(repo, uid, self.read(uid, head))
            except _AclFailure as e:
                raise MigrationError(f"{url}: {e}") from None


def _copy_content(src: _Source, repo: Repository, uid: str, url: str,
                  user: list[tuple[str, str, str]], digests: dict[str, str],
                  filename: str | None, report: MigrationReport) -> None:
    resp, stream = src.client.open("GET", url, headers={"Want-Digest": _WANT_DIGEST})
    try:
        external = _external_of(resp, url)
        if external is not None:
            _keep_external(repo, uid, url, external, user, filename, resp)
            report.binaries += 1
            return
        if resp.status != 200:
            raise _Failure(f"GET of the content answered {resp.status} {resp.reason}")
        for algo, value in _header_digests(resp.headers.get("Digest")).items():
            if digests.setdefault(algo, value) != value:
                raise _Failure(f"the source's {algo} digests disagree: {digests[algo]} in "
                               f"the description, {value} in the Digest header")
        if not digests:
            report.unverified.append(url)
        mimetype = resp.headers.get("Content-Type") or "application/octet-stream"
        with repo.transaction():
            _, res = repo.create_or_replace(uid, stream=stream, media_type=mimetype.strip(),
                                            interaction_model=LDP_NON_RDF_SOURCE,
                                            digests=digests or None, filename=filename,
                                            handling="lenient")
            if user:
                repo.update_delta(uid, None, user, handling="lenient")
        report.binaries += 1
        report.binary_bytes += cast(Binary, res).size
    finally:
        stream.close()


def _external_of(resp: HttpResponse, url: str) -> tuple[str, str] | None:
    """``(URL, handling)`` of a source binary whose content is external (Fedora API
    3.9): a 3xx to its ``Location`` is a redirect, a 200 whose ``Content-Location``
    is another absolute URL a proxy; None for content the source holds."""
    if resp.status in (301, 302, 303, 307, 308) and resp.headers.get("Location"):
        return urljoin(url, resp.headers["Location"].strip()), "redirect"
    where = (resp.headers.get("Content-Location") or "").strip()
    if resp.status == 200 and where and urljoin(url, where) != url and ":" in where:
        return urljoin(url, where), "proxy"
    return None


def _keep_external(repo: Repository, uid: str, url: str, external: tuple[str, str],
                   user: list[tuple[str, str, str]], filename: str | None,
                   resp: HttpResponse) -> None:
    """Make ``uid`` the same external binary as the source's (same URL and handling),
    if the URL is on this repository's allow-list; else a ``_Failure`` saying so."""
    where, handling = external
    mimetype = (resp.headers.get("Content-Type") or "").strip() if handling == "proxy" else ""
    try:
        with repo.transaction():
            repo.create_or_replace(uid, external=where, external_handling=handling,
                                   media_type=mimetype or None, filename=filename,
                                   interaction_model=LDP_NON_RDF_SOURCE, handling="lenient")
            if user:
                repo.update_delta(uid, None, user, handling="lenient")
    except ExternalContentError as e:
        raise _Failure(f"its content is external ({handling} to {where[:200]}) and cannot be "
                       f"kept external here: {e}") from None


def iter_rows(report: MigrationReport) -> Iterator[tuple[str, str, str]]:
    """The skipped and failed resources of a migration as ``(status, url, why)`` rows."""
    for url, why in report.skipped:
        yield "skipped", url, why
    for url, why in report.failed:
        yield "failed", url, why
