"""The depth floors of the state machines at the CI size (issue: a machine that runs but never
reaches quota, suspension, expiry or deletion with messages pending finds nothing).

Each machine test runs its machine once, then :func:`check_depth` reads what the machine counted
(:meth:`smpref.testing.queue_machine.QueueMachine.totals`) and fails when a floor is not met, or
when a requirement the test claims was never checked against the oracle.
"""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import HealthCheck, settings

from smpref.model.rules import RULES

#: the least each counter must reach over one CI-size run of the model's machine (120 runs of
#: up to 60 steps). The runs are derandomized and draw no constant from local modules
#: (smpref.testing.determinism), so they are the same in every session; under other seeds the
#: counts were several times these floors, except expired messages and notifications (about
#: twice).
FLOORS = {
    "messages sent": 300,
    "messages delivered": 200,
    "quota answers": 50,
    "suspended queues drained": 10,
    "last flags": 20,
    "messages expired": 5,
    "queues expired": 5,
    "messages deleted with their queue": 10,
    "notifications": 20,
    # every record and every LINK opened a second time, by smpref.independent (issue 30),
    # and forged records refused by both mirrors alike (QENC-8)
    "records opened twice": 500,
    "links opened twice": 50,
    "forged records refused": 50,
    # the sweep a slice at a time, and relief dropping optional link parts, each predicted
    # by the oracle and read back with LGET (issue 30, point 4)
    "sweep slices": 100,
    "blobs relieved": 20,
    # records opened after others expired unread: the owner's mirror steps over a gap, and
    # says so (QENC-8)
    "gaps stepped over": 5,
    # relief whose budget, not the low water mark, stops it: blobs set larger while relief is
    # under way (QUEUE-9); a queue kept at exactly its period and removed a day later (RET-3);
    # a queue the store cannot read: two commands and a sweep, each reported (STORE-11, RET-7)
    "relief grown": 10,
    "queues expired at the period's end": 10,
    "store errors reported": 30,
}


#: the least number of times each row of the model's rule table (smpref.model.rules.RULES)
#: that a machine claims must be taken in its CI-size run (issue 30: every guard fires), with
#: the oracle's answer compared each time
TABLE_FLOOR = 5


def seed_rows() -> list[str]:
    """The rows of the rule table the seed design's sessions can take."""
    return [row.name for row in RULES if not row.command.startswith("Deployed")]


def deployed_rows() -> list[str]:
    """The rows of deployed SMP's own commands (the core commands' rows are the seed's)."""
    return [row.name for row in RULES if row.command.startswith("Deployed")]


#: the least number of read-backs of each kind in one CI-size run of a machine that counts
#: them ("read back <command>"): an accepted (or refused) change observed afterwards through
#: the protocol, predicted by the oracle (issue 30, point 3)
READ_BACK_FLOOR = 10


#: what the seed design's machine reads back (its "read back <what>" counters): a refused
#: NEW's sender ID, LSET (accepted and refused), securing by KEY, SKEY and LGET, OFF, NDEL,
#: DEL, and the links after relief
SEED_READ_BACKS = ("NEW refused", "LSET", "LSET refused", "KEY", "SKEY", "LGET", "OFF", "NDEL",
                   "DEL", "relief")


def shortfalls(totals: Counter[str], rules: list[str], claimed: tuple[str, ...], *,
               scale: float = 1.0, without: tuple[str, ...] = (),
               table: list[str] | None = None, read_backs: tuple[str, ...] = ()) -> list[str]:
    """Every floor (times ``scale``, for a machine run with fewer examples) not met, rule never
    fired, row of the rule ``table`` taken fewer than :data:`TABLE_FLOOR` times, kind of
    ``read_backs`` done fewer than :data:`READ_BACK_FLOOR` times and claimed requirement never
    checked; ``without``: floors and rules a machine leaves to another (the store's machine
    forges no records)."""
    out = [f"{name}: {totals[name]} < {floor * scale:g}" for name, floor in FLOORS.items()
           if totals[name] < floor * scale and name not in without]
    out += [f"table row {row} taken {totals['table ' + row]} times < {TABLE_FLOOR * scale:g}"
            for row in table or [] if totals["table " + row] < TABLE_FLOOR * scale]
    out += [f"read back {what}: {totals['read back ' + what]} < {READ_BACK_FLOOR * scale:g}"
            for what in read_backs if totals["read back " + what] < READ_BACK_FLOOR * scale]
    rules = [rule for rule in rules if rule not in without]
    out += [f"rule {rule} never fired" for rule in rules if not totals["rule " + rule]]
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
