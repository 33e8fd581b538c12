"""The conformance case for the server side of rotation (rot.drain) passes against smpref's
server and fails against one that never flags the last record or miscounts."""

from __future__ import annotations

import asyncio

import pytest
from reqs import req

from smpref.conform import runner
from smpref.conform.case_verdicts import Status
from smpref.model import delivery


def run_drain_case() -> runner.Result:
    report = asyncio.run(runner.run(None, runner.select(["rot.drain"]), timeout=10.0))
    (result,) = report.results
    return result


@req("ROT-3", "ROT-4")
def test_the_drain_case_passes_against_the_embedded_server() -> None:
    result = run_drain_case()
    assert result.status is Status.PASS, result.message


@req("ROT-4")
def test_a_server_that_never_flags_the_last_record_fails(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    sealed = delivery.seal_record
    monkeypatch.setattr(delivery, "seal_record",
                        lambda queue, record, *, last: sealed(queue, record, last=False))
    result = run_drain_case()
    assert result.status is Status.FAIL
    assert "'three' carries last=False" in result.message


@req("ROT-4")
def test_a_server_that_flags_every_record_of_a_suspended_queue_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sealed = delivery.seal_record
    monkeypatch.setattr(delivery, "seal_record", lambda queue, record, *, last: sealed(
        queue, record, last=queue.suspended))
    result = run_drain_case()
    assert result.status is Status.FAIL
    assert "'two' carries last=True" in result.message
