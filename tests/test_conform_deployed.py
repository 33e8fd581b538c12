"""``smpref conform`` against a server that speaks only deployed SMP (TRANS-11).

The deployed double (tests/deployed_double.py) advertises versions 6-18 and implements the
core commands with deployed semantics and encodings. The runner must find that out from the
handshake alone: every core case passes, every seed case reports skip, none fails.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from deployed_double import DeployedDouble
from reqs import req

from smpref.conform import runner
from smpref.conform.case_verdicts import Status

#: what the double does not serve, so the cases that need it run against smpref serve only
#: (tests/test_conform_serve_deployed.py): the double is deployed SMP's core commands at 17
#: and 18, written independently of smpref's model
NOT_SERVED = {
    "route.*": "private routing",
    "dlink.*": "deployed links (LSET, LGET, LKEY, LDEL, NEW with link data)",
    "ntf.*": "notifications (NKEY, NSUB, NMSG, NDEL)",
    "transport.*": "versions below 17, ALPN choices, TLS alerts, authenticators",
    "queue.new.password": "NEW with link data (its sender ID rule)",
    "queue.new.sender-id": "NEW with link data",
    "queue.new.id-taken": "NEW with link data",
    "queue.new.low-order-dh-key": "a low-order DH key (its X25519 refuses it)",
    "queue.err.no-entity": "LGET",
    "queue.err.session": "version 6",
    "queue.err.service": "service signatures",
    "queue.err.proxy": "proxying",
}


@req("TRANS-11")
def test_core_cases_pass_and_seed_cases_skip_against_deployed_smp(tmp_path: Path) -> None:
    async def main() -> runner.Report:
        server = DeployedDouble(tmp_path / "credentials")
        await server.start()
        try:
            return await runner.run(server.address, runner.select(exclude=[*NOT_SERVED]),
                                    timeout=10.0)
        finally:
            await server.stop()

    report = asyncio.run(main())
    assert (report.server_range, report.version, report.extended) == ((6, 18), 18, False)
    failures = [(r.case.id, r.message) for r in report.results if r.status is Status.FAIL]
    assert failures == []
    for result in report.results:
        if result.status is Status.INFO:  # what no requirement decides (a divergence), reported
            assert "DIV-" in result.message, (result.case.id, result.message)
        elif result.case.needs in ("core", "deployed"):
            assert result.status is Status.PASS, (result.case.id, result.message)
        else:
            assert result.status is Status.SKIP, result.case.id
            expected = "seed extension" if result.case.needs == "seed" else "embedded"
            assert expected in result.message
    assert report.counts()["pass"] >= 70


class _UnsignedSendDouble(DeployedDouble):
    """A planted bug: SEND to a secured queue is accepted without its signature (MSG-1)."""

    def _receive(self, conn, data):  # type: ignore[no-untyped-def]
        from smpref.wire.transmission import Transmission
        tx = Transmission.decode(data) if data[:1] == b"\x00" else None
        if tx is not None and tx.command.startswith(b"SEND ") and tx.entity_id in self.senders:
            queue = self.queues[self.senders[tx.entity_id]]
            saved, queue.snd_key = queue.snd_key, None
            try:
                return super()._receive(conn, data)
            finally:
                queue.snd_key = saved
        return super()._receive(conn, data)


@req("MSG-1")
def test_a_planted_bug_fails_its_cases_and_the_cli_exits_1(tmp_path: Path) -> None:
    import subprocess

    from servers import SMPREF, LoopThread

    thread = LoopThread()
    server = _UnsignedSendDouble(tmp_path / "credentials")
    thread.run(server.start(), 30)
    try:
        result = subprocess.run([SMPREF, "conform", server.address, "--quiet", "--cases",
                                 "cred.send.*", "--json", str(tmp_path / "r.json")],
                                capture_output=True, text=True, timeout=300, check=False)
    finally:
        thread.run(server.stop(), 30)
        thread.close()
    assert result.returncode == 1, result.stdout + result.stderr
    import json
    statuses = {r["id"]: r["status"] for r in json.loads((tmp_path / "r.json").read_text())[
        "results"]}
    assert statuses["cred.send.none"] == "fail"
    assert statuses["cred.send.right-key"] == "pass"
    # the failure quotes the requirement it breaks
    assert "MSG-1: SEND to a queue without a sender key MUST carry no authorization" in \
        result.stdout.replace("\n    ", " ")



@req("TRANS-3", "TRANS-15")
def test_block_garbage_accepts_err_block_from_a_receiver_whose_chain_moved_on(
        tmp_path: Path) -> None:
    """A deployed receiver advances its chain for every block it reads (DEP-9), so
    after ERR BLOCK for a block that does not decrypt the connection's keys no longer match:
    the case must pass without probing that connection, and still check the others."""
    async def main() -> runner.Report:
        server = DeployedDouble(tmp_path / "credentials")
        server.keep_after_bad_block = True
        await server.start()
        try:
            return await runner.run(server.address, runner.select(["block.garbage"]),
                                    timeout=5.0)
        finally:
            await server.stop()

    report = asyncio.run(main())
    (result,) = report.results
    assert result.status is Status.PASS, result.message
    assert "ERR BLOCK" in result.message


def test_a_run_that_stops_at_its_first_failure_ends_there(tmp_path: Path) -> None:
    """``stop_on_fail`` (the mutation judge's): the planted bug fails cred.send.none, the
    first case of its selection, and nothing runs after it."""
    async def main() -> runner.Report:
        server = _UnsignedSendDouble(tmp_path / "credentials")
        await server.start()
        try:
            return await runner.run_against(server.address, None, runner.select(["cred.send.*"]),
                                            stop_on_fail=True)
        finally:
            await server.stop()

    report = asyncio.run(main())
    assert [r.case.id for r in report.results] == ["cred.send.none"]
    assert report.results[0].status is Status.FAIL
