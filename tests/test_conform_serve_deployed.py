"""``smpref conform --version N`` against smpref's own server: its deployed profile passes
every core case at every version from 6 to 18, as the seed design does at 1000 (TRANS-11,
DEP-2, DEP-4, DEP-12)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from reqs import req
from servers import SMPREF, ServeProcess

from smpref.conform import runner


def check(report: runner.Report, version: int) -> None:
    assert report.version == version and report.extended is (version == 1000)
    failures = [(r.case.id, r.message) for r in report.results if r.status == "fail"]
    assert failures == []
    for result in report.results:
        if result.case.needs in ("core", "clock"):
            assert result.status == "pass", (result.case.id, result.message)
        elif version != 1000:
            assert result.status == "skip" and "seed extension" in result.message


@req("TRANS-11", "DEP-2", "DEP-4", "DEP-9", "DEP-12", "DEP-13")
def test_every_core_case_passes_at_every_deployed_version_and_every_case_at_the_seed() -> None:
    """Against one embedded server, which also runs the cases that move its clock: every
    version from 6 to 18 (13 included, DEP-13), then the seed design."""
    deployed = list(range(6, 19))
    reports = asyncio.run(runner.run_embedded(runner.select(), [*deployed, None]))
    at_seed = reports.pop()
    check(at_seed, 1000)
    assert at_seed.server_range == (1000, 1000)
    core = {r.case.id for r in at_seed.results if r.case.needs == "core"}
    assert len(core) >= 70
    for version, report in zip(deployed, reports, strict=True):
        check(report, version)
        assert report.server_range == (6, 18)
        assert {r.case.id for r in report.results if r.case.needs == "core"} == core
        assert report.counts()["pass"] >= 70
    # what a version cannot say is answered as deployed answers it, not skipped: below 9 a
    # queue has no mode, so the sender cannot secure it
    notes = {r.case.id: r.message for r in reports[0].results}
    assert "SKEY gets AUTH" in notes["life.skey"]
    assert "16088" in notes["limit.message-size"]


@req("TRANS-11", "MSG-2", "MSG-8")
def test_the_cli_forces_version_18_against_smpref_serve(tmp_path: Path) -> None:
    """Against ``smpref serve`` with deployed's timing: END and DELD for a queue's previous
    subscriber gathered and sent every 15 s (Server.hs:413-436, Server/Main.hs:575), which the
    cases that wait for them must allow for."""
    with ServeProcess(tmp_path / "srv", "--end-interval", "15") as server:
        done = subprocess.run([SMPREF, "conform", server.address, "--version", "18", "--quiet",
                               "--json", str(tmp_path / "r.json")], capture_output=True,
                              text=True, timeout=600, check=False)
        connected = [e for e in server.events() if e.get("event") == "connected"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["negotiatedVersion"] == 18 and report["seedExtensions"] is False
    statuses = {r["status"] for r in report["results"]}
    assert "fail" not in statuses and "pass" in statuses
    assert connected and {e["protocol"] for e in connected} == {"deployed"}
    assert "negotiated 18 (deployed core only)" in done.stdout
    passed = {r["id"] for r in report["results"] if r["status"] == "pass"}
    assert {"life.sub-end", "life.del-end"} <= passed


def test_a_version_smpref_does_not_speak_is_one_line_and_exit_2() -> None:
    for version in ("5", "19"):
        done = subprocess.run([SMPREF, "conform", "--version", version], capture_output=True,
                              text=True, timeout=60, check=False)
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "--version" in lines[0] and version in lines[0], done.stderr
