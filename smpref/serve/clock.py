"""The server's clock: wall time, plus an offset that only an embedding program moves."""

from __future__ import annotations

import time


class ServerClock:
    """Seconds since the epoch. ``advance`` exists for the embedded server's retention cases
    (the conformance runner moves time forward instead of waiting days); ``smpref serve``
    never calls it."""

    def __init__(self) -> None:
        self.offset = 0

    def now(self) -> int:
        return int(time.time()) + self.offset

    def advance(self, seconds: int) -> None:
        if seconds < 0:
            raise ValueError("time does not go backwards")
        self.offset += seconds
