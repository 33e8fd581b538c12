"""The judge of `make mutate`'s conformance targets (mutation/run.py, issue 42): ``smpref
conform`` alone, against smpref's own server in its deployed profile, at one of three versions
whose transport differs, one target each: 18 (encrypted blocks), 10 (no block encryption,
below 11) and 6 (the session ID in every transmission, below 7; no ALPN-negotiated range).

A mutant of the code that decides what a deployed server answers is killed when a case fails.
Only the cases a user can run against a deployed server count: the seed design's extensions
skip at a deployed version, and the cases that move the server's clock (``needs == "clock"``),
which only an embedded server allows, are left out. The server is the embedded one the runner
starts (the same listener as ``smpref serve``), which gathers END and DELD as deployed does but
sends them every 50 ms rather than every 15 s, so that a mutant costs seconds.

Its name does not start with ``test_``: ``make test`` does not collect it (the same cases run
at every version in tests/test_conform_serve_deployed.py); the mutation judge names it.
"""

from __future__ import annotations

import asyncio

import pytest

from smpref.conform import runner
from smpref.conform.case_verdicts import Status

#: END and DELD gathered and sent on a tick, as deployed sends them (every 15 s), on a tick
#: short enough for a mutant to cost seconds: the listener's gathering is judged too
EVENTS_INTERVAL = 0.05
#: what a deployed server can be asked: every case but those that move the server's clock
CASES = [case for case in runner.select() if case.needs != "clock"]


@pytest.mark.parametrize("version", [18, 10, 6])
def test_conform_passes(version: int) -> None:
    # a mutant is killed by one failing case: the run stops there
    [report] = asyncio.run(runner.run_embedded(CASES, [version], stop_on_fail=True,
                                               events_interval=EVENTS_INTERVAL))
    failures = [(r.case.id, r.message) for r in report.results if r.status is Status.FAIL]
    assert failures == []
    assert report.counts()["pass"] >= 120
