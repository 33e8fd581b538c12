"""The timing loop shared by the benchmarks: best of five rounds, in calls per second."""

from __future__ import annotations

import time
from collections.abc import Callable


def rate(fn: Callable[[], object], seconds: float) -> float:
    """Calls of ``fn`` per second: calibrate a round to about ``seconds / 5``, keep the best
    of five rounds (the least disturbed by the rest of the machine)."""
    fn()
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > seconds / 25:
            break
        n *= 2
    per_round = max(1, int(n * (seconds / 5) / elapsed))
    best = 0.0
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(per_round):
            fn()
        best = max(best, per_round / (time.perf_counter() - start))
    return best
