"""`make mutate-citations`: does every test that cites a requirement fail when that requirement
breaks? (issue 44: the coverage matrix counts tests that kill, not tests that cite.)

A test cites a requirement with ``req("ID", ...)`` (tests/reqs.py). For each *sampled*
requirement, the run plants its deviations one at a time in a copy of the installed package
(as ``make mutate-fidelity`` does, mutation/fidelity.py) and runs every test that cites it
(pytest, ``-n 0``, not stopping at the first failure). A citing test *kills* the requirement
when it fails with at least one of the requirement's deviations planted; once it has, the
requirement's later deviations no longer run it. A test that passes with every deviation of a
requirement it cites has a *surviving citation*: the citation is removed or the test
strengthened.

The sample is every cited requirement that has a deviation:

* the fidelity deviations (mutation/deviations/), each of which breaks the requirement IDs its
  fidelity-table row names (``DIV-3``, ``DEP-11a``, ``messaging.md MSG-2``);
* mutation/deviations/requirements_*.py, one or more deviations for requirements that no
  fidelity row names: the smallest edit to smpref's source that makes it break what the
  requirement says.

A deviation that no longer compiles, or a pytest run that cannot collect, is an *error*, never
a kill. Writes, under ``--out`` (default reports/citations): ``summary.json`` (every requirement
with each citing test's outcome and the deviation that killed it) and ``survivors.md``; with
``--record``, tests/citation_kills.json, which ``smpref spec coverage`` reads to count the
tests that kill (docs/testing.md, "Citations that kill"). Exit status 0 when no citation
survives, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RECORD = REPO / "tests" / "citation_kills.json"
_ID = re.compile(r"\b[A-Z]+-\d+")
#: pytest's options for one deviation: every citing test runs (no -x), one process
PYTEST_OPTIONS = ("-q", "-n", "0", "-p", "no:cacheprovider", "--no-header", "-rfE",
                  "-W", "ignore::pytest.PytestAssertRewriteWarning")
#: citing tests a run leaves out unless --leave-out names others: each takes over 20 s alone
#: (a whole conformance run at every version, a Spark campaign, every cut of the store, a
#: browser, a wheel installed afresh), so that a deviation would cost minutes; their citations
#: stay unmeasured (counted as citing, not as killing)
SLOW_TESTS = (
    "tests/test_campaign.py::test_a_campaign_runs_on_a_standalone_cluster",
    "tests/test_campaign.py::test_a_planted_bug_is_found_once_shrunk_and_replayed",
    "tests/test_campaign.py::test_known_failures_are_reported_as_known_and_not_shrunk",
    "tests/test_conform_serve_deployed.py::"
    "test_every_core_case_passes_at_every_deployed_version_and_every_case_at_the_seed",
    "tests/test_conform_serve_deployed.py::test_the_cli_forces_version_18_against_smpref_serve",
    "tests/test_doc_commands.py::test_a_documented_block_runs",
    "tests/test_docs_site.py::test_every_column_of_every_table_is_in_view_at_1400_px",
    "tests/test_installed.py::test_the_wheel_runs_the_main_job_outside_the_repository",
    "tests/test_server_process.py::test_conform_against_serve_matches_embedded_and_reports_load",
    "tests/test_server_robustness.py::test_load_200_clients_50_messages_each",
    "tests/test_store_faults.py::test_every_cut_of_every_operation_recovers",
)
#: a failed item in pytest's short summary; a parameter ID may hold spaces (and " - ")
_FAILED = re.compile(r"^(?:FAILED|ERROR) (tests/[^\s\[]+(?:\[.*?\](?= - |$))?)(?: - (.*))?$",
                     re.MULTILINE)


def _import_paths() -> None:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))


@dataclass(frozen=True)
class Planted:
    """A deviation and the requirement it breaks."""

    requirement: str
    what: str
    deviation: object  # fidelity.Deviation


def requirement_ids(claim: str) -> list[str]:
    """The requirement IDs a fidelity row's claim names (``DEP-11a`` names DEP-11)."""
    return _ID.findall(claim)


def deviations() -> dict[str, list[Planted]]:
    """Every requirement with a deviation, and its deviations: the fidelity ones first."""
    _import_paths()
    from deviations import DEVIATIONS
    from deviations.requirements import REQUIREMENT_DEVIATIONS

    found: dict[str, list[Planted]] = {}
    for deviation in (*DEVIATIONS, *REQUIREMENT_DEVIATIONS):
        for requirement in requirement_ids(deviation.claim):
            found.setdefault(requirement, []).append(
                Planted(requirement, deviation.what, deviation))
    return found


def citing_tests(tests: Path = REPO / "tests") -> dict[str, list[str]]:
    """Each requirement ID a test cites, with the citing tests as ``tests/file.py::name``."""
    from smpref.coverage.citations import test_citations

    found: dict[str, list[str]] = {}
    for citation in test_citations(tests):
        node = f"tests/{citation.where}"
        if node not in found.setdefault(citation.requirement, []):
            found[citation.requirement].append(node)
    return found


def failed_citations(output: str, cited: Iterable[str]) -> dict[str, str]:
    """The citing tests (``tests/file.py::name``) with a failed or errored item in pytest's
    ``-rfE`` summary ``output``, each with its first failure line: an item
    ``tests/f.py::name[param]`` or ``tests/f.py::Class::method`` belongs to the citation that
    is its prefix."""
    failed: dict[str, str] = {}
    for item, message in _FAILED.findall(output):
        base = item.split("[")[0]
        for citation in cited:
            if base == citation or base.startswith(citation + "::"):
                failed.setdefault(citation, message[:200])
    return failed


@dataclass
class Verdict:
    """What one requirement's run came to: each citing test's outcome (``killed`` with the
    deviation that did it, ``survived``, or ``error``)."""

    requirement: str
    deviations: int
    tests: dict[str, str] = field(default_factory=dict)
    killed_by: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def survivors(self) -> list[str]:
        return [t for t, outcome in self.tests.items() if outcome == "survived"]


def judge(requirement: str, planted: list[Planted], cited: list[str],
          timeout: float) -> Verdict:
    """Plant each deviation of ``requirement`` in turn and run the citing tests that have not
    failed yet. When the run takes more than ``timeout`` seconds, each of those tests runs
    alone under the same deviation: one that still takes too long has hung, which fails a run
    as surely as an assertion (CI stops it), and is a kill; the others are judged by their own
    runs, not left as survivors of a run that another test stopped."""
    from fidelity import PlanError, apply
    from run import work_copy

    verdict = Verdict(requirement, len(planted), dict.fromkeys(cited, "survived"))
    started = time.monotonic()
    for one in planted:
        left = [t for t in cited if verdict.tests[t] == "survived"]
        if not left:
            break
        with tempfile.TemporaryDirectory(prefix="smpref-citations-") as tmp:
            work = work_copy(tmp)
            try:
                apply(one.deviation, work)  # type: ignore[arg-type]
            except PlanError as exc:
                verdict.errors.append(f"{one.what}: {exc}")
                continue
            failed = _failed_under(one.what, left, work, timeout, verdict.errors)
        for test, message in failed.items():
            verdict.tests[test] = "killed"
            verdict.killed_by[test] = f"{one.what}: {message}"
    if verdict.errors and all(o == "survived" for o in verdict.tests.values()):
        for test in verdict.tests:
            verdict.tests[test] = "error"
    verdict.seconds = round(time.monotonic() - started, 1)
    return verdict


def _failed_under(what: str, tests: list[str], work: Path, timeout: float,
                  errors: list[str]) -> dict[str, str]:
    """The ``tests`` that fail in the planted copy ``work``, each with its first failure line;
    a run that cannot collect adds to ``errors`` and fails none. A run over ``timeout`` is
    split into one run per test; a single test over it has hung."""
    from fidelity import _env

    # a session of its own, so that a timeout stops the servers a hung test started as well
    with subprocess.Popen([sys.executable, "-m", "pytest", *PYTEST_OPTIONS, *tests], cwd=work,
                          env=_env(work), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True) as run:
        try:
            output, _ = run.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
            if len(tests) == 1:
                return {tests[0]: f"hung: the test took more than {timeout:.0f} s alone"}
            failed: dict[str, str] = {}
            for test in tests:
                failed.update(_failed_under(what, [test], work, timeout, errors))
            return failed
    if run.returncode not in (0, 1):
        errors.append(f"{what}: pytest exited {run.returncode}: " + output.strip()[-300:])
        return {}
    return failed_citations(output, tests)


def report(verdicts: list[Verdict], cited: dict[str, list[str]], out: Path,
           seconds: float) -> dict[str, object]:
    """Write summary.json and survivors.md under ``out``; print and return the counts."""
    out.mkdir(parents=True, exist_ok=True)
    pairs = [(v.requirement, t, o) for v in verdicts for t, o in v.tests.items()]
    counts = {
        "citedRequirements": len(cited),
        "citations": sum(len(t) for t in cited.values()),
        "sampledRequirements": len(verdicts),
        "sampledCitations": len(pairs),
        "killed": sum(o == "killed" for _, _, o in pairs),
        "survived": sum(o == "survived" for _, _, o in pairs),
        "error": sum(o == "error" for _, _, o in pairs),
        "requirementsFullyKilled": sum(not v.survivors and "error" not in v.tests.values()
                                       for v in verdicts),
        "seconds": round(seconds),
    }
    summary = {**counts, "requirements": [vars(v) for v in verdicts]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = ["# Citations whose test survived every deviation of its requirement", ""]
    for v in verdicts:
        for test, outcome in v.tests.items():
            if outcome != "killed":
                lines.append(f"- {v.requirement} {outcome}: {test}")
        lines += [f"  - error: {e}" for e in v.errors]
    (out / "survivors.md").write_text("\n".join(lines) + "\n")
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    return counts


def record(verdicts: list[Verdict], cited: dict[str, list[str]], path: Path = RECORD) -> None:
    """Merge the verdicts into the committed record the coverage matrix reads: per requirement,
    each citing test's outcome (``tests/`` left off the names, as citations name them); a test
    killed before stays killed. Kept outcomes of citations the tests no longer make are
    dropped."""
    kept: dict[str, dict[str, str]] = json.loads(path.read_text()) if path.is_file() else {}
    for v in verdicts:
        outcomes = kept.setdefault(v.requirement, {})
        for test, outcome in v.tests.items():
            name = test.removeprefix("tests/")
            # deviations are only ever added: a test one of them killed stays killed
            if outcomes.get(name) != "killed":
                outcomes[name] = outcome
    pruned = {r: {t.removeprefix("tests/"): o for t, o in outcomes.items()
                  if f"tests/{t.removeprefix('tests/')}" in cited.get(r, [])}
              for r, outcomes in kept.items()}
    pruned = {r: o for r, o in sorted(pruned.items(), key=lambda i: _order(i[0])) if o}
    path.write_text(json.dumps(pruned, indent=1) + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/citations"))
    parser.add_argument("--jobs", type=int, default=2, help="requirements judged side by side")
    parser.add_argument("--only", action="append", default=[], metavar="ID",
                        help="judge only this requirement (repeatable)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds one deviation's tests may take")
    parser.add_argument("--leave-out", action="append", default=[], metavar="TEST",
                        help="do not run this citing test (tests/file.py::name, repeatable): "
                             "its citations stay unmeasured (default: the slow ones, "
                             "SLOW_TESTS)")
    parser.add_argument("--record", action="store_true",
                        help="merge the outcomes into tests/citation_kills.json")
    parser.add_argument("--from-summary", type=Path, action="append", default=[],
                        metavar="FILE", help="record the outcomes of an earlier run's "
                        "summary.json or verdicts.jsonl (repeatable) instead of running; "
                        "with --record")
    parser.add_argument("--check", action="store_true",
                        help="only check the plan (every edit applies) and list the sample")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _import_paths()
    from fidelity import problems, undefined_names
    from run import installed_package

    planted = deviations()
    cited = citing_tests()
    leave_out = set(args.leave_out or SLOW_TESTS)
    measured = {r: [t for t in tests if t not in leave_out] for r, tests in cited.items()}
    if args.from_summary:
        if not args.record:
            print("--from-summary needs --record", file=sys.stderr)
            return 2
        earlier = [Verdict(**r) for f in args.from_summary for r in _verdicts_in(f)]
        record(earlier, cited)
        return 0
    sample = sorted((set(planted) & set(cited)), key=_order)
    if args.only:
        unknown = [r for r in args.only if r not in sample]
        if unknown:
            print(f"--only: not cited by a test or without a deviation: {', '.join(unknown)}",
                  file=sys.stderr)
            return 2
        sample = list(dict.fromkeys(args.only))  # in the order given: a long run cut short
    chosen = [d.deviation for r in sample for d in planted[r]]
    found = [p for p in problems([], chosen, installed_package())
             if "no such row" not in p]  # requirement deviations name no fidelity row
    # a deviation that would crash where it runs earns kills it did not (as make mutate-fidelity)
    found += undefined_names(chosen, installed_package())
    if found:
        print("\n".join(found), file=sys.stderr)
        return 2
    if args.check:
        print(f"{len(sample)} of {len(cited)} cited requirements have deviations "
              f"({sum(len(planted[r]) for r in sample)} deviations, "
              f"{sum(len(measured[r]) for r in sample)} citations to run, "
              f"{sum(len(cited[r]) - len(measured[r]) for r in sample)} left out)")
        return 0
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    progress = args.out / "verdicts.jsonl"  # each verdict as it comes: a long run can be cut
    progress.write_text("")

    def one(requirement: str) -> Verdict:
        verdict = judge(requirement, planted[requirement], measured[requirement], args.timeout)
        with progress.open("a") as log:
            log.write(json.dumps(vars(verdict)) + "\n")
        print(f"{requirement:10} {len(verdict.tests) - len(verdict.survivors)}/"
              f"{len(verdict.tests)} killed {verdict.seconds:6.1f} s  "
              + " ".join(verdict.survivors), flush=True)
        return verdict

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        verdicts = list(pool.map(one, sample))
    counts = report(verdicts, cited, args.out, time.monotonic() - started)
    if args.record:
        record(verdicts, cited)
    return 0 if not counts["survived"] and not counts["error"] else 1


def _verdicts_in(path: Path) -> list[dict[str, object]]:
    """The verdicts of an earlier run: its summary.json, or its verdicts.jsonl when it was
    cut short."""
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return list(json.loads(text)["requirements"])


def _order(requirement: str) -> tuple[str, int]:
    prefix, number = requirement.split("-")
    return prefix, int(number)


if __name__ == "__main__":
    sys.exit(main())
