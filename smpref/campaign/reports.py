"""What a campaign leaves for people: ``summary.json`` and ``report.md``, one section per
distinct failure with its minimal program and the command that replays it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from smpref.campaign.spark_job import CampaignConfig


def replay_command(target: str, seed: int, steps: int, address: str | None) -> str:
    """The exact command that reproduces one run in one process."""
    where = f" --address {address}" if address else ""
    return f"smpref campaign replay {seed} --target {target} --steps {steps}{where}"


def write_reports(config: CampaignConfig, summary: dict[str, Any]) -> None:
    """Add each failure's replay command to the summary and write both files."""
    for failure in summary["distinctFailures"]:
        failure["replay"] = replay_command(config.target, failure["seed"], config.steps,
                                           config.address)
    (config.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    (config.out / "report.md").write_text(markdown(summary))


def markdown(summary: dict[str, Any]) -> str:
    lines = [f"# Campaign against `{summary['target']}`", "",
             f"{summary['runs']} runs from seed {summary['firstSeed']} on `{summary['master']}` "
             f"in {summary['seconds']} s: {summary['steps']} steps, "
             f"{summary['failedRuns']} failed runs ({summary['newFailedRuns']} new, "
             f"{summary['knownFailedRuns']} known), {summary['newFailures']} new and "
             f"{summary['knownFailures']} known distinct failures.", ""]
    new = [f for f in summary["distinctFailures"] if not f["known"]]
    known = [f for f in summary["distinctFailures"] if f["known"]]
    lines += ["## New failures", "", "" if new else "none", ""]
    for failure in new:
        lines += [f"### {failure['signature']}", "",
                  f"{failure['runs']} runs; smallest seed {failure['seed']}; "
                  f"{failure['program_steps']} steps after shrinking.", "",
                  f"    {failure['message']}", "",
                  "Minimal program:", "", "```text", failure["program"] or "(empty)", "```", "",
                  f"Requirements: {', '.join(failure['failure_requirements']) or '-'}", "",
                  "Replay:", "", "```sh", failure["replay"], "```", ""]
    lines += ["## Known failures", "",
              "Signatures in the known-failures files: counted, not shrunk, not failing the "
              "campaign." if known else "none", ""]
    for failure in known:
        reference = f" ({failure['reference']})" if failure.get("reference") else ""
        lines += [f"- `{failure['signature']}`: {failure.get('title') or '?'}{reference}; "
                  f"{failure['runs']} runs, smallest seed {failure['seed']}: "
                  f"`{failure['replay']}`"]
    lines += [""]
    unreached = summary["unreached"]
    lines += ["## Requirements no run reached", "",
              ", ".join(unreached) if unreached else "none", ""]
    return "\n".join(lines)
