"""A local ActiveMQ broker for the events benchmark and the tests: Debian's
``activemq`` package, started on free loopback ports with a generated
configuration and its own data directory.

No system service and no fixed port: ``Broker(tmpdir).start()`` writes
``conf/activemq.xml`` (STOMP and OpenWire on 127.0.0.1 only, persistence in the
temporary directory), runs the broker's own launcher jar with ``java`` and waits
until the STOMP port answers; ``stop()`` ends it; ``start()`` again reuses the
same ports and data (a broker that comes back).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from lakesuperior.bench.ports import free_port

ACTIVEMQ_HOME = Path("/usr/share/activemq")
LAUNCHER = ACTIVEMQ_HOME / "bin" / "activemq.jar"
START_TIMEOUT = 120.0

CONFIG = """<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans
    http://www.springframework.org/schema/beans/spring-beans-2.0.xsd
    http://activemq.apache.org/schema/core
    http://activemq.apache.org/schema/core/activemq-core.xsd">
  <broker xmlns="http://activemq.apache.org/schema/core" useJmx="false"
          brokerName="lsup-test" dataDirectory="{data}" persistent="true"
          advisorySupport="false">
    <persistenceAdapter><kahaDB directory="{data}/kahadb"/></persistenceAdapter>
    <transportConnectors>
      <transportConnector name="openwire" uri="tcp://127.0.0.1:{openwire}"/>
      <transportConnector name="stomp" uri="stomp://127.0.0.1:{stomp}"/>
    </transportConnectors>
  </broker>
</beans>
"""


def available() -> bool:
    """Whether ActiveMQ (Debian's package) and java are installed."""
    return LAUNCHER.is_file() and shutil.which("java") is not None


def classpath() -> str:
    """The jars a JMS client needs (the broker's own libraries)."""
    jars = sorted(str(p) for p in (ACTIVEMQ_HOME / "lib").glob("*.jar"))
    return os.pathsep.join(jars)


class Broker:
    """One ActiveMQ process on loopback ports (see the module docstring)."""

    def __init__(self, base: Path):
        self.base = Path(base)
        self.stomp_port = free_port()
        self.openwire_port = free_port()
        self.proc: subprocess.Popen | None = None
        conf = self.base / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (self.base / "data").mkdir(exist_ok=True)
        (conf / "activemq.xml").write_text(CONFIG.format(
            data=self.base / "data", openwire=self.openwire_port, stomp=self.stomp_port))
        self.log_path = self.base / "broker.log"

    @property
    def stomp_url(self) -> str:
        return f"stomp://127.0.0.1:{self.stomp_port}"

    @property
    def openwire_url(self) -> str:
        return f"tcp://127.0.0.1:{self.openwire_port}"

    def start(self) -> Broker:
        conf = self.base / "conf"
        cmd = ["java", "-Xms64M", "-Xmx256M", "-XX:TieredStopAtLevel=1",
               f"-Dactivemq.home={ACTIVEMQ_HOME}", f"-Dactivemq.base={self.base}",
               f"-Dactivemq.conf={conf}", f"-Dactivemq.data={self.base / 'data'}",
               "-jar", str(LAUNCHER), "start", f"xbean:file:{conf / 'activemq.xml'}"]
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ActiveMQ exited: {self.log_path.read_text()[-3000:]}")
            if _answers(self.stomp_port) and _answers(self.openwire_port):
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"ActiveMQ did not start: {self.log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _answers(self.stomp_port) and time.monotonic() < deadline:
            time.sleep(0.1)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False
