"""`make mutate-fidelity`: for every row of spec/deployed-fidelity.md, a planted deviation (the
smallest change that makes smpref behave otherwise on exactly that row's claim), judged by the
checks the row cites.

A row of the fidelity table says what deployed SMP does and which tests and conformance cases
check smpref against it. A cited check that passes whatever smpref does on that claim proves
nothing, so each row has at least one deviation (mutation/deviations/): text edits to smpref's
source, each old text found exactly once. The run:

1. copies the installed package and the tests once (mutation/run.py's snapshot), so a reinstall
   during the run changes nothing;
2. per deviation, writes its edits into a fresh copy, checks that the edited files still
   compile (a deviation that breaks the import would be "killed" by every test and prove
   nothing), and runs the row's cited tests (pytest, stop at the first failure) and then its
   cited conformance cases (against an embedded server, at every deployed version 6-18), with
   the copy first on PYTHONPATH, so that servers the tests start run the deviation too;
3. counts the deviation *killed* when a cited check fails, *survived* when all pass, *error*
   when pytest could not run the tests (collection or usage error: not a kill) and *timeout*
   when they took longer than ``--timeout`` seconds (listed apart, never counted as a kill).

Writes, under ``--out`` (default reports/fidelity): ``summary.json`` (every deviation with its
outcome, the check that killed it and the first failure line) and ``survivors.md``. Exit status
0 when every deviation is killed, 1 otherwise, 2 on a usage error (a row without a deviation,
a deviation whose old text is not found exactly once, a claim the table does not have).
"""

from __future__ import annotations

import argparse
import json
import os
import py_compile
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "spec" / "deployed-fidelity.md"
TEST = re.compile(r"tests/test_\w+\.py::\w+")
CONFORM = re.compile(r"conform:([\w.-]+)")
#: the deployed versions a cited conformance case runs at (DEP-12, DEP-13)
DEPLOYED_VERSIONS = tuple(range(6, 19))
#: pytest's options for one deviation: stop at the first failure; -n 0, one process
PYTEST_OPTIONS = ("-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--no-header", "-rf")


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` (which must occur exactly once) by ``new`` in ``file``, a path inside
    the package (``smpref/...``)."""

    file: str
    old: str
    new: str


@dataclass(frozen=True)
class Deviation:
    """A change to smpref that makes it behave otherwise than the fidelity table's row
    ``claim`` says, and nothing more (``what`` says how)."""

    claim: str
    what: str
    edits: tuple[Edit, ...]


def plant(claim: str, what: str, file: str, old: str, new: str,
          *more: tuple[str, str, str]) -> Deviation:
    """A deviation of one edit, or more (each further edit a ``(file, old, new)`` triple)."""
    return Deviation(claim, what, (Edit(file, old, new), *(Edit(*m) for m in more)))


@dataclass(frozen=True)
class Row:
    """A row of the fidelity table: its claim and the checks it cites."""

    claim: str
    tests: tuple[str, ...]
    cases: tuple[str, ...]

    @property
    def heading(self) -> bool:
        """A heading row (``messaging.md §``, ``transport.md §``): its claims are the rows
        that follow, and it cites them, not checks."""
        return not self.tests and not self.cases


def rows(table: Path = TABLE) -> list[Row]:
    """The table's rows in order."""
    found = []
    for line in table.read_text().splitlines():
        if line.startswith("| ") and not line.startswith(("| claim", "|---")):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            found.append(Row(cells[0], tuple(TEST.findall(cells[3])),
                             tuple(CONFORM.findall(cells[3]))))
    return found


def all_deviations() -> list[Deviation]:
    """Every deviation of mutation/deviations/, in the table's order of sections."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from deviations import DEVIATIONS

    return list(DEVIATIONS)


class PlanError(Exception):
    """A deviation or the table is not as this runner needs it (exit 2)."""


def problems(table: list[Row], deviations: list[Deviation], package: Path) -> list[str]:
    """What is wrong with the plan: a row without a deviation, a deviation naming no row, an
    edit whose old text is not in its file exactly once, or one that changes nothing."""
    found = []
    claims = {row.claim for row in table}
    planted = {d.claim for d in deviations}
    for row in table:
        if not row.heading and row.claim not in planted:
            found.append(f"{row.claim}: no planted deviation")
    for deviation in deviations:
        if deviation.claim not in claims:
            found.append(f"{deviation.claim}: the fidelity table has no such row")
        for edit in deviation.edits:
            path = package.parent / edit.file
            if not path.is_file():
                found.append(f"{deviation.claim}: {edit.file} does not exist")
                continue
            count = path.read_text().count(edit.old)
            if count != 1:
                found.append(f"{deviation.claim}: {edit.file}: old text found {count} times, "
                             f"not once: {edit.old[:60]!r}")
            if edit.old == edit.new:
                found.append(f"{deviation.claim}: {edit.file}: the edit changes nothing")
    return found


def undefined_names(deviations: list[Deviation], package: Path) -> list[str]:
    """Each deviation whose edited Python file names something it does not define or import
    (ruff's F821): such a deviation would crash where it runs, and a crash fails the checks
    that run it, a kill it did not earn. The edited files are checked in one ruff run; a file
    that does not exist is left to :func:`problems`, which names it."""
    with tempfile.TemporaryDirectory(prefix="smpref-deviations-") as tmp:
        where: dict[str, str] = {}
        for n, deviation in enumerate(deviations):
            edited: dict[str, str] = {}
            for edit in deviation.edits:
                source = package.parent / edit.file
                if not edit.file.endswith(".py") or not source.is_file():
                    continue
                text = edited.get(edit.file) or source.read_text()
                edited[edit.file] = text.replace(edit.old, edit.new, 1)
            for file, text in edited.items():
                path = Path(tmp) / str(n) / file
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                where[str(path)] = f"{deviation.claim} ({deviation.what[:50]}): {file}"
        if not where:
            return []
        done = subprocess.run([str(Path(sys.executable).parent / "ruff"), "check", "--isolated",
                               "--select", "F821", "--output-format", "json", tmp],
                              check=False, capture_output=True, text=True)
        return [f"{where[f['filename']]}:{f['location']['row']}: {f['message']}"
                for f in json.loads(done.stdout or "[]")]


@dataclass
class Outcome:
    """What one deviation's run came to."""

    claim: str
    what: str
    status: str  # killed, survived, error, timeout
    killed_by: str = ""
    failure: str = ""
    seconds: float = 0.0
    ran: list[str] = field(default_factory=list)


def apply(deviation: Deviation, work: Path) -> None:
    """Write the deviation's edits into the copy ``work``; PlanError when an edit's old text is
    not there exactly once or an edited Python file no longer compiles."""
    for edit in deviation.edits:
        path = work / edit.file
        text = path.read_text()
        if text.count(edit.old) != 1:
            raise PlanError(f"{deviation.claim}: {edit.file}: old text not found exactly once")
        path.write_text(text.replace(edit.old, edit.new))
        if path.suffix == ".py":
            try:
                py_compile.compile(str(path), doraise=True)
            except py_compile.PyCompileError as exc:
                raise PlanError(f"{deviation.claim}: {edit.file} no longer compiles: "
                                f"{exc.msg.strip().splitlines()[-1]}") from None


def _env(work: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(work), "HYPOTHESIS_PROFILE": "mutation",
           "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


_FAILED = re.compile(r"^FAILED (\S+)", re.MULTILINE)
_ERROR = re.compile(r"^E +(\S.*)$", re.MULTILINE)


def judge(deviation: Deviation, row: Row, timeout: float) -> Outcome:
    """Plant ``deviation`` in a fresh copy of the run's snapshot and run ``row``'s checks."""
    from run import work_copy

    outcome = Outcome(deviation.claim, deviation.what, "survived")
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="smpref-fidelity-") as tmp:
            work = work_copy(tmp)
            apply(deviation, work)
            env = _env(work)
            deadline = started + timeout
            if row.tests:
                outcome.ran += list(row.tests)
                done = subprocess.run(
                    [sys.executable, "-m", "pytest", *PYTEST_OPTIONS, *row.tests], cwd=work,
                    env=env, capture_output=True, text=True, check=False,
                    timeout=max(1.0, deadline - time.monotonic()))
                if done.returncode == 1:
                    failed = _FAILED.search(done.stdout)
                    outcome.status = "killed"
                    outcome.killed_by = failed.group(1) if failed else "pytest"
                    error = _ERROR.search(done.stdout)
                    outcome.failure = (error.group(1) if error else "")[:300]
                elif done.returncode != 0:
                    outcome.status = "error"
                    outcome.failure = (done.stdout + done.stderr).strip()[-600:]
            for case in row.cases if outcome.status == "survived" else ():
                outcome.ran.append(f"conform:{case}")
                done = subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--conform-case", case],
                    cwd=work, env=env, capture_output=True, text=True, check=False,
                    timeout=max(1.0, deadline - time.monotonic()))
                said = done.stdout.strip().splitlines()
                if done.returncode == 1 and said and said[-1].startswith(f"conform:{case} "):
                    outcome.status = "killed"
                    outcome.killed_by = f"conform:{case}"
                    outcome.failure = said[-1][:300]
                    break
                if done.returncode != 0:
                    outcome.status = "error"
                    outcome.failure = (done.stdout + done.stderr).strip()[-600:]
                    break
    except subprocess.TimeoutExpired:
        outcome.status = "timeout"
        outcome.failure = f"the checks took more than {timeout:.0f} s"
    except PlanError as exc:
        outcome.status = "error"
        outcome.failure = str(exc)
    outcome.seconds = round(time.monotonic() - started, 1)
    return outcome


def conform_case(case_id: str) -> int:
    """Run one conformance case against an embedded server at every deployed version (the
    installed smpref, or the copy first on PYTHONPATH), the newest and the oldest first, and
    stop at the first version where it fails: 0 when it passes at each, 1 with the failure
    printed as the last line (anything else, a crash included, is not a kill)."""
    import asyncio

    from smpref.conform import runner
    from smpref.conform.case_verdicts import Status

    cases = [c for c in runner.select([case_id]) if c.id == case_id]
    if not cases:
        print(f"no conformance case {case_id}")
        return 2
    for version in (DEPLOYED_VERSIONS[-1], DEPLOYED_VERSIONS[0], *DEPLOYED_VERSIONS[1:-1]):
        [report] = asyncio.run(runner.run_embedded(cases, [version]))
        for result in report.results:
            if result.status is Status.FAIL:
                print(f"conform:{case_id} at version {version}: {result.message}")
                return 1
    return 0


def report(outcomes: list[Outcome], out: Path, seconds: float) -> None:
    """Write summary.json and survivors.md under ``out``; print the counts."""
    out.mkdir(parents=True, exist_ok=True)
    counts = {s: sum(o.status == s for o in outcomes)
              for s in ("killed", "survived", "error", "timeout")}
    summary = {"deviations": len(outcomes), "claims": len({o.claim for o in outcomes}),
               **counts, "seconds": round(seconds), "outcomes": [vars(o) for o in outcomes]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = ["# Fidelity deviations not killed", ""]
    for o in outcomes:
        if o.status != "killed":
            lines += [f"## {o.claim}: {o.status}", "", o.what, "",
                      f"ran: {', '.join(o.ran) or 'nothing'}", "", o.failure, ""]
    (out / "survivors.md").write_text("\n".join(lines))
    print(f"{len(outcomes)} deviations over {summary['claims']} claims: "
          + ", ".join(f"{n} {s}" for s, n in counts.items()) + f" ({seconds:.0f} s)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/fidelity"))
    parser.add_argument("--jobs", type=int, default=2, help="deviations judged side by side")
    parser.add_argument("--only", action="append", default=[], metavar="CLAIM",
                        help="judge only this row's deviations (repeatable)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds one deviation's checks may take")
    parser.add_argument("--cite", action="append", default=[], metavar="CHECK",
                        help="with --only: also run this test (tests/x.py::name) or case "
                             "(conform:id), to see whether a new check kills a survivor "
                             "before the table cites it")
    parser.add_argument("--check", action="store_true",
                        help="only check the plan (rows, claims, old texts) and exit")
    parser.add_argument("--conform-case", metavar="ID", help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.conform_case:
        return conform_case(args.conform_case)
    from run import installed_package

    table = rows()
    deviations = all_deviations()
    found = problems(table, deviations, installed_package())
    found += undefined_names(deviations, installed_package())
    if args.only:  # a partial run: only the chosen rows' problems stop it (an undefined
        # name's problem names its row as "ROW (what...): file")
        found = [p for p in found if any(p.startswith((f"{c}: ", f"{c} (")) for c in args.only)]
    if found:
        print("\n".join(found), file=sys.stderr)
        return 2
    if args.check:
        print(f"{len(deviations)} deviations cover {len({d.claim for d in deviations})} rows")
        return 0
    unknown = set(args.only) - {row.claim for row in table}
    if unknown:
        print(f"--only: no such row: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    by_claim = {row.claim: row for row in table}
    if args.cite:
        if not args.only:
            print("--cite needs --only", file=sys.stderr)
            return 2
        tests = tuple(c for c in args.cite if TEST.fullmatch(c))
        cases = tuple(c.removeprefix("conform:") for c in args.cite if CONFORM.fullmatch(c))
        if len(tests) + len(cases) != len(args.cite):
            print("--cite: expected tests/test_x.py::name or conform:id", file=sys.stderr)
            return 2
        for claim in args.only:
            row = by_claim[claim]
            by_claim[claim] = Row(claim, row.tests + tests, row.cases + cases)
    chosen = [d for d in deviations if not args.only or d.claim in args.only]
    started = time.monotonic()

    def one(deviation: Deviation) -> Outcome:
        outcome = judge(deviation, by_claim[deviation.claim], args.timeout)
        print(f"{outcome.claim:32} {outcome.status:8} {outcome.seconds:6.1f} s  "
              f"{outcome.killed_by or outcome.failure[:80]}", flush=True)
        return outcome

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(one, chosen))
    report(outcomes, args.out, time.monotonic() - started)
    return 0 if all(o.status == "killed" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
