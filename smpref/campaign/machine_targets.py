"""Targets over the model's state machines: ``model`` (the memory store), ``differential``
(the journal store checked step by step against the memory store, STORE-18) and ``dialects``
(the seed and the deployed profile side by side against one oracle, DEP-4, TRANS-11).

A run is one Hypothesis test under the seed, with no example database, so the same seed draws
the same programs anywhere: ``EXAMPLES`` programs of up to ``steps`` rule steps each
(Hypothesis tries the empty program first, so one example alone would test nothing). A failing
program is shrunk by Hypothesis; the record carries the minimal program as Hypothesis prints
it, and the requirement IDs the model reported while running it (its rule observer).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.stateful import INVARIANT_MARKER, RuleBasedStateMachine, run_state_machine_as_test

from smpref.campaign.run_records import FAIL, PASS, RunRecord
from smpref.campaign.signatures import origin, signature
from smpref.campaign.targets import TargetSpec, executor_name, register
from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.loopback import Loopback
from smpref.testing.queue_machine import QueueMachine

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


class MachineTarget:
    """Runs one of the model's state machines by seed: one with ``make_loopback`` (every
    loopback it makes reports to the run's observer) and a ``trace`` of its steps."""

    def __init__(self, name: str, machine: type[RuleBasedStateMachine]) -> None:
        self.name = name
        self.machine = machine

    def open(self) -> None:
        """Nothing to start: every run builds its own machine and loopback."""

    def close(self) -> None:
        """Nothing to stop."""

    def run(self, seed: int, steps: int) -> RunRecord:
        reached: list[set[str]] = []   # one set per machine instance: the last is the minimal
        traces: list[list[str]] = []

        def observe(_name: str, requirements: tuple[str, ...]) -> None:
            reached[-1].update(requirements)

        class Observed(self.machine):  # type: ignore[name-defined,misc]
            def __init__(self) -> None:
                reached.append(set())
                super().__init__()
                traces.append(self.trace)

            def make_loopback(self, *args: Any) -> Loopback:
                loopback: Loopback = super().make_loopback(*args)
                loopback.server.observer = observe
                return loopback

        started = time.perf_counter()
        failure = run_seeded(Observed, seed, steps)
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
            message=f"{type(failure).__name__}: {failure}".splitlines()[0][:500],
            program="\n".join(program), program_json=json.dumps(program),
            program_steps=len(program),
            requirements=everything, failure_requirements=last,
            exchange="\n".join(traces[-1]) if traces else "")


def _model(_address: Any) -> MachineTarget:
    return MachineTarget("model", QueueMachine)


def _differential(_address: Any) -> MachineTarget:
    from smpref.testing.differential import DifferentialMachine

    return MachineTarget("differential", DifferentialMachine)


def _dialects(_address: Any) -> MachineTarget:
    from smpref.testing.dialect_machine import DialectMachine

    return MachineTarget("dialects", DialectMachine)


register(TargetSpec("model", "the model's state machine over the memory store", _model))
register(TargetSpec("dialects", "the seed and the deployed profile side by side against one "
                    "oracle, and each other (DEP-4, TRANS-11)", _dialects))
register(TargetSpec("differential", "the journal store checked step by step against the "
                    "memory store, with reopening (STORE-18)", _differential))
