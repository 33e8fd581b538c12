"""The machines' shared base: what ``@counted`` counts as a rule's firing (smpref.testing.
machine_base), which the depth floors and the per-run limits of every machine read."""

from __future__ import annotations

import pytest
from hypothesis.stateful import rule

from smpref.testing.machine_base import NOTHING_TO_DO, CountedMachine, Outcome, counted


class Tiny(CountedMachine):
    """Two rules: ``outer`` calls ``inner`` as part of its own step; ``idle`` may do nothing."""

    @rule()
    @counted
    def inner(self) -> None:
        self.stats["inner ran"] += 1

    @rule()
    @counted
    def outer(self) -> None:
        self.inner()

    @rule()
    @counted
    def idle(self, busy: bool = False) -> Outcome | None:
        return None if busy else NOTHING_TO_DO


def test_a_rule_another_rule_calls_is_the_callers_step() -> None:
    machine = Tiny()
    machine.outer()
    assert machine.stats["inner ran"] == 1  # it ran, as part of outer's step
    assert machine.fired == {"outer": 1}
    assert machine.stats["rule outer"] == 1 and machine.stats["rule inner"] == 0
    machine.inner()
    assert machine.fired == {"outer": 1, "inner": 1}
    assert not machine.in_rule


def test_a_rule_that_had_nothing_to_do_is_not_a_firing() -> None:
    machine = Tiny()
    machine.idle()
    assert machine.fired == {} and machine.stats["rule idle"] == 0
    machine.idle(busy=True)
    assert machine.fired == {"idle": 1} and machine.stats["rule idle"] == 1


def test_a_rule_that_raises_leaves_the_machine_out_of_any_rule() -> None:
    class Failing(Tiny):
        @rule()
        @counted
        def broken(self) -> None:
            raise AssertionError("planted")

    machine = Failing()
    with pytest.raises(AssertionError, match="planted"):
        machine.broken()
    assert not machine.in_rule and machine.fired == {}
    machine.outer()  # the next step is counted as its own
    assert machine.fired == {"outer": 1}
