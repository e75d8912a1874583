"""Writes made to run as one group (group commit, ``store/group.py``): threads
started while the test holds the write lock queue behind the first of them,
which waits for the lock; once it is free that first one leads them all."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

WAIT = 30.0     # seconds a thread may take to reach a point (never a timing assertion)


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    """Return once ``predicate()`` holds; fail after ``WAIT`` seconds."""
    for _ in range(int(WAIT * 100)):
        if predicate():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"never: {what}")


class OneGroup:
    """``start`` writes (calls, each in its own thread) while the test holds the
    write lock of ``groups`` (a ``WriteGroups``, e.g. ``Repository.write_groups``);
    ``run`` lets them go as one group and gives their outcomes by name:
    ``("ok", result)`` or ``("error", exception)``."""

    def __init__(self, groups: Any):
        self.groups = groups
        self.results: dict[str, tuple[str, Any]] = {}
        self.threads: list[threading.Thread] = []
        groups.lock.acquire()
        self.held = True

    def start(self, name: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        def target() -> None:
            try:
                self.results[name] = ("ok", call(*args, **kwargs))
            except BaseException as e:        # noqa: BLE001 - the outcome is the test's
                self.results[name] = ("error", e)
        t = threading.Thread(target=target)
        t.start()
        self.threads.append(t)

    def run(self) -> dict[str, tuple[str, Any]]:
        """Wait until every write but the first is queued, free the lock, join."""
        try:
            wait_for(lambda: self.groups.waiting == len(self.threads) - 1,
                     f"{len(self.threads) - 1} writes queued")
        finally:
            self.release()
        for t in self.threads:
            t.join(WAIT)
        assert not any(t.is_alive() for t in self.threads)
        return self.results

    def release(self) -> None:
        if self.held:
            self.held = False
            self.groups.lock.release()
