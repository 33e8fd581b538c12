"""``smpref conform --version 18`` against smpref's own server: its deployed profile passes
every core case, as the seed design does at 1000 (TRANS-11, DEP-2, DEP-4)."""

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


@req("TRANS-11", "DEP-2", "DEP-4", "DEP-9")
def test_every_core_case_passes_at_18_and_every_case_at_the_seed_version() -> None:
    """Against the embedded server, which also runs the cases that move its clock."""
    at_18 = asyncio.run(runner.run(None, runner.select(), version=18))
    check(at_18, 18)
    assert at_18.server_range == (17, 18)
    at_seed = asyncio.run(runner.run(None, runner.select()))
    check(at_seed, 1000)
    assert at_seed.server_range == (1000, 1000)
    core = {r.case.id for r in at_18.results if r.case.needs == "core"}
    assert len(core) >= 70 and core == {r.case.id for r in at_seed.results
                                        if r.case.needs == "core"}
    assert at_18.counts()["pass"] >= 70


@req("TRANS-11")
def test_the_cli_forces_version_18_against_smpref_serve(tmp_path: Path) -> None:
    with ServeProcess(tmp_path / "srv") as server:
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


def test_a_version_smpref_does_not_speak_is_one_line_and_exit_2() -> None:
    done = subprocess.run([SMPREF, "conform", "--version", "16"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--version" in lines[0] and "16" in lines[0], done.stderr
