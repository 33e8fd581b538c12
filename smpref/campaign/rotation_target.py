"""Targets over the rotation state machine (smpref.testing.rotation_machine): ``rotation``
runs the seed flow of spec/rotation.md, ``rotation-deployed`` the deployed flow (ROT-14),
which is expected to fail: its runs count how often, and their minimal programs show how.

A run is one seeded program, or one Hypothesis test under the seed with the ``hypothesis``
engine, as for the model's targets (:mod:`smpref.campaign.machine_targets`); the requirement
IDs a run reached are read from what its machine counted
(:func:`smpref.testing.rotation_machine.reached`). The deployed flow's documented losses are
known failures (``smpref/campaign/known-failures.toml``): a campaign given them reports them
as known without shrinking them, so it runs at the seed flow's speed unless it finds a new one.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

from smpref.agent.state import Profile
from smpref.campaign.machine_targets import minimal_program, run_seeded, run_seeded_engine
from smpref.campaign.run_records import FAIL, PASS, RunRecord
from smpref.campaign.signatures import failure_message, origin, signature
from smpref.campaign.targets import TargetSpec, executor_name, register
from smpref.testing.rotation_machine import machine_for, reached


class RotationTarget:
    """Runs the rotation machine of one profile by seed."""

    def __init__(self, name: str, profile: Profile, engine: str = "seeded",
                 known: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.profile = profile
        self.engine = engine
        self.known = known
        self.shrunk: set[str] | None = set()  # signatures shrunk (run_seeded_engine)
        self.machine = machine_for(profile)  # one class per target: its rules are read once

    def open(self) -> None:
        """Nothing to start: every run builds its own servers in a temporary folder."""

    def close(self) -> None:
        """Nothing to stop."""

    def run(self, seed: int, steps: int) -> RunRecord:
        if self.engine == "hypothesis":
            return self._run_hypothesis(seed, steps)
        machine = self.machine
        machine.TOTALS = Counter()  # this run's counts alone
        ran: Counter[str] = Counter()
        started = time.perf_counter()
        run = run_seeded_engine(self.name, machine, seed, steps, known=self.known,
                                shrunk=self.shrunk,
                                ran_hook=lambda: ran.update(machine.TOTALS))
        seconds = time.perf_counter() - started
        ids = reached(ran, self.profile)
        if run.ran.failure is None:
            return RunRecord(seed, self.name, ran["steps"], PASS, seconds, executor_name(),
                             requirements=ids)
        failure = run.reported.failure or run.ran.failure
        program = run.reported.steps
        return RunRecord(
            seed, self.name, ran["steps"], FAIL, seconds, executor_name(),
            signature=run.signature, known=run.known,
            message=failure_message(failure),
            program="\n".join(program), program_json=json.dumps(program),
            program_steps=len(program), requirements=ids, failure_requirements=[])

    def _run_hypothesis(self, seed: int, steps: int) -> RunRecord:
        machine = machine_for(self.profile)  # a fresh class: its totals are this run's alone
        started = time.perf_counter()
        failure = run_seeded(machine, seed, steps)
        seconds = time.perf_counter() - started
        totals: Counter[str] = machine.TOTALS
        ids = reached(totals, self.profile)
        if failure is None:
            return RunRecord(seed, self.name, totals["steps"], PASS, seconds,
                             executor_name(), requirements=ids)
        program = minimal_program(failure, machine)
        return RunRecord(
            seed, self.name, len(program), FAIL, seconds, executor_name(),
            signature=signature(self.name, origin(failure)),
            message=failure_message(failure),
            program="\n".join(program), program_json=json.dumps(program),
            program_steps=len(program), requirements=ids, failure_requirements=[])


def _seed_flow(_address: Any) -> RotationTarget:
    return RotationTarget("rotation", Profile.SEED)


def _deployed_flow(_address: Any) -> RotationTarget:
    return RotationTarget("rotation-deployed", Profile.DEPLOYED)


register(TargetSpec("rotation", "two agents rotating queues over three model servers on "
                    "journal stores: the seed flow of spec/rotation.md", _seed_flow))
register(TargetSpec("rotation-deployed", "the same machine running deployed agents' flow "
                    "(ROT-14); expected to fail", _deployed_flow))
