"""Content-addressed objects in an S3 bucket: the ``s3`` binary backend.

Keys mirror the file store's paths, under the configured prefix::

    PREFIX ab/cd/abcd...        (the full hex digest in the store's algorithm)
    PREFIX tmp/put-*            (multipart writes in progress; leftovers of killed ones)

A write hashes while it streams. Content that fits in one part
(``binaries.s3.part_size``) is hashed, checked, then sent in one ``PutObject``
under its digest's key. Larger content goes part by part (one part in memory at
a time, hashed by this thread while another sends it) into a multipart upload
under a temporary key; the digests are checked before it is completed (a
mismatch, a body too large or any failure aborts it: no object), then the
completed object is copied to its digest's key (server side) and the temporary
key removed; when the client gave the digest in the store's algorithm, the
upload goes straight to that key (completed only if the content matches it).
Content that can be read twice (``bytes``, a seekable file: ``binaries move``,
``restore``, the Python API given a file) is hashed first (with MD5 too),
checked, then sent straight to its digest's key in one ``PutObject`` whose
``Content-MD5`` makes the object store refuse any other bytes (beyond 5 GiB: in
parts, hashed again on the way, completed only if the same), or not sent if
that key is stored; content that changed in between is ``ContentChangedError``
and nothing is stored. A local pass of the digests costs less than the object
store's copy.
Either way the object is whole in S3 when ``put`` returns, before the LMDB
commit that names it. Content of one part is sent whether it is stored or not
(one request either way; the same bytes under the same key, its time renewed);
larger content stored before is not sent again: its object is renewed (copied
onto itself). Either way ``cleanup``'s grace period counts from now.

Every S3 request has bounded timeouts and attempts (``binaries.s3.timeout``,
``binaries.s3.attempts``); an object store that cannot be reached, fails or
refuses access raises ``BinaryStoreUnavailableError``.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, BinaryIO

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from lakesuperior.exceptions import (
    BinaryNotFoundError,
    BinaryStoreUnavailableError,
    ConfigError,
    InvalidDigestError,
    PayloadTooLargeError,
)
from lakesuperior.store import pipeline
from lakesuperior.store import s3_content as content
from lakesuperior.store.binaries import (
    BinaryInfo,
    Upload,
    normalize_algorithm,
    reader,
)

if TYPE_CHECKING:
    from lakesuperior.config import Config

_TMP = "tmp/"
#: Between a temporary key and the id of its unfinished multipart upload, in ``leftovers``.
_UPLOAD = "?uploadId="
_HEX = re.compile(r"[0-9a-f]+")
#: Largest object one ``CopyObject`` copies, or one ``PutObject`` stores; larger ones
#: go in parts.
_MAX_ONE = 5 << 30
#: Bytes read from the network per ``read`` of an open object.
READ_CHUNK = 1 << 20


class S3BinaryStore:
    """Objects addressed by the digest of their content, in ``bucket`` under ``prefix``."""

    def __init__(self, client: Any, bucket: str, *, prefix: str = "", algorithm: str,
                 part_size: int, redirect: bool = False, redirect_expires: int = 300,
                 where: str = "") -> None:
        if not bucket:
            raise ConfigError("binaries.backend is s3, but binaries.s3.bucket names no bucket")
        self.client = client
        self.bucket = bucket
        self.prefix = prefix
        self.algorithm = normalize_algorithm(algorithm)
        self.part_size = part_size
        self.redirect = redirect
        self.redirect_expires = redirect_expires
        self._hex_len = 2 * hashlib.new(self.algorithm).digest_size
        self._where = where or "the object store"
        self._check_bucket()

    @classmethod
    def from_config(cls, cfg: Config, client: Any = None) -> S3BinaryStore:
        """The store ``cfg``'s ``binaries.s3.*`` settings describe (through
        ``client``, one of ``make_client(cfg)``, if given); ``ConfigError`` if its
        bucket is missing or the credentials are refused."""
        client = client or cls.make_client(cfg)
        where = f"bucket {cfg.binaries_s3_bucket} at {client.meta.endpoint_url}"
        return cls(client, cfg.binaries_s3_bucket, prefix=cfg.binaries_s3_prefix,
                   algorithm=cfg.digest_algorithm, part_size=cfg.binaries_s3_part_size,
                   redirect=cfg.binaries_s3_redirect,
                   redirect_expires=cfg.binaries_s3_redirect_expires, where=where)

    @staticmethod
    def make_client(cfg: Config) -> Any:
        """A boto3 S3 client with ``cfg``'s endpoint, region, credentials, timeouts
        and attempts (thread-safe: one serves every thread of a process)."""
        import boto3  # not at import: it takes 0.1 s to load
        from botocore.config import Config as BotoConfig

        if bool(cfg.binaries_s3_access_key_id) != bool(cfg.binaries_s3_secret_access_key):
            raise ConfigError("Set both binaries.s3.access_key_id and "
                              "binaries.s3.secret_access_key, or neither")
        options = BotoConfig(
            connect_timeout=cfg.binaries_s3_timeout, read_timeout=cfg.binaries_s3_timeout,
            retries={"max_attempts": cfg.binaries_s3_attempts, "mode": "standard"},
            signature_version="s3v4", max_pool_connections=32,
            s3={"addressing_style": "path" if cfg.binaries_s3_endpoint else "auto"},
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required")
        session = boto3.session.Session(
            aws_access_key_id=cfg.binaries_s3_access_key_id or None,
            aws_secret_access_key=cfg.binaries_s3_secret_access_key or None,
            region_name=cfg.binaries_s3_region or None)
        return session.client("s3", endpoint_url=cfg.binaries_s3_endpoint or None,
                              config=options)

    def __repr__(self) -> str:
        return f"S3BinaryStore({self.bucket!r}, {self.prefix!r}, {self.algorithm!r})"

    def describe(self) -> str:
        return f"{self._where}, keys under {self.prefix!r}" if self.prefix else self._where

    def _check_bucket(self) -> None:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except NoCredentialsError:
            raise ConfigError(f"No S3 credentials for {self._where}: set "
                              "binaries.s3.access_key_id and binaries.s3.secret_access_key "
                              "or the AWS_* variables") from None
        except ClientError as e:
            status = _status(e)
            if status == 404:
                raise ConfigError(f"binaries.s3.bucket: there is no {self._where}") from None
            if status in (301, 400, 401, 403):
                raise ConfigError(f"The object store refused access to {self._where} "
                                  f"({_code(e)}): check the credentials "
                                  "(binaries.s3.access_key_id, secret_access_key) and "
                                  "binaries.s3.region") from None
            raise _unavailable(e, f"cannot reach {self._where}") from None
        except BotoCoreError as e:
            raise _unavailable(e, f"cannot reach {self._where}") from None

    # -- keys -------------------------------------------------------------------

    def key(self, digest: str) -> str:
        """The object key of a digest (whether stored or not). Raises
        ``InvalidDigestError`` unless ``digest`` is a lowercase hex digest of the
        store's algorithm."""
        if not (isinstance(digest, str) and len(digest) == self._hex_len
                and _HEX.fullmatch(digest)):
            raise InvalidDigestError(f"Not a {self.algorithm} hex digest: {digest!r}")
        return f"{self.prefix}{digest[:2]}/{digest[2:4]}/{digest}"

    def _digest_of(self, key: str) -> str | None:
        name = key[len(self.prefix):]
        digest = name[6:]
        if (len(name) == 6 + self._hex_len and name[2] == "/" and name[5] == "/"
                and _HEX.fullmatch(digest) and name[:2] + name[3:5] == digest[:4]):
            return digest
        return None

    # -- writing ----------------------------------------------------------------

    def put(self, stream: BinaryIO | bytes | Upload, *,
            expected: Mapping[str, str] | None = None,
            max_size: int | None = None) -> BinaryInfo:
        """Store the content of ``stream`` (see the module doc). ``expected``: digests
        the client gave (``ChecksumValidationError`` on a mismatch); more than
        ``max_size`` bytes: ``PayloadTooLargeError``. Either way, and on any
        failure, no object is left."""
        if isinstance(stream, S3Upload):
            return self._store_upload(stream, expected, max_size)
        hashing = content.Hashing(self.algorithm, expected)
        start = content.start_of(stream)
        parts = content.parts(stream, self.part_size, hashing, max_size)
        first = next(parts)
        if len(first) < self.part_size:            # the whole content, in memory
            hashing.update(first)
            info = self._info(hashing)
            # One request, stored or not: the same bytes under the same key, its
            # time renewed (``cleanup``'s age)
            with _errors("storing the content (nothing was stored)"):
                self.client.put_object(Bucket=self.bucket, Key=self.key(info.digest),
                                       Body=bytes(first))
            return info
        if start is not None and not hashing.expected(self.algorithm):
            return self._put_read_twice(stream, start, first, hashing, max_size)
        return self._put_parts(first, parts, hashing)

    def _put_read_twice(self, stream: Any, start: int, first: bytes | bytearray,
                        hashing: content.Hashing, max_size: int | None) -> BinaryInfo:
        """Content that can be read again from ``start``: hashed to the end (the
        store's algorithm, the client's and MD5, a thread each) and checked, then,
        unless stored, sent under its digest's key: in one ``PutObject`` whose
        ``Content-MD5`` makes the object store refuse other bytes, or beyond 5 GiB
        in parts, hashed again on the way and completed only if the same. Either
        way, content that changed in between is ``ContentChangedError``. ``first``:
        its first part, read already."""
        rest = (reader(memoryview(stream)[len(first):]) if isinstance(stream, bytes)
                else stream.read)
        held = [memoryview(first)]

        def read(size: int) -> pipeline.Chunk:
            return held.pop() if held else rest(size)

        once = pipeline.run(read, [*hashing.hashers, "md5"], max_size=max_size)
        digests = hashing.check({a: once.digests[a] for a in hashing.hashers})
        info = BinaryInfo(digests[self.algorithm], self.algorithm, once.size, digests)
        key = self.key(info.digest)
        what = "storing the content (nothing was stored)"
        with _errors(what):
            if self._renew(key):
                return info
        if info.size < _MAX_ONE:
            md5 = base64.b64encode(bytes.fromhex(once.digests["md5"])).decode()
            with _errors(what):
                try:
                    self.client.put_object(Bucket=self.bucket, Key=key,
                                           Body=content.Window(stream, start, info.size),
                                           ContentLength=info.size, ContentMD5=md5)
                except ClientError as e:
                    if _code(e) == "BadDigest":        # not the bytes hashed first
                        raise content.changed() from None
                    raise
            return info
        if not isinstance(stream, bytes):
            stream.seek(start)
        again = content.Hashing(self.algorithm, None)
        parts = content.parts(stream, self.part_size, again, max_size)

        def same() -> bool:
            if again.size != info.size or again.hexdigests()[self.algorithm] != info.digest:
                raise content.changed()
            return True

        self._send(key, next(parts), parts, again, what, same)
        return info

    def _put_parts(self, first: bytes | bytearray,
                   parts: Iterator[bytes | bytearray],
                   hashing: content.Hashing) -> BinaryInfo:
        """A multipart upload: under a temporary key, copied to its digest's key once
        known; straight under the digest's key when the client gave that digest
        (completed only if the content matches it), or not at all when that key is
        stored already (the content is still read and checked)."""
        what = "storing the content (nothing was stored)"
        known = hashing.expected(self.algorithm)
        final = self.key(known) if known else None
        with _errors(what):
            if final is not None and self._renew(final):
                hashing.update(first)
                for rest in parts:
                    hashing.update(rest)
                return self._info(hashing)
        target = final or f"{self.prefix}{_TMP}put-{uuid.uuid4().hex}"
        found: list[BinaryInfo] = []

        def complete() -> bool:          # checked first; not when stored already
            found.append(self._info(hashing))
            key = self.key(found[0].digest)
            return target == key or not self._renew(key)

        if self._send(target, first, parts, hashing, what, complete) and target != final:
            try:
                with _errors(what):
                    self._copy(target, self.key(found[0].digest), found[0].size)
            finally:
                with contextlib.suppress(BotoCoreError, ClientError):
                    self.client.delete_object(Bucket=self.bucket, Key=target)
        return found[0]

    def _send(self, target: str, first: bytes | bytearray,
              parts: Iterator[bytes | bytearray], hashing: content.Hashing,
              what: str, complete: Callable[[], bool]) -> bool:
        """Send ``first`` and the rest of ``parts`` as a multipart upload to ``target``,
        each part hashed while it is sent (hashlib lets go of the GIL: one part in
        memory, its upload and its hashing at once); completed if ``complete()``
        says so (True returned), else, and on any failure, aborted."""
        with _errors(what):
            upload = self.client.create_multipart_upload(
                Bucket=self.bucket, Key=target)["UploadId"]
        done: list[dict[str, Any]] = []
        completed = False
        sender = ThreadPoolExecutor(1, thread_name_prefix="s3-part")
        try:
            part: bytes | bytearray | None = first
            while part:
                sent = sender.submit(self.client.upload_part, Bucket=self.bucket, Key=target,
                                     UploadId=upload, PartNumber=len(done) + 1, Body=part)
                hashing.update(part)
                with _errors(what):
                    answer = sent.result()
                done.append({"PartNumber": len(done) + 1, "ETag": answer["ETag"]})
                part = next(parts, None)                # empty: it ended with a full part
            with _errors(what):
                if complete():
                    self.client.complete_multipart_upload(
                        Bucket=self.bucket, Key=target, UploadId=upload,
                        MultipartUpload={"Parts": done})
                    completed = True
            return completed
        finally:
            sender.shutdown(wait=True)
            if not completed:
                with contextlib.suppress(BotoCoreError, ClientError):
                    self.client.abort_multipart_upload(Bucket=self.bucket, Key=target,
                                                       UploadId=upload)

    def receive(self, stream: Any, *, algorithms: Iterable[str] = (),
                max_size: int | None = None) -> S3Upload:
        """Send ``stream`` to a temporary object of the store, hashed in the store's
        algorithm and ``algorithms`` on the way (so an HTTP body is received before
        any write lock is taken); ``put`` of the ``S3Upload`` then stores it under
        its digest's key (a server-side copy), and leaving its ``with`` block
        removes the temporary object. More than ``max_size`` bytes raise
        ``PayloadTooLargeError``; on any error nothing is left."""
        hashing = content.Hashing(self.algorithm, {a: "" for a in algorithms})
        tmp = f"{self.prefix}{_TMP}put-{uuid.uuid4().hex}"
        what = "receiving the content (nothing was stored)"
        parts = content.parts(stream, self.part_size, hashing, max_size)
        first = next(parts)
        if len(first) < self.part_size:
            hashing.update(first)
            with _errors(what):
                self.client.put_object(Bucket=self.bucket, Key=tmp, Body=bytes(first))
        else:
            self._send(tmp, first, parts, hashing, what, lambda: True)
        return S3Upload(self, tmp, hashing.size, hashing.hexdigests())

    def _store_upload(self, upload: S3Upload, expected: Mapping[str, str] | None,
                      max_size: int | None) -> BinaryInfo:
        with upload:
            if max_size is not None and upload.size > max_size:
                raise PayloadTooLargeError(f"Content is larger than {max_size} bytes")
            checking = content.Hashing(None, expected)
            digests = upload.hexdigests([algo for algo, _, _ in checking.checks])
            checking.check(digests)
            info = BinaryInfo(digests[self.algorithm], self.algorithm, upload.size, digests)
            key = self.key(info.digest)
            with _errors("storing the content (nothing was stored)"):
                if not self._renew(key):
                    self._copy(upload.key, key, info.size)
            return info

    def _info(self, hashing: content.Hashing) -> BinaryInfo:
        """What was stored, once the client's digests are checked."""
        digests = hashing.check()
        return BinaryInfo(digests[self.algorithm], self.algorithm, hashing.size, digests)

    def _copy(self, source: str, key: str, size: int, renew: bool = False) -> None:
        """Copy an object server side (in parts beyond 5 GiB); ``renew``: onto itself,
        which S3 allows only with new metadata."""
        extra = {"MetadataDirective": "REPLACE", "Metadata": {"renewed": str(time.time())}
                 } if renew else {}
        src = {"Bucket": self.bucket, "Key": source}
        if size < _MAX_ONE:
            self.client.copy_object(Bucket=self.bucket, Key=key, CopySource=src, **extra)
            return
        from boto3.s3.transfer import TransferConfig  # boto3's managed copy
        self.client.copy(src, self.bucket, key, ExtraArgs=extra or None,
                         Config=TransferConfig(multipart_chunksize=1 << 30, use_threads=True))

    def _renew(self, key: str) -> bool:
        """Whether ``key`` is stored; its time renewed if so (``cleanup``'s age)."""
        head = self._head(key)
        if head is None:
            return False
        self._copy(key, key, head["ContentLength"], renew=True)
        return True

    def delete(self, digest: str) -> bool:
        """Remove a binary; False if there was none."""
        key = self.key(digest)
        with _errors(f"deleting from {self._where}"):
            if self._head(key) is None:
                return False
            self.client.delete_object(Bucket=self.bucket, Key=key)
        return True

    def remove_temp_files(self, min_age: float = 0.0) -> int:
        """Remove leftovers of interrupted writes (temporary objects, unfinished
        multipart uploads) older than ``min_age`` seconds. With the default age of
        0, call it only when no ``put`` is running."""
        limit = time.time() - min_age
        return sum(self.remove_leftover(name) for name, _size, mtime in list(self.leftovers())
                   if mtime <= limit)

    def leftovers(self) -> Iterator[tuple[str, int, float]]:
        """(name, size, time) of each temporary object and unfinished multipart
        upload (``NAME?uploadId=ID``, size 0) under ``PREFIX tmp/``."""
        tmp = self.prefix + _TMP
        with _errors(f"listing {self._where}"):
            for page in self.client.get_paginator("list_objects_v2").paginate(
                    Bucket=self.bucket, Prefix=tmp):
                for obj in page.get("Contents", ()):
                    yield (obj["Key"][len(tmp):], int(obj["Size"]),
                           obj["LastModified"].timestamp())
            for page in self.client.get_paginator("list_multipart_uploads").paginate(
                    Bucket=self.bucket, Prefix=tmp):
                for up in page.get("Uploads", ()):
                    yield (f"{up['Key'][len(tmp):]}{_UPLOAD}{up['UploadId']}", 0,
                           up["Initiated"].timestamp())

    def remove_leftover(self, name: str) -> bool:
        """Remove one of ``leftovers``; False if it was gone."""
        base, upload, upload_id = name.partition(_UPLOAD)
        if not base or "/" in base:
            raise ValueError(f"Not a leftover's name: {name!r}")
        key = self.prefix + _TMP + base
        with _errors(f"removing a leftover from {self._where}"):
            if upload:
                try:
                    self.client.abort_multipart_upload(Bucket=self.bucket, Key=key,
                                                       UploadId=upload_id)
                except ClientError as e:
                    if _status(e) == 404:
                        return False
                    raise
                return True
            if self._head(key) is None:
                return False
            self.client.delete_object(Bucket=self.bucket, Key=key)
        return True

    # -- reading ----------------------------------------------------------------

    def _head(self, key: str) -> dict[str, Any] | None:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as e:
            if _status(e) == 404:
                return None
            raise

    def _stat(self, digest: str) -> dict[str, Any]:
        with _errors("reading the content"):
            head = self._head(self.key(digest))
        if head is None:
            raise BinaryNotFoundError(f"No binary with digest {digest}")
        return head

    def open(self, digest: str) -> BinaryIO:
        """The stored content, readable and seekable (each read after a seek is one
        ranged ``GetObject``, streamed); the caller closes it."""
        head = self._stat(digest)
        raw = S3Object(self.client, self.bucket, self.key(digest), head["ContentLength"])
        return raw  # type: ignore[return-value]

    def exists(self, digest: str) -> bool:
        key = self.key(digest)
        with _errors("reading the content"):
            return self._head(key) is not None

    def __contains__(self, digest: object) -> bool:
        try:
            return self.exists(digest)  # type: ignore[arg-type]
        except InvalidDigestError:
            return False

    def size(self, digest: str) -> int:
        return int(self._stat(digest)["ContentLength"])

    def modified(self, digest: str) -> float:
        return float(self._stat(digest)["LastModified"].timestamp())

    def objects(self) -> Iterator[tuple[str, int, float]]:
        """(digest, size, modification time) of every stored binary, in key order."""
        with _errors(f"listing {self._where}"):
            for page in self.client.get_paginator("list_objects_v2").paginate(
                    Bucket=self.bucket, Prefix=self.prefix):
                for obj in page.get("Contents", ()):
                    digest = self._digest_of(obj["Key"])
                    if digest is not None:
                        yield digest, int(obj["Size"]), obj["LastModified"].timestamp()

    def __iter__(self) -> Iterator[str]:
        for digest, _size, _mtime in self.objects():
            yield digest

    def total_size(self) -> int:
        return sum(size for _digest, size, _mtime in self.objects())

    def compute(self, digest: str, algorithms: Iterable[str]) -> dict[str, str]:
        """Hex digests of a stored binary, keyed by hashlib name, read from S3."""
        hashing = content.Hashing(None, {a: "" for a in algorithms})
        with self.open(digest) as f:
            while chunk := f.read(READ_CHUNK):
                hashing.update(chunk)
        return hashing.hexdigests()

    def verify(self, digest: str) -> bool:
        return self.compute(digest, [self.algorithm])[self.algorithm] == digest

    def redirect_url(self, digest: str, *, content_type: str | None = None,
                     disposition: str | None = None) -> str | None:
        """With ``binaries.s3.redirect``: a presigned URL that GETs the object for
        ``redirect_expires`` seconds, without credentials (S3 answers it with
        ``content_type`` and ``disposition``); else None."""
        if not self.redirect:
            return None
        params = {"Bucket": self.bucket, "Key": self.key(digest)}
        if content_type:
            params["ResponseContentType"] = content_type
        if disposition:
            params["ResponseContentDisposition"] = disposition
        with _errors("signing a URL"):
            return str(self.client.generate_presigned_url(
                "get_object", Params=params, ExpiresIn=self.redirect_expires))


class S3Object(content.Sized):
    """A stored object as a read-only, seekable stream: a read at a new position
    opens a ranged ``GetObject`` from there, read as it streams."""

    def __init__(self, client: Any, bucket: str, key: str, size: int) -> None:
        super().__init__()
        self._client, self._bucket, self._key = client, bucket, key
        self.size = size
        self._body: Any = None

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        pos = max(0, self._position(offset, whence))
        if pos != self._pos:
            self._drop()
            self._pos = pos
        return pos

    def read(self, size: int | None = -1) -> bytes:
        if self.closed:
            raise ValueError("I/O operation on closed file")
        left = self.size - self._pos
        if left <= 0 or size == 0:
            return b""
        want = left if size is None or size < 0 else min(size, left)
        what = "reading the content"
        with _errors(what):
            if self._body is None:
                self._body = self._client.get_object(
                    Bucket=self._bucket, Key=self._key, Range=f"bytes={self._pos}-")["Body"]
            data = self._body.read(want)
        if not data:
            raise BinaryStoreUnavailableError(f"The object store ended {self._key} early "
                                              f"({self._pos} of {self.size} bytes)")
        self._pos += len(data)
        return bytes(data)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        return self.read(-1)

    def _drop(self) -> None:
        if self._body is not None:
            with contextlib.suppress(Exception):
                self._body.close()
            self._body = None

    def close(self) -> None:
        self._drop()
        super().close()


class S3Upload(Upload):
    """Content received into a temporary object of an S3 store
    (``S3BinaryStore.receive``), hashed, not yet stored: ``put`` stores it; leaving
    its ``with`` block, or ``discard``, removes the object. It reads as a binary file
    of its content, so it can stand for the stream it came from (as ``Upload``)."""

    def __init__(self, store: S3BinaryStore, key: str, size: int,
                 digests: dict[str, str]) -> None:
        self.store3 = store
        self.key = key
        self.size = size
        self.digests = digests
        self._reader: S3Object | None = None
        self._gone = False

    def __repr__(self) -> str:
        return f"S3Upload({self.key!r}, {self.size} bytes)"

    def hexdigests(self, algorithms: Iterable[str]) -> dict[str, str]:
        missing = [a for a in algorithms if a not in self.digests]
        if missing:
            hashing = content.Hashing(None, {a: "" for a in missing})
            with self._open() as f:
                while chunk := f.read(READ_CHUNK):
                    hashing.update(chunk)
            self.digests.update(hashing.hexdigests())
        return self.digests

    def read(self, size: int = -1) -> bytes:
        if self._reader is None:
            self._reader = self._open()
        return self._reader.read(size)

    def take(self) -> str:
        raise ValueError("An S3 upload has no file to take: store it with put()")

    def discard(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if not self._gone:
            self._gone = True
            with contextlib.suppress(BotoCoreError, ClientError):
                self.store3.client.delete_object(Bucket=self.store3.bucket, Key=self.key)

    def _open(self) -> S3Object:
        if self._gone:
            raise ValueError("This upload was stored or discarded")
        return S3Object(self.store3.client, self.store3.bucket, self.key, self.size)


def _status(error: ClientError) -> int:
    return int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code") or _status(error))


def _unavailable(error: Exception, what: str) -> BinaryStoreUnavailableError:
    reason = (f"{_code(error)}" if isinstance(error, ClientError)
              else type(error).__name__)
    return BinaryStoreUnavailableError(f"The binary store is unavailable: {what} failed "
                                       f"({reason}); try again later")


@contextlib.contextmanager
def _errors(what: str) -> Iterator[None]:
    """S3 and connection failures as ``BinaryStoreUnavailableError``. The messages
of what a request does name no host (they reach HTTP clients); those of the
operator's commands (listing, deleting) name the bucket."""
    try:
        yield
    except ClientError as e:
        if _status(e) == 404 and _code(e) in ("NoSuchKey", "404"):
            raise BinaryNotFoundError(f"Not in the binary store: {what}") from None
        raise _unavailable(e, what) from None
    except (BotoCoreError, OSError) as e:
        raise _unavailable(e, what) from None
