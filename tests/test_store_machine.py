"""The model's state machine over the journal store, against the memory store (STORE-18), with
the same oracle and depth floors as the model's own machine.

Its size follows the Hypothesis profile in force (HYPOTHESIS_PROFILE=long runs it long), as
the model's own machine does."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from machine_depth import SEED_READ_BACKS, seed_rows, shortfalls
from reqs import req

from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.differential import DifferentialMachine

_profile = settings.get_profile(settings._current_profile or "default")  # type: ignore[attr-defined]
LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
SIZE = settings(_profile, max_examples=_profile.max_examples * 2, deadline=None,
                stateful_step_count=120 if LONG else 60,
                # the depth floors hold for these exact runs; the long profile explores
                derandomize=not LONG, database=None if not LONG else _profile.database,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@pytest.mark.heavy
@req("STORE-18", "STORE-7", "MSG-9", "RET-5")
def test_the_journal_store_behaves_as_the_memory_store() -> None:
    class Run(DifferentialMachine):
        pass

    with same_draws_everywhere():  # the floors hold whatever else the session imported
        run_state_machine_as_test(Run, settings=SIZE)
    # reopening the store takes steps from the others: half the model machine's floors; a
    # queue made unreadable is the model machine's (its store is the memory store under a
    # wrapper), not this one's
    rules = DifferentialMachine.rule_names()
    missing = shortfalls(Run.totals(), rules, ("MSG-9", "RET-5", "STORE-7"), scale=0.5,
                         without=("forged_record", "forged records refused",
                                  "store errors reported"),
                         table=seed_rows(), read_backs=SEED_READ_BACKS)
    assert not missing, "the machine ran too shallow: " + "; ".join(missing)


def test_the_differential_machine_follows_the_profile() -> None:
    assert SIZE.max_examples == _profile.max_examples * 2
    assert SIZE.stateful_step_count == (120 if LONG else 60)
