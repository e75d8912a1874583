"""The union index's lag during an ingest: sampled, then summarised.

A sampler thread reads ``(applied, last)`` (the last log seq the union index
took in, the last committed) every ``INTERVAL`` seconds. The lag of a sample in
entries is ``last - applied``; in seconds, it is the time since the oldest entry
still unapplied was committed (0 when nothing is pending), that commit time
interpolated between the two samples around it.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from statistics import median
from typing import Any

from lakesuperior.exceptions import LakesuperiorError

INTERVAL = 0.1


class LagSampler:
    """Samples ``state()`` (``(applied, last)``, or None when unknown) on a thread."""

    def __init__(self, state: Callable[[], tuple[int, int] | None],
                 interval: float = INTERVAL):
        self.state = state
        self.interval = interval
        self.samples: list[tuple[float, int, int]] = []   # (t, applied, last)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lsup-bench-lag", daemon=True)

    def start(self) -> LagSampler:
        self._thread.start()
        return self

    def stop(self) -> dict[str, Any] | None:
        """Stop sampling; the summary (None if no sample was taken)."""
        self._stop.set()
        self._thread.join()
        return summarize_lag(self.samples, self.interval)

    def _run(self) -> None:
        t0 = time.perf_counter()
        while not self._stop.is_set():
            try:
                got = self.state()
            except LakesuperiorError:
                got = None
            if got is not None:
                self.samples.append((round(time.perf_counter() - t0, 4), got[0], got[1]))
            self._stop.wait(self.interval)


def summarize_lag(samples: list[tuple[float, int, int]],
                  interval: float = INTERVAL) -> dict[str, Any] | None:
    """Median, 95th percentile and maximum of the lag, in entries and seconds."""
    if not samples:
        return None
    entries = sorted(last - applied for _t, applied, last in samples)
    seconds = []
    j = 0
    for t, applied, last in samples:
        if last <= applied:
            seconds.append(0.0)
            continue
        # The commit time of entry applied + 1, interpolated between the last
        # sample that had not seen it and the first that had.
        while samples[j][2] <= applied:
            j += 1
        tj, _, lj = samples[j]
        if j == 0:
            seconds.append(t - tj)
            continue
        tp, _, lp = samples[j - 1]
        seconds.append(t - (tp + (tj - tp) * (applied + 1 - lp) / (lj - lp)))
    seconds.sort()

    def p95(xs: list) -> Any:
        return xs[min(len(xs) - 1, int(len(xs) * 0.95))]

    return {"samples": len(samples), "interval_s": interval,
            "median_entries": median(entries), "p95_entries": p95(entries),
            "max_entries": entries[-1],
            "median_s": round(median(seconds), 3), "p95_s": round(p95(seconds), 3),
            "max_s": round(seconds[-1], 3)}
