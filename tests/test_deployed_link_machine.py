"""Deployed SMP's own commands under their state machine, checked against an oracle written
from spec/deployed.md (smpref.testing.deployed_link_oracle): links on LinkIds, notifier
credentials, securing, deletion, proxying and private routing with the model as the relay,
every row of the rule table for them taken, every change read back (issue 30)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from machine_depth import READ_BACK_FLOOR, TABLE_FLOOR, ci_size, deployed_rows
from reqs import req

from smpref.crypto import forwarding
from smpref.crypto.primitives import cb_nonce
from smpref.model import effects, rules
from smpref.model.rules import Guard
from smpref.model.server_state import ServerState
from smpref.testing.deployed_link_machine import DeployedLinkMachine
from smpref.testing.determinism import same_draws_everywhere
from smpref.wire.messages import OK

SIZE = ci_size()
#: what must be read back in a CI-size run, each at least READ_BACK_FLOOR times
READ_BACKS = ("NEW refused", "LSET", "LDEL", "LKEY", "KEY", "SKEY", "the first SEND", "NKEY",
              "NDEL", "DEL")


@req("DEP-3", "DEP-4", "DEP-5", "DEP-6", "DEP-14", "DEP-15", "QUEUE-4", "QUEUE-11")
def test_deployed_commands_meet_the_oracle_at_depth() -> None:
    class Run(DeployedLinkMachine):
        pass

    with same_draws_everywhere():
        run_state_machine_as_test(Run, settings=SIZE)
    totals = Run.totals()
    missing = [f"rule {name} never fired" for name in DeployedLinkMachine.rule_names()
               if not totals["rule " + name]]
    missing += [f"table row {row} taken {totals['table ' + row]} times"
                for row in deployed_rows() if totals["table " + row] < TABLE_FLOOR]
    missing += [f"read back {what}: {totals['read back ' + what]}" for what in READ_BACKS
                if totals["read back " + what] < READ_BACK_FLOOR]
    missing += [f"{name}: {totals[name]}" for name, floor in (
        ("routed answers opened twice", 100), ("links read", 50)) if totals[name] < floor]
    assert not missing, "the machine ran too shallow: " + "; ".join(missing)


def _lset_storing_nothing(step: Any) -> list[Any]:
    return [effects.answer(step, OK())]


PLANTS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    # the issue's own survivors
    "LSET answers OK and stores nothing": lambda mp: mp.setitem(
        effects.EFFECTS, "DeployedLSET", _lset_storing_nothing),
    "LSET lets a changed fixed part through": lambda mp: mp.setitem(
        rules.GUARDS, Guard.FIXED_DATA_CHANGED, lambda _step: False),
    "NKEY and NDEL leave the old subscription": lambda mp: mp.setattr(
        ServerState, "notifier_gone", lambda _self, _queue, _session: []),
    "a NEW's sender ID is not checked against its corrId": lambda mp: mp.setitem(
        rules.GUARDS, Guard.SENDER_ID_NOT_DERIVED, lambda _step: False),
    "RFWD serves two transmissions": lambda mp: mp.setitem(
        rules.GUARDS, Guard.FORWARDED_SEVERAL, lambda _step: False),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_the_machine_fails_on_a_planted_bug(plant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    PLANTS[plant](monkeypatch)
    quick = settings(SIZE, max_examples=60, phases=[Phase.generate])
    with pytest.raises(AssertionError):
        run_state_machine_as_test(DeployedLinkMachine, settings=quick)


@req("DEP-14")
def test_a_forwarding_mistake_shared_by_the_relay_and_the_client_fails_the_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer's nonce not reversed, in the module the relay seals with and smpref's client
    and proxy open with: smpref's own pair still agrees, the second implementation
    (smpref.independent.relay_boxes) does not open RRES."""
    monkeypatch.setattr(forwarding, "reverse_nonce", cb_nonce)
    key, nonce = bytes(range(32)), bytes(range(24))
    assert forwarding.open_answer(key, nonce, forwarding.seal_answer(key, nonce, b"x")) == b"x"
    quick = settings(SIZE, max_examples=30, phases=[Phase.generate])
    with pytest.raises(AssertionError, match="second implementation cannot open RRES"):
        run_state_machine_as_test(DeployedLinkMachine, settings=quick)
