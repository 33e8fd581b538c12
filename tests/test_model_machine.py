"""The model under the Hypothesis state machine (fast profile in CI; HYPOTHESIS_PROFILE=long)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import settings
from reqs import req

from smpref.testing.queue_machine import QueueMachine, run_seed

_profile = settings.get_profile(settings._current_profile or "default")  # type: ignore[attr-defined]
QueueMachineTest = QueueMachine.TestCase
QueueMachineTest.settings = settings(
    QueueMachine.TestCase.settings,
    max_examples=_profile.max_examples // 2 or 1,
    stateful_step_count=40 if os.environ.get("HYPOTHESIS_PROFILE") != "long" else 80,
)
QueueMachineTest = req("MSG-1", "MSG-2", "MSG-3", "MSG-4", "MSG-6", "MSG-8", "MSG-9", "RET-3",
                       "QUEUE-9", "QUEUE-11", "LINK-4", "LINK-6", "LINK-7", "LINK-11",
                       "QENC-5", "ROT-3", "ROT-4")(QueueMachineTest)


def test_a_seeded_run_reproduces_its_trace_in_a_fresh_process(tmp_path: Path) -> None:
    code = ("from smpref.testing.queue_machine import run_seed; "
            "r = run_seed(7, examples=4, steps=15);"
            "print(r.ok, r.steps, r.trace_digest)")
    outputs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, cwd=tmp_path,
                              env={**os.environ, "PYTHONHASHSEED": str(n)}).stdout
               for n in (1, 2)]
    assert outputs[0] == outputs[1]
    assert outputs[0].startswith("True ")
    here = run_seed(7, examples=4, steps=15)
    assert outputs[0].split() == [str(here.ok), str(here.steps), here.trace_digest]
    assert run_seed(8, examples=4, steps=15).trace_digest != here.trace_digest
