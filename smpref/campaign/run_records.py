"""One run of a campaign as plain data: a row of the runs table (docs/campaign.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL = "pass", "fail"


@dataclass(frozen=True)
class RunRecord:
    """What one seeded program did against one target.

    ``program`` is the program as text a person can read (for a failure: the minimal one), and
    ``program_json`` the same steps as a JSON array;
    ``requirements`` the requirement IDs the oracle reached while running it;
    ``failure_requirements`` those reached by the failing step's command;
    ``known`` whether the failure's signature is in the campaign's known-failures files
    (:mod:`smpref.campaign.known_failures`): such a program is reported as it ran, unshrunk.
    """

    seed: int
    target: str
    steps: int
    verdict: str
    seconds: float
    executor: str
    signature: str = ""
    message: str = ""
    program: str = ""
    program_json: str = ""
    program_steps: int = 0
    requirements: list[str] = field(default_factory=list)
    failure_requirements: list[str] = field(default_factory=list)
    exchange: str = ""
    known: bool = False

    def row(self) -> dict[str, Any]:
        """The record as a dict with the runs table's column names."""
        return asdict(self)


#: the runs table's columns and their Spark SQL types, in order (a DDL schema string)
RUNS_SCHEMA = ", ".join([
    "seed LONG", "target STRING", "steps INT", "verdict STRING", "seconds DOUBLE",
    "executor STRING", "signature STRING", "message STRING", "program STRING",
    "program_json STRING", "program_steps INT", "requirements ARRAY<STRING>",
    "failure_requirements ARRAY<STRING>",
    "exchange STRING", "known BOOLEAN",
])
