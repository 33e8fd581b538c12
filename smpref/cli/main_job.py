"""The main job (``make run`` / ``smpref run``): serve, conform, campaign, verify, summarise.

It starts the embedded server on loopback over a temporary journal store, runs every
conformance case against it over TLS twice, once in the seed design and once in deployed SMP
at version 18 (one server, one port: ALPN picks the protocol, TRANS-11), writes the JSON and
JUnit reports, runs a short
randomized campaign on Spark (``local[*]``) against embedded servers, verifies the signed
test vectors along their independent path, and prints a short summary. It exits 1 if a case
or a campaign run fails, or the vectors do not verify.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.panel import Panel

from smpref.conform import runner
from smpref.conform.case_verdicts import Status
from smpref.errors import VectorError
from smpref.vectors.corpus import PUBLISHED_PUBLIC_KEY, verify

#: the deployed version the second conformance run forces (ALPN ``smp/1``)
DEPLOYED_VERSION = 18
#: the main job's campaign: small enough to finish in well under a minute on two cores
CAMPAIGN_RUNS, CAMPAIGN_STEPS = 200, 30


def run_main_job(reports: Path, vectors: Path, console: Console | None = None) -> int:
    """Run the job; return the exit status."""
    from smpref.campaign.spark_job import CampaignConfig, run_campaign

    console = console or Console(highlight=False)
    reports.mkdir(parents=True, exist_ok=True)
    cases = runner.select()
    console.print(f"conformance: {len(cases)} cases against the embedded server, in the seed "
                  f"design and in deployed SMP at {DEPLOYED_VERSION} ...")
    report, deployed = asyncio.run(runner.run_embedded(cases, [None, DEPLOYED_VERSION]))
    json_path, junit_path = reports / "conform.json", reports / "conform.junit.xml"
    deployed_json = reports / f"conform-{DEPLOYED_VERSION}.json"
    runner.write_json(report, json_path)
    runner.write_junit(report, junit_path)
    runner.write_json(deployed, deployed_json)
    console.print(f"campaign: {CAMPAIGN_RUNS} random programs against embedded servers on "
                  "Spark (local[*]) ...")
    campaign = run_campaign(CampaignConfig(
        runs=CAMPAIGN_RUNS, first_seed=0, target="embedded", steps=CAMPAIGN_STEPS,
        master="local[*]", out=reports / "campaign"))
    try:
        files = verify(vectors, PUBLISHED_PUBLIC_KEY)
        vector_line = (f"{sum(f.tests for f in files)} vectors in {len(files)} files: signature, "
                       f"hashes, schemas and independent recomputation all verify")
        vectors_ok = True
    except VectorError as exc:
        vector_line, vectors_ok = f"FAILED: {exc}", False
    failed = [r for r in report.results + deployed.results if r.status is Status.FAIL]
    lines = [
        f"server      {report.address}",
        f"protocols   seed design {_span(report.server_range)} and deployed SMP "
        f"{_span(deployed.server_range)} on one port, by ALPN",
        "store       a journal in a temporary folder; TLS 1.3",
        _conformance_line("conformance", report),
        _conformance_line("", deployed),
        f"campaign    {campaign['runs']} programs, {campaign['steps']} steps against embedded "
        f"servers, the model as oracle: {campaign['failedRuns']} failed, "
        f"{len(campaign['distinctFailures'])} distinct, in {campaign['seconds']} s",
        f"reports     {json_path}  {junit_path}  {deployed_json}  {reports / 'campaign'}",
        f"vectors     {vectors}: {vector_line}",
    ]
    lines += [f"FAIL        {r.case.id}: {r.message}" for r in failed]
    lines += [f"FAIL        campaign {f['signature']}: {f['message']} ({f['replay']})"
              for f in campaign["distinctFailures"]]
    ok = not failed and vectors_ok and not campaign["failedRuns"]
    console.print(Panel.fit("\n".join(lines), title="smpref: serve, conform, campaign, verify",
                            border_style="green" if ok else "red"))
    return 0 if ok else 1


def _conformance_line(label: str, report: runner.Report) -> str:
    """One run's counts; a skip at a deployed version is a seed-only case (``needs seed``)."""
    counts = report.counts()
    skips = f"{counts['skip']} skip" + (" (seed only)" if counts["skip"] and
                                         not report.extended else "")
    return (f"{label:<11} {len(report.results)} cases at {report.version}: {counts['pass']} pass, "
            f"{counts['fail']} fail, {skips}, {counts['info']} info "
            f"in {report.seconds:.1f} s")


def _span(versions: tuple[int, int]) -> str:
    low, high = versions
    return str(low) if low == high else f"{low}-{high}"
