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


def diff(before: str, after: str, context: str = "    x = 1") -> str:
    return f"--- a\n+++ b\n@@ -1,2 +1,2 @@\n {context}\n-{before}\n+{after}\n"


def test_docs_list_every_known_equivalent(runner: ModuleType) -> None:
    docs = (REPO / "docs" / "mutation-equivalents.md").read_text()
    assert runner.equivalents_table() in docs, (
        "docs/mutation-equivalents.md's table of equivalent mutants is not `python "
        "mutation/run.py --equivalents-table`")
    assert runner.equivalents_table(runner.DEPLOYED_EQUIVALENT) in docs, (
        "docs/mutation-equivalents.md's table of the conformance targets' equivalents is not "
        "the second table of `python mutation/run.py --equivalents-table`")


def test_a_deployed_equivalent_counts_only_for_the_conformance_targets(
        runner: ModuleType) -> None:
    """The seed design's ratchet update is equivalent for a deployed server's answers, not for
    the model's own targets, whose seed machines see it."""
    line = "        if state.since_update >= server.config.ratchet_update_interval:"
    mutant = diff(line, line.replace(">=", ">"), "    else:")
    operator = "core/ReplaceComparisonOperator_GtE_Gt"
    assert runner.equivalent("smpref/model/effects.py", operator, mutant, deployed=True)
    assert runner.equivalent("smpref/model/effects.py", operator, mutant) == ""
    # and only the operators an entry names: ReplaceOrWithAnd on the gathering line counts
    gathering = "        if self.config.pending_events_interval <= 0 or out.corr_id or \\"
    for operator, equivalent in (("core/ReplaceComparisonOperator_LtE_Gt", True),
                                 ("core/ReplaceOrWithAnd", False)):
        mutant = diff(gathering, gathering.replace("<=", ">"))
        assert bool(runner.equivalent("smpref/serve/listener.py", operator, mutant,
                                      deployed=True)) is equivalent


def test_an_equivalent_is_recognised_only_where_it_was_shown(runner: ModuleType) -> None:
    journal = "smpref/store/journal.py"
    line = "        if len(data) > state.write_bytes:"
    mutated = "        if len(data) != state.write_bytes:"
    assert runner.equivalent(journal, "core/ReplaceComparisonOperator_Gt_NotEq",
                             diff(line, mutated))
    # another operator on the same line, the same line in another module: not known
    assert not runner.equivalent(journal, "core/ReplaceComparisonOperator_Gt_GtE",
                                 diff(line, "        if len(data) >= state.write_bytes:"))
    assert not runner.equivalent("smpref/model/rules.py",
                                 "core/ReplaceComparisonOperator_Gt_NotEq", diff(line, mutated))
    # an entry with `after` holds only right after that line
    stop = "                break"
    assert runner.equivalent(journal, "core/ReplaceBreakWithContinue", diff(
        stop, "                continue", "            if not over and not idle:"))
    assert not runner.equivalent(journal, "core/ReplaceBreakWithContinue", diff(
        stop, "                continue", "                if len(found) == limit:"))


def test_the_kill_rate_leaves_out_equivalents_only(runner: ModuleType) -> None:
    target = runner.TARGETS[2]
    journal = "smpref/store/journal.py"

    def pair(n: int, outcome: str, diff_text: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
        job = {"job_id": str(n), "mutations": [{"start_pos": [n, 0], "operator_name":
                                                 "core/ReplaceComparisonOperator_Gt_NotEq",
                                                 "occurrence": 0}]}
        return job, {"worker_outcome": "normal", "test_outcome": outcome, "diff": diff_text}

    known = diff("        if len(data) > state.write_bytes:",
                 "        if len(data) != state.write_bytes:")
    pairs = [pair(n, "killed") for n in range(6)] + [pair(6, "survived", known),
                                                     pair(7, "survived", diff("a", "b"))]
    summary = runner.summarize(target, journal, pairs, 1.0)
    assert (summary["mutants"], summary["killed"], summary["equivalent"]) == (8, 6, 1)
    assert summary["kill_rate"] == round(6 / 7, 4)
    assert [bool(s["equivalent"]) for s in summary["survivors"]] == [True, False]


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


def test_a_known_equivalent_is_recognised_before_it_runs(runner: ModuleType) -> None:
    source = ["def f(state, data):", "        if len(data) > state.write_bytes:", "    pass"]
    journal = "smpref/store/journal.py"
    assert runner.pre_run_equivalent(journal, "core/ReplaceComparisonOperator_Gt_NotEq",
                                     source, 2)
    assert not runner.pre_run_equivalent(journal, "core/ReplaceComparisonOperator_Gt_GtE",
                                         source, 2)
    assert not runner.pre_run_equivalent(journal, "core/ReplaceComparisonOperator_Gt_NotEq",
                                         source, 3)
    # an entry with `after` needs that line just before
    loop = ["            if not over and not idle:", "                break"]
    assert runner.pre_run_equivalent(journal, "core/ReplaceBreakWithContinue", loop, 2)
    assert not runner.pre_run_equivalent(journal, "core/ReplaceBreakWithContinue",
                                         ["    other", "                break"], 2)


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
                               [(job, skipped), other, killed], 2.0)
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


def test_a_mutant_is_left_unrun_only_on_an_exact_operator_match(runner: ModuleType) -> None:
    """The known equivalent `!=` -> `>` on this line does not excuse `!=` -> `>=` from running
    (the post-run check matches operators by substring; the pre-run one may not)."""
    source = ["def step(record):", "    if record.seq != 0:"]
    ratchet = "smpref/crypto/ratchet.py"
    assert runner.pre_run_equivalent(ratchet, "core/ReplaceComparisonOperator_NotEq_Gt",
                                     source, 2)
    assert not runner.pre_run_equivalent(ratchet, "core/ReplaceComparisonOperator_NotEq_GtE",
                                         source, 2)
    # a family entry holds for some operators of the family only: they run
    server = "smpref/model/server.py"
    line = ['        if entity == "link_key":']
    operator = "core/ReplaceComparisonOperator_Eq_LtE"
    assert runner.equivalent(server, operator, f"@@\n \n-{line[0]}\n")
    assert not runner.pre_run_equivalent(server, operator, line, 1)
    # an entry for any operator explains survivors after they ran, never before
    retention = "smpref/model/retention.py"
    line = ["        if len(queue.link.blob.parts) == 1 or gain == 0:"]
    assert runner.equivalent(retention, "core/AddNot", f"@@\n {''}\n-{line[0]}\n")
    assert not runner.pre_run_equivalent(retention, "core/AddNot", line, 1)


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


def test_every_equivalent_names_a_line_of_its_module(runner: ModuleType) -> None:
    """An entry whose line is no longer in its module (renamed, moved, reformatted) would
    quietly stop counting its mutant as equivalent and stay listed on the docs page: each
    entry's ``piece`` (and ``after``) must be in the module it names."""
    stale = []
    for entry in (*runner.EQUIVALENT, *runner.DEPLOYED_EQUIVALENT):
        if entry.module == "*":
            continue
        source = (REPO / entry.module).read_text()
        if entry.piece not in source or entry.after not in source:
            stale.append((entry.module, entry.piece))
    assert stale == []
