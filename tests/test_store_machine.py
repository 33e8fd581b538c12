"""The model's state machine over the journal store, against the memory store (STORE-18).

Its size follows the Hypothesis profile in force (HYPOTHESIS_PROFILE=long runs it long), as
the model's own machine does."""

from __future__ import annotations

import os

from hypothesis import settings
from reqs import req

from smpref.testing.differential import DifferentialMachine

_profile = settings.get_profile(settings._current_profile or "default")  # type: ignore[attr-defined]
LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
TestDifferential = DifferentialMachine.TestCase
TestDifferential.settings = settings(
    DifferentialMachine.TestCase.settings,
    max_examples=_profile.max_examples,
    stateful_step_count=120 if LONG else 60,
    derandomize=_profile.derandomize, database=_profile.database,
)
TestDifferential = req("STORE-18", "STORE-7", "STORE-14")(TestDifferential)


def test_the_differential_machine_follows_the_profile() -> None:
    assert TestDifferential.settings.max_examples == _profile.max_examples
    assert TestDifferential.settings.stateful_step_count == (120 if LONG else 60)
