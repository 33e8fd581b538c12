"""The main job (``make run`` / ``smpref run``): serve, conform, verify, summarise.

It starts the embedded server on loopback over a temporary journal store, runs every
conformance case against it over TLS, writes the JSON and JUnit reports, verifies the signed
test vectors along their independent path, and prints a short summary. It exits 1 if a case
fails or the vectors do not verify.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.panel import Panel

from smpref.conform import runner
from smpref.errors import VectorError
from smpref.vectors.corpus import PUBLISHED_PUBLIC_KEY, verify


def run_main_job(reports: Path, vectors: Path, console: Console | None = None) -> int:
    """Run the job; return the exit status."""
    console = console or Console(highlight=False)
    reports.mkdir(parents=True, exist_ok=True)
    cases = runner.select()
    console.print(f"conformance: {len(cases)} cases against the embedded server ...")
    report = asyncio.run(runner.run(None, cases))
    json_path, junit_path = reports / "conform.json", reports / "conform.junit.xml"
    runner.write_json(report, json_path)
    runner.write_junit(report, junit_path)
    counts = report.counts()
    try:
        files = verify(vectors, PUBLISHED_PUBLIC_KEY)
        vector_line = (f"{sum(f.tests for f in files)} vectors in {len(files)} files: signature, "
                       f"hashes, schemas and independent recomputation all verify")
        vectors_ok = True
    except VectorError as exc:
        vector_line, vectors_ok = f"FAILED: {exc}", False
    failed = [r for r in report.results if r.status == "fail"]
    lines = [
        f"server      {report.address}",
        f"            versions {report.server_range[0]}-{report.server_range[1]}, TLS 1.3, "
        f"journal store in a temporary folder",
        f"conformance {len(report.results)} cases: {counts['pass']} pass, {counts['fail']} fail, "
        f"{counts['skip']} skip, {counts['info']} info in {report.seconds:.1f} s",
        f"reports     {json_path}  {junit_path}",
        f"vectors     {vectors}: {vector_line}",
    ]
    lines += [f"FAIL        {r.case.id}: {r.message}" for r in failed]
    ok = not failed and vectors_ok
    console.print(Panel.fit("\n".join(lines), title="smpref: serve, conform, verify",
                            border_style="green" if ok else "red"))
    return 0 if ok else 1
