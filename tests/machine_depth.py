"""The depth floors of the state machines at the CI size (issue: a machine that runs but never
reaches quota, suspension, expiry or deletion with messages pending finds nothing), and the
rule that a machine test checks every requirement it claims.

Each machine test runs its machine once at the CI size (its ``depth_run``), then
:func:`shortfalls` holds what the machine counted to the machine's own floor table (each test
file keeps its ``FLOORS``) and fails when a counter falls short, or when a requirement the test
claims with ``@req`` (:func:`claimed`) was never checked against the machine's oracle.

The floors are half of what a CI-size run counts (a few set higher on purpose). The runs are
derandomized and draw no constant from local modules (smpref.testing.determinism), so they
count the same in every session, alone or under xdist. Hypothesis seeds a derandomized
machine from the source of the class it runs (the class the depth run makes, not its bases):
a change there draws other programs too. To measure again, after a change that moves the
counts:

    python tests/machine_depth.py [model store rotation dialect deployed-link]

runs each named machine's depth run (all five without names) as its test does under
``HYPOTHESIS_PROFILE=ci``, and prints what it counted and the floor table to put in the test
file: half of each count, rounded up, or the test's earlier floor where that is higher and
the run still reaches it.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping

import pytest
from hypothesis import HealthCheck, settings

from smpref.model.rules import RULES

#: the least number of times each row of the model's rule table (smpref.model.rules.RULES)
#: that a machine claims must be taken in its CI-size run when its floor table names no floor
#: for it (issue 30: every guard fires), with the oracle's answer compared each time
TABLE_FLOOR = 5


def seed_rows() -> list[str]:
    """The rows of the rule table the seed design's sessions can take."""
    return [row.name for row in RULES if not row.command.startswith("Deployed")]


def deployed_rows() -> list[str]:
    """The rows of deployed SMP's own commands (the core commands' rows are the seed's)."""
    return [row.name for row in RULES if row.command.startswith("Deployed")]


#: the least number of read-backs of each kind in one CI-size run of a machine that counts
#: them ("read back <command>"), when its floor table names none: an accepted (or refused)
#: change observed afterwards through the protocol, predicted by the oracle (issue 30, point 3)
READ_BACK_FLOOR = 10


#: what the seed design's machine reads back (its "read back <what>" counters): a refused
#: NEW's sender ID, LSET (accepted and refused), securing by KEY, SKEY and LGET, OFF, NDEL,
#: DEL, and the links after relief
SEED_READ_BACKS = ("NEW refused", "LSET", "LSET refused", "KEY", "SKEY", "LGET", "OFF", "NDEL",
                   "DEL", "relief")


def claimed(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The requirement IDs the running test claims with ``@req``."""
    marker = request.node.get_closest_marker("req")
    assert marker is not None
    return tuple(marker.args)


def shortfalls(totals: Counter[str], floors: Mapping[str, int], claimed: Iterable[str] = (),
               *, rules: Iterable[str] = (), table: Iterable[str] = (),
               read_backs: Iterable[str] = ()) -> list[str]:
    """Every counter below its floor in ``floors``, the machine's own table; every one of the
    machine's ``rules``, rows of the rule ``table`` and kinds of ``read_backs`` the table names
    no floor for (added since it was measured) fired fewer than once, taken fewer than
    :data:`TABLE_FLOOR` times or read back fewer than :data:`READ_BACK_FLOOR` times; and every
    requirement the test ``claimed`` that the run never checked against the machine's oracle
    (its "checked <ID>" counter)."""
    least = ({"rule " + rule: 1 for rule in rules} | {"table " + row: TABLE_FLOOR for row in table}
             | {"read back " + what: READ_BACK_FLOOR for what in read_backs})
    out = [f"{name}: {totals[name]} < {floor}" for name, floor in (least | dict(floors)).items()
           if totals[name] < floor]
    out += [f"{rid} claimed but never checked against the oracle" for rid in claimed
            if not totals["checked " + rid]]
    return out


def ci_size() -> settings:
    """The machines' run: twice the profile's examples of up to 60 steps, derandomized (the
    floors hold for these exact runs); under ``HYPOTHESIS_PROFILE=long``, 120 steps that
    explore with the profile's database."""
    profile = settings.get_profile(settings._current_profile or "default")  # type: ignore[attr-defined]
    long = os.environ.get("HYPOTHESIS_PROFILE") == "long"
    return settings(profile, max_examples=profile.max_examples * 2, deadline=None,
                    stateful_step_count=120 if long else 60, derandomize=not long,
                    database=None if not long else profile.database,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


#: each machine's depth run, by the name the measuring mode takes: the test module whose
#: ``depth_run`` runs it as its depth test does
DEPTH_RUNS = {"model": "test_model_machine", "store": "test_store_machine",
              "rotation": "test_rotation_machine", "dialect": "test_dialect_machine",
              "deployed-link": "test_deployed_link_machine"}
#: counters no floor is set on: how many runs there were is the size of the run, not a path
UNFLOORED = frozenset({"runs"})


def measured_floors(totals: Counter[str], earlier: Mapping[str, int]) -> dict[str, int]:
    """The floor table for a run that counted ``totals``: half of every counter, rounded up (a
    path reached once must still be reached), or its ``earlier`` floor where that is higher
    and the run still reaches it (a floor set just under a count on purpose stays)."""
    out = {}
    for name, count in sorted(totals.items()):
        if count > 0 and name not in UNFLOORED:
            half = (count + 1) // 2
            out[name] = earlier[name] if half < earlier.get(name, 0) <= count else half
    return out


def as_source(table: Mapping[str, int], indent: int = 4, width: int = 100) -> str:
    """``table`` as a dict literal, as many entries to a line as fit in ``width``."""
    lines, line = [], ""
    for name, value in table.items():
        entry = f"{json.dumps(name)}: {value},"
        if line and indent + len(line) + 1 + len(entry) > width:
            lines.append(" " * indent + line)
            line = ""
        line = f"{line} {entry}" if line else entry
    lines.append(" " * indent + line)
    return "{\n" + "\n".join(lines) + "\n}"


def main(argv: list[str]) -> int:
    """Run the named machines' depth runs (all without names) at the CI size; print what each
    counted and its floor table."""
    names = argv or list(DEPTH_RUNS)
    unknown = [name for name in names if name not in DEPTH_RUNS]
    if unknown:
        print(f"no machine {unknown[0]!r}; the machines: {', '.join(DEPTH_RUNS)}",
              file=sys.stderr)
        return 2
    os.environ["HYPOTHESIS_PROFILE"] = "ci"  # read when conftest and the tests are imported
    importlib.import_module("conftest")  # registers the profiles and loads it
    for name in names:
        test = importlib.import_module(DEPTH_RUNS[name])
        totals: Counter[str] = test.depth_run()
        floors = measured_floors(totals, test.FLOORS)
        counted = dict(sorted(totals.items()))
        print(f"# {name}: what one CI-size run counted\nCOUNTED = {as_source(counted)}")
        print(f"# {name}: the floors\nFLOORS = {as_source(floors)}")
        lost = sorted(set(test.FLOORS) - set(floors))
        if lost:  # a path no longer reached is a finding, not a floor to drop in silence
            print(f"# {name}: floored before, reached no more: {', '.join(lost)}",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
