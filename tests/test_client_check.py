"""``smpref client-check`` grades the clients that connect to it (spec/clients.md).

Two clients do everything right (tests/checked_clients.py): smpref's own, at the seed version
and every deployed version, and the independent deployed client of tests/deployed_client.py.
Both must pass every check and every case they meet. Then each fault is planted, one at a
time, and the report must name exactly that fault, with its requirement ID, in JSON and in
JUnit: the checks are shown to fail when, and only when, the client is wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import ssl
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checked_clients import CASE_FAULTS, FAULTS, DeployedPolite, PoliteClient, SmprefPolite
from deployed_client import DeployedClient, Keys, ack_command, new_command, parse_ids, ss
from reqs import req

import smpref.clientcheck.judge as judge_module
from smpref.client.connection import SmpClient
from smpref.clientcheck.case_run import CaseState
from smpref.clientcheck.catalogue import CASES, CHECKS, catalogue_page
from smpref.clientcheck.grading import ClientReport, junit_xml
from smpref.clientcheck.server_cases import CROSSING
from smpref.clientcheck.session import CheckConfig, ClientCheck
from smpref.clientcheck.verdicts import Verdict
from smpref.serve.listener import ServeConfig
from smpref.serve.watcher import Watcher
from smpref.spec.requirements import requirement_texts
from smpref.text.addresses import parse_server_address
from smpref.transport.streams import BlockStream
from smpref.transport.tls import client_context
from smpref.transport.versions import DEPLOYED_VERSIONS, SMPREF_VERSION
from smpref.wire.blocks import encode_batch
from smpref.wire.transmission import Transmission, transmission_at

SMPREF = str(Path(sys.executable).parent / "smpref")
#: a check with a planted fault: fast cases, answers held briefly
FAST = {"slow": 0.4, "spacing": 0.2, "idle": 0.3}


def _settled(check: ClientCheck, patience: float | None) -> bool:
    """Every case decided, or started and only the end can decide it (or, with
    ``patience``, started that many seconds ago: a faulty client's case may wait forever)."""
    runs = check.runner.runs if check.runner is not None else []
    now = time.monotonic()
    return all(r.state is CaseState.DECIDED
               or (r.state is CaseState.STARTED and r.case.number in (2, 3))
               or (patience is not None and r.state in (CaseState.STARTED, CaseState.CLOSED)
                   and now - r.started > patience) for r in runs)


async def grade(folder: Path, make: Callable[[str], PoliteClient],
                cases: list[int] | None = None, *, limit: float = 20.0,
                patience: float | None = None) -> ClientReport:
    """Run a polite client (with whatever fault it has) against a client-check server until
    its cases are settled (or ``limit`` seconds), then report."""
    check = ClientCheck(folder, ServeConfig(port=0, store_sync=False),
                        CheckConfig(cases=cases, **FAST))
    address = await check.start()
    stop = asyncio.Event()
    client = make(address)
    task = asyncio.create_task(client.run(stop))
    loop = asyncio.get_running_loop()
    begun = loop.time()
    # the client runs at least half a second (its faults show in that time), then until its
    # cases are settled
    while loop.time() < begun + limit and \
            (loop.time() < begun + 0.5 or not _settled(check, patience)):
        await asyncio.sleep(0.05)
    if cases is None or 3 in cases:  # past case 3's crossing window: a late command shows
        await asyncio.sleep(CROSSING + 0.1)
    stop.set()
    with contextlib.suppress(Exception):  # a faulty client may fail its own way
        await asyncio.wait_for(task, 10)
    return await check.finish()


def verdicts(report: ClientReport) -> dict[str, str]:
    """Every check's and case's verdict, as the reports print it."""
    out = {c.check.id: c.verdict.value for c in report.checks}
    out.update({f"case.{r.case.number}": r.verdict.value for r in report.cases})
    return out


def detail(report: ClientReport, name: str) -> str:
    for c in report.checks:
        if c.check.id == name:
            return " | ".join(f.detail for f in c.failures)
    return next(r.detail for r in report.cases if f"case.{r.case.number}" == name)


# --- clients that do everything right --------------------------------------------------------


@req("CLNT-19", "CLNT-20", "CLNT-21", "CLNT-22", "CLNT-23", "CLNT-24", "CLNT-25", "CLNT-26",
     "CLNT-27", "CLNT-5", "CLNT-11", "CLNT-12", "CLNT-14")
def test_smprefs_own_client_passes_every_check_and_case_at_every_version(tmp_path: Path) -> None:
    """At the seed version and at every deployed version, side by side: every case comes,
    every case passes, nothing fails and no advice is given."""
    versions = [SMPREF_VERSION, *DEPLOYED_VERSIONS]

    async def main() -> list[ClientReport]:
        return await asyncio.gather(*[
            grade(tmp_path / str(v), lambda a, v=v: SmprefPolite(a, v)) for v in versions])

    for version, report in zip(versions, asyncio.run(main()), strict=True):
        got = verdicts(report)
        assert report.faults() == [], (version, report.faults())
        assert "non-strict" not in got.values(), (version, got)
        assert {r.case.number: r.verdict for r in report.cases} == \
            {c.number: Verdict.PASS for c in CASES}, (version, [(r.case.number, r.detail)
                                                          for r in report.cases])
        exercised = {k for k, v in got.items() if v == "pass"}
        assert {"tls.sni", "hello.sent", "hello.key-hash", "tx.authorization",
                "tx.corr-id", "conv.ack"} <= exercised, version
        # the protocol each connection got, as its ALPN chose it (TRANS-11)
        seed = version == SMPREF_VERSION
        assert {(c["alpn"], c["protocol"], c["version"]) for c in report.connections} == \
            {("smpref-seed/1" if seed else "smp/1", "seed" if seed else "deployed",
              version)}, version


def side_by_side(tmp_path: Path, runs: dict[str, tuple[Callable[[str], PoliteClient],
                                                     list[int] | None, float | None]]
                 ) -> dict[str, ClientReport]:
    """Several checks at once, each with its own server and client, in one event loop: they
    mostly wait (for cases to come, for windows to pass), so side by side they cost the time
    of the longest."""
    async def main() -> list[ClientReport]:
        return await asyncio.gather(*[
            grade(tmp_path / str(i), make, cases, patience=patience)
            for i, (make, cases, patience) in enumerate(runs.values())])

    return dict(zip(runs, asyncio.run(main()), strict=True))


@req("CLNT-19", "CLNT-27", "DEP-11")
def test_the_independent_deployed_client_passes_every_check_it_exercises(
        tmp_path: Path) -> None:
    """At 18, at 11 (the first with encrypted blocks) and at 6 without ALPN, where the only
    advice is to offer ALPN (CLNT-1), as every deployed client does."""
    reports = side_by_side(tmp_path, {
        str(v): (lambda a, v=v: DeployedPolite(a, v), None, None) for v in (18, 11, 6)})
    for version, report in reports.items():
        got = verdicts(report)
        assert report.faults() == [], (version, report.faults())
        advice = {k for k, v in got.items() if v == "non-strict"}
        assert advice == ({"tls.alpn"} if version == "6" else set()), (version, advice)
        assert all(got[f"case.{c.number}"] == "pass" for c in CASES), (version, got)


# --- one fault at a time ---------------------------------------------------------------------

#: each planted fault and the check that must name it, with a phrase of the detail
PLANTED = {
    "key-hash": ("hello.key-hash", "CLNT-5", "is not this server's"),
    "sni": ("tls.sni", "CLNT-2", "sent SNI 'smp.example'"),
    "reused-corr-id": ("tx.corr-id", "CLNT-12", "reused"),
    "wrong-ack": ("conv.ack", "CLNT-14", "whose message in flight is"),
    "unsigned-session": ("tx.authorization", "CLNT-11", "without the session ID"),
    "no-resubscribe": ("case.9", "CLNT-27", "did not subscribe again"),
}


@req("CLNT-2", "CLNT-5", "CLNT-11", "CLNT-12", "CLNT-14", "CLNT-27")
def test_each_planted_fault_is_reported_as_that_fault(tmp_path: Path) -> None:
    """Each client with one fault: the report names exactly that fault, with its requirement
    ID, in JSON and JUnit; any other failure, or none, fails the test."""
    reports = side_by_side(tmp_path, {
        fault: (lambda a, f=fault: DeployedPolite(a, 18, f),
                [9] if fault == "no-resubscribe" else [], 1.0) for fault in FAULTS})
    for fault, report in reports.items():
        name, requirement, phrase = PLANTED[fault]
        assert report.faults() == [name], fault
        assert phrase in detail(report, name), fault
        data = report.to_json()
        if name.startswith("case."):
            entry = next(c for c in data["cases"] if c["case"] == int(name[5:]))
        else:
            entry = next(c for c in data["checks"] if c["id"] == name)
            assert entry["failures"][0]["exchange"] or fault in ("key-hash", "sni"), fault
        assert entry["verdict"] == "fail" and requirement in entry["requirements"], fault
        assert requirement in entry["requirementTexts"], fault
        junit = ET.fromstring(junit_xml(report))
        failed = [c.get("name") for c in junit.iter("testcase")
                  if c.find("failure") is not None]
        assert len(failed) == 1 and failed[0].startswith(name), (fault, failed)
        props = next(c for c in junit.iter("testcase") if c.get("name") == failed[0])
        assert requirement in props.find("properties/property").get("value")  # type: ignore[union-attr]


@req("CLNT-19", "CLNT-20", "CLNT-21", "CLNT-22", "CLNT-23", "CLNT-24", "CLNT-25", "CLNT-26",
     "CLNT-27")
def test_each_case_fails_the_client_that_gets_it_wrong(tmp_path: Path) -> None:
    """One client per case, each getting that case wrong: that case, and only it, fails."""
    # the two faults planted after the crossing window need the window to pass
    reports = side_by_side(tmp_path, {
        fault: (lambda a, f=fault: DeployedPolite(a, 18, f), [number],
                CROSSING + 0.5 if number in (2, 3) else 0.5)
        for fault, number in CASE_FAULTS.items()})
    for fault, report in reports.items():
        number = CASE_FAULTS[fault]
        assert report.faults() == [f"case.{number}"], (fault, report.faults())
        run = report.cases[0]
        assert run.verdict is Verdict.FAIL, fault
        assert run.detail.startswith(run.case.requirements[0]), fault


#: correct clients the review found accused: each must pass the case (or, where the server
#: cannot tell, get advice, never a fault)
CORRECT: dict[str, tuple[int, dict[str, Any], str]] = {
    "two-queues-subscribed-again": (9, {"queues": 2}, "pass"),
    "messages-queued-behind-the-first": (1, {"burst": 3}, "pass"),
    "get-after-end": (2, {"after_end": "get"}, "pass"),
    "leaving-the-queue-after-end": (2, {"after_end": "leave"}, "pass"),
    "one-connection-for-both-deleted": (3, {"shared": True}, "pass"),
    "a-sender-done-after-err": (7, {"on_err": "close"}, "non-strict"),
    # below 10 deletion is END: the client takes the queue up again once (a SUB answered
    # ERR AUTH), which is no fault
    "deletion-as-end-at-9": (3, {"version": 9}, "pass"),
    "deletion-as-end-at-6": (3, {"version": 6}, "pass"),
}


@req("CLNT-19", "CLNT-20", "CLNT-21", "CLNT-25", "CLNT-27")
def test_a_correct_client_is_not_accused(tmp_path: Path) -> None:
    def make(options: dict[str, Any]) -> Callable[[str], PoliteClient]:
        version = options.get("version", 18)
        rest = {k: v for k, v in options.items() if k != "version"}
        return lambda a: DeployedPolite(a, version, **rest)

    reports = side_by_side(tmp_path, {
        name: (make(options), [number], CROSSING + 0.5)
        for name, (number, options, _) in CORRECT.items()})
    for name, report in reports.items():
        verdict = CORRECT[name][2]
        assert report.faults() == [], (name, report.faults(), report.cases[0].detail)
        assert report.cases[0].verdict.value == verdict, (name, report.cases[0].detail)


# --- every other check, on one session of a client that gets each wrong once --------------


async def _raw_hello(address: str, hello: bytes) -> None:
    """Connect over ALPN smp/1, read the server hello, send ``hello`` as the client's."""
    server = parse_server_address(address)
    reader, writer = await asyncio.open_connection(
        server.hosts[0], server.effective_port, ssl=client_context(["smp/1"]),
        server_hostname=None)
    stream = BlockStream(reader, writer)
    await stream.read_handshake()
    await stream.write_handshake(hello)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(stream.read_block(), 2)
    await stream.close()


async def _wrong_session(address: str) -> None:
    """Every transmission-level fault once, over the deployed client and smpref's."""
    key_hash = parse_server_address(address).key_hash
    await _raw_hello(address, struct.pack(">H", 19) + ss(key_hash) + b"F0")  # CLNT-3
    await _raw_hello(address, struct.pack(">H", 18) + ss(key_hash))  # CLNT-4: too short
    await _raw_hello(address, struct.pack(">H", 10) + ss(key_hash))  # CLNT-6: no key
    alice = await DeployedClient.connect(address)
    owner = Keys()
    ids = parse_ids((await alice.request(new_command(owner), key=owner.sign)).body)
    rid = ids.recipient_id
    await alice.request(b"SUB", rid, owner.sign)  # CLNT-16: NEW subscribed already
    await alice.request(b"SUB", os.urandom(24), owner.sign)  # CLNT-13
    await alice.request(b"FOO", rid, owner.sign)  # CLNT-9
    await alice.request(b"SUB", rid)  # CLNT-10: no authorization
    unused = Keys()  # CLNT-18: created, never used
    await alice.request(new_command(unused, subscribe=False), key=unused.sign)
    # CLNT-15: two commands for one queue in one block
    polled = Keys()
    pids = parse_ids((await alice.request(new_command(polled, subscribe=False),
                                          key=polled.sign)).body)
    pid = pids.recipient_id
    _, first = alice.transmission(b"GET", pid, polled.sign)
    _, second = alice.transmission(b"GET", pid, polled.sign)
    await alice.send_raw([first, second])
    await alice.request(ack_command(b""), pid, polled.sign)  # CLNT-14: nothing in flight
    # CLNT-11: an unsigned SEND to a queue its recipient secured
    sender = Keys()
    await alice.request(b"KEY " + ss(sender.auth_spki), pid, polled.sign)
    await alice.request(b"SEND F unsigned", pids.sender_id)
    # CLNT-9: a body over version 18's limit (ERR LARGE_MSG); CLNT-12: a 16-byte corrId
    await alice.request(b"SEND F " + bytes(16100), pids.sender_id, sender.sign)
    await alice.request(b"PING", corr_id=os.urandom(16))
    bob = await DeployedClient.connect(address)
    await bob.request(b"SEND F hi", ids.sender_id)
    await asyncio.sleep(0.2)  # CLNT-17: alice leaves the message unacknowledged
    await alice.close()
    await bob.close()
    # CLNT-8: below 7 a transmission names another session; CLNT-7: a block that is noise
    async with await SmpClient.connect(address, version=6) as old:
        tx = Transmission(b"", os.urandom(24), b"", b"PING")
        await old.send_raw([transmission_at(6, os.urandom(32), tx)])
        # CLNT-28: a PING in a block padded with zeros, not '#'
        ping = transmission_at(6, old.session_id, Transmission(b"", os.urandom(24), b"",
                                                                b"PING"))
        content = encode_batch([ping])
        await old.send_block(struct.pack(">H", len(content)) + content
                             + bytes(16384 - 2 - len(content)))
        await asyncio.sleep(0.1)
    async with await SmpClient.connect(address, version=18) as noisy:
        await noisy.send_block(os.urandom(16384))
        await asyncio.sleep(0.1)


# --- clients that never reach SMP -----------------------------------------------------------


def _tls_client(alpn: list[str] | None = None, *, verify: bool = False) -> ssl.SSLContext:
    """A context of Python's own ssl module, as an implementer's client might have: its
    defaults (every suite, SNI from the host name) with ALPN ``alpn``, checking the server's
    certificate the web's way when ``verify``."""
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    if alpn is not None:
        context.set_alpn_protocols(alpn)
    return context


def _client_hello(context: ssl.SSLContext, sni: str | None) -> bytes:
    """The ClientHello ``context`` opens a handshake with, naming ``sni``."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=sni)
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


async def _send_and_leave(address: str, data: bytes) -> None:
    """Open a TCP connection, send ``data`` and nothing more (the sending side is closed),
    read until the server closes, close: a client that gives up at once."""
    server = parse_server_address(address)
    reader, writer = await asyncio.open_connection(server.hosts[0], server.effective_port)
    writer.write(data)
    writer.write_eof()
    with contextlib.suppress(ConnectionError):
        await reader.read()
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def _after_tls(address: str, context: ssl.SSLContext, sni: str | None,
                     then: bytes | None) -> asyncio.StreamWriter | None:
    """Finish TLS and read the server hello, then send ``then`` (raw bytes) and close; with
    ``then`` None, stay (the connection is returned, to close once the check has ended)."""
    server = parse_server_address(address)
    reader, writer = await asyncio.open_connection(
        server.hosts[0], server.effective_port, ssl=context, server_hostname=sni)
    await reader.readexactly(16384)
    if then is None:
        return writer
    writer.write(then)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()
    with contextlib.suppress(ConnectionError, ssl.SSLError):
        await writer.wait_closed()
    return None


async def _rejects_the_certificate(address: str) -> None:
    server = parse_server_address(address)
    with pytest.raises(ssl.SSLCertVerificationError):
        await asyncio.open_connection(server.hosts[0], server.effective_port,
                                      ssl=_tls_client(verify=True),
                                      server_hostname="smp.example")


Unreached = Callable[[str], Any]
#: clients that never reach SMP: how each goes, the checks it fails, a phrase of the last
#: one's detail, and the connection the report lists (its ALPN and protocol)
UNREACHED: dict[str, tuple[Unreached, list[str], str, tuple[str, str]]] = {
    "sends SNI and gives up after its ClientHello": (
        lambda a: _send_and_leave(a, _client_hello(_tls_client(), "smp.example")),
        ["tls.sni", "tls.handshake"], "closed the connection in the TLS handshake",
        ("none", "none")),
    "sends SNI and rejects the certificate": (
        _rejects_the_certificate, ["tls.sni", "tls.handshake"],
        "checks the server by its address's key hash", ("none", "none")),
    "offers only an ALPN no server has": (
        lambda a: _send_and_leave(a, _client_hello(_tls_client(["x-unknown"]), None)),
        ["tls.handshake"], "must offer ALPN smp/1", ("none", "none")),
    "speaks no TLS": (
        lambda a: _send_and_leave(a, b"GET / HTTP/1.1\r\nHost: smp\r\n\r\n"),
        ["tls.handshake"], "must open the connection with a TLS 1.3 ClientHello",
        ("none", "none")),
    "sends SNI, finishes TLS and closes": (
        lambda a: _after_tls(a, _tls_client(), "smp.example", b""),
        ["tls.sni", "hello.sent"], "with no client hello", ("none", "deployed")),
    "offers no ALPN, finishes TLS and closes": (
        lambda a: _after_tls(a, _tls_client(), None, b""),
        ["hello.sent"], "offered 6-6 and no certificate chain", ("none", "deployed")),
    "sends a block that is no hello": (
        lambda a: _after_tls(a, _tls_client(["smp/1"]), None, b"\xff" * 16384),
        ["hello.layout"], "is not a hello padded to 16384 bytes", ("smp/1", "deployed")),
    "says nothing after TLS until the check ends": (
        lambda a: _after_tls(a, _tls_client(["smpref-seed/1"]), None, None),
        ["hello.sent"], "the check ended", ("smpref-seed/1", "seed")),
}


async def _unreached(folder: Path, client: Unreached) -> ClientReport:
    """Check one client that never reaches SMP: ``--idle`` must end the check (its
    connection counts though it never opened), unless the client stays."""
    check = ClientCheck(folder, ServeConfig(port=0, store_sync=False),
                        CheckConfig(cases=[], **FAST))
    address = await check.start()
    stays = await client(address)
    if stays is None:
        await asyncio.wait_for(check.wait(), 20)
    else:
        while not check.judge.connections:
            await asyncio.sleep(0.02)
    report = await check.finish()
    if stays is not None:
        stays.close()
    return report


@req("CLNT-1", "CLNT-2", "CLNT-4", "CLNT-29", "TRANS-14", "TRANS-17")
def test_a_client_that_never_reaches_smp_is_a_recorded_connection_and_a_fault(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each way of never reaching SMP: the connection is in the report with what was
    negotiated (never a guessed protocol), the checks it breaks fail with what to change, and
    --idle ends the check. A client that says nothing after TLS is judged when the check
    ends (here at once: no patience)."""
    monkeypatch.setattr(judge_module, "HELLO_PATIENCE", 0.0)

    async def main() -> list[ClientReport]:
        return await asyncio.gather(*[
            _unreached(tmp_path / str(i), client)
            for i, (client, *_) in enumerate(UNREACHED.values())])

    for name, report in zip(UNREACHED, asyncio.run(main()), strict=True):
        _, faults, phrase, (alpn, protocol) = UNREACHED[name]
        assert report.failed and report.faults() == faults, (name, report.faults())
        assert phrase in detail(report, faults[-1]), (name, detail(report, faults[-1]))
        if "tls.sni" in faults:
            assert "sent SNI 'smp.example'" in detail(report, "tls.sni"), name
        [connection] = report.connections
        assert (connection["alpn"], connection["protocol"]) == (alpn, protocol), name
        assert connection["version"] is None and report.never_reached() == 1, name
        assert connection["sni"] == ("smp.example" if "SNI" in name else None), name


@req("CLNT-29", "TRANS-14", "TRANS-17")
def test_a_failed_tls_handshake_names_its_cause_and_the_offer(tmp_path: Path) -> None:
    client, *_ = UNREACHED["offers only an ALPN no server has"]
    report = asyncio.run(_unreached(tmp_path, client))
    text = detail(report, "tls.handshake")
    assert "no_application_protocol" in text and "no shared ALPN token" in text, text
    assert "offered_alpn=x-unknown" in text, text


@req("CLNT-29")
def test_a_check_whose_time_ran_out_with_no_client_fails(tmp_path: Path) -> None:
    """At --timeout with nobody connected the client failed to come; a check its operator
    stopped (a signal) is not the client's doing."""
    async def main(timeout: float | None, folder: Path) -> ClientReport:
        check = ClientCheck(folder, ServeConfig(port=0, store_sync=False),
                            CheckConfig(cases=[], timeout=timeout))
        await check.start()
        if timeout is None:
            check.stop()
        await asyncio.wait_for(check.wait(), 20)
        return await check.finish()

    report = asyncio.run(main(0.1, tmp_path / "timed-out"))
    assert report.faults() == ["tls.handshake"] and report.connections == []
    assert "no client connected" in detail(report, "tls.handshake")
    assert asyncio.run(main(None, tmp_path / "stopped")).faults() == []


@req("CLNT-2", "CLNT-29")
def test_the_command_fails_a_client_that_sends_sni_and_closes_at_once(tmp_path: Path) -> None:
    """The JavaScript implementer's client, in Python's ssl: a ClientHello with SNI, then
    nothing. The check names tls.sni, logs the handshake, ends --idle seconds later (not at
    --timeout: ``communicate`` would time out first) and exits 1."""
    json_path = tmp_path / "r.json"
    process = subprocess.Popen(
        [SMPREF, "client-check", "--store", str(tmp_path / "srv"), "--port", "0", "--idle",
         "0.5", "--timeout", "600", "--case", "none", "--json", str(json_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    try:
        address = process.stdout.readline().strip()
        asyncio.run(_send_and_leave(address, _client_hello(_tls_client(), "smp.example")))
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 1, err
    row = next(line for line in out.splitlines() if "tls.sni" in line)
    assert "fail" in row and "CLNT-2" in row, row
    assert "tls_refused" in err and "1 never reached SMP" in out
    data = json.loads(json_path.read_text())
    sni = next(c for c in data["checks"] if c["id"] == "tls.sni")
    assert sni["verdict"] == "fail" and "smp.example" in sni["failures"][0]["detail"]
    assert [(c["sni"], c["protocol"]) for c in data["connections"]] == [("smp.example", "none")]


@req("CLNT-1", "CLNT-3", "CLNT-4", "CLNT-6", "CLNT-7", "CLNT-8", "CLNT-9", "CLNT-10",
     "CLNT-11", "CLNT-12", "CLNT-13", "CLNT-14", "CLNT-15", "CLNT-16", "CLNT-17", "CLNT-18",
     "CLNT-28")
def test_each_check_names_what_the_client_got_wrong(tmp_path: Path) -> None:
    async def main() -> ClientReport:
        check = ClientCheck(tmp_path, ServeConfig(port=0), CheckConfig(cases=[], **FAST))
        await _wrong_session(await check.start())
        await asyncio.sleep(0.2)
        return await check.finish()

    report = asyncio.run(main())
    got = verdicts(report)
    expected = {
        "hello.version": ("fail", "picked version 19"),
        "hello.layout": ("fail", "does not parse"),
        "hello.session-key": ("non-strict", "carries no X25519 key"),
        "block.layout": ("fail", "does not open"),
        "block.padding": ("non-strict", "padding bytes are not '#'"),
        "tx.layout": ("fail", "names its own session"),
        "tx.command": ("fail", "FOO"),
        "tx.credentials": ("fail", "SUB"),
        "tx.entity": ("fail", "which is no queue's recipient id here"),
        "tx.authorization": ("fail", "carries no authorization, but the queue has its sender"),
        "tx.size": ("fail", "LARGE_MSG"),
        "tx.corr-id": ("fail", "of 16 bytes"),
        "conv.ack": ("fail", "has no message in flight"),
        "conv.one-at-a-time": ("non-strict", "was pending"),
        "conv.needless-sub": ("non-strict", "subscribed to already"),
        "conv.unacknowledged": ("non-strict", "not acknowledged when the connection ended"),
        "conv.unused-queue": ("non-strict", "never used"),
    }
    for name, (verdict, phrase) in expected.items():
        assert got[name] == verdict, (name, got[name], detail(report, name))
        assert phrase in detail(report, name), (name, detail(report, name))
    # what the session did right is still passed, and nothing else is blamed
    assert {k for k, v in got.items() if v in ("fail", "non-strict")} == set(expected)
    assert got["tls.sni"] == got["hello.key-hash"] == "pass"
    # the JUnit report has each: a fault as a failure, advice as a failure of type non-strict
    suite = ET.fromstring(junit_xml(report))
    kinds = {case.get("name"): case.find("failure").get("type")  # type: ignore[union-attr]
             for case in suite.iter("testcase") if case.find("failure") is not None}
    assert kinds == {name: verdict for name, (verdict, _) in expected.items()}
    never = report.never_used()
    assert "SKEY" in never and "LSET" in never and "SEND" not in never


@req("CLNT-17")
def test_a_message_of_a_queue_the_client_deleted_is_not_held_against_it(tmp_path: Path) -> None:
    """Two queues, each with a message delivered and never acknowledged; the client deletes
    one and closes. The message of the one it kept is advice (it is delivered again); the
    deleted one's went with its queue, and is not named."""
    async def main() -> tuple[ClientReport, bytes, bytes]:
        check = ClientCheck(tmp_path, ServeConfig(port=0, store_sync=False),
                            CheckConfig(cases=[], **FAST))
        address = await check.start()
        alice = await DeployedClient.connect(address)
        kept, gone = Keys(), Keys()
        kept_ids = parse_ids((await alice.request(new_command(kept), key=kept.sign)).body)
        gone_ids = parse_ids((await alice.request(new_command(gone), key=gone.sign)).body)
        bob = await DeployedClient.connect(address)
        for ids in (kept_ids, gone_ids):
            await bob.request(b"SEND F hi", ids.sender_id)
            await asyncio.wait_for(alice.events.get(), 10)  # its MSG, left unacknowledged
        await alice.request(b"DEL", gone_ids.recipient_id, gone.sign)
        await alice.close()
        await bob.close()
        await asyncio.wait_for(check.wait(), 20)
        return await check.finish(), kept_ids.recipient_id, gone_ids.recipient_id

    report, kept, gone = asyncio.run(main())
    assert verdicts(report)["conv.unacknowledged"] == "non-strict"
    [finding] = next(c for c in report.checks if c.check.id == "conv.unacknowledged").failures
    assert kept.hex() in finding.detail and gone.hex() not in finding.detail, finding.detail
    assert report.faults() == []


# --- the command, the reports, the catalogue --------------------------------------------------


@req("CLNT-12", "CLNT-27")
@pytest.mark.parametrize(("fault", "case", "expected"), [
    ("reused-corr-id", "none", ["tx.corr-id"]), ("no-resubscribe", "9", ["case.9"]),
    (None, "none", [])])
def test_the_command_serves_grades_and_writes_both_reports(
        tmp_path: Path, fault: str | None, case: str, expected: list[str]) -> None:
    """The CLI end to end: the address on stdout, the client graded, the table, exit 1 for
    a fault in a check or in a case (0 for none), and both reports naming it."""
    json_path, junit_path = tmp_path / "r.json", tmp_path / "r.xml"
    process = subprocess.Popen(
        [SMPREF, "client-check", "--store", str(tmp_path / "srv"), "--port", "0", "--idle",
         "0.5", "--reconnect-wait", "1", "--case", case, "--json", str(json_path),
         "--junit", str(junit_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    address = process.stdout.readline().strip()
    assert address.startswith("smp://"), address

    async def client() -> None:
        stop = asyncio.Event()
        polite = DeployedPolite(address, 18, fault)
        task = asyncio.create_task(polite.run(stop))
        await asyncio.sleep(1.0)
        stop.set()
        await task

    asyncio.run(client())
    out, err = process.communicate(timeout=30)
    assert process.returncode == (1 if expected else 0), err
    assert "the client never sent:" in out
    data = json.loads(json_path.read_text())
    faults = [c["id"] for c in data["checks"] if c["verdict"] == "fail"] + \
        [f"case.{c['case']}" for c in data["cases"] if c["verdict"] == "fail"]
    assert faults == expected
    for name in expected:
        assert name.replace("case.", "case ") in out
    assert "SKEY" in data["neverUsed"] and data["commandsUsed"]["SEND"] >= 2
    suite = ET.parse(junit_path).getroot()
    assert suite.get("failures") == str(len(expected))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SMPREF, "client-check", *args], capture_output=True, text=True,
                          check=False, timeout=60)


def test_the_help_shows_the_timeout_default() -> None:
    """Without --timeout a check no client connects to waits: the help says so."""
    text = " ".join(_cli("--help").stdout.split())
    timeout = text[text.index("--timeout FLOAT"):text.index("--slow FLOAT")]
    assert "[default: (none, no limit); x>=0.1]" in timeout, timeout


@pytest.mark.parametrize(("args", "complaint"), [
    (["--case", "99"], "no case 99"), (["--case", "x"], "not a case number: 'x'")])
def test_a_bad_case_is_one_line_and_exit_2(args: list[str], complaint: str) -> None:
    done = _cli(*args)
    assert done.returncode == 2 and complaint in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_list_and_the_docs_page_name_every_check_and_case_with_defined_requirements(
        ) -> None:
    listed = _cli("--list").stdout.splitlines()
    assert len(listed) == len(CHECKS) + len(CASES)
    page = catalogue_page()
    defined = requirement_texts()
    for check in CHECKS:
        assert f"`{check.id}`" in page
        assert set(check.requirements) <= set(defined), check
    for case in CASES:
        assert f"`{case.name}`" in page
        assert set(case.requirements) <= set(defined), case
    cited = {r for c in CHECKS for r in c.requirements} | \
        {r for c in CASES for r in c.requirements}
    assert {f"CLNT-{n}" for n in range(1, 29)} <= cited



# --- a campaign is a client too --------------------------------------------------------------

#: the checks a campaign's programs break on purpose, and the operation that does it: an
#: unsigned SEND to a secured queue, an ACK of a wrong or of no message, a command to a queue
#: the program deleted; a program may leave a queue unused or a message it got unacknowledged
DELIBERATE = {"tx.authorization": "carries no authorization", "conv.ack": "ACK of",
              "tx.entity": "which is no queue's", "conv.unused-queue": "never used",
              "conv.unacknowledged": "not acknowledged when the connection ended"}


@req("CLNT-8", "CLNT-10", "CLNT-12")
def test_a_live_campaign_is_a_client_that_passes_every_check_it_does_not_break_on_purpose(
        tmp_path: Path) -> None:
    """The ``server`` campaign target against a client-check server: its programs are judged
    like any client's. Every check passes but those its operations break on purpose
    (:data:`DELIBERATE`), and each of those failures is the deliberate one."""
    import threading

    from smpref.campaign.live_targets import LiveTarget

    loop = asyncio.new_event_loop()
    check = ClientCheck(tmp_path, ServeConfig(port=0, store_sync=False),
                        CheckConfig(cases=[]))
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(check.start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    target = LiveTarget("server", check.address)
    runs = [target.run(seed, 25) for seed in range(8)]
    report = asyncio.run_coroutine_threadsafe(check.finish(), loop).result(60)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    assert all(r.verdict == "pass" for r in runs), [r.message for r in runs]
    broken = {c.check.id for c in report.checks
              if c.verdict in (Verdict.FAIL, Verdict.NON_STRICT)}
    assert broken <= set(DELIBERATE), broken
    for result in report.checks:
        for finding in result.failures:
            assert DELIBERATE[result.check.id] in finding.detail, finding.detail
    got = verdicts(report)
    assert all(got[name] == "pass" for name in (
        "tls.sni", "hello.key-hash", "block.layout", "tx.layout", "tx.command",
        "tx.credentials", "tx.corr-id")), got
    assert report.commands["SEND"] and report.commands["GET"] and report.commands["ACK"]


# --- a watcher never hurts the server -------------------------------------------------------


class Exploding(Watcher):
    """A watcher whose every hook raises: the server must not notice."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("tls", "tls_refused", "hello", "block", "bad_block", "answered", "judge",
                    "pushed", "closed"):
            raise RuntimeError(f"the watcher's {name} broke")
        return super().__getattribute__(name)


def test_a_watcher_that_fails_costs_no_client_its_answers(tmp_path: Path) -> None:
    """Every hook raising: each is logged and ignored, and a client creates, sends and
    receives as without a watcher."""
    from smpref.serve.listener import SmpServer
    from smpref.wire.messages import PING

    async def main() -> None:
        server = SmpServer(tmp_path, ServeConfig(port=0, store_sync=False), watcher=Exploding())
        await server.start()
        try:
            alice = SmprefPolite(server.address, 18)
            stop = asyncio.Event()
            task = asyncio.create_task(alice.run(stop))
            await asyncio.sleep(0.5)
            stop.set()
            await task
            assert alice.sent >= 3 and alice.received == alice.sent and not alice.errors
            async with await SmpClient.connect(server.address) as client:
                assert (await client.request(PING())).tag == "PONG"
        finally:
            await server.stop()
        assert server.stop_failures == []

    asyncio.run(main())


def test_every_case_defines_what_its_parents_leave_open() -> None:
    """The shared parents of the cases that leave finish, acknowledged, put or act to each
    case cannot be made, and every case in the table can (a case that forgot one would fail
    here, not in the middle of a check)."""
    import inspect

    from smpref.clientcheck import server_cases
    from smpref.clientcheck.case_run import CaseRun

    assert all(not inspect.isabstract(cls) for cls in server_cases.CASE_TYPES.values())
    assert sorted(server_cases.CASE_TYPES) == list(range(1, 10))
    for parent in (CaseRun, server_cases.AcknowledgedMessage, server_cases.IdleQueueMessage,
                   server_cases.SubscriptionEnds):
        assert inspect.isabstract(parent), parent.__name__
