"""Every requirement ID of spec/ is cited by a test, a vector, a conformance case or a rule of
the rule table, or exempted with a reason in spec/coverage-exemptions.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from smpref.coverage.matrix import build, exemptions
from smpref.errors import SmprefError

ROOT = Path(__file__).resolve().parent.parent


def test_every_requirement_is_cited_or_exempt_with_a_reason() -> None:
    matrix = build(ROOT / "tests", ROOT / "vectors")
    gaps = [r.requirement for r in matrix.gaps()]
    assert gaps == [], f"nothing checks {gaps}: cite them with req(...) or exempt them"
    assert len(matrix.rows) > 150


def test_no_exemption_outlives_its_check() -> None:
    matrix = build(ROOT / "tests", ROOT / "vectors")
    stale = [r.requirement for r in matrix.rows if r.exempt and r.covered]
    assert stale == [], "these are checked now: remove them from spec/coverage-exemptions.md"
    assert all(why for why in exemptions().values())


def test_the_matrix_sees_each_kind_of_evidence() -> None:
    matrix = {r.requirement: r for r in build(ROOT / "tests", ROOT / "vectors").rows}
    assert "test_store_machine.py::test_the_journal_store_behaves_as_the_memory_store" in \
        matrix["STORE-18"].citations["tests"]
    assert matrix["ROT-4"].citations["oracle"] == ["QueueMachine"]  # checked, not only reached
    assert any(v.startswith("address.json#") for v in matrix["URI-7"].citations["vectors"])
    assert "cred.send.none" in matrix["MSG-1"].citations["cases"]
    assert "SEND.unsigned-to-secured" in matrix["MSG-1"].citations["rules"]
    assert "SEND.accepted" in matrix["CMD-17"].citations["model"]  # reached, not only cited
    assert "ratchet.update" in matrix["QENC-4"].citations["model"]


def test_the_observer_reports_only_what_a_run_reaches() -> None:
    """Without runs the model column is empty; with them it holds rule names of the table."""
    from smpref.model.rules import RULES

    names = {r.name for r in RULES}
    quiet = build(None, None, runs=0)
    assert all(not r.citations["model"] for r in quiet.rows)
    ran = build(None, None, runs=2)
    reached = {n for r in ran.rows for n in r.citations["model"]}
    assert reached & names and "NEW.accepted" in reached


def test_without_tests_and_vectors_the_gaps_show() -> None:
    """The check can fail: leave out the tests and vectors and requirements that only they
    check are reported."""
    gaps = {r.requirement for r in build(None, None, runs=0).gaps()}
    assert {"URI-7", "STORE-18", "ENC-10"} <= gaps


def test_the_command_exits_1_on_a_gap(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    cli = [sys.executable, "-m", "smpref", "spec", "coverage"]
    bad = subprocess.run([*cli, "--tests", str(empty), "--vectors", str(empty)],
                         capture_output=True, text=True, cwd=tmp_path, check=False)
    assert bad.returncode == 1 and "NOTHING CITES IT" in bad.stdout
    good = subprocess.run([*cli, "--tests", str(ROOT / "tests"), "--vectors",
                           str(ROOT / "vectors"), "--json"],
                          capture_output=True, text=True, cwd=tmp_path, check=False)
    assert good.returncode == 0, good.stderr
    assert '"gaps": 0' in good.stdout


def test_every_server_requirement_has_a_deployed_conformance_case_or_a_reason() -> None:
    """Issue 42: what a server must do, `smpref conform` checks against a deployed server,
    except what spec/coverage-exemptions.md says no client of one can observe."""
    matrix = build(ROOT / "tests", ROOT / "vectors", runs=0)
    gaps = [r.requirement for r in matrix.conformance_gaps()]
    assert gaps == [], f"no conformance case runs against a deployed server for {gaps}"
    server = [r for r in matrix.rows if r.server]
    assert {r.requirement.split("-")[0] for r in server} >= {"AUTH", "CMD", "DEP", "MSG",
                                                              "QUEUE", "TRANS"}
    # a reason is never given for a requirement a deployed case checks
    stale = [r.requirement for r in server if r.not_conformance and r.citations["deployed"]]
    assert stale == [], f"these have deployed cases now: remove their reasons: {stale}"


def test_a_seed_only_case_is_not_a_deployed_case() -> None:
    """The column can tell: `link.lset-lget` (seed) cites LINK-5 and is not in it; the
    credential cases of SUB (core) are."""
    matrix = {r.requirement: r for r in build(None, None, runs=0).rows}
    assert "link.lset-lget" in matrix["LINK-5"].citations["cases"]
    assert "link.lset-lget" not in matrix["LINK-5"].citations["deployed"]
    assert "cred.sub.right-key" in matrix["CMD-16"].citations["deployed"]


def test_the_tests_column_counts_tests_that_kill(tmp_path: Path) -> None:
    """With a kill record beside the tests (mutation/citations.py, issue 44), a measured
    requirement counts only the citing tests that failed with its deviations planted; a test
    that survived no longer counts as citing it, and one the record does not know counts for
    nothing."""
    import json

    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text(
        "from reqs import req\n\n@req('CMD-17')\ndef test_kills(): ...\n\n"
        "@req('CMD-17', 'MSG-1')\ndef test_survives(): ...\n\n"
        "@req('CMD-17')\ndef test_new(): ...\n")
    plain = {r.requirement: r for r in build(tests, None, runs=0).rows}
    assert plain["CMD-17"].tests_cell() == "3 cite" and not plain["CMD-17"].measured
    (tests / "citation_kills.json").write_text(json.dumps({"CMD-17": {
        "test_a.py::test_kills": "killed", "test_a.py::test_survives": "survived"}}))
    rows = {r.requirement: r for r in build(tests, None, runs=0).rows}
    row = rows["CMD-17"]
    assert row.measured and row.kills == ["test_a.py::test_kills"]
    assert row.survivors == ["test_a.py::test_survives"]
    assert row.citations["tests"] == ["test_a.py::test_kills", "test_a.py::test_new"]
    assert row.tests_cell() == "1 kill"
    assert rows["MSG-1"].tests_cell() == "1 cite"  # not measured: the citation still counts
    (tests / "citation_kills.json").write_text('{"CMD-17": {"test_a.py::test_kills": "maybe"}}')
    with pytest.raises(SmprefError, match="not a kill record"):
        build(tests, None, runs=0)


def test_no_citation_that_survived_its_requirement_is_left() -> None:
    """Issue 44: a test whose citation survived every deviation of the requirement has the
    citation removed or is strengthened and measured again, so the committed record holds no
    surviving citation that the tests still make."""
    matrix = build(ROOT / "tests", None, runs=0)
    left = [(r.requirement, t) for r in matrix.rows for t in r.survivors]
    assert left == []
    measured = [r for r in matrix.rows if r.measured]
    assert len(measured) >= 100
    assert all(r.kills for r in measured if r.citations["tests"])
