"""Where each kind of evidence cites requirement IDs.

* tests: ``req("ID", ...)`` in a test module, as a decorator or applied to a class or
  function, read from the source with :mod:`ast` (the tests are not imported);
* vectors: the ``requirements`` of each test of each vector file;
* conformance cases: each case's requirements; and apart ("deployed"), those of the cases a
  user can run against a deployed server (``needs`` core or deployed);
* rule-table rows: each rule's requirements;
* the model: the rules and transitions a seeded run of its state machine reported
  (:mod:`smpref.coverage.reached`).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from smpref.conform.cases import CASES
from smpref.coverage.reached import reached
from smpref.errors import SmprefError
from smpref.model.rules import RULES

KINDS = ("tests", "vectors", "cases", "deployed", "rules", "model", "oracle")


@dataclass(frozen=True, slots=True)
class Citation:
    """One piece of evidence citing one requirement: its kind and where it is."""

    requirement: str
    kind: str
    where: str


def _req_ids(call: ast.Call) -> list[str]:
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(
        a.value, str)]


def _is_req(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "req"


def test_citations(folder: Path) -> Iterator[Citation]:
    """``req(...)`` in every ``test_*.py`` of ``folder``, named ``file::test``."""
    for path in sorted(folder.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            named: list[tuple[str, ast.Call]] = []
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                named = [(node.name, d) for d in node.decorator_list if _is_req(d)
                         and isinstance(d, ast.Call)]
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    _is_req(node.value.func) and isinstance(node.value.func, ast.Call):
                # X = req("ID")(SomeMachine.TestCase)
                target = node.targets[0]
                name = target.id if isinstance(target, ast.Name) else "?"
                named = [(name, node.value.func)]
            for name, call in named:
                for requirement in _req_ids(call):
                    yield Citation(requirement, "tests", f"{path.name}::{name}")


#: the record of `make mutate-citations` (mutation/citations.py) in the tests' folder: for each
#: requirement it sampled, each citing test's outcome with the requirement's deviations planted
KILLS_FILE = "citation_kills.json"


def kill_record(folder: Path) -> dict[str, dict[str, str]]:
    """Requirement ID -> {``file::test``: ``killed``, ``survived`` or ``error``} from
    :data:`KILLS_FILE` in the tests' ``folder`` (empty when there is none).

    Raises:
        SmprefError: the record is not such a mapping.
    """
    path = folder / KILLS_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SmprefError(f"{path}: not a kill record: {exc}") from None
    if not isinstance(data, dict) or not all(
            isinstance(v, dict) and all(o in ("killed", "survived", "error")
                                        for o in v.values()) for v in data.values()):
        raise SmprefError(f"{path}: not a kill record: expected {{ID: {{test: outcome}}}}")
    return data


def vector_citations(folder: Path) -> Iterator[Citation]:
    """The requirements of every test of every vector file in ``folder``, ``file#tcId``."""
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SmprefError(f"{path}: not a vector file: {exc}") from None
        for group in data.get("testGroups", []):
            for test in group.get("tests", []):
                for requirement in test.get("requirements", []):
                    yield Citation(requirement, "vectors", f"{path.name}#{test['tcId']}")


def case_citations() -> Iterator[Citation]:
    """Every case's requirements ("cases"), and again ("deployed") those of the cases that run
    against a deployed server."""
    for case in CASES:
        for requirement in case.requirements:
            yield Citation(requirement, "cases", case.id)
            if case.needs in ("core", "deployed"):
                yield Citation(requirement, "deployed", case.id)


def rule_citations() -> Iterator[Citation]:
    for rule in RULES:
        for requirement in rule.requirements:
            yield Citation(requirement, "rules", rule.name)


def model_citations(seeds: int) -> Iterator[Citation]:
    """What the model's state machine reached under seeds 0..seeds-1 ("model"), and which
    requirements it checked there against its oracle ("oracle", cited by the machine's name)."""
    if not seeds:
        return
    found, checked = reached(range(seeds))
    for requirement, names in found.items():
        for name in sorted(names):
            yield Citation(requirement, "model", name)
    for requirement in sorted(checked):
        yield Citation(requirement, "oracle", "QueueMachine")
