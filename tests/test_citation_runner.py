"""`make mutate-citations` (mutation/citations.py, issue 44) keeps a deviation that applies to
smpref's source for every requirement it samples: an edit whose old text is no longer in the
installed package exactly once fails here, so the plan cannot rot between runs. The runner
counts a citing test that fails with a deviation planted as a kill, one that passes as a
survivor, and its record keeps only the citations the tests still make."""

from __future__ import annotations

import json
from importlib.metadata import distribution
from pathlib import Path
from types import ModuleType

import pytest
from mutation_modules import mutation_module

PACKAGE = Path(str(distribution("smpref").locate_file("smpref"))).resolve()


@pytest.fixture(scope="module")
def citations() -> ModuleType:
    return mutation_module("citations")


def test_every_requirement_deviation_applies_to_the_source(citations: ModuleType) -> None:
    from fidelity import problems, undefined_names

    planted = citations.deviations()
    cited = citations.citing_tests()
    sample = set(planted) & set(cited)
    assert len(sample) >= 100
    found = [p for p in problems([], [d.deviation for r in sample for d in planted[r]], PACKAGE)
             if "no such row" not in p]
    assert found == []
    assert undefined_names([d.deviation for r in sample for d in planted[r]], PACKAGE) == []
    assert all(d.what for r in sample for d in planted[r])


def test_a_rule_deviation_drops_exactly_one_refusal_row(citations: ModuleType) -> None:
    from deviations.requirements import rule_deviations

    from smpref.model.rules import RULES

    dropped = {d.edits[0].new for d in rule_deviations()}
    refusals = [r for r in RULES if not r.accepts]
    assert len(dropped) == len(refusals)
    assert all(d.claim in {q for r in refusals for q in r.requirements}
               for d in rule_deviations())


def test_failed_items_belong_to_the_citation_that_is_their_prefix(
        citations: ModuleType) -> None:
    out = ("FAILED tests/test_a.py::test_xy - AssertionError\n"  # not test_x's
           "FAILED tests/test_a.py::test_x[3-b] - AssertionError: 1 != 2\n"
           "ERROR tests/test_b.py::Machine::runTest - RuntimeError: boom\n"
           "FAILED tests/test_c.py::test_w[ERR BLOCKED - x] - AssertionError: spaces\n")
    cited = ["tests/test_a.py::test_x", "tests/test_b.py::Machine", "tests/test_a.py::test_z",
             "tests/test_c.py::test_w"]
    assert citations.failed_citations(out, cited) == {
        "tests/test_a.py::test_x": "AssertionError: 1 != 2",
        "tests/test_b.py::Machine": "RuntimeError: boom",
        "tests/test_c.py::test_w": "AssertionError: spaces"}


def test_the_record_keeps_only_citations_the_tests_still_make(
        citations: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "kills.json"
    path.write_text(json.dumps({"CMD-2": {"test_gone.py::t": "survived"},
                                "CMD-3": {"test_a.py::t": "killed"}}))
    verdict = citations.Verdict("MSG-1", 1, {"tests/test_a.py::t": "killed",
                                             "tests/test_b.py::u": "survived"})
    citations.record([verdict], {"MSG-1": ["tests/test_a.py::t", "tests/test_b.py::u"],
                                 "CMD-3": ["tests/test_a.py::t"]}, path)
    assert json.loads(path.read_text()) == {
        "CMD-3": {"test_a.py::t": "killed"},
        "MSG-1": {"test_a.py::t": "killed", "test_b.py::u": "survived"}}
    assert verdict.survivors == ["tests/test_b.py::u"]
    # a later run (more deviations) that the test survives does not undo the kill
    again = citations.Verdict("MSG-1", 1, {"tests/test_a.py::t": "survived",
                                           "tests/test_b.py::u": "killed"})
    citations.record([again], {"MSG-1": ["tests/test_a.py::t", "tests/test_b.py::u"]}, path)
    assert json.loads(path.read_text()) == {
        "MSG-1": {"test_a.py::t": "killed", "test_b.py::u": "killed"}}


def test_a_hung_test_is_a_kill_and_does_not_leave_the_others_unjudged(
        citations: ModuleType, tmp_path: Path) -> None:
    """A run that one hung test stops is split into a run per test: the hung one is killed
    (CI stops a run that hangs), the failing one is killed by its own failure and the passing
    one survives, instead of all three being left as survivors of the stopped run."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_toy.py").write_text(
        "import threading\n\n"
        "def test_hangs():\n    threading.Event().wait()\n\n"
        "def test_fails():\n    assert 1 == 2\n\n"
        "def test_passes():\n    pass\n")
    toy = [f"tests/test_toy.py::{name}" for name in ("test_hangs", "test_fails", "test_passes")]
    errors: list[str] = []
    failed = citations._failed_under("toy", toy, tmp_path, 5.0, errors)
    assert errors == []
    assert failed == {"tests/test_toy.py::test_hangs": "hung: the test took more than 5 s alone",
                      "tests/test_toy.py::test_fails": "assert 1 == 2"}
