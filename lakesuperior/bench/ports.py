"""Free loopback ports for the servers a benchmark or a test starts as processes.

A port the kernel hands out for ``bind(("127.0.0.1", 0))`` comes from its ephemeral
range, from which every outgoing connection takes its local port too: between the
moment a port is picked and the moment the server binds it, a client connection
of any other process (a test running beside it) can take it. ``free_port`` picks
below that range, where no connection's port comes from.
"""
from __future__ import annotations

import random
import socket

__all__ = ["free_port"]

LOWEST = 10_000        #: the lowest port handed out (above the well-known services)


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A port of 127.0.0.1 that is free now, below the kernel's ephemeral range."""
    high = max(_ephemeral_low(), LOWEST + 1000)
    for _ in range(1000):
        port = random.randrange(LOWEST, high)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"No free port of 127.0.0.1 between {LOWEST} and {high}")
