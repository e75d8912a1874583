"""The S3 binary backend's write beside a raw boto3 upload of the same bytes to the
same server, and beside the file backend, at each size (issue 31's speed section).

Per round and size, new random content (so nothing is deduplicated), each kind in
turn, the order rotated round by round:

* ``boto3_put``: one ``PutObject`` of the bytes (boto3, no hashing);
* ``boto3_upload``: boto3's managed ``upload_fileobj`` (multipart above 8 MiB, parts
  sent by 10 threads at once);
* ``s3_store``: ``S3BinaryStore.put`` of a file of the bytes (``BytesIO``: it can be
  read twice, as by the Python API, ``binaries move`` or ``restore``): above one
  part, hashed (SHA-512) first, then sent straight to the digest's key, hashed
  again on the way;
* ``s3_store_stream``: the same of a stream read once (as an HTTP body): hashed
  while streamed, one part in memory, under a temporary key then copied to the
  digest's key above one part;
* ``s3_store_digest``: the stream with the client's SHA-512 given (``Digest``),
  which goes straight to the digest's key;
* ``file_store``: ``BinaryStore.put`` (hashed, written, fsynced, renamed).

SeaweedFS (``bench/seaweedfs.py``) is started on loopback unless ``--endpoint``
names a server (with ``--bucket``, ``--access-key-id``, ``--secret-access-key``).

    python benchmarks/s3_binaries.py [--sizes 4K,16M] [--rounds 5] [--json F]
"""
from __future__ import annotations

import argparse
import hashlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.seaweedfs import SeaweedFS
from lakesuperior.config import Config
from lakesuperior.store.binaries import BinaryStore
from lakesuperior.store.s3 import S3BinaryStore

KINDS = ("boto3_put", "boto3_upload", "s3_store", "s3_store_stream", "s3_store_digest",
         "file_store")
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    text = text.strip().upper().removesuffix("B")
    if text and text[-1] in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1]])
    return int(text)


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


class _Stream(io.RawIOBase):
    """Bytes that can be read once, not sought (an HTTP body)."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._data.readinto(buffer)


def _jobs(data: bytes, digest: str, client: Any, bucket: str, raw_prefix: str,
          store: S3BinaryStore, files: BinaryStore) -> dict[str, Callable[[], Any]]:
    """One write of ``data`` of each kind."""
    return {
        "boto3_put": lambda: client.put_object(
            Bucket=bucket, Key=f"{raw_prefix}{uuid.uuid4().hex}", Body=data),
        "boto3_upload": lambda: client.upload_fileobj(
            io.BytesIO(data), bucket, f"{raw_prefix}{uuid.uuid4().hex}"),
        "s3_store": lambda: store.put(io.BytesIO(data)),
        "s3_store_stream": lambda: store.put(_Stream(data)),
        "s3_store_digest": lambda: store.put(_Stream(data), expected={"sha-512": digest}),
        "file_store": lambda: files.put(io.BytesIO(data)),
    }


def run(args: argparse.Namespace, keywords: dict[str, Any], workdir: str) -> dict[str, Any]:
    cfg = Config(**keywords, binaries_s3_prefix=f"bench-{uuid.uuid4().hex[:8]}/")
    store = S3BinaryStore.from_config(cfg)
    client = S3BinaryStore.make_client(cfg)
    files = BinaryStore(os.path.join(workdir, "ldpnr"))
    bucket = cfg.binaries_s3_bucket
    raw_prefix = cfg.binaries_s3_prefix + "raw/"
    results: dict[str, Any] = {}
    for size in args.sizes:
        times: dict[str, list[float]] = {k: [] for k in KINDS}
        for rnd in range(args.rounds):
            data = os.urandom(size)
            digest = hashlib.sha512(data).hexdigest()
            jobs = _jobs(data, digest, client, bucket, raw_prefix, store, files)
            order = KINDS[rnd % len(KINDS):] + KINDS[:rnd % len(KINDS)]
            for kind in order:
                if kind.startswith("s3_store"):
                    store.delete(digest)        # new content for each store write
                times[kind].append(_timed(jobs[kind]))
            files.delete(digest)
        med = {k: statistics.median(v) for k, v in times.items()}
        best_raw = min(med["boto3_put"], med["boto3_upload"])
        results[str(size)] = {
            "median_ms": {k: round(v * 1000, 3) for k, v in med.items()},
            "mb_per_s": {k: round(size / v / 1e6, 1) for k, v in med.items()},
            "s3_store_over_raw": round(med["s3_store"] / best_raw, 3),
            "s3_store_stream_over_raw": round(med["s3_store_stream"] / best_raw, 3),
            "s3_store_digest_over_raw": round(med["s3_store_digest"] / best_raw, 3),
            "rounds_ms": {k: [round(t * 1000, 3) for t in v] for k, v in times.items()},
        }
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="4K,16M",
                   type=lambda s: [parse_size(x) for x in s.split(",") if x.strip()])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--part-size", default="8M", type=parse_size,
                   help="binaries.s3.part_size of the S3 store (default 8M)")
    p.add_argument("--endpoint", help="an S3 server to use instead of a new SeaweedFS")
    p.add_argument("--bucket", default="lsup")
    p.add_argument("--access-key-id", default="")
    p.add_argument("--secret-access-key", default="")
    p.add_argument("--json", help="write the results to this file")
    args = p.parse_args(argv)
    if args.rounds < 1 or not args.sizes or min(args.sizes) < 0:
        p.error("--rounds must be positive and --sizes non-negative")
    workdir = tempfile.mkdtemp(prefix="s3bench-")
    server = None
    try:
        if args.endpoint:
            keywords = {"binaries_backend": "s3", "binaries_s3_endpoint": args.endpoint,
                        "binaries_s3_bucket": args.bucket, "binaries_s3_region": "us-east-1",
                        "binaries_s3_access_key_id": args.access_key_id,
                        "binaries_s3_secret_access_key": args.secret_access_key}
        else:
            # each round writes every size about 7 times (6 kinds, a temporary key)
            written = 7 * args.rounds * sum(args.sizes)
            server = SeaweedFS(Path(workdir) / "seaweedfs",
                               volumes=max(16, 8 + written // (256 << 20))).start()
            keywords = server.config()
            keywords.pop("binaries_s3_prefix")
        keywords["binaries_s3_part_size"] = args.part_size
        results = run(args, keywords, workdir)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    for size, r in results.items():
        print(f"{int(size):>12,} bytes, median of {args.rounds}:")
        for kind in KINDS:
            print(f"  {kind:<16} {r['median_ms'][kind]:>10.2f} ms  "
                  f"{r['mb_per_s'][kind]:>8.1f} MB/s")
        print(f"  S3 store / best raw boto3: {r['s3_store_over_raw']:.2f}; a stream read "
              f"once: {r['s3_store_stream_over_raw']:.2f} (with the client's digest: "
              f"{r['s3_store_digest_over_raw']:.2f})")
    write_json(args.json, {"benchmark": "s3_binaries", "machine": machine(),
                           "rounds": args.rounds, "part_size": args.part_size,
                           "server": "given" if args.endpoint else "seaweedfs",
                           "sizes": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
