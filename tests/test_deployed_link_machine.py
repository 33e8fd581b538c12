"""Deployed SMP's own commands under their state machine, checked against an oracle written
from spec/deployed.md (smpref.testing.deployed_link_oracle): links on LinkIds, notifier
credentials, securing, deletion, proxying and private routing with the model as the relay,
every row of the rule table for them taken, every change read back (issue 30)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from machine_depth import ci_size, claimed, deployed_rows, shortfalls
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
#: what must be read back in a CI-size run, at least READ_BACK_FLOOR times each where FLOORS
#: names no floor
READ_BACKS = ("NEW refused", "LSET", "LDEL", "LKEY", "KEY", "SKEY", "the first SEND", "NKEY",
              "NDEL", "DEL")

#: the least each counter of the depth run must reach: half, rounded up, of what one CI-size run
#: (120 runs of up to 60 steps) counted on 2026-11-27 (a row taken 5 times keeps TABLE_FLOOR), so
#: that a change which stops a path fails here: rules fired, rows of the rule table taken, changes
#: read back, runs that checked a requirement against the oracle, refusals of NEW and RFWD by kind,
#: answers opened again by smpref.independent. The run is derandomized, so it counts the same in
#: every session; after a change that moves the counts, measure again with
#: `python tests/machine_depth.py deployed-link` and put the FLOORS it prints here.
FLOORS = {
    "NEW refused: corrId used before": 15, "NEW refused: low-order DH key": 31,
    "NEW refused: low-order notifier DH key": 11, "NEW refused: no password": 36,
    "NEW refused: sender ID not derived": 16, "NEW refused: signed by another key": 14,
    "NEW refused: taken LinkId": 32, "NEW refused: wrong password": 21, "checked DEP-14": 42,
    "checked DEP-15": 34, "checked DEP-3": 61, "checked DEP-4": 47, "checked DEP-5": 53,
    "checked DEP-6": 34, "checked QUEUE-11": 29, "checked QUEUE-4": 61, "links read": 274,
    "read back DEL": 38, "read back KEY": 38, "read back LDEL": 72, "read back LKEY": 17,
    "read back LSET": 231, "read back NDEL": 37, "read back NEW refused": 160, "read back NKEY": 78,
    "read back SKEY": 14, "read back the first SEND": 25, "routed answers opened twice": 298,
    "routed notifiers": 19, "routed: does not open": 73, "routed: no key in the proxy's hello": 42,
    "routed: none": 211, "routed: not a FwdTransmission": 69,
    "routed: the client's batch does not parse": 88, "routed: the client's part does not open": 59,
    "routed: two transmissions": 92, "rule create": 141, "rule delete": 38, "rule ldel": 357,
    "rule legacy_queue": 33, "rule lget": 218, "rule lkey": 261, "rule lset": 190, "rule ndel": 102,
    "rule new_refused": 58, "rule nkey": 161, "rule nsub": 489, "rule proxy": 34,
    "rule routed": 631, "rule secure": 144, "rule send": 206, "rule unauthorized": 132,
    "table DEL.accepted": 38, "table DEL.no-queue": 62, "table DEL.not-authorized": 70,
    "table DeployedLDEL.accepted": 357, "table DeployedLDEL.no-queue": 62,
    "table DeployedLDEL.not-authorized": 70, "table DeployedLGET.accepted": 242,
    "table DeployedLGET.invitation": 92, "table DeployedLGET.no-link": 269,
    "table DeployedLKEY.accepted": 32, "table DeployedLKEY.contact": 35,
    "table DeployedLKEY.no-link": 196, "table DeployedLKEY.not-authorized": 31,
    "table DeployedLKEY.other-key": 27, "table DeployedLSET.accepted": 78,
    "table DeployedLSET.fixed-data-changed": 72, "table DeployedLSET.no-queue": 62,
    "table DeployedLSET.not-authorized": 70, "table DeployedLSET.other-link-id": 78,
    "table DeployedLSET.secured-invitation": 18, "table DeployedNEW.accepted": 174,
    "table DeployedNEW.id-taken": 47, "table DeployedNEW.low-order-key": 42,
    "table DeployedNEW.not-authorized": 14, "table DeployedNEW.sender-id-not-derived": 16,
    "table DeployedNEW.wrong-password": 57, "table DeployedNKEY.accepted": 78,
    "table DeployedNKEY.low-order-key": 83, "table DeployedNKEY.no-queue": 62,
    "table DeployedNKEY.not-authorized": 70, "table DeployedPFWD.accepted": 34,
    "table DeployedPFWD.no-proxy": 34, "table DeployedPRXY.accepted": 29,
    "table DeployedPRXY.no-proxy": 34, "table DeployedPRXY.wrong-password": 5,
    "table DeployedRFWD.accepted": 298, "table DeployedRFWD.client-not-opened": 59,
    "table DeployedRFWD.no-proxy-key": 42, "table DeployedRFWD.not-forwarded": 69,
    "table DeployedRFWD.not-opened": 73, "table DeployedRFWD.several": 92, "table KEY.accepted": 59,
    "table KEY.no-queue": 62, "table KEY.not-authorized": 70, "table KEY.other-key": 19,
    "table NDEL.accepted": 102, "table NDEL.no-queue": 62, "table NDEL.not-authorized": 70,
    "table NSUB.accepted": 326, "table NSUB.no-queue": 104, "table NSUB.not-authorized": 193,
    "table SEND.accepted": 202, "table SEND.no-queue": 246, "table SEND.signed-to-unsecured": 5,
    "table SEND.unsigned-to-secured": 50, "table SKEY.accepted": 28, "table SKEY.contact": 48,
    "table SKEY.no-queue": 14, "table SKEY.other-key": 27, "table deleted": 9, "table end": 168,
    "table forwarded.prohibited": 33, "table link.drop-pending": 46, "table link.dropped": 38,
    "table notifier-deleted": 33, "table notify": 14,
}


def depth_run() -> Counter[str]:
    """One CI-size run of the machine, as the depth test makes it: what it counted."""
    class Run(DeployedLinkMachine):
        pass

    with same_draws_everywhere():
        run_state_machine_as_test(Run, settings=SIZE)
    return Run.totals()


@req("DEP-3", "DEP-4", "DEP-5", "DEP-6", "DEP-14", "DEP-15", "QUEUE-4", "QUEUE-11")
def test_deployed_commands_meet_the_oracle_at_depth(request: pytest.FixtureRequest) -> None:
    missing = shortfalls(depth_run(), FLOORS, claimed(request),
                         rules=DeployedLinkMachine.rule_names(), table=deployed_rows(),
                         read_backs=READ_BACKS)
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
