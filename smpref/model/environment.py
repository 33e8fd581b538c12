"""The clock the model gets from outside.

The model never reads the wall clock: a server passes a real clock; tests, state machines and
campaigns pass :class:`ManualClock`, so that a run does not depend on when it runs. Randomness
is injected the same way (:mod:`smpref.crypto.randomness`).
"""

from __future__ import annotations

from typing import Protocol


class Clock(Protocol):
    def now(self) -> int:
        """Seconds since the Unix epoch."""
        ...


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start: int = 1_767_225_600) -> None:  # 2026-01-01T00:00:00Z
        self.time = start

    def now(self) -> int:
        return self.time

    def advance(self, seconds: int) -> None:
        if seconds < 0:
            raise ValueError("time does not go backwards")
        self.time += seconds
