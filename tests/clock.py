"""A clock that tests move on by hand (``Repository(clock=...)``): a test that needs
two writes in different seconds (versions, ``Last-Modified``, HTTP dates) moves it
on to the next second instead of sleeping until then."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

#: How far each reading moves the clock: every time read is later than the last,
#: as on a real clock, and a test's readings stay in one second.
STEP = timedelta(microseconds=1)


class FakeClock:
    """Starts an hour before the time it was made (a whole second, UTC), or at
    ``start``; each reading is a microsecond later than the last, and ``advance``
    moves it on by whole seconds. An hour back: the seconds a test moves it on stay
    in the past of the system clock, which another repository (importing the times
    this one wrote) holds a time against."""

    def __init__(self, start: datetime | None = None):
        self.time = start or datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)

    def __call__(self) -> datetime:
        now, self.time = self.time, self.time + STEP
        return now

    def advance(self, seconds: int = 1) -> None:
        """To the start of the ``seconds``-th next second (one by default: the next
        Memento datetime)."""
        self.time = self.time.replace(microsecond=0) + timedelta(seconds=seconds)
