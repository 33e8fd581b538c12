"""The matrix: each requirement ID with its citations, and what is exempt and why."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from smpref.coverage.citations import (
    KINDS,
    Citation,
    case_citations,
    kill_record,
    model_citations,
    rule_citations,
    test_citations,
    vector_citations,
)
from smpref.errors import SmprefError
from smpref.resources import spec_pages, spec_text
from smpref.spec.requirements import requirement_texts

EXEMPTIONS_PAGE = "coverage-exemptions.md"
_DEFINITION = re.compile(r"^- \*\*([A-Z]+-\d+)\*\*", re.M)
_EXEMPT_ROW = re.compile(r"^\| ([A-Z]+-\d+) \| (.+?) \|$", re.M)
#: the heading of the exemptions page's table of server requirements that no conformance case
#: can check against a deployed server; the rows above it exempt from any check
_NOT_CONFORMANCE = "## Server requirements no conformance case checks"
#: the pages whose requirements say what a server does: each must have a conformance case
#: that runs against a deployed server, or a reason in that table. Not links.md: it is the seed
#: design's short links (deployed's are DEP-5's, on deployed.md) and their text syntax, whose
#: server side the seed cases (``link.*``) check
SERVER_PAGES = ("authorization.md", "commands.md", "deployed.md", "messaging.md", "queues.md",
                "transport.md")


@dataclass
class Row:
    """One requirement: where it is defined, its text, what cites it, and any exemption."""

    requirement: str
    page: str
    text: str
    citations: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in KINDS})
    exempt: str = ""
    #: why no conformance case can check this server requirement against a deployed server
    not_conformance: str = ""
    #: whether `make mutate-citations` sampled this requirement; if so, the citing tests that
    #: failed with one of its deviations planted (``kills``) and those that passed with every
    #: one (``survivors``, which ``citations["tests"]`` then leaves out)
    measured: bool = False
    kills: list[str] = field(default_factory=list)
    survivors: list[str] = field(default_factory=list)

    @property
    def server(self) -> bool:
        """Whether the requirement says what a server does (:data:`SERVER_PAGES`)."""
        return self.page in SERVER_PAGES

    @property
    def covered(self) -> bool:
        return any(self.citations.values())

    def to_json(self) -> dict[str, object]:
        return {"id": self.requirement, "page": self.page, "text": self.text,
                **self.citations, "exempt": self.exempt or None,
                "notConformance": self.not_conformance or None, "measured": self.measured,
                "testsThatKill": self.kills, "testsThatSurvive": self.survivors}

    def tests_cell(self) -> str:
        """The tests column: how many citing tests kill a measured requirement, how many cite
        one not measured."""
        if self.measured:
            return f"{len(self.kills)} kill"
        return f"{len(self.citations['tests'])} cite" if self.citations["tests"] else "0"


@dataclass
class Matrix:
    rows: list[Row]
    sources: dict[str, str]

    def gaps(self) -> list[Row]:
        """Requirements that nothing cites and nothing exempts."""
        return [r for r in self.rows if not r.covered and not r.exempt]

    def conformance_gaps(self) -> list[Row]:
        """Server requirements without a conformance case that runs against a deployed server,
        and without a reason why none can."""
        return [r for r in self.rows
                if r.server and not r.citations["deployed"] and not r.not_conformance]

    def to_json(self) -> dict[str, object]:
        counts = {k: sum(1 for r in self.rows if r.citations[k]) for k in KINDS}
        return {"requirements": [r.to_json() for r in self.rows], "sources": self.sources,
                "counts": {"requirements": len(self.rows), **counts,
                           "covered": sum(r.covered for r in self.rows),
                           "exempt": sum(bool(r.exempt) for r in self.rows),
                           "gaps": len(self.gaps()),
                           "server": sum(r.server for r in self.rows),
                           "measured": sum(r.measured for r in self.rows),
                           "killedByATest": sum(bool(r.kills) for r in self.rows),
                           "survivingCitations": sum(len(r.survivors) for r in self.rows),
                           "conformanceGaps": len(self.conformance_gaps())}}


def exemptions() -> dict[str, str]:
    """ID -> why it is exempt from any check, from spec/coverage-exemptions.md."""
    above = spec_text(EXEMPTIONS_PAGE).partition(_NOT_CONFORMANCE)[0]
    return {m.group(1): m.group(2).strip() for m in _EXEMPT_ROW.finditer(above)}


def not_conformance() -> dict[str, str]:
    """ID -> why no conformance case checks this server requirement against a deployed
    server, from the table under :data:`_NOT_CONFORMANCE` in spec/coverage-exemptions.md."""
    page = spec_text(EXEMPTIONS_PAGE)
    if _NOT_CONFORMANCE not in page:
        raise SmprefError(f"{EXEMPTIONS_PAGE} has no section {_NOT_CONFORMANCE!r}")
    below = page.partition(_NOT_CONFORMANCE)[2]
    return {m.group(1): m.group(2).strip() for m in _EXEMPT_ROW.finditer(below)}


def _order(requirement: str) -> tuple[str, int]:
    prefix, number = requirement.split("-")
    return prefix, int(number)


def build(tests: Path | None, vectors: Path | None, *, runs: int = 4) -> Matrix:
    """The matrix from the packaged spec, the cases and rules in this package, the tests and
    vectors in the given folders (None: not consulted), and what the model's state machine
    reaches under ``runs`` seeds (0: not run).

    Raises:
        SmprefError: a folder is missing, or a citation names no defined requirement.
    """
    pages = {req: page for page in spec_pages() if page != EXEMPTIONS_PAGE
             for req in _DEFINITION.findall(spec_text(page))}
    texts = requirement_texts()
    rows = {req: Row(req, pages[req], texts.get(req, ""))
            for req in sorted(pages, key=_order)}
    citations: list[Citation] = [*case_citations(), *rule_citations(), *model_citations(runs)]
    sources = {"cases": "smpref.conform.cases", "rules": "smpref.model.rules",
               "model": f"the model's state machine under seeds 0..{runs - 1}" if runs
               else "not run",
               "oracle": "the model's state machine's oracle checks under the same seeds"
               if runs else "not run"}
    for kind, folder, collect in (("tests", tests, test_citations),
                                  ("vectors", vectors, vector_citations)):
        if folder is None:
            sources[kind] = "not consulted"
            continue
        if not folder.is_dir():
            raise SmprefError(f"{folder}: no such folder (the {kind} to read citations from)")
        citations += list(collect(folder))
        sources[kind] = str(folder)
    unknown = sorted({c.requirement for c in citations} - set(rows))
    if unknown:
        raise SmprefError(f"citations of undefined requirements: {', '.join(unknown)}")
    for citation in citations:
        bucket = rows[citation.requirement].citations[citation.kind]
        if citation.where not in bucket:
            bucket.append(citation.where)
    if tests is not None:
        _apply_kills(rows, kill_record(tests))
    for requirement, why in exemptions().items():
        if requirement not in rows:
            raise SmprefError(f"{EXEMPTIONS_PAGE} exempts {requirement}, which is not defined")
        rows[requirement].exempt = why
    for requirement, why in not_conformance().items():
        if requirement not in rows or not rows[requirement].server:
            raise SmprefError(f"{EXEMPTIONS_PAGE} says no conformance case checks "
                              f"{requirement}, which is not a server requirement")
        rows[requirement].not_conformance = why
    return Matrix(list(rows.values()), sources)


def _apply_kills(rows: dict[str, Row], record: dict[str, dict[str, str]]) -> None:
    """Count, for each requirement the kill record measured, the citing tests that kill it;
    a citing test that survived no longer counts as a citation."""
    for requirement, outcomes in record.items():
        if requirement not in rows:
            raise SmprefError(f"the kill record measures {requirement}, which is not defined")
        row = rows[requirement]
        row.measured = True
        cited = row.citations["tests"]
        row.kills = [t for t in cited if outcomes.get(t) == "killed"]
        row.survivors = [t for t in cited if outcomes.get(t) == "survived"]
        row.citations["tests"] = [t for t in cited if t not in row.survivors]


def markdown(matrix: Matrix) -> str:
    """The matrix as a docs page."""
    counts = matrix.to_json()["counts"]
    assert isinstance(counts, dict)
    lines = [
        "# Coverage of the specification", "",
        "Generated by `smpref spec coverage --markdown`: every requirement ID of the spec with",
        "the tests, vectors, conformance cases and rule-table rows that cite it. Do not edit.",
        "The `deployed` column counts the conformance cases that run against a deployed",
        "server (`smpref conform` at a deployed version): what a server's implementer gets.",
        "",
        f"{counts['requirements']} requirements: {counts['covered']} cited, "
        f"{counts['exempt']} exempt ([why](../spec/{EXEMPTIONS_PAGE.removesuffix('.md')}.md)), "
        f"{counts['gaps']} with nothing.", "",
        f"Of the {counts['server']} requirements that say what a server does, "
        f"{counts['conformanceGaps']} have no conformance case that runs against a deployed "
        "server (the `deployed` column) and no reason why none can "
        f"([the reasons](../spec/{EXEMPTIONS_PAGE.removesuffix('.md')}.md)).", "",
        "The `model` column counts the rules and transitions of the reference model that",
        "reported the requirement while its state machine ran under fixed seeds; `oracle`",
        "names the state machine that checked the requirement's outcomes there against its",
        "oracle written from the spec (smpref.testing.queue_oracle).", "",
        "The `tests` column counts tests that fail when the requirement breaks, where that was",
        "measured: `make mutate-citations` planted the requirement's deviations and ran the",
        "tests that cite it (`N kill`). Elsewhere it counts the tests that cite the",
        f"requirement (`N cite`). {counts['measured']} requirements were measured; "
        f"{counts['killedByATest']} have a test that kills them, and "
        f"{counts['survivingCitations']} citations survived every deviation.", "",
        "| requirement | tests | vectors | cases | deployed | rules | model | oracle "
        "| cited by (first of each) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in matrix.rows:
        first = "; ".join(f"`{v[0]}`" for k, v in row.citations.items()
                          if v and k != "deployed")
        if row.exempt:
            first = (first + "; " if first else "") + f"exempt: {row.exempt}"
        if row.not_conformance:
            first += f"; no deployed case: {row.not_conformance}"
        counts_of = " | ".join(row.tests_cell() if k == "tests" else str(len(row.citations[k]))
                               for k in KINDS if k != "oracle")
        counts_of += " | " + (", ".join(row.citations["oracle"]) or "-")
        lines.append(f"| {row.requirement} | {counts_of} | {first or '**nothing**'} |")
    return "\n".join(lines) + "\n"


def default_folder(name: str) -> Path | None:
    """``./name`` when it exists (the repository's tests/ and vectors/), else None."""
    path = Path(name)
    return path if path.is_dir() else None
