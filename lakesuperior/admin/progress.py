"""Progress reports of the long admin operations."""
from __future__ import annotations

__all__ = ["Progress", "QUIET"]


class Progress:
    """Receives the progress of a long operation; this one ignores it.

    ``start(label, total)`` opens a phase (``total`` None when unknown),
    ``advance(n)`` counts work done, ``finish()`` closes the phase.
    """

    def start(self, label: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass


#: The default reporter: stateless, so one instance serves every call.
QUIET = Progress()
