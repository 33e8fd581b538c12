"""spec/deployed-fidelity.md keeps every deployed claim tied to simplexmq's source and to a
check (issue 28): a requirement of deployed SMP or a divergence without a row, a row without a
source line, or a row naming a test or conformance case that does not exist fails here."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from smpref.conform.cases import CASES

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "spec"
#: a source citation: a simplexmq file and a line or a range of lines
SOURCE = re.compile(r"[\w/]+\.(?:hs|sql):\d+(?:-\d+)?")
TEST = re.compile(r"tests/(test_\w+\.py)::(\w+)")
CONFORM = re.compile(r"conform:([\w.-]+)")


def _rows() -> list[list[str]]:
    rows = []
    for line in (SPEC / "deployed-fidelity.md").read_text().splitlines():
        if line.startswith("| ") and not line.startswith(("| claim", "|---")):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            assert len(cells) == 5, line
            rows.append(cells)
    return rows


@functools.cache
def _tests_in(file: str) -> set[str]:
    tree = ast.parse((ROOT / "tests" / file).read_text())
    return {n.name for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_deployed_requirement_and_divergence_has_a_row() -> None:
    claims = {row[0] for row in _rows()}
    required = set(re.findall(r"\*\*(DEP-\d+)\*\*", (SPEC / "deployed.md").read_text()))
    required |= set(re.findall(r"\*\*(DIV-\d+)\*\*", (SPEC / "divergences.md").read_text()))
    assert len(required) > 50
    covered = {re.sub(r"[a-z]$", "", claim) for claim in claims}
    assert not required - covered, sorted(required - covered)


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row[0])
def test_each_row_cites_source_lines_and_checks_that_exist(row: list[str]) -> None:
    claim, _, source, checked, smpref = row
    assert SOURCE.search(source), f"{claim}: no simplexmq file:line in {source!r}"
    tests = TEST.findall(checked)
    cases = CONFORM.findall(checked)
    if claim.endswith("§") or checked.startswith("see "):  # a heading row: its claims follow
        return
    assert tests or cases, f"{claim}: no test or conformance case checks it"
    for file, name in tests:
        assert (ROOT / "tests" / file).is_file(), f"{claim}: tests/{file} does not exist"
        assert name in _tests_in(file), f"{claim}: tests/{file} has no {name}"
    known = {case.id for case in CASES}
    for case_id in cases:
        assert case_id in known, f"{claim}: no conformance case {case_id}"
    for div in re.findall(r"DIV-\d+", smpref):
        assert f"**{div}**" in (SPEC / "divergences.md").read_text(), f"{claim}: no {div}"
