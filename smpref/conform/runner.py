"""Run conformance cases against a server and report: terminal table, JSON, JUnit XML.

Verdicts: ``pass``; ``fail`` (the server broke a requirement: the report quotes it); ``skip``
(the server does not support what the case needs: seed extensions at a deployed version, or
clock control on a server that is not embedded); ``info`` (an observation). What a server
supports is learned from its handshake (TRANS-11), never configured.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import random
import secrets
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smpref import __version__
from smpref.client.connection import SmpClient
from smpref.conform.case_verdicts import CaseVerdict, Status
from smpref.conform.cases import CASES, Case
from smpref.conform.context import Context
from smpref.errors import ClientError, ConnectError
from smpref.model.config import ServerConfig
from smpref.spec.requirements import requirement_text
from smpref.text.addresses import parse_server_address

if TYPE_CHECKING:
    from smpref.serve.listener import SmpServer

@dataclass
class Result:
    case: Case
    status: Status
    message: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "id": self.case.id, "title": self.case.title, "status": self.status.value,
            "needs": self.case.needs, "requirements": list(self.case.requirements),
            "message": self.message, "seconds": round(self.seconds, 4),
        }
        if self.status is Status.FAIL:
            entry["requirementTexts"] = {r: requirement_text(r) for r in self.case.requirements}
        return entry


@dataclass
class Report:
    address: str
    embedded: bool
    server_range: tuple[int, int]
    version: int
    extended: bool
    results: list[Result] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        """How many cases came to each status, by its name (every status, 0 included)."""
        return {s.value: sum(1 for r in self.results if r.status is s) for s in Status}

    @property
    def failed(self) -> bool:
        return any(r.status is Status.FAIL for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": f"smpref {__version__}", "address": self.address, "embedded": self.embedded,
            "serverVersions": list(self.server_range), "negotiatedVersion": self.version,
            "seedExtensions": self.extended, "seconds": round(self.seconds, 3),
            "counts": self.counts(), "results": [r.to_json() for r in self.results],
        }


def select(include: list[str] | None = None, exclude: list[str] | None = None) -> list[Case]:
    """The cases whose ID matches any ``include`` glob (all if none) and no ``exclude`` glob."""
    chosen = [c for c in CASES if not include or any(fnmatch.fnmatchcase(c.id, g)
                                                      for g in include)]
    return [c for c in chosen if not any(fnmatch.fnmatchcase(c.id, g) for g in exclude or [])]


def rounds(cases: list[Case], repeat: int = 1, shuffle: int | None = None) -> list[Case]:
    """``cases`` ``repeat`` times in a row; with ``shuffle``, each round in its own order drawn
    from that seed. A case learns what it needs from the server and cleans up after itself, so
    it passes whatever ran before it on the same server."""
    order = random.Random(shuffle)
    out: list[Case] = []
    for _ in range(repeat):
        round_ = list(cases)
        if shuffle is not None:
            order.shuffle(round_)
        out += round_
    return out


async def probe(address: str, timeout: float, version: int | None = None) -> SmpClient:
    try:
        return await SmpClient.connect(address, timeout=timeout, version=version)
    except ClientError as exc:
        raise ConnectError(str(exc)) from None


async def run_case(case: Case, ctx: Context, case_timeout: float) -> Result:
    started = time.perf_counter()
    status, message = Status.PASS, ""
    try:
        if case.needs == "seed" and not ctx.extended:
            ctx.require_extensions("this case")
        if case.needs == "deployed" and ctx.extended:
            ctx.require_deployed("this case")
        if case.needs == "clock":
            ctx.require_clock()
        async with asyncio.timeout(case_timeout):
            note = await case.run(ctx)
        message = note or ""
    except CaseVerdict as verdict:
        status, message = verdict.status, verdict.message
    except ClientError as exc:
        status, message = Status.FAIL, f"connection: {exc}"
    except TimeoutError:
        status, message = Status.FAIL, f"the case did not finish within {case_timeout} s"
    except Exception as exc:
        status, message = Status.FAIL, f"{type(exc).__name__}: {exc}"
    finally:
        await ctx.end_case()
    return Result(case, status, message, time.perf_counter() - started)


async def run(address: str | None, cases: list[Case], *, timeout: float = 10.0,
              case_timeout: float = 120.0,
              progress: Callable[[Result, int, int], None] | None = None,
              version: int | None = None) -> Report:
    """Run ``cases`` against ``address``, or against an embedded server when it is None.

    ``version`` forces the version every connection negotiates: a deployed one (ALPN
    ``smp/1`` only) or the seed version; None takes what the server offers, the seed design
    first (TRANS-11).

    Raises:
        ConnectError: the server cannot be reached or refuses the handshake.
    """
    if address is not None:
        started = time.perf_counter()
        report = await run_against(address, None, cases, timeout=timeout,
                                   case_timeout=case_timeout, progress=progress,
                                   version=version)
        report.seconds = time.perf_counter() - started
        return report
    (report,) = await run_embedded(cases, [version], timeout=timeout,
                                   case_timeout=case_timeout, progress=progress)
    return report


async def run_embedded(cases: list[Case], versions: list[int | None], *,
                       timeout: float = 10.0, case_timeout: float = 120.0,
                       progress: Callable[[Result, int, int], None] | None = None,
                       stop_on_fail: bool = False, events_interval: float = 0.0,
                       shuffle: int | None = None) -> list[Report]:
    """Run ``cases`` once per entry of ``versions`` against one embedded server.

    One server and one port answer every run, so a run at a deployed version and a run at
    the seed version check the same listener choosing its protocol by ALPN (TRANS-11). Each
    report times its own run. An entry of None takes what the server offers. With
    ``stop_on_fail``, a run ends at its first failing case (a judge that needs one failure).
    ``events_interval`` is how long the server gathers END and DELD for other connections
    before it sends them (deployed: 15 s; 0, the default: at once). With ``shuffle``, each
    run takes the cases in its own order, drawn from that seed: every case then runs after
    a different set of cases at each version, and after its own runs at the versions before.
    """
    from smpref.serve.listener import ServeConfig, SmpServer

    reports: list[Report] = []
    order = random.Random(shuffle)
    with tempfile.TemporaryDirectory(prefix="smpref-conform-") as folder:
        # A password, so that the server-password case runs too (CMD-10, QUEUE-10); the
        # address carries it, as for any server that requires one.
        password = secrets.token_urlsafe(12).encode()
        server = SmpServer(folder, ServeConfig.embedded(
            model=ServerConfig(basic_auth=password), pending_events_interval=events_interval))
        await server.start()
        try:
            for version in versions:
                started = time.perf_counter()
                run = rounds(cases, 1, order.randrange(1 << 32)) if shuffle is not None \
                    else cases
                report = await run_against(server.address, server, run,
                                           timeout=timeout, case_timeout=case_timeout,
                                           progress=progress, version=version,
                                           stop_on_fail=stop_on_fail)
                report.seconds = time.perf_counter() - started
                reports.append(report)
        finally:
            await server.stop()
    return reports


async def run_against(address: str, embedded: SmpServer | None, cases: list[Case], *,
                      timeout: float = 10.0, case_timeout: float = 120.0,
                      progress: Callable[[Result, int, int], None] | None = None,
                      version: int | None = None, stop_on_fail: bool = False) -> Report:
    """Probe the server's versions, then run the cases one by one; ``embedded`` is the server
    at ``address`` when it runs in this process (its clock can be moved, and it routes every
    event at once)."""
    client = await probe(address, timeout, version)
    report = Report(address, embedded is not None, client.connected.server_range,
                    client.negotiated.version, client.extended)
    await client.close()
    ctx = Context(address, report.extended, report.version, embedded, timeout,
                  password=_password(address), forced=version)
    for index, case in enumerate(cases):
        result = await run_case(case, ctx, case_timeout)
        report.results.append(result)
        if progress:
            progress(result, index + 1, len(cases))
        if stop_on_fail and result.status is Status.FAIL:
            break
    return report


def _password(address: str) -> bytes | None:
    password = parse_server_address(address).basic_auth
    return None if password is None else password.encode()


def write_json(report: Report, path: Path) -> None:
    path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")


def junit_xml(report: Report) -> bytes:
    """The report as JUnit XML: one testsuite, one testcase per case."""
    counts = report.counts()
    suite = ET.Element("testsuite", {
        "name": "smpref.conform", "tests": str(len(report.results)),
        "failures": str(counts["fail"]), "errors": "0", "skipped": str(counts["skip"]),
        "time": f"{report.seconds:.3f}", "hostname": report.address,
    })
    properties = ET.SubElement(suite, "properties")
    for name, value in (("address", report.address), ("negotiatedVersion", str(report.version)),
                        ("seedExtensions", str(report.extended).lower())):
        ET.SubElement(properties, "property", {"name": name, "value": value})
    for result in report.results:
        group = result.case.id.split(".", 1)[0]
        testcase = ET.SubElement(suite, "testcase", {
            "classname": f"conform.{group}", "name": result.case.id,
            "time": f"{result.seconds:.3f}"})
        if result.status is Status.FAIL:
            texts = "\n".join(f"{r}: {requirement_text(r)}" for r in result.case.requirements)
            failure = ET.SubElement(testcase, "failure", {"message": result.message})
            failure.text = texts
        elif result.status is Status.SKIP:
            ET.SubElement(testcase, "skipped", {"message": result.message})
        elif result.status is Status.INFO:
            ET.SubElement(testcase, "system-out").text = f"info: {result.message}"
    suites = ET.Element("testsuites")
    suites.append(suite)
    xml: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return xml


def write_junit(report: Report, path: Path) -> None:
    path.write_bytes(junit_xml(report))
