"""The client checker's report: one row per check and per case, each with its requirement
IDs, its verdict and the exchange that decided it, and what the client never did. Written as
JSON, JUnit XML and a terminal table, as the conformance runner's reports are.

Verdicts (:class:`~smpref.clientcheck.verdicts.Verdict`): ``pass``; ``fail`` (the client broke
a requirement the spec states with MUST); ``non-strict`` (it did not do what the spec advises
with SHOULD); ``not exercised`` (the client never gave the check anything to judge, or the
case's moment never came). The reports print each verdict's value.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from smpref import __version__
from smpref.clientcheck.case_run import CaseRun
from smpref.clientcheck.catalogue import CHECKS, COMMANDS, Check
from smpref.clientcheck.judge import Judge
from smpref.clientcheck.judge_state import Finding
from smpref.clientcheck.verdicts import Verdict
from smpref.spec.requirements import requirement_text

#: failures quoted per check; the count says how many there were
QUOTED = 5


@dataclass
class CheckResult:
    check: Check
    passed: int = 0
    failures: list[Finding] = field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        if self.failures:
            return Verdict.FAIL if self.check.strict else Verdict.NON_STRICT
        return Verdict.PASS if self.passed else Verdict.NOT_EXERCISED

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "id": self.check.id, "title": self.check.title, "verdict": self.verdict.value,
            "requirements": list(self.check.requirements), "strict": self.check.strict,
            "passed": self.passed, "failed": len(self.failures),
            "failures": [{"conn": f.conn, "detail": f.detail, "exchange": f.exchange}
                         for f in self.failures[:QUOTED]],
        }
        if self.failures:
            entry["requirementTexts"] = {r: requirement_text(r)
                                         for r in self.check.requirements}
        return entry


@dataclass
class ClientReport:
    address: str
    seconds: float
    connections: list[dict[str, Any]]
    checks: list[CheckResult]
    cases: list[CaseRun]
    commands: Counter[str]

    def counts(self) -> dict[str, int]:
        """How many checks and cases got each verdict, by the verdict's value."""
        verdicts = [c.verdict for c in self.checks] + [r.verdict for r in self.cases]
        return {v.value: verdicts.count(v) for v in Verdict}

    @property
    def failed(self) -> bool:
        return any(c.verdict is Verdict.FAIL for c in self.checks) or \
            any(r.verdict is Verdict.FAIL for r in self.cases)

    def never_reached(self) -> int:
        """How many connections never got to SMP: their TLS failed or no hello was
        accepted."""
        return sum(1 for c in self.connections if c["version"] is None)

    def never_used(self) -> list[str]:
        """The commands the client never sent: what its authors have not tested here."""
        return [tag for tag in COMMANDS if not self.commands.get(tag)]

    def faults(self) -> list[str]:
        """The IDs of every check and case that failed."""
        return [c.check.id for c in self.checks if c.verdict is Verdict.FAIL] + \
            [f"case.{r.case.number}" for r in self.cases if r.verdict is Verdict.FAIL]

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": f"smpref {__version__}", "server": self.address,
            "seconds": round(self.seconds, 3), "counts": self.counts(),
            "connections": self.connections,
            "checks": [c.to_json() for c in self.checks],
            "cases": [_case_json(r) for r in self.cases],
            "commandsUsed": dict(sorted(self.commands.items())),
            "neverUsed": self.never_used(),
        }

    def rows(self) -> list[tuple[str, str, str, str]]:
        """The terminal table: id, verdict, requirement IDs, the first failure or note."""
        out = []
        for c in self.checks:
            note = c.failures[0].detail if c.failures else \
                (f"{c.passed} judged" if c.passed else "")
            if len(c.failures) > 1:
                note += f" (and {len(c.failures) - 1} more)"
            out.append((c.check.id, c.verdict.value, " ".join(c.check.requirements), note))
        for r in self.cases:
            out.append((f"case {r.case.number} {r.case.name}", r.verdict.value,
                        " ".join(r.case.requirements), r.detail))
        return out


def _case_json(run: CaseRun) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "case": run.case.number, "name": run.case.name, "title": run.case.title,
        "when": run.case.when, "expect": run.case.expect, "verdict": run.verdict.value,
        "requirements": list(run.case.requirements), "detail": run.detail,
        "exchange": run.exchange,
    }
    if run.verdict is Verdict.FAIL:
        entry["requirementTexts"] = {r: requirement_text(r) for r in run.case.requirements}
    return entry


def build(judge: Judge, cases: list[CaseRun], address: str, seconds: float) -> ClientReport:
    """The report of a finished check (:meth:`Judge.finish` was called)."""
    results = {check.id: CheckResult(check, judge.passes[check.id]) for check in CHECKS}
    for finding in judge.findings:
        results[finding.check].failures.append(finding)
    connections = [c.to_json() for c in judge.recorded()]
    return ClientReport(address, seconds, connections, list(results.values()), cases,
                        Counter(judge.commands))


def junit_xml(report: ClientReport) -> bytes:
    """JUnit XML: one test case per check and per case; ``fail`` is a failure, ``non-strict``
    a failure of type non-strict, ``not exercised`` a skip."""
    rows = [(c.check.id, c.verdict, c.check.requirements,
             "\n".join(f.detail for f in c.failures[:QUOTED])) for c in report.checks]
    rows += [(f"case.{r.case.number}.{r.case.name}", r.verdict, r.case.requirements,
              r.detail) for r in report.cases]
    counts = report.counts()
    suite = ET.Element("testsuite", name="smpref client-check", tests=str(len(rows)),
                       failures=str(counts["fail"] + counts["non-strict"]),
                       skipped=str(counts["not exercised"]), time=f"{report.seconds:.3f}")
    for name, verdict, requirements, detail in rows:
        case = ET.SubElement(suite, "testcase", classname="client", name=name)
        props = ET.SubElement(case, "properties")
        ET.SubElement(props, "property", name="requirements", value=" ".join(requirements))
        if verdict in (Verdict.FAIL, Verdict.NON_STRICT):
            ET.SubElement(case, "failure", type=verdict.value,
                          message=detail[:500]).text = detail
        elif verdict is Verdict.NOT_EXERCISED:
            ET.SubElement(case, "skipped", message=detail or "not exercised")
    return bytes(ET.tostring(suite, encoding="utf-8", xml_declaration=True))
