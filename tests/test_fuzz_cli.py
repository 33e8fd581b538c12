"""`smpref model fuzz` ends a failing campaign with the command that replays the failing seed,
and that command, run, fails the same way."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

import pytest
from click.testing import CliRunner

from smpref.cli import main
from smpref.testing import queue_machine

BAD_SEED = 3


@pytest.fixture
def seed_3_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    real = queue_machine.run_seed

    def run_seed(seed: int, **kwargs: object) -> queue_machine.RunResult:
        result = real(seed, **kwargs)  # type: ignore[arg-type]
        if seed == BAD_SEED:
            return replace(result, ok=False, failure="AssertionError: planted at seed 3")
        return result

    monkeypatch.setattr(queue_machine, "run_seed", run_seed)


@pytest.mark.usefixtures("seed_3_fails")
def test_a_failing_seed_ends_with_a_replay_command_that_fails_the_same_way() -> None:
    result = CliRunner().invoke(main, ["model", "fuzz", "--seed", "0", "--seeds", "6",
                                       "--examples", "2", "--steps", "5", "--json"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert summary["failedSeed"] == BAD_SEED and summary["seeds"] == BAD_SEED + 1
    assert "planted" in summary["failure"]
    args = shlex.split(summary["replay"])
    assert args[:3] == ["smpref", "model", "fuzz"] and "--seed" in args
    again = CliRunner().invoke(main, [*args[1:], "--json"])
    assert again.exit_code == 1
    assert json.loads(again.stdout)["failedSeed"] == BAD_SEED


def test_progress_is_a_plain_line_when_not_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from smpref.cli import fuzz_progress

    monkeypatch.setattr(fuzz_progress, "PLAIN_EVERY", 0.5)
    result = CliRunner().invoke(main, ["model", "fuzz", "--seconds", "2", "--examples", "2",
                                       "--steps", "5"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("fuzz: ")]
    assert lines and "steps/s" in lines[-1] and "\x1b[" not in result.stderr
