"""Seeded programs over a Hypothesis state machine, generated without Hypothesis's engine.

A campaign runs very many programs and almost all of them pass; Hypothesis's engine spends most
of a run choosing rules and drawing arguments through its choice tree (bench/README.md). This
module reads the same definition the state machines give Hypothesis (their ``@rule``,
``@initialize``, ``@precondition`` and ``@invariant`` markers and the argument strategies) and
runs programs from a plain seeded PRNG:

* a program is a flat sequence of *choices* (integers, booleans, byte strings), drawn by a
  :class:`Chooser`: the initializers in a chosen order, then per step "go on?", the index of a
  rule among those whose preconditions hold, and each argument's choices; every invariant is
  checked after the initializers and after every step, and ``teardown`` runs at the end, as in
  Hypothesis;
* the same seed draws the same choices, so it replays exactly (:func:`run_seeded_program`);
* a failing program's choices are handed to Hypothesis's own shrinker
  (:func:`shrink_program`), which deletes and lowers choices while the failure keeps its
  signature: Hypothesis works only on the rare failure, where it pays.

Only the strategies the machines use are translated (:func:`draw`); any other raises
:class:`UnsupportedStrategyError` naming it, so a new rule cannot be silently mis-drawn.
"""

from __future__ import annotations

import contextlib
import inspect
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hypothesis import strategies as st
from hypothesis.stateful import (
    INITIALIZE_RULE_MARKER,
    INVARIANT_MARKER,
    RULE_MARKER,
    Bundle,
    RuleBasedStateMachine,
)

from smpref.errors import UnsupportedStrategyError

#: one recorded choice, as Hypothesis's choice sequences hold them
Choice = int | bool | bytes


class Chooser(Protocol):
    """Where a program's choices come from: a seeded PRNG, or Hypothesis while it shrinks."""

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""

    def boolean(self) -> bool:
        """True or False."""

    def binary(self, min_size: int, max_size: int) -> bytes:
        """A byte string of ``min_size`` to ``max_size`` bytes."""

    def more(self) -> bool:
        """Whether the program takes another step."""

    def step(self, starting: bool) -> None:
        """A step's choices start (``starting``) or end: the shrinker deletes whole steps."""


class RandomChooser:
    """Choices from ``random.Random(seed)``, recorded in ``choices``; every program runs its
    full ``steps`` (a campaign wants its steps, not Hypothesis's early stops)."""

    def __init__(self, seed: int, steps: int) -> None:
        self.random = random.Random(seed)
        self.left = steps
        self.choices: list[Choice] = []

    def integer(self, low: int, high: int) -> int:
        value = self.random.randint(low, high)
        self.choices.append(value)
        return value

    def boolean(self) -> bool:
        value = self.random.random() < 0.5
        self.choices.append(value)
        return value

    def binary(self, min_size: int, max_size: int) -> bytes:
        value = self.random.randbytes(self.random.randint(min_size, max_size))
        self.choices.append(value)
        return value

    def more(self) -> bool:
        self.left -= 1
        value = self.left >= 0
        self.choices.append(value)
        return value

    def step(self, starting: bool) -> None:
        """Nothing to mark: the choices are a flat list."""


class DataChooser:
    """Choices drawn from a Hypothesis ``ConjectureData``: the shrinker's side. Booleans and
    integers shrink towards False and the low bound, so "go on?" shrinks towards a shorter
    program and a rule index towards the first rule enabled."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def integer(self, low: int, high: int) -> int:
        return int(self.data.draw_integer(low, high))

    def boolean(self) -> bool:
        return bool(self.data.draw_boolean())

    def binary(self, min_size: int, max_size: int) -> bytes:
        return bytes(self.data.draw_bytes(min_size, max_size))

    def more(self) -> bool:
        return bool(self.data.draw_boolean())

    def step(self, starting: bool) -> None:
        # a span per step, as Hypothesis's own stateful tests have: its shrinker deletes and
        # reorders spans whole, which is how a 30-step program becomes a 3-step one
        if starting:
            self.data.start_span(STEP_LABEL)
        else:
            self.data.stop_span()


#: the label of a step's span (any constant integer: Hypothesis groups spans by label)
STEP_LABEL = 0x5EED_5EED


class ProgramData:
    """What a rule taking ``st.data()`` gets: ``draw`` goes through the program's chooser, and
    every value drawn is kept for the printed program."""

    def __init__(self, chooser: Chooser) -> None:
        self.chooser = chooser
        self.drawn: list[Any] = []

    def draw(self, strategy: st.SearchStrategy[Any], label: object = None) -> Any:
        value = draw(strategy, self.chooser)
        self.drawn.append(value)
        return value

    def __repr__(self) -> str:
        return "data(...)"


def _unwrap(strategy: Any) -> Any:
    while hasattr(strategy, "wrapped_strategy") and type(strategy).__name__ == "LazyStrategy":
        strategy = strategy.wrapped_strategy
    return strategy


def _transform(strategy: Any, value: Any) -> Any:
    """Apply a sampled_from's own ``.map`` transformations (filters are not translated)."""
    for name, function, *_ in getattr(strategy, "_transformations", ()):
        if name != "map":
            raise UnsupportedStrategyError(f"{strategy!r}: .{name} on sampled_from")
        value = function(value)
    return value


#: the largest max_size of a binary strategy the engine draws from (an unbounded one is refused)
MAX_BINARY = 1 << 16


def draw(strategy: st.SearchStrategy[Any], chooser: Chooser) -> Any:
    """A value of ``strategy`` from ``chooser``'s choices: integers, booleans, sampled_from
    (and just), binary, data, one_of, tuples, bounded lists and maps of these."""
    inner = _unwrap(strategy)
    kind = type(inner).__name__
    if kind == "IntegersStrategy":
        if inner.start is None or inner.end is None:
            raise UnsupportedStrategyError(f"{strategy!r}: integers need both bounds here")
        return chooser.integer(inner.start, inner.end)
    if kind == "BooleansStrategy":
        return chooser.boolean()
    if kind in {"SampledFromStrategy", "JustStrategy"}:
        elements = inner.elements
        index = chooser.integer(0, len(elements) - 1) if len(elements) > 1 else 0
        return _transform(inner, elements[index])
    if kind == "BytesStrategy":
        if inner.max_size > MAX_BINARY:
            raise UnsupportedStrategyError(f"{strategy!r}: binary needs a max_size of at most "
                                           f"{MAX_BINARY} here")
        return chooser.binary(inner.min_size, inner.max_size)
    if kind == "DataStrategy":
        return ProgramData(chooser)
    if kind == "MappedStrategy":
        return inner.pack(draw(inner.mapped_strategy, chooser))
    if kind == "OneOfStrategy":
        branches = inner.original_strategies
        return draw(branches[chooser.integer(0, len(branches) - 1)], chooser)
    if kind == "TupleStrategy":
        return tuple(draw(element, chooser) for element in inner.element_strategies)
    if kind == "ListStrategy":  # its length first, then each element
        if inner.max_size == float("inf"):
            raise UnsupportedStrategyError(f"{strategy!r}: lists need a max_size here")
        size = chooser.integer(inner.min_size, int(inner.max_size))
        return [draw(inner.element_strategy, chooser) for _ in range(size)]
    raise UnsupportedStrategyError(f"the seeded engine does not translate {strategy!r}")


@dataclass(frozen=True)
class RuleSpec:
    """One rule as the machine declares it to Hypothesis."""

    name: str
    function: Callable[..., Any]
    arguments: dict[str, st.SearchStrategy[Any]]
    preconditions: tuple[Callable[[Any], bool], ...]
    #: for an invariant: checked while initializers are still to run (Hypothesis's flag)
    during_init: bool = False


@dataclass(frozen=True)
class MachineSpec:
    """A machine's rules, initializers and invariants, read from Hypothesis's markers."""

    rules: tuple[RuleSpec, ...]
    initializers: tuple[RuleSpec, ...]
    invariants: tuple[RuleSpec, ...]


_SPECS: dict[type, MachineSpec] = {}


def machine_spec(machine: type[RuleBasedStateMachine]) -> MachineSpec:
    """The definition Hypothesis reads, read the same way (cached per class). Bundles and rule
    targets are refused: the machines here keep their state themselves."""
    if machine in _SPECS:
        return _SPECS[machine]
    rules: list[RuleSpec] = []
    initializers: list[RuleSpec] = []
    invariants: list[RuleSpec] = []
    for name, member in inspect.getmembers(machine):
        for marker, into in ((RULE_MARKER, rules), (INITIALIZE_RULE_MARKER, initializers)):
            found = getattr(member, marker, None)
            if found is None:
                continue
            if found.targets or any(isinstance(s, Bundle) for s in found.arguments.values()):
                raise UnsupportedStrategyError(f"{machine.__name__}.{name} uses bundles")
            into.append(RuleSpec(name, found.function, dict(found.arguments),
                                 tuple(found.preconditions)))
        found = getattr(member, INVARIANT_MARKER, None)
        if found is not None:
            invariants.append(RuleSpec(name, found.function, {}, tuple(found.preconditions),
                                       found.check_during_init))
    spec = MachineSpec(tuple(rules), tuple(initializers), tuple(invariants))
    _SPECS[machine] = spec
    return spec


@dataclass
class ProgramOutcome:
    """What one program did: its steps as text, the failure (or None), and the machine."""

    steps: list[str] = field(default_factory=list)
    failure: BaseException | None = None
    machine: Any = None


def _call(rule: RuleSpec, machine: Any, chooser: Chooser, outcome: ProgramOutcome) -> None:
    arguments = {name: draw(strategy, chooser) for name, strategy in rule.arguments.items()}
    text = ", ".join(f"{name}={value!r}" for name, value in arguments.items())
    outcome.steps.append(f"state.{rule.name}({text})")
    try:
        rule.function(machine, **arguments)
    finally:  # the failing step is the one whose draws matter most
        drawn = [v.drawn for v in arguments.values() if isinstance(v, ProgramData)]
        if drawn and drawn[0]:
            outcome.steps[-1] += f"  # drew {', '.join(repr(value) for value in drawn[0])}"


def _check(spec: MachineSpec, machine: Any, initializing: bool = False) -> None:
    """Every invariant whose preconditions hold, as Hypothesis checks them: while initializers
    are still to run, only those marked ``check_during_init``."""
    for invariant in spec.invariants:
        if initializing and not invariant.during_init:
            continue
        if all(condition(machine) for condition in invariant.preconditions):
            invariant.function(machine)


def run_program(machine: type[RuleBasedStateMachine], chooser: Chooser,
                max_steps: int) -> ProgramOutcome:
    """One program: the initializers (in a chosen order), then up to ``max_steps`` rules chosen
    among those enabled, every invariant after each; ``teardown`` always. Exceptions are the
    outcome's failure, not raised; what is not an Exception (Hypothesis ending a shrink
    attempt, an interrupt) passes through, after ``teardown`` has cleaned up."""
    spec = machine_spec(machine)
    outcome = ProgramOutcome()
    try:
        outcome.machine = instance = machine()
    except Exception as exc:  # a machine that cannot start is a failing program, as data
        outcome.failure = exc
        return outcome
    interrupted = True  # until the program ends or fails as a program
    try:
        pending = list(spec.initializers)
        _check(spec, instance, initializing=bool(pending))
        while pending:
            chosen = pending.pop(chooser.integer(0, len(pending) - 1) if len(pending) > 1 else 0)
            _call(chosen, instance, chooser, outcome)
            _check(spec, instance, initializing=bool(pending))
        for _ in range(max_steps):
            chooser.step(True)
            try:
                if not chooser.more():
                    break
                enabled = [rule for rule in spec.rules
                           if all(condition(instance) for condition in rule.preconditions)]
                if not enabled:
                    break
                _call(enabled[chooser.integer(0, len(enabled) - 1)], instance, chooser,
                      outcome)
            finally:
                chooser.step(False)
            _check(spec, instance)
        interrupted = False
    except Exception as exc:  # the failure is the program's result
        outcome.failure = exc
        interrupted = False
    finally:
        try:
            instance.teardown()  # cleans up (the rotation machine's folders) in every case
        except Exception as exc:  # teardown checks the end state; its failure counts as well
            if outcome.failure is None and not interrupted:
                outcome.failure = exc
    return outcome


def run_seeded_program(machine: type[RuleBasedStateMachine], seed: int, steps: int
                       ) -> tuple[ProgramOutcome, list[Choice]]:
    """The program ``seed`` draws, run; and its choices (what the shrinker starts from)."""
    chooser = RandomChooser(seed, steps)
    return run_program(machine, chooser, steps), chooser.choices


#: seconds Hypothesis may shrink one failing program for (its own limit is 300 s)
SHRINK_SECONDS = 60.0


def shrink_program(machine: type[RuleBasedStateMachine], choices: Sequence[Choice],
                   steps: int, same_failure: Callable[[BaseException], bool],
                   seconds: float = SHRINK_SECONDS) -> ProgramOutcome | None:
    """Hypothesis's shrinker over a failing program's choices: the smallest program it finds
    within ``seconds`` that still fails with ``same_failure``; None when the choices no longer
    fail that way.

    This drives Hypothesis's engine directly (``ConjectureRunner``): its public API shrinks
    only what its own generation found, and a failing campaign program is found by the PRNG.
    tests/test_seeded_programs.py checks that a shrink really shortens a program.
    """
    from hypothesis import HealthCheck, Verbosity, settings
    from hypothesis.internal.conjecture.data import ConjectureData, ConjectureResult, Status
    from hypothesis.internal.conjecture.engine import ConjectureRunner, RunIsComplete
    from hypothesis.internal.escalation import InterestingOrigin

    def test(data: ConjectureData) -> None:
        outcome = run_program(machine, DataChooser(data), steps)
        if outcome.failure is not None and same_failure(outcome.failure):
            data.mark_interesting(InterestingOrigin.from_exception(outcome.failure))

    runner = ConjectureRunner(test, settings=settings(
        database=None, deadline=None, max_examples=10_000, verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck)), random=random.Random(0))
    first = runner.cached_test_function(list(choices))
    if first.status != Status.INTERESTING or not isinstance(first, ConjectureResult):
        return None
    runner.finish_shrinking_deadline = time.perf_counter() + seconds
    shrinker = runner.new_shrinker(first, lambda result: result.status == Status.INTERESTING)
    # when the time or the shrink budget runs out, the smallest program so far is kept
    with contextlib.suppress(RunIsComplete):
        shrinker.shrink()
    smallest = run_program(machine, DataChooser(ConjectureData.for_choices(
        shrinker.shrink_target.choices)), steps)
    # the replay must fail as the shrinker saw it fail; if not, report nothing shrunk
    if smallest.failure is None or not same_failure(smallest.failure):
        return None
    return smallest
