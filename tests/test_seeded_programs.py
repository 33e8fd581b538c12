"""The seeded campaign engine (smpref.testing.seeded_programs): programs drawn by a plain PRNG
over a state machine's own rules, preconditions, strategies and invariants; a seed replays
exactly; a failing program is shrunk by Hypothesis's shrinker."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from smpref.errors import UnsupportedStrategyError
from smpref.testing.dialect_machine import DialectMachine
from smpref.testing.differential import DifferentialMachine
from smpref.testing.queue_machine import QueueMachine
from smpref.testing.rotation_machine import RotationMachine
from smpref.testing.seeded_programs import (
    RandomChooser,
    draw,
    machine_spec,
    run_program,
    run_seeded_program,
    shrink_program,
)

CALL = re.compile(r"^state\.(\w+)\(")


def fired(steps: list[str]) -> list[str]:
    return [match.group(1) for step in steps if (match := CALL.match(step))]


class Counter(RuleBasedStateMachine):
    """A toy machine: ``add`` grows a total, ``noise`` does nothing, the invariant fails once
    the total reaches 15; ``guarded`` may run only while ``open`` holds."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0
        self.open = False
        self.initialized = False

    @initialize()
    def start(self) -> None:
        self.initialized = True

    @rule(n=st.integers(0, 10))
    def add(self, n: int) -> None:
        assert self.initialized, "a rule ran before the initializer"
        self.total += n

    @rule(flag=st.booleans(), word=st.sampled_from(["a", "b", "c"]), blob=st.binary(max_size=4))
    def noise(self, flag: bool, word: str, blob: bytes) -> None:
        self.open = flag

    @precondition(lambda self: self.open)
    @rule()
    def guarded(self) -> None:
        assert self.open, "a rule ran although its precondition was false"

    @invariant()
    def below_fifteen(self) -> None:
        assert self.total < 15, f"total {self.total}"


def test_the_engine_reads_the_rules_hypothesis_reads() -> None:
    spec = machine_spec(QueueMachine)
    assert sorted(r.name for r in spec.rules) == QueueMachine.rule_names()
    assert [r.name for r in spec.initializers] == ["first_queue"]
    assert {i.name for i in spec.invariants} == {"the_store_holds_what_the_spec_says",
                                                 "no_message_delivered_twice_or_lost"}
    create = next(r for r in spec.rules if r.name == "create")
    assert set(create.arguments) >= {"s", "contact", "with_link", "x25519_auth"}
    assert create.preconditions  # read from @precondition, not restated


def test_a_seed_replays_exactly_and_seeds_differ() -> None:
    first, choices = run_seeded_program(QueueMachine, 11, 30)
    again, same = run_seeded_program(QueueMachine, 11, 30)
    other, _ = run_seeded_program(QueueMachine, 12, 30)
    assert first.failure is None and again.failure is None
    assert first.steps == again.steps and choices == same
    assert first.machine.trace == again.machine.trace and len(first.machine.trace) > 30
    assert other.steps != first.steps
    assert len(first.steps) == 31  # the initializer and 30 rule steps


def test_preconditions_gate_rules_and_the_initializer_runs_first() -> None:
    outcomes = [run_seeded_program(Counter, seed, 12)[0] for seed in range(40)]
    # the toy's only failures are its invariant: never a precondition or initializer assertion
    messages = {str(o.failure) for o in outcomes if o.failure is not None}
    assert messages and all(m.startswith("total ") for m in messages), messages
    assert all(o.steps[0] == "state.start()" for o in outcomes)
    assert any("guarded" in fired(o.steps) for o in outcomes)


@pytest.mark.parametrize("machine", [QueueMachine, DialectMachine, DifferentialMachine,
                                     RotationMachine], ids=lambda m: m.__name__)
def test_every_rule_of_every_machine_is_drawn(machine: type[RuleBasedStateMachine]) -> None:
    """Every strategy the machines use is translated (an untranslated one would fail the
    program with UnsupportedStrategyError), and every rule fires in a few programs."""
    seen: set[str] = set()
    for seed in range(12):
        outcome, _ = run_seeded_program(machine, seed, 40)
        assert outcome.failure is None, (seed, outcome.failure, outcome.steps[-3:])
        seen.update(fired(outcome.steps))
    # a machine may leave a rule it inherits to another (the store's leaves forging records)
    left = set() if getattr(machine, "FORGES", True) else {"forged_record"}
    assert {r.name for r in machine_spec(machine).rules} - left <= seen


def test_an_untranslated_strategy_is_named() -> None:
    class Floats(RuleBasedStateMachine):
        @rule(x=st.floats())
        def use(self, x: float) -> None:
            """Never runs: its argument cannot be drawn."""

    outcome = run_program(Floats, RandomChooser(0, 3), 3)
    assert isinstance(outcome.failure, UnsupportedStrategyError)
    assert "floats()" in str(outcome.failure)


def test_draw_covers_maps_tuples_and_one_of() -> None:
    chooser = RandomChooser(3, 0)
    strategy = st.tuples(st.integers(1, 3).map(lambda n: n * 10), st.one_of(st.just("x"),
                                                                             st.booleans()))
    values = {draw(strategy, chooser) for _ in range(200)}
    assert {v[0] for v in values} == {10, 20, 30}
    assert {v[1] for v in values} == {"x", True, False}


def test_a_failing_program_is_shrunk_by_hypothesis_to_its_minimal_form() -> None:
    seed = next(s for s in range(100)
                if len(fired(run_seeded_program(Counter, s, 30)[0].steps)) > 8
                and run_seeded_program(Counter, s, 30)[0].failure is not None)
    ran, choices = run_seeded_program(Counter, seed, 30)
    shrunk = shrink_program(Counter, choices, 30, lambda exc: isinstance(exc, AssertionError))
    assert shrunk is not None and shrunk.failure is not None
    kept = fired(shrunk.steps)
    # the smallest failing program: the initializer, then two adds reaching 15
    assert kept == ["start", "add", "add"], shrunk.steps
    assert len(shrunk.steps) < len(ran.steps)
    total = sum(int(m.group(1)) for s in shrunk.steps if (m := re.search(r"n=(\d+)", s)))
    assert total == 15


def test_shrinking_keeps_the_failure_it_was_given() -> None:
    """A program that fails one way is not shrunk into a different failure."""
    _, choices = run_seeded_program(Counter, 0, 30)
    assert shrink_program(Counter, choices, 30, lambda exc: "never" in str(exc)) is None


def test_data_draws_go_through_the_same_chooser() -> None:
    class Draws(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.got: list[Any] = []

        @rule(data=st.data())
        def pick(self, data: Any) -> None:
            self.got.append(data.draw(st.sampled_from(["p", "q"])))

    first = run_program(Draws, RandomChooser(5, 10), 10)
    again = run_program(Draws, RandomChooser(5, 10), 10)
    assert first.machine.got == again.machine.got and set(first.machine.got) == {"p", "q"}
    assert "# drew" in first.steps[0]


def test_teardown_runs_even_when_a_shrink_attempt_is_cut_short() -> None:
    """Hypothesis ends a shrink attempt with a BaseException (StopTest): it passes through,
    and the machine's teardown has still cleaned up."""

    class Stop(BaseException):
        pass

    torn: list[bool] = []

    class Cut(RuleBasedStateMachine):
        @rule()
        def stop(self) -> None:
            raise Stop

        def teardown(self) -> None:
            torn.append(True)
            raise AssertionError("an end check that fails: not the outcome of a cut attempt")

    with pytest.raises(Stop):
        run_program(Cut, RandomChooser(0, 3), 3)
    assert torn == [True]


class TwoWays(RuleBasedStateMachine):
    """Fails two ways: ``low`` once any step draws 0, ``high`` once the total passes 20."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0
        self.armed = False

    @rule(n=st.integers(0, 9))
    def add(self, n: int) -> None:
        assert n != 0 or not self.armed, "low"
        self.total += n

    @rule()
    def arm(self) -> None:
        self.armed = True

    @precondition(lambda self: self.armed)
    @invariant()
    def not_too_high(self) -> None:
        assert self.total <= 20, "high"


def test_the_shrinker_keeps_the_failure_it_was_asked_to_keep() -> None:
    """A program that fails one way is never shrunk into a program that fails the other."""
    for seed in range(60):
        ran, choices = run_seeded_program(TwoWays, seed, 30)
        if ran.failure is None:
            continue
        kind = str(ran.failure).split()[0]  # "low" or "high" (pytest adds the expression)
        shrunk = shrink_program(TwoWays, choices, 30,
                                lambda exc, k=kind: str(exc).split()[0] == k)
        assert shrunk is not None and str(shrunk.failure).split()[0] == kind.split()[0], (
            seed, kind, shrunk)


class Scripted(RandomChooser):
    """Always the first rule enabled, and the largest argument."""

    def integer(self, low: int, high: int) -> int:
        value = high if high == 9 else low
        self.choices.append(value)
        return value


def test_an_invariant_runs_only_when_its_preconditions_hold() -> None:
    """TwoWays checks its total only once armed: a program of adds alone passes whatever its
    total, and the same total fails once armed."""
    unarmed = run_program(TwoWays, Scripted(0, 5), 5)
    assert fired(unarmed.steps) == ["add"] * 5 and unarmed.machine.total == 45
    assert unarmed.failure is None

    class Armed(TwoWays):
        def __init__(self) -> None:
            super().__init__()
            self.armed = True

    armed = run_program(Armed, Scripted(0, 5), 5)
    assert str(armed.failure).startswith("high")


def test_invariants_marked_check_during_init_run_between_initializers() -> None:
    class Init(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        @initialize()
        def first(self) -> None:
            self.seen.append("init")

        @rule()
        def step(self) -> None:
            self.seen.append("step")

        @invariant(check_during_init=True)
        def early(self) -> None:
            self.seen.append("early")

        @invariant()
        def late(self) -> None:
            self.seen.append("late")

    outcome = run_program(Init, RandomChooser(0, 1), 1)
    assert outcome.machine.seen == ["early", "init", "early", "late", "step", "early", "late"]


def test_a_failing_steps_draws_are_shown_and_maps_apply() -> None:
    class Fails(RuleBasedStateMachine):
        @rule(data=st.data())
        def pick(self, data: Any) -> None:
            value = data.draw(st.sampled_from([1, 2]).map(lambda n: n * 10))
            raise AssertionError(f"drew {value}")

    outcome = run_program(Fails, RandomChooser(1, 3), 3)
    assert str(outcome.failure) in {"drew 10", "drew 20"}
    assert outcome.steps[-1].endswith(f"# drew {str(outcome.failure).split()[1]}")


def test_an_unbounded_binary_is_refused() -> None:
    with pytest.raises(UnsupportedStrategyError, match="max_size"):
        draw(st.binary(), RandomChooser(0, 0))


def test_a_bounded_list_draws_its_length_and_then_each_element() -> None:
    chooser = RandomChooser(5, 0)
    values = [draw(st.lists(st.integers(0, 9), min_size=2, max_size=4), chooser)
              for _ in range(200)]
    assert {len(v) for v in values} == {2, 3, 4}
    assert {x for v in values for x in v} == set(range(10))
    with pytest.raises(UnsupportedStrategyError, match="max_size"):
        draw(st.lists(st.booleans()), chooser)


def test_a_shrink_out_of_time_keeps_what_it_has() -> None:
    """With no time left Hypothesis stops at once; the program comes back, still failing."""
    seed = next(s for s in range(100) if run_seeded_program(Counter, s, 30)[0].failure)
    _, choices = run_seeded_program(Counter, seed, 30)
    shrunk = shrink_program(Counter, choices, 30, lambda exc: isinstance(exc, AssertionError),
                            seconds=0)
    assert shrunk is not None and shrunk.failure is not None
