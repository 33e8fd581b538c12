"""Targets over the model's state machines: ``model`` (the memory store), ``differential``
(the journal store checked step by step against the memory store, STORE-18) and ``dialects``
(the seed and the deployed profile side by side against one oracle, DEP-4, TRANS-11).

Two engines run a seed (docs/campaign.md, "Engines"):

* ``seeded`` (the default): the seed draws one program of ``steps`` rule steps from a plain
  PRNG over the machine's own rules, preconditions and strategies
  (:mod:`smpref.testing.seeded_programs`); a failing program whose signature is not known is
  shrunk by Hypothesis's shrinker, a known one is reported as it ran;
* ``hypothesis``: one Hypothesis test under the seed, with no example database:
  ``EXAMPLES`` programs of up to ``steps`` rule steps each, shrunk by Hypothesis on failure.
  Kept as the baseline of bench/campaign.py.

Either way the same seed draws the same programs anywhere, and the record carries the minimal
program and the requirement IDs the model reported while running it (its rule observer).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import INVARIANT_MARKER, RuleBasedStateMachine, run_state_machine_as_test

from smpref.campaign.run_records import FAIL, PASS, RunRecord
from smpref.campaign.signatures import failure_message, origin, shrink_now, signature
from smpref.campaign.targets import TargetSpec, executor_name, register
from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.loopback import Loopback
from smpref.testing.queue_machine import QueueMachine
from smpref.testing.seeded_programs import ProgramOutcome, run_seeded_program, shrink_program

STEP = re.compile(r"^(?:\w+(?:, \w+)* = )?state\.(\w+)\(")


def minimal_program(exc: BaseException, machine: type[RuleBasedStateMachine]) -> list[str]:
    """The rule steps of the falsifying example that Hypothesis attached to the exception
    (its invariant checks and teardown left out)."""
    notes = getattr(exc, "__notes__", [])
    lines = [line.strip() for note in notes for line in str(note).splitlines()]
    steps = []
    for line in lines:
        match = STEP.match(line)
        if match and match.group(1) != "teardown" and not getattr(
                getattr(machine, match.group(1), None), INVARIANT_MARKER, None):
            steps.append(line)
    return steps


#: programs per run; the first is Hypothesis's simplest (often empty), the rest are random
EXAMPLES = 4


def run_seeded(machine: type[RuleBasedStateMachine], seed: int, steps: int
               ) -> BaseException | None:
    """Run ``machine`` under ``seed``: EXAMPLES programs of up to ``steps`` steps, shrunk on
    failure; the failure, or None. A failing program is data, not a crash of the campaign."""
    try:
        with same_draws_everywhere():  # a seed draws the same program on any executor
            run_state_machine_as_test(hypothesis_seed(seed)(machine), settings=settings(
                max_examples=EXAMPLES, stateful_step_count=steps, deadline=None,
                database=None, derandomize=False, print_blob=False,
                report_multiple_bugs=False, phases=[Phase.generate, Phase.shrink],
                suppress_health_check=list(HealthCheck)))
    except Exception as exc:
        return exc
    return None


@dataclass(frozen=True)
class SeededRun:
    """A seed run by the seeded engine: the program as run, the program to report (the minimal
    one for a new failure), its signature, and whether that signature is known."""

    ran: ProgramOutcome
    reported: ProgramOutcome
    signature: str = ""
    known: bool = False


def run_seeded_engine(name: str, machine: type[RuleBasedStateMachine], seed: int, steps: int,
                      *, known: frozenset[str], shrunk: set[str] | None,
                      ran_hook: Callable[[], None] | None = None) -> SeededRun:
    """Run the program ``seed`` draws; shrink it only when it fails with a signature neither
    known nor already shrunk by this target (:func:`shrink_now`; ``shrunk`` is the target's,
    None when it shrinks nothing).
    ``ran_hook`` is called once the seed's own program has run, before any shrinking."""
    ran, choices = run_seeded_program(machine, seed, steps)
    if ran_hook is not None:
        ran_hook()
    if ran.failure is None:
        return SeededRun(ran, ran)
    where = origin(ran.failure)
    found = signature(name, where)
    if not shrink_now(found, known, shrunk):
        return SeededRun(ran, ran, found, known=found in known)
    smallest = shrink_program(machine, choices, steps, lambda exc: origin(exc) == where)
    return SeededRun(ran, smallest if smallest is not None else ran, found)


class MachineTarget:
    """Runs one of the model's state machines by seed: one with ``make_loopback`` (every
    loopback it makes reports to the run's observer) and a ``trace`` of its steps."""

    def __init__(self, name: str, machine: type[RuleBasedStateMachine],
                 engine: str = "seeded", known: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.machine = machine
        self.engine = engine
        self.known = known
        self.shrunk: set[str] | None = set()  # signatures shrunk (run_seeded_engine)
        self.reached: list[set[str]] = []  # one set per machine instance of the current run
        self.traces: list[list[str]] = []
        # one observed class per target, not per run: the seeded engine reads a class's rules
        # once and keeps them
        self.observed = self._observed_class()

    def _observed_class(self) -> type[RuleBasedStateMachine]:
        target = self

        def observe(_name: str, requirements: tuple[str, ...]) -> None:
            target.reached[-1].update(requirements)

        class Observed(self.machine):  # type: ignore[name-defined,misc]
            def __init__(self) -> None:
                target.reached.append(set())
                super().__init__()
                target.traces.append(self.trace)

            def make_loopback(self, *args: Any) -> Loopback:
                loopback: Loopback = super().make_loopback(*args)
                loopback.server.observer = observe
                return loopback

        Observed.__name__ = Observed.__qualname__ = self.machine.__name__
        return Observed

    def open(self) -> None:
        """Nothing to start: every run builds its own machine and loopback."""

    def close(self) -> None:
        """Nothing to stop."""

    def run(self, seed: int, steps: int) -> RunRecord:
        self.reached, self.traces = [], []
        reached, traces = self.reached, self.traces
        started = time.perf_counter()
        if self.engine == "seeded":
            return self._seeded_record(seed, steps, started)
        failure = run_seeded(self.observed, seed, steps)
        seconds = time.perf_counter() - started
        sent = sum(len(trace) for trace in traces) if failure is None else 0
        everything = sorted(set().union(*reached)) if reached else []
        if failure is None:
            return RunRecord(seed, self.name, sent, PASS, seconds, executor_name(),
                             requirements=everything)
        program = minimal_program(failure, self.machine)
        last = sorted(reached[-1]) if reached else []
        return RunRecord(
            seed, self.name, len(traces[-1]) if traces else 0, FAIL, seconds, executor_name(),
            signature=signature(self.name, origin(failure)),
            message=failure_message(failure),
            program="\n".join(program), program_json=json.dumps(program),
            program_steps=len(program),
            requirements=everything, failure_requirements=last,
            exchange="\n".join(traces[-1]) if traces else "")

    def _seeded_record(self, seed: int, steps: int, started: float) -> RunRecord:
        run = run_seeded_engine(self.name, self.observed, seed, steps, known=self.known,
                                shrunk=self.shrunk)
        reached, traces = self.reached, self.traces or [[]]  # none if the machine did not start
        seconds = time.perf_counter() - started
        # the first machine ran the seed's program; with a shrink, the last ran the minimal one
        ran_ids = sorted(reached[0]) if reached else []
        if run.ran.failure is None:
            return RunRecord(seed, self.name, len(traces[0]), PASS, seconds, executor_name(),
                             requirements=ran_ids)
        failure = run.reported.failure or run.ran.failure
        program = run.reported.steps
        return RunRecord(
            seed, self.name, len(traces[0]), FAIL, seconds, executor_name(),
            signature=run.signature, known=run.known,
            message=failure_message(failure),
            program="\n".join(program), program_json=json.dumps(program),
            program_steps=len(program), requirements=ran_ids,
            failure_requirements=sorted(reached[-1]) if reached else [],
            exchange="\n".join(traces[-1]) if traces else "")


def _model(_address: Any) -> MachineTarget:
    return MachineTarget("model", QueueMachine)


def _differential(_address: Any) -> MachineTarget:
    from smpref.testing.differential import DifferentialMachine

    return MachineTarget("differential", DifferentialMachine)


def _dialects(_address: Any) -> MachineTarget:
    from smpref.testing.dialect_machine import DialectMachine

    return MachineTarget("dialects", DialectMachine)


def _deployed_links(_address: Any) -> MachineTarget:
    from smpref.testing.deployed_link_machine import DeployedLinkMachine

    return MachineTarget("deployed-links", DeployedLinkMachine)


register(TargetSpec("model", "the model's state machine over the memory store", _model))
register(TargetSpec("deployed-links", "deployed SMP's own commands: links on LinkIds, "
                    "notifiers, refusals, private routing through the model as relay "
                    "(DEP-3..DEP-6, DEP-14, DEP-15)", _deployed_links))
register(TargetSpec("dialects", "the seed and the deployed profile side by side against one "
                    "oracle, and each other (DEP-4, TRANS-11)", _dialects))
register(TargetSpec("differential", "the journal store checked step by step against the "
                    "memory store, with reopening (STORE-18)", _differential))
