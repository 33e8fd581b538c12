"""Randomness as the protocol code receives it: a function from a length to that many bytes.

Nothing in the model, the ratchet or the client core draws randomness itself: a server or a
client passes ``os.urandom``; tests, state machines and campaigns pass :class:`SeededRandom`,
so that a seed reproduces a run exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

Random = Callable[[int], bytes]


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
