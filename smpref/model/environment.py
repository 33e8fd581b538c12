"""What the model gets from outside: a clock and a random source, both injected.

The model never reads the wall clock or ``os.urandom``: a server passes a real clock and
``os.urandom``; tests, state machines and Spark tasks pass :class:`ManualClock` and
:class:`SeededRandom`, so that a seed reproduces a run exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Protocol

Random = Callable[[int], bytes]


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


class SeededRandom:
    """Deterministic bytes from a seed: SHAKE-256 over ``seed || counter`` per call.

    Not for production keys; for reproducible tests and runs only.
    """

    def __init__(self, seed: bytes | int) -> None:
        self.seed = seed if isinstance(seed, bytes) else seed.to_bytes(16, "big", signed=True)
        self.counter = 0

    def __call__(self, n: int) -> bytes:
        self.counter += 1
        return hashlib.shake_256(self.seed + self.counter.to_bytes(8, "big")).digest(n)
