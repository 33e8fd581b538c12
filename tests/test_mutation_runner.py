"""`make mutate`'s runner (mutation/run.py), without running cosmic-ray: how it recognises an
equivalent mutant, how it counts, and that docs/mutation-equivalents.md lists every equivalent
it knows."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mutation_modules import mutation_module

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return mutation_module("run")


@pytest.fixture(scope="module")
def markers() -> ModuleType:
    return mutation_module("equivalents")


MARKED = """\
def f(state, data, items):
    # mutant-equivalent[Gt_NotEq]: a shorter journal raised just before
    if len(data) > state.write_bytes:
        pass
    # mutant-equivalent-deployed[AddNot, IsNot_Eq]: {trace}
    if state.gather and state.target is not None and \\
            state.ready:
        pass
    for item in items:
        if item:
            # mutant-equivalent[ReplaceBreakWithContinue]: nothing comes after it,
            #   so going on finds nothing
            # a plain comment between the marker and its line,
            #   continued: not part of the reason
            break
    # mutant-equivalent[ReplaceComparisonOperator]: only two kinds reach it
    if state.kind == "b":
        return 1
    # mutant-equivalent[*]: the gain is 0 anyway
    return len(items) == 1
"""


def test_docs_list_every_known_equivalent(runner: ModuleType) -> None:
    docs = (REPO / "docs" / "mutation-equivalents.md").read_text()
    assert runner.equivalents_table() in docs, (
        "docs/mutation-equivalents.md's tables of equivalent mutants are not `python "
        "mutation/run.py --equivalents-table`")


def test_markers_are_read_with_their_scope_operators_reason_and_lines(
        markers: ModuleType) -> None:
    found = markers.read_markers(MARKED)
    assert [(m.scope, m.operators, m.at, m.lines) for m in found] == [
        (markers.EVERY, ("Gt_NotEq",), 2, (3,)),
        (markers.DEPLOYED, ("AddNot", "IsNot_Eq"), 5, (6, 7)),
        (markers.EVERY, ("ReplaceBreakWithContinue",), 11, (15,)),
        (markers.EVERY, ("ReplaceComparisonOperator",), 16, (17,)),
        (markers.EVERY, ("*",), 19, (20,))]
    assert found[1].why == markers.SHARED_REASONS["trace"]
    assert found[2].why == "nothing comes after it, so going on finds nothing"


@pytest.mark.parametrize(("text", "problem"), [
    ("# mutant-equivalent[]: why\nx = 1\n", "1: a marker names no operator"),
    ("# mutant-equivalent[GtE_Gtx]: why\nx = 1\n", "1: no mutation operator is named GtE_Gtx"),
    ("x = 1\n# mutant-equivalent[AddNot]: {nothing}\ny = 2\n",
     "2: no shared reason named {nothing}"),
    ("# mutant-equivalent[AddNot]:\nx = 1\n", "1: a marker without a reason"),
    ("x = 1\n# mutant-equivalent[AddNot]: why\n", "2: a marker with no line after it"),
])
def test_a_marker_that_cannot_be_read_is_an_error_naming_its_line(
        markers: ModuleType, text: str, problem: str) -> None:
    with pytest.raises(markers.MarkerError, match=f"^m.py:{problem}$"):
        markers.read_markers(text, "m.py")


@pytest.mark.parametrize("text", [
    "# mutant-equivalent [AddNot]: why\nx = 1\n",
    "# mutant-equivalent[AddNot] why\nx = 1\n",
    "# mutant-equivalents[AddNot]: why\nx = 1\n",
    "# mutant-equivalent-deployd[AddNot]: why\nx = 1\n",
    "# mutant-equivalent[AddNot: why\nx = 1\n",
    "x = 1  # mutant-equivalent[AddNot]: why\n",
])
def test_a_near_miss_of_a_marker_is_an_error_not_ignored(markers: ModuleType, text: str) -> None:
    """A misspelt or trailing marker would leave its mutants unexplained without a word."""
    with pytest.raises(markers.MarkerError, match=r"^m\.py:1: not a marker"):
        markers.read_markers(text, "m.py")


def test_a_shared_reason_is_named_in_lower_case_words_only(markers: ModuleType) -> None:
    with pytest.raises(markers.MarkerError, match=r"no shared reason named \{Trace\}"):
        markers.read_markers("# mutant-equivalent[AddNot]: {Trace}\nx = 1\n", "m.py")


def test_a_deployed_marker_counts_only_for_the_conformance_targets(markers: ModuleType) -> None:
    for line in (6, 7):  # the backslash carries the marker to the next line
        assert markers.after_running(MARKED, line, "core/AddNot", deployed=True)
        assert markers.after_running(MARKED, line, "core/AddNot") == ""
        assert markers.before_running(MARKED, line, "core/AddNot") == ""
    # only the operators a marker names: ReplaceAndWithOr on the same line is not known
    assert markers.after_running(MARKED, 6, "core/ReplaceAndWithOr", deployed=True) == ""


def test_an_equivalent_is_recognised_only_where_it_is_marked(markers: ModuleType) -> None:
    assert markers.after_running(MARKED, 3, "core/ReplaceComparisonOperator_Gt_NotEq")
    assert markers.before_running(MARKED, 3, "core/ReplaceComparisonOperator_Gt_NotEq")
    # another operator on the same line, another line: not known
    assert not markers.after_running(MARKED, 3, "core/ReplaceComparisonOperator_Gt_GtE")
    assert not markers.after_running(MARKED, 4, "core/ReplaceComparisonOperator_Gt_NotEq")
    # past a plain comment, the marker still holds for its line
    assert markers.before_running(MARKED, 15, "core/ReplaceBreakWithContinue")
    assert not markers.before_running(MARKED, 14, "core/ReplaceBreakWithContinue")


def test_a_mutant_is_left_unrun_only_on_an_exact_operator_match(markers: ModuleType) -> None:
    """`Gt_NotEq` does not excuse `Gt_NotEq`'s longer cousin; a family or `*` explains
    survivors after they ran, never before (the tests may kill some of a family's mutants on
    the line and not others)."""
    assert not markers.before_running(MARKED, 3, "core/ReplaceComparisonOperator_XGt_NotEq")
    operator = "core/ReplaceComparisonOperator_Eq_LtE"
    assert markers.after_running(MARKED, 17, operator)
    assert not markers.before_running(MARKED, 17, operator)
    assert markers.after_running(MARKED, 20, "core/AddNot")
    assert not markers.before_running(MARKED, 20, "core/AddNot")


def test_a_dataclass_flag_turned_off_is_known_by_structure(markers: ModuleType) -> None:
    source = ("from dataclasses import dataclass\n\n\n"
              "@dataclass(frozen=True,\n           slots=True)\nclass A:\n    x: int = True\n")
    for line in (4, 5):
        assert markers.before_running(source, line, "core/ReplaceTrueWithFalse")
    assert not markers.before_running(source, 7, "core/ReplaceTrueWithFalse")
    assert not markers.before_running(source, 4, "core/AddNot")


def test_a_marker_no_mutant_reaches_is_reported(markers: ModuleType) -> None:
    mutants = [(3, "core/ReplaceComparisonOperator_Gt_NotEq"), (7, "core/AddNot"),
               (15, "core/ReplaceBreakWithContinue"),
               (17, "core/ReplaceComparisonOperator_Eq_Lt"), (20, "core/NumberReplacer")]
    assert markers.unreached(MARKED, mutants) == []
    assert markers.unreached(MARKED, mutants[1:]) == [2]
    assert markers.unreached(MARKED, [*mutants[:2], (15, "core/AddNot"), *mutants[3:]]) == [11]


def test_every_marker_in_the_mutated_modules_reads(runner: ModuleType,
                                                   markers: ModuleType) -> None:
    """Each marker names known operators, a reason, and a line of code after it; a marker
    whose code has changed under it is caught by `make mutate` (its warning), which knows
    the mutants."""
    count = 0
    for module in runner.mutated_modules():
        source = (REPO / module).read_text()
        found = markers.read_markers(source, module)
        lines = source.splitlines()
        for marker in found:
            assert all(lines[n - 1].strip() and not lines[n - 1].strip().startswith("#")
                       for n in marker.lines), (module, marker.at)
        count += len(found)
    assert count >= 50


def test_the_kill_rate_leaves_out_equivalents_only(runner: ModuleType) -> None:
    target = runner.TARGETS[2]
    journal = "smpref/store/journal.py"

    def pair(n: int, outcome: str) -> tuple[dict[str, Any], dict[str, Any]]:
        job = {"job_id": str(n), "mutations": [{"start_pos": [n, 0], "operator_name":
                                                 "core/ReplaceComparisonOperator_Gt_NotEq",
                                                 "occurrence": 0}]}
        return job, {"worker_outcome": "normal", "test_outcome": outcome, "diff": ""}

    # the survivor on line 3 is marked equivalent; the one on line 4 is not
    pairs = [pair(n + 10, "killed") for n in range(6)] + [pair(3, "survived"),
                                                          pair(4, "survived")]
    summary = runner.summarize(target, journal, pairs, 1.0, MARKED)
    assert (summary["mutants"], summary["killed"], summary["equivalent"]) == (8, 6, 1)
    assert summary["kill_rate"] == round(6 / 7, 4)
    assert [bool(s["equivalent"]) for s in summary["survivors"]] == [True, False]
    # no mutant of the session reaches the other markers
    assert summary["stale_markers"] == [5, 11, 16, 19]


def test_changed_lines_reads_git_diff_hunks(runner: ModuleType) -> None:
    diff_text = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
                 "@@ -3 +3 @@ def f():\n-    return 1\n+    return 2\n"
                 "@@ -10,0 +11,2 @@\n+a = 1\n+b = 2\n"
                 "@@ -20,3 +22,0 @@\n-x\n-y\n-z\n")
    # a changed line, two added lines, and both sides of a deletion
    assert runner.changed_lines(diff_text) == {3, 11, 12, 22, 23}
    assert runner.changed_lines("") == set()


def test_since_judges_only_the_lines_a_change_touched(runner: ModuleType,
                                                      tmp_path: Path) -> None:
    """--since REV in a real repository: an uncommitted edit of one line of a committed
    file is the only line selected."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    module = tmp_path / "smpref" / "m.py"
    module.parent.mkdir()
    module.write_text("".join(f"x{n} = {n}\n" for n in range(1, 11)))
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "m")
    module.write_text(module.read_text().replace("x7 = 7", "x7 = 70"))
    original = runner.REPO
    runner.REPO = tmp_path
    try:
        assert runner.lines_changed_since("HEAD", "smpref/m.py") == {7}
        with pytest.raises(SystemExit, match="git diff failed"):
            runner.lines_changed_since("no-such-revision", "smpref/m.py")
    finally:
        runner.REPO = original


def test_an_equivalent_not_run_counts_as_an_equivalent_mutant(runner: ModuleType) -> None:
    target = runner.TARGETS[2]
    job = {"job_id": "1", "mutations": [{"start_pos": [5, 0], "operator_name": "op",
                                         "occurrence": 0}]}
    skipped = {"worker_outcome": "skipped", "output": f"{runner.NOT_RUN}: because", "diff": ""}
    other = ({"job_id": "2", "mutations": [{"start_pos": [6, 0], "operator_name": "op",
                                            "occurrence": 0}]},
             {"worker_outcome": "skipped", "output": "line not changed"})
    killed = ({"job_id": "3", "mutations": [{"start_pos": [7, 0], "operator_name": "op",
                                             "occurrence": 0}]},
              {"worker_outcome": "normal", "test_outcome": "killed"})
    summary = runner.summarize(target, "smpref/store/journal.py",
                               [(job, skipped), other, killed], 2.0, "")
    assert (summary["mutants"], summary["killed"], summary["equivalent"]) == (2, 1, 1)
    assert summary["kill_rate"] == 1.0
    assert summary["survivors"][0]["equivalent"] == "because"
    assert summary["seconds_per_judged_mutant"] == 2.0  # one mutant ran


def test_each_targets_tests_run_cheapest_first_and_without_workers(runner: ModuleType) -> None:
    model = runner.TARGETS[0]
    assert model.tests[0] == "tests/test_rule_table.py"
    assert model.tests[-3:] == ("tests/test_model_machine.py", "tests/test_dialect_machine.py",
                                "tests/test_deployed_link_machine.py")
    options = " ".join(runner.PYTEST_OPTIONS)
    assert " -x " in f" {options} " and " -n 0 " in options and "not planted" in options


# -- mutation/judge.py: the warm executor that runs each mutant's own tests ------------------

TOY = """\
LIMIT = 3


def f(x):
    return (x +
            1)


def g(x):
    return x * LIMIT


def never(x):
    return x - 1
"""

TOY_TESTS = """\
import subprocess
import sys

from toy import f, g


def test_f():
    assert f(1) == 2


def test_g():
    assert g(2) == 6


def test_spawn():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
"""


@pytest.fixture(scope="module")
def judge() -> ModuleType:
    return mutation_module("judge")


def toy_env(where: Path) -> dict[str, str]:
    """The toy's environment, with bytecode written as on a machine without
    PYTHONDONTWRITEBYTECODE (CI): a stale compiled file must not hide a mutant."""
    import os
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(where)}


def toy_line(piece: str) -> int:
    return next(n for n, line in enumerate(TOY.splitlines(), 1) if piece in line)


@pytest.fixture(scope="module")
def toy_plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The judge's baseline of a toy module and its tests, run as `make mutate` runs it."""
    import json
    import subprocess

    where = tmp_path_factory.mktemp("toy")
    (where / "toy.py").write_text(TOY)
    (where / "test_toy.py").write_text(TOY_TESTS)
    done = subprocess.run([sys.executable, str(REPO / "mutation" / "judge.py"), "baseline",
                           "--modules", "toy.py", "--out", "plan.json", "--", "-q", "-p",
                           "no:cacheprovider", "-n", "0", "--rootdir", ".", "test_toy.py"],
                          cwd=where, capture_output=True, text=True, check=False,
                          env=toy_env(where))
    assert done.returncode == 0, done.stdout + done.stderr
    return where, json.loads((where / "plan.json").read_text())


def test_the_baseline_records_which_test_executes_which_line(
        judge: ModuleType, toy_plan: tuple[Path, dict[str, Any]]) -> None:
    _, plan = toy_plan
    assert [t["nodeid"] for t in plan["tests"]] == [
        "test_toy.py::test_f", "test_toy.py::test_g", "test_toy.py::test_spawn"]
    assert [t["spawns"] for t in plan["tests"]] == [False, False, True]
    assert "toy" in plan["loaded"] and "test_toy" not in plan["loaded"]
    # a continuation line counts as its statement, which only test_f executes
    assert judge.tests_for(plan, "toy.py", toy_line("1)")) == [
        "test_toy.py::test_f", "test_toy.py::test_spawn"]
    assert judge.tests_for(plan, "toy.py", toy_line("x * LIMIT")) == [
        "test_toy.py::test_g", "test_toy.py::test_spawn"]
    # a line run at import may change what any test sees: every test, the one that spawns last
    every = judge.tests_for(plan, "toy.py", toy_line("LIMIT = 3"))
    assert sorted(every[:2]) == ["test_toy.py::test_f", "test_toy.py::test_g"]
    assert every[2:] == ["test_toy.py::test_spawn"]
    # a line no test executes in this process: only what another process may run
    assert judge.tests_for(plan, "toy.py", toy_line("x - 1")) == ["test_toy.py::test_spawn"]
    without_spawn = {**plan, "tests": [t for t in plan["tests"] if not t["spawns"]]}
    assert judge.tests_for(without_spawn, "toy.py", toy_line("x - 1")) == []


def test_a_mutant_is_killed_by_its_tests_in_a_forked_child(
        toy_plan: tuple[Path, dict[str, Any]]) -> None:
    """The fork runs the chosen tests on the mutated file: test_f kills `+ 1` -> `- 1`, test_g
    cannot; the parent's own modules are untouched, so the next child sees the original."""
    import json
    import subprocess

    where, _ = toy_plan
    mutated = TOY.replace("1)", "- 1)").replace("(x +", "(x")
    script = f"""
import json, sys
sys.path.insert(0, {str(REPO / "mutation")!r})
import judge
args = ["-q", "-p", "no:cacheprovider", "-n", "0", "--rootdir", ".", "test_toy.py"]
import os
# as the judge does per mutant: a stamp of its own, or the plan's compiled file (same size,
# same second) would be loaded in place of the mutant
open("toy.py", "w").write({mutated!r}); os.utime("toy.py", (2 * 10**9, 2 * 10**9))
verdicts = [judge.run_child(args, ["test_toy.py::test_f"], 60)[0],
            judge.run_child(args, ["test_toy.py::test_g"], 60)[0]]
open("toy.py", "w").write({TOY!r})
os.utime("toy.py", (10**9, 10**9))
verdicts.append(judge.run_child(args, ["test_toy.py::test_f"], 60)[0])
# a test the plan does not know (a mutant added it) runs too: here it fails
open("test_new.py", "w").write("def test_new():\\n    assert False\\n")
planned = frozenset({"test_toy.py::test_f", "test_toy.py::test_g", "test_toy.py::test_spawn"})
verdicts.append(judge.run_child(args + ["test_new.py"], ["test_toy.py::test_f"], 60, planned)[0])
verdicts.append(judge.run_child(args + ["test_new.py"], ["test_toy.py::test_f"], 60)[0])
print(json.dumps(verdicts))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=where, capture_output=True,
                          text=True, check=False,
                          env=toy_env(where))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [True, False, False, True, False]


def test_the_warm_process_never_imports_the_mutated_module_or_its_importers(
        judge: ModuleType, tmp_path: Path) -> None:
    import json
    import subprocess

    (tmp_path / "target.py").write_text("X = 1\n")
    (tmp_path / "user.py").write_text("import target\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "user.py").write_text("from target import X\n")
    (tmp_path / "free.py").write_text("import json\n")
    script = f"""
import json, sys
sys.path.insert(0, {str(REPO / "mutation")!r})
import judge
kept = judge.preimport(["free", "user", "pkg.user", "target"], "target")
import pkg
print(json.dumps([kept, [m in sys.modules for m in ("target", "user", "pkg.user")],
                  hasattr(pkg, "user")]))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, check=False,
                          env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["free"], [False, False, False], False]


def test_machines_only_keeps_each_targets_state_machine_tests_and_nothing_else(
        runner: ModuleType) -> None:
    """``--machines-only`` judges the model, the deployed effects and the ratchet by the
    state machines alone (issue 30's measure)."""
    for target in runner.TARGETS:
        kept = runner.machines_only(target)
        assert kept.modules == target.modules
        assert kept.tests == tuple(t for t in target.tests if "machine" in Path(t).name)
    rules = runner.machines_only(next(t for t in runner.TARGETS if t.name == "model rules"))
    assert rules.tests == ("tests/test_model_machine.py", "tests/test_dialect_machine.py",
                           "tests/test_deployed_link_machine.py")
    assert runner.build_parser().parse_args(["--machines-only"]).machines_only


def test_the_conformance_target_is_judged_by_smpref_conform_alone(runner: ModuleType) -> None:
    """Issue 42's measure: the code that decides a deployed server's answers, judged only by
    the conformance run, at 18 (and on request at 10 and 6, each alone); it has no state
    machine, so ``--machines-only`` leaves it out, and its sessions never overwrite another
    target's of the same module."""
    by_name = {t.name: t for t in runner.TARGETS}
    for name, version in (("conformance", 18), ("conformance v10", 10),
                          ("conformance v6", 6)):
        assert by_name[name].tests == (
            f"tests/conform_as_judge.py::test_conform_passes[{version}]",)
        assert by_name[name].deployed
    conformance = by_name["conformance"]
    assert "smpref/model/rules.py" in conformance.modules
    judge = (REPO / "tests" / "conform_as_judge.py").read_text()
    assert "parametrize(\"version\", [18, 10, 6])" in judge
    assert not any(t.name.startswith("conformance")
                   for t, _ in runner.selected_modules([], machines=True))
    assert {t.name for t, _ in runner.selected_modules(["conformance"])} == {"conformance"}
    # the other versions run only when named, also when a module is named
    assert "conformance v6" not in {t.name for t, _ in runner.selected_modules([])}
    assert "conformance v6" not in {
        t.name for t, _ in runner.selected_modules(["smpref/model/rules.py"])}
    assert {t.name for t, _ in runner.selected_modules(["conformance v6"])} == \
        {"conformance v6"}
    rules = next(t for t in runner.TARGETS if t.name == "model rules")
    out = Path("reports")
    assert (runner.session_file(rules, "smpref/model/rules.py", 0, out)
            != runner.session_file(conformance, "smpref/model/rules.py", 0, out))
