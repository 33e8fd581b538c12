"""`make mutate`'s runner (mutation/run.py), without running cosmic-ray: how it recognises an
equivalent mutant, how it counts, and that docs/testing.md lists every equivalent it knows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_run", REPO / "mutation" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def diff(before: str, after: str, context: str = "    x = 1") -> str:
    return f"--- a\n+++ b\n@@ -1,2 +1,2 @@\n {context}\n-{before}\n+{after}\n"


def test_docs_list_every_known_equivalent(runner: ModuleType) -> None:
    docs = (REPO / "docs" / "testing.md").read_text()
    assert runner.equivalents_table() in docs, (
        "docs/testing.md's table of equivalent mutants is not `python mutation/run.py "
        "--equivalents-table`")


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
