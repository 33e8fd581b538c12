"""Which requirements the reference model reaches when its state machine runs.

The model reports every rule of the rule table and every transition of its effects, with their
requirement IDs, to an observer (:class:`smpref.model.server.Server`). Running the model's
state machine under a few fixed seeds with an observer gives the fifth kind of evidence of the
matrix: the requirement was not only cited but exercised, and by which rules.
"""

from __future__ import annotations

from collections.abc import Iterable


def reached(seeds: Iterable[int], *, examples: int = 4, steps: int = 40
            ) -> tuple[dict[str, set[str]], set[str]]:
    """requirement ID -> the names of the rules and transitions that reported it; and the
    requirement IDs the machine checked against its oracle
    (:mod:`smpref.testing.queue_oracle`) in those runs."""
    # imported here: the state machine needs Hypothesis (the testing extra), which the rest of
    # the matrix (``smpref spec coverage --runs 0``) does not
    from smpref.testing.loopback import Loopback
    from smpref.testing.queue_machine import QueueMachine, run_seed

    found: dict[str, set[str]] = {}

    def observe(name: str, requirements: tuple[str, ...]) -> None:
        for requirement in requirements:
            found.setdefault(requirement, set()).add(name)

    class Observed(QueueMachine):
        def make_loopback(self) -> Loopback:
            loopback = super().make_loopback()
            loopback.server.observer = observe
            return loopback

    for seed in seeds:
        result = run_seed(seed, examples=examples, steps=steps, machine_class=Observed)
        if not result.ok:
            raise AssertionError(f"the state machine failed under seed {seed}: "
                                 f"{result.failure}")
    checked = {key.removeprefix("checked ") for key, n in Observed.totals().items()
               if key.startswith("checked ") and n}
    return found, checked
