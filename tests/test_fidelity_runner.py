"""`make mutate-fidelity` (mutation/fidelity.py) keeps a planted deviation for every row of
spec/deployed-fidelity.md (issue 41): a row without one, a deviation naming no row, or an edit
whose old text is no longer in smpref's source exactly once fails here, so the plan cannot rot
between runs. The runner itself counts a deviation its checks catch as killed, one they miss as
survived, and refuses an edit that does not compile rather than count the crash as a kill."""

from __future__ import annotations

from importlib.metadata import distribution
from pathlib import Path
from types import ModuleType

import pytest
from mutation_modules import mutation_module

#: what the runner mutates: the installed wheel, whose package data (smpref/_data/spec/...) a
#: deviation may edit as well
PACKAGE = Path(str(distribution("smpref").locate_file("smpref"))).resolve()


@pytest.fixture(scope="module")
def fidelity() -> ModuleType:
    return mutation_module("fidelity")


def test_every_row_has_a_deviation_whose_edits_apply_to_the_source(fidelity: ModuleType) -> None:
    rows = fidelity.rows()
    deviations = fidelity.all_deviations()
    assert len(rows) > 140 and len(deviations) >= len([r for r in rows if not r.heading])
    assert fidelity.problems(rows, deviations, PACKAGE) == []
    for deviation in deviations:
        assert deviation.what and all(e.file.startswith("smpref/") for e in deviation.edits)


def test_no_deviation_names_what_its_file_does_not_define(fidelity: ModuleType) -> None:
    """A deviation that uses a name its file lacks (an enum a refactoring introduced, a helper
    not imported) crashes where it runs, and the crash would count as a kill."""
    assert fidelity.undefined_names(fidelity.all_deviations(), PACKAGE) == []
    broken = fidelity.plant("DEP-11a", "x", "smpref/transport/versions.py", "def ",
                            "x = no_such_name\ndef ")
    assert [p.split(": ", 1)[0] for p in fidelity.undefined_names([broken], PACKAGE)] == [
        "DEP-11a (x)"]


def test_the_plan_check_names_what_is_wrong(fidelity: ModuleType) -> None:
    row = fidelity.Row("DEP-11a", ("tests/test_server.py::x",), ())
    stale = fidelity.plant("DEP-11a", "x", "smpref/transport/versions.py", "no such text", "y")
    unknown = fidelity.plant("DEP-99", "x", "smpref/transport/versions.py", "def ", "def ")
    found = fidelity.problems([row, fidelity.Row("DEP-1a", ("t",), ())], [stale, unknown],
                              PACKAGE)
    assert "DEP-1a: no planted deviation" in found
    assert "DEP-99: the fidelity table has no such row" in found
    assert any(p.startswith("DEP-11a: smpref/transport/versions.py: old text found 0 times")
               for p in found)
    assert any("found" in p and p.startswith("DEP-99") for p in found)  # `def ` is not unique
    assert "DEP-99: smpref/transport/versions.py: the edit changes nothing" in found


def test_a_caught_deviation_is_killed_a_missed_one_survives_a_broken_one_is_an_error(
        fidelity: ModuleType) -> None:
    """One fast cited test judges three deviations of versions.py: the one the table's DEP-11a
    row plants (the test fails), a change to a docstring (it passes: survived) and an edit that
    does not compile (refused before any test runs, never a kill)."""
    alpn = "tests/test_server.py::test_the_alpn_chooses_the_advertised_range"
    row = fidelity.Row("DEP-11a", (alpn,), ())
    [planted] = [d for d in fidelity.all_deviations() if d.claim == "DEP-11a"]
    killed = fidelity.judge(planted, row, 300.0)
    assert (killed.status, killed.killed_by.split("[")[0]) == ("killed", row.tests[0])
    assert killed.failure
    harmless = fidelity.plant("DEP-11a", "a docstring", "smpref/transport/versions.py",
                              '"""The dialect a server speaks', '"""Which dialect a server speaks')
    assert fidelity.judge(harmless, row, 300.0).status == "survived"
    broken = fidelity.plant("DEP-11a", "no longer Python", "smpref/transport/versions.py",
                            "    if alpn is None:\n", "    if alpn is None\n")
    outcome = fidelity.judge(broken, row, 300.0)
    assert (outcome.status, outcome.ran) == ("error", [])
    assert "no longer compiles" in outcome.failure


def test_a_conformance_case_that_fails_at_a_version_kills(fidelity: ModuleType,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """The conformance judge reads each result's status: a case failing at the second
    version it tries is a kill (1), and one passing at every version is not (0)."""
    from smpref.conform import runner
    from smpref.conform.case_verdicts import Status

    case = runner.select(["life.skey"])[0]
    tried: list[int] = []

    def at(fail_at: int | None) -> object:
        async def run_embedded(cases: list[runner.Case], versions: list[int | None],
                               **_: object) -> list[runner.Report]:
            [version] = versions
            assert version is not None
            tried.append(version)
            status = Status.FAIL if version == fail_at else Status.PASS
            return [runner.Report("embedded", True, (6, 18), version, False,
                                  [runner.Result(case, status, "broken", 0.0)])]
        return run_embedded

    from smpref.transport.versions import DEPLOYED_VERSIONS
    monkeypatch.setattr(runner, "run_embedded", at(DEPLOYED_VERSIONS[0]))
    assert fidelity.conform_case("life.skey") == 1
    assert tried == [DEPLOYED_VERSIONS[-1], DEPLOYED_VERSIONS[0]]
    assert "at version" in capsys.readouterr().out
    tried.clear()
    monkeypatch.setattr(runner, "run_embedded", at(None))
    assert fidelity.conform_case("life.skey") == 0
    assert sorted(tried) == sorted(DEPLOYED_VERSIONS)
