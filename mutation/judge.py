"""`make mutate`'s executor: one shard's mutants judged in one warm process, each by the tests
that can kill it.

cosmic-ray's own executor (``cosmic-ray exec``) starts a new interpreter for every mutant and
runs every test of the target: Python, pytest and its plugins, Hypothesis, smpref and each test
module are imported again, 1 to 2.5 s before the first test, and a mutant of a line only one
test reaches waits for all the others. This executor keeps cosmic-ray's sessions (the mutants
``cosmic-ray init`` found, the results ``cosmic-ray dump`` reads) and changes how a mutant is run:

- **Warm.** The process imports, once, every module the target's tests load except the mutated
  module and the modules that import it (:func:`preimport`), then forks a child per mutant. The
  child writes nothing the parent reads but its exit status and output, so every mutant starts
  from the same state.
- **Only the tests that reach the line.** ``baseline`` runs the target's tests once on the
  original code under coverage.py, one coverage context per test, and records which lines of
  the mutated modules each test executes and how long it takes. The tests are deterministic
  (the CI profiles derandomize Hypothesis), so a test that never executes a line runs the same
  on a mutant of that line as on the original and cannot kill it. A mutant runs the tests that
  execute its line, cheapest first, stopping at the first failure (:func:`tests_for`). Every
  test runs for a line executed outside a test (at import: constants, signatures, defaults,
  decorators; or between tests), and a test that starts a process (whose lines coverage does
  not see) runs for every mutant. A mutant of a line no test executes survives without running.

What the selection assumes, and why it holds for smpref's targets (an independent review
looked for each): the tests are deterministic, Hypothesis included (derandomized, and with no
constants drawn from the imported modules' source, which would differ between the baseline, a
child and a mutant: smpref/testing/determinism.py); the target modules are imported before any
test, so their import-time lines count for every test; no target module caches a result one
test computes and a later test reads (``functools.cache``, a table built on first use, a
module- or session-scoped fixture calling it), which would credit the line to the first test
only; processes are started with ``subprocess`` only; and no line runs only when threads
happen to race. A new target that breaks one of these needs its own look.

A timeout counts as a kill, as in cosmic-ray. Run as a script in the mutated copy of the
package (``mutation/run.py`` does); see ``--help``.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from bisect import bisect_right
from pathlib import Path
from typing import Any

#: contexts of lines executed outside any test: at import (coverage's initial context) or
#: between two tests (module and session fixtures' teardown)
OUTSIDE_TESTS = ("", ":between")


def module_name(path: str) -> str:
    """``smpref/store/journal.py`` -> ``smpref.store.journal``."""
    return path.removesuffix(".py").replace("/", ".")


# -- baseline ---------------------------------------------------------------------------------


def baseline(modules: list[str], pytest_args: list[str], out: Path) -> int:
    """Run the tests once on the original code under coverage and write, to ``out``, what
    :func:`tests_for` needs: each test's node ID, seconds and whether it starts a process, in
    the order they ran; per module, its statement lines and, per executed line, the tests that
    executed it (or a context of :data:`OUTSIDE_TESTS`); and the modules the run imported.
    Exit status: pytest's (0 when every test passed)."""
    import coverage
    import pytest

    files = {str(Path(m).resolve()): m for m in modules}
    cov = coverage.Coverage(data_file=None, include=list(files), config_file=False)
    cov.clear_exclude()  # a `pragma: no cover` line is a statement like any other here
    current = [":between"]
    spawning: set[str] = set()
    real_init = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        spawning.add(current[0])
        real_init(self, *args, **kwargs)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]
    tests: list[dict[str, Any]] = []
    failed: list[str] = []

    class Recorder:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item: pytest.Item) -> Any:
            current[0] = item.nodeid
            cov.switch_context(item.nodeid)
            started = time.perf_counter()
            yield
            tests.append({"nodeid": item.nodeid, "seconds": time.perf_counter() - started})
            current[0] = ":between"
            cov.switch_context(":between")

        def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
            if report.failed:
                failed.append(report.nodeid)

    cov.start()
    try:
        # imported before any test, so that their import-time lines count for every test
        # even when the first test to use a module imports it
        for module in modules:
            importlib.import_module(module_name(module))
        # no constants from the imported modules' source in Hypothesis's draws: a child, which
        # imports fewer modules than this run, and a mutated literal would draw other examples
        from smpref.testing.determinism import same_draws_everywhere

        with same_draws_everywhere():
            status = int(pytest.main(pytest_args, plugins=[Recorder()]))
    finally:
        cov.stop()
        subprocess.Popen.__init__ = real_init  # type: ignore[method-assign]
    if status != 0 or failed:
        print(f"baseline: the tests fail on the original code ({', '.join(failed)})",
              file=sys.stderr)
        return status or 1
    data = cov.get_data()
    lines: dict[str, dict[str, list[str]]] = {}
    statements: dict[str, list[int]] = {}
    for path, module in files.items():
        statements[module] = sorted(cov.analysis2(path)[1])
        by_line = data.contexts_by_lineno(path) if path in data.measured_files() else {}
        lines[module] = {str(n): sorted(c) for n, c in by_line.items()}
    loaded = [name for name, mod in list(sys.modules.items()) if not _is_test_code(mod)]
    for test in tests:
        test["spawns"] = test["nodeid"] in spawning
    out.write_text(json.dumps({"tests": tests, "statements": statements, "lines": lines,
                               "loaded": loaded}))
    return 0


def _is_test_code(module: Any) -> bool:
    """Whether a module is the tests' own code (a test file, a conftest, a module of a
    ``tests`` folder), which each child imports through pytest, never the warm parent."""
    path = Path(str(getattr(module, "__file__", None) or ""))
    return path.name.startswith("test_") or path.name == "conftest.py" or \
        "tests" in path.parent.parts


def tests_for(plan: dict[str, Any], module: str, line: int) -> list[str] | None:
    """The node IDs of the tests that can kill a mutant of ``line`` of ``module``, cheapest
    first; ``[]`` when no test executes the line and none starts a process (the mutant
    survives without running); every test when the line also runs outside a test; the tests
    that start a process, whose lines coverage cannot see, always, last. A mutated token on a
    continuation line counts as its statement's first line, which is what coverage records."""
    starts = plan["statements"][module]
    at = bisect_right(starts, line)
    if at == 0:  # before the first statement: the module's docstring or imports
        contexts: list[str] = list(OUTSIDE_TESTS)
    else:
        contexts = plan["lines"][module].get(str(starts[at - 1]), [])
    every = any(c in OUTSIDE_TESTS for c in contexts)
    reached = set(contexts)
    chosen = [t for t in plan["tests"] if every or t["nodeid"] in reached or t["spawns"]]
    # a test that starts a process comes last: its line may be reached only in that process,
    # where a mutant often costs it the most (a run in a fresh process, compared to this one)
    return [t["nodeid"] for t in sorted(chosen, key=lambda t: (t["spawns"], t["seconds"]))]


# -- exec -------------------------------------------------------------------------------------


def preimport(loaded: list[str], mutated: str) -> list[str]:
    """Import each module of ``loaded`` that does not import ``mutated``; the names imported.

    A module that turns out to import ``mutated`` (it is in ``sys.modules`` after the import)
    is rolled back with everything its import loaded, so the mutated module and its importers
    are imported by each child, from the mutated file."""
    kept: list[str] = []
    for name in loaded:
        if name in sys.modules or name in ("__main__", mutated):
            continue
        before = set(sys.modules)
        try:
            importlib.import_module(name)
            clean = mutated not in sys.modules
        except Exception:  # a module that imports only in its own context: left to the child
            clean = False
        if clean:
            kept.append(name)
            continue
        for new in set(sys.modules) - before:
            module = sys.modules.pop(new)
            parent, _, child = new.rpartition(".")
            if parent in sys.modules and getattr(sys.modules[parent], child, None) is module:
                delattr(sys.modules[parent], child)
    return kept


class Selection:
    """A pytest plugin: run only ``order``'s tests, in that order, and any test the plan does
    not know (``planned`` is every test of the plan: a mutant that adds a test's parameters
    makes new ones), after them; an empty ``planned`` knows every test. If a test of
    ``order`` is not collected (the mutant changed a
    test's parameters), every collected test runs, those of ``order`` first."""

    def __init__(self, order: list[str], planned: frozenset[str] = frozenset()) -> None:
        self.rank = {nodeid: n for n, nodeid in enumerate(order)}
        self.planned = planned

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        collected = {item.nodeid for item in items}
        if all(nodeid in collected for nodeid in self.rank):
            kept = [item for item in items if item.nodeid in self.rank
                    or (self.planned and item.nodeid not in self.planned)]
            config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        else:
            kept = list(items)
        kept.sort(key=lambda item: self.rank.get(item.nodeid, len(self.rank)))
        items[:] = kept


def run_child(pytest_args: list[str], order: list[str], timeout: float,
              planned: frozenset[str] = frozenset()) -> tuple[bool, str]:
    """Run the tests of ``order`` (and those ``planned`` does not know, see Selection) in a
    forked child: (whether a test failed or the run timed out, the child's output)."""
    import pytest

    sys.stdout.flush()  # nothing buffered before the fork is written twice
    sys.stderr.flush()
    with tempfile.TemporaryFile() as output:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            status = 70
            try:
                os.setpgid(0, 0)
                os.dup2(output.fileno(), 1)
                os.dup2(output.fileno(), 2)
                status = int(pytest.main(pytest_args, plugins=[Selection(order, planned)]))
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        pidfd = os.pidfd_open(pid)
        ready, _, _ = select.select([pidfd], [], [], timeout)
        timed_out = not ready
        if timed_out:
            os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        if timed_out:
            return True, "timeout"
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
        return os.waitstatus_to_exitcode(status) != 0, text


def mutation_diff(original: str, mutated: str, path: str) -> str:
    """The diff cosmic-ray records for a mutant (the same form, so reports read the same)."""
    return "\n".join(["--- mutation diff ---", *difflib.unified_diff(
        original.split("\n"), mutated.split("\n"), fromfile="a/" + path, tofile="b/" + path,
        lineterm="")])


def execute(session: Path, module: str, plan_file: Path, timeout: float,
            pytest_args: list[str]) -> int:
    """Judge every mutant of ``session`` without a result, recording each result in it."""
    import cosmic_ray.plugins  # type: ignore[import-untyped]
    from cosmic_ray.mutating import mutate_code  # type: ignore[import-untyped]
    from cosmic_ray.work_db import WorkDB, use_db  # type: ignore[import-untyped]
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult  # type: ignore[import-untyped]

    plan = json.loads(plan_file.read_text())
    preimport(plan["loaded"], module_name(module))
    import pytest  # noqa: F401  (warm for the children, whatever the tests loaded)

    planned = frozenset(t["nodeid"] for t in plan["tests"])

    options = [a for a in pytest_args if not a.endswith(".py")]
    path = Path(module)
    original = path.read_text(encoding="utf-8")
    stamp = int(time.time()) + 1_000
    from smpref.testing.determinism import same_draws_everywhere  # as in baseline

    with same_draws_everywhere(), use_db(str(session), WorkDB.Mode.open) as db:
        for n, item in enumerate(list(db.pending_work_items)):
            mutation = item.mutations[0]
            operator = cosmic_ray.plugins.get_operator(mutation.operator_name)(
                **(mutation.operator_args or {}))
            mutated = mutate_code(original, operator, mutation.occurrence)
            if mutated is None:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.NO_TEST))
                continue
            diff = mutation_diff(original, mutated, module)
            order = tests_for(plan, module, mutation.start_pos[0])
            if not order:
                db.set_result(item.job_id, WorkResult(
                    worker_outcome=WorkerOutcome.NORMAL, test_outcome=TestOutcome.SURVIVED,
                    output=f"not run: no test executes line {mutation.start_pos[0]}",
                    diff=diff))
                continue
            path.write_text(mutated, encoding="utf-8")
            # a modification time of its own, so that no compiled copy of another mutant (or of
            # the original) is ever taken for this one's
            os.utime(path, (stamp + 2 * n, stamp + 2 * n))
            # only the files of the chosen tests are collected: fewer imports per mutant
            files = list(dict.fromkeys(nodeid.split("::")[0] for nodeid in order))
            try:
                killed, output = run_child([*options, *files], order, timeout, planned)
            finally:
                path.write_text(original, encoding="utf-8")
                os.utime(path, (stamp + 2 * n + 1, stamp + 2 * n + 1))
            db.set_result(item.job_id, WorkResult(
                worker_outcome=WorkerOutcome.NORMAL,
                test_outcome=TestOutcome.KILLED if killed else TestOutcome.SURVIVED,
                output=output, diff=diff))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    base = commands.add_parser("baseline", help="run the tests once under coverage")
    base.add_argument("--modules", nargs="+", required=True)
    base.add_argument("--out", type=Path, required=True)
    run = commands.add_parser("exec", help="judge a session's mutants without a result")
    run.add_argument("--session", type=Path, required=True)
    run.add_argument("--module", required=True)
    run.add_argument("--plan", type=Path, required=True, help="what `baseline` wrote")
    run.add_argument("--timeout", type=float, default=120.0)
    for sub in (base, run):
        sub.add_argument("pytest_args", nargs=argparse.REMAINDER,
                         help="after --: pytest's arguments (options and test files)")
    args = parser.parse_args(argv)
    # compiled files are what make a child cheap: the test modules pytest rewrites and the
    # modules that import the mutated one are compiled once, not once per mutant (a shell's
    # PYTHONDONTWRITEBYTECODE would cost each child half a second); the mutated module's own
    # compiled copies are told apart by modification time (execute)
    sys.dont_write_bytecode = False
    pytest_args = [a for a in args.pytest_args if a != "--"]
    if args.command == "baseline":
        return baseline(args.modules, pytest_args, args.out)
    return execute(args.session, args.module, args.plan, args.timeout, pytest_args)


if __name__ == "__main__":
    sys.exit(main())
