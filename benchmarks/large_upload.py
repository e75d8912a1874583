"""A large binary PUT against the disk's own speed (issue 31), and against Fedora.

Writes a file of random bytes (``--size``, default 1 GiB) in a temporary folder
of ``--dir`` (default: the current directory, so that everything is on one
disk), starts ``lsup-server`` there (default workers and threads, authentication
on, one user, a free port of 127.0.0.1, ``max_body_size`` at least ``--size``)
and runs ``--rounds`` rounds, alternating which goes first, of:

* the floor: ``dd if=FILE of=OUT bs=--bs conv=fdatasync`` on the same disk,
  plus one pass of the store's digest (hashlib, 1 MiB reads) over the file;
* ours: a PUT of the file to a new binary, the client streaming it from the
  file (as ``curl -T``), with HTTP Basic authentication; the resident set of
  the server's processes sampled meanwhile (every 20 ms): the peak, and the
  largest growth during the upload (after a warm-up in which each worker
  checked the password once: Argon2 takes 64 MiB for that), and the CPU time
  the server used (less moved by the load than the wall clock);
* Fedora (``--fedora URL`` of its ``/rest``, ``--fedora-user`` and
  ``--fedora-password``): the same PUT there.

Each round changes the file's first bytes, so no PUT meets content the store
holds already. Prints each round and the medians, with the ratios ours / floor
(target: at most 1.3) and Fedora / ours (target: at least 1.5), of the medians
and, steadier on a shared machine, the median of each round's ratio; ``--json
FILE`` writes them all, with the load average at each figure::

    python benchmarks/large_upload.py --rounds 3 --json large_upload.json
    python benchmarks/large_upload.py --size 64M --rounds 1      # a quick look
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lakesuperior.auth.users import UserDB
from lakesuperior.bench import serving
from lakesuperior.bench.clients import process_cpu_s
from lakesuperior.bench.figures import machine, write_json
from lakesuperior.bench.memory import process_memory
from lakesuperior.bench.ports import free_port
from lakesuperior.config import defaults

USER, PASSWORD = "bench", "a-long-enough-password"
BLOCK = 1 << 20
SAMPLE_S = 0.02


def size_arg(text: str) -> int:
    """``1073741824``, ``64M``, ``1G`` (binary units) -> bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def load() -> float:
    """The one-minute load average (what else the machine was doing)."""
    return round(os.getloadavg()[0], 2)


def make_file(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        left = size
        while left:
            piece = os.urandom(min(BLOCK, left))
            fh.write(piece)
            left -= len(piece)


def renew(path: Path) -> None:
    """New first bytes: content no store has seen."""
    with open(path, "r+b") as fh:
        fh.write(uuid.uuid4().bytes)


def floor(path: Path, out: Path, bs: str, algorithm: str) -> dict[str, float]:
    """``dd ... conv=fdatasync`` of the file, then one digest pass over it."""
    t0 = time.perf_counter()
    subprocess.run(["dd", f"if={path}", f"of={out}", f"bs={bs}", "conv=fdatasync"],
                   check=True, capture_output=True)
    dd_s = time.perf_counter() - t0
    out.unlink()
    h = hashlib.new(algorithm)
    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        while chunk := fh.read(BLOCK):
            h.update(chunk)
    hash_s = time.perf_counter() - t0
    return {"dd_s": round(dd_s, 3), "hash_s": round(hash_s, 3),
            "floor_s": round(dd_s + hash_s, 3), "load": load()}


def put(url: str, path: Path, auth: tuple[str, str] | None) -> tuple[int, float]:
    """PUT the file to ``url``, streamed from the file: (status, seconds)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600,
                                      blocksize=BLOCK)
    headers = {"Content-Type": "application/octet-stream",
               "Content-Length": str(path.stat().st_size)}
    if auth:
        headers["Authorization"] = "Basic " + base64.b64encode(
            f"{auth[0]}:{auth[1]}".encode()).decode()
    try:
        with open(path, "rb") as fh:
            t0 = time.perf_counter()
            try:
                conn.request("PUT", parts.path, body=fh, headers=headers)
            except (BrokenPipeError, ConnectionResetError):
                pass                # the server answered early: read why
            resp = conn.getresponse()
            body = resp.read()
            if resp.status >= 300:
                print(f"PUT {url}: {resp.status} {body[:300]!r}", file=sys.stderr)
            return resp.status, time.perf_counter() - t0
    finally:
        conn.close()


class RssSampler:
    """The largest resident set of the server's workers while it runs."""

    def __init__(self, pids: list[int]):
        self.pids = pids
        self.peak: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        for pid in self.pids:
            rss = (process_memory(pid) or {}).get("rss_bytes", 0)
            self.peak[pid] = max(self.peak.get(pid, 0), rss)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.sample()

    def __enter__(self) -> RssSampler:
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def start_server(root: Path, size: int, stack: ExitStack) -> tuple[str, int]:
    """``lsup-server`` (``bench.serving``) on a free loopback port, data in
    ``root/data``, warmed up: its base URL and its pid."""
    data = root / "data"
    data.mkdir()
    UserDB(str(data)).add(USER, PASSWORD, admin=True)
    port = free_port()
    proc = stack.enter_context(serving.lsup_server(
        data, port, root / "server.log",
        settings={"LSUP_MAX_BODY_SIZE": str(max(size, defaults()["max_body_size"]))}))
    base = f"http://127.0.0.1:{port}/rest"
    warm_up(base)
    return base, proc.pid


def warm_up(base: str, connections: int = 16) -> None:
    """Authenticated requests on new connections (the workers are up after them), so
    that every worker has verified the password once (Argon2 takes 64 MiB for each verification,
    and a worker keeps the answer): the upload's memory is then its own."""
    parts = urlsplit(base)
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    for _ in range(connections):
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        try:
            conn.request("HEAD", parts.path + "/", headers={"Authorization": "Basic " + token})
            answer = conn.getresponse()
            answer.read()
            if answer.status != 200:
                raise SystemExit(f"lsup-server answered HEAD with {answer.status}")
        finally:
            conn.close()


def cpu_s(pids: list[int]) -> float:
    """CPU seconds of processes, their exited threads included (an upload's
    pipeline threads end with it: ``serving.tree_cpu_s`` counts live threads)."""
    return sum(process_cpu_s(p) or 0.0 for p in pids)


def ours(base: str, path: Path, server: int) -> dict[str, Any]:
    workers = serving.descendants(server)
    before = {p: (process_memory(p) or {}).get("rss_bytes", 0) for p in workers}
    cpu = cpu_s(workers)
    with RssSampler(workers) as rss:
        status, secs = put(f"{base}/large-{uuid.uuid4().hex[:8]}", path, (USER, PASSWORD))
    if status != 201:
        raise SystemExit(f"lsup-server answered the PUT with {status}")
    grew = max(rss.peak[p] - before[p] for p in workers)
    return {"put_s": round(secs, 3), "server_cpu_s": round(cpu_s(workers) - cpu, 2),
            "rss_before_mb": round(max(before.values()) / 2**20, 1),
            "rss_peak_mb": round(max(rss.peak.values()) / 2**20, 1),
            "rss_growth_mb": round(grew / 2**20, 1), "load": load()}


def fedora(base: str, path: Path, auth: tuple[str, str] | None) -> dict[str, Any]:
    status, secs = put(f"{base.rstrip('/')}/large-{uuid.uuid4().hex[:8]}", path, auth)
    if status != 201:
        raise SystemExit(f"Fedora answered the PUT with {status}")
    return {"put_s": round(secs, 3), "load": load()}


def median(rounds: list[dict[str, Any]], name: str, key: str) -> float:
    return round(statistics.median(r[name][key] for r in rounds), 3)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=size_arg, default=1 << 30, help="bytes (64M, 1G)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--bs", default="1M", help="dd's block size")
    p.add_argument("--dir", default=".", help="where the file, dd's copy and the "
                   "server's data go (one disk)")
    p.add_argument("--fedora", help="Fedora's /rest URL")
    p.add_argument("--fedora-user")
    p.add_argument("--fedora-password")
    p.add_argument("--json", help="write the figures to this file")
    args = p.parse_args(argv)
    algorithm = defaults()["digest_algorithm"]
    fed_auth = (args.fedora_user, args.fedora_password or "") if args.fedora_user else None
    result: dict[str, Any] = {"size": args.size, "bs": args.bs, "algorithm": algorithm,
                              "machine": machine(), "load_start": load(), "rounds": []}
    with ExitStack() as stack:
        root = Path(tempfile.mkdtemp(prefix="large-upload-", dir=args.dir)).resolve()
        stack.callback(shutil.rmtree, root, True)
        src = root / "content.bin"
        make_file(src, args.size)
        base, server = start_server(root, args.size, stack)
        print(f"{args.size} bytes, {algorithm}; lsup-server at {base}; load {load()}")
        for i in range(args.rounds):
            runs = {"floor": lambda: floor(src, root / "dd.out", args.bs, algorithm),
                    "ours": lambda: ours(base, src, server)}
            if args.fedora:
                runs["fedora"] = lambda: fedora(args.fedora, src, fed_auth)
            order = list(runs) if i % 2 == 0 else list(reversed(runs))
            one: dict[str, Any] = {}
            for name in order:
                renew(src)
                one[name] = runs[name]()
            result["rounds"].append(one)
            print(f"round {i + 1}: " + "; ".join(f"{n} {one[n]}" for n in order))
    rounds = result["rounds"]
    fig = {"floor_s": median(rounds, "floor", "floor_s"),
           "dd_s": median(rounds, "floor", "dd_s"),
           "hash_s": median(rounds, "floor", "hash_s"),
           "ours_put_s": median(rounds, "ours", "put_s"),
           "ours_server_cpu_s": median(rounds, "ours", "server_cpu_s"),
           "ours_rss_peak_mb": max(r["ours"]["rss_peak_mb"] for r in rounds),
           "ours_rss_before_mb": min(r["ours"]["rss_before_mb"] for r in rounds),
           "ours_rss_growth_mb": max(r["ours"]["rss_growth_mb"] for r in rounds)}
    fig["ours_over_floor"] = round(fig["ours_put_s"] / fig["floor_s"], 2)
    fig["ours_over_floor_by_round"] = round(statistics.median(
        r["ours"]["put_s"] / r["floor"]["floor_s"] for r in rounds), 2)
    if args.fedora:
        fig["fedora_put_s"] = median(rounds, "fedora", "put_s")
        fig["fedora_over_ours"] = round(fig["fedora_put_s"] / fig["ours_put_s"], 2)
        fig["fedora_over_ours_by_round"] = round(statistics.median(
            r["fedora"]["put_s"] / r["ours"]["put_s"] for r in rounds), 2)
    result["medians"] = fig
    result["load_end"] = load()
    print("medians: " + ", ".join(f"{k} {v}" for k, v in fig.items()))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
