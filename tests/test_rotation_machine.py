"""The rotation state machine (smpref.testing.rotation_machine): the seed flow of
spec/rotation.md keeps every message; seed 002 as written and the deployed flow do not, and
their minimal failing traces are kept here (docs/rotation.md explains them).

Size: at the CI size, 200 runs of up to 40 steps (derandomized, so the depth floors below hold
in every session); HYPOTHESIS_PROFILE=long runs 2000 of up to 80, and the campaign runs it
further."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from machine_depth import claimed, shortfalls
from reqs import req

from smpref.agent.state import Profile
from smpref.crypto import ratchet
from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.rotation_machine import RotationMachine, machine_for

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
#: the profile's phases (no shrinking under the mutation profile), always with targeting: the
#: machine steers towards held deliveries (ROT-8) with hypothesis.target
PHASES = tuple(dict.fromkeys((*settings.default.phases, Phase.target)))
SIZE = settings(max_examples=2000 if LONG else 200, stateful_step_count=80 if LONG else 40,
                deadline=None, derandomize=not LONG, database=None, phases=PHASES,
                suppress_health_check=list(HealthCheck))

#: the least each counter of the depth run must reach: half, rounded up, of what one CI-size run of
#: the seed machine counted on 2026-11-27 ("delete connection" keeps its earlier floor, the count),
#: so that a change which stops a path fails here: the rules fired ("rule"), the runs that checked a
#: requirement against the machine's oracle ("checked"), what the machine did, what the agents did
#: and what the second implementation opened ("records opened twice", issue 30). The held delivery
#: comes from the machine steering generation towards it (hypothesis.target); connection deletion is
#: kept rare so most runs go on after it. The run is derandomized, so it counts the same in every
#: session; after a change that moves the counts, measure again with
#: `python tests/machine_depth.py rotation` and put the FLOORS it prints here.
FLOORS = {
    "aborts accepted": 28, "checked ROT-10": 87, "checked ROT-11": 70, "checked ROT-12": 88,
    "checked ROT-13": 1, "checked ROT-2": 87, "checked ROT-5": 86, "checked ROT-6": 86,
    "checked ROT-7": 87, "checked ROT-8": 57, "checked ROT-9": 87, "crashes before ACK": 22,
    "delete connection": 2, "deliveries": 2093, "held": 57, "hellos": 181, "ignored probes": 1,
    "last flags": 58, "lose connection": 88, "messages sent": 1374, "new queues dropped": 2,
    "records opened twice": 2757, "restart agent": 117, "restart server": 205, "restore": 249,
    "rotations aborted": 28, "rotations completed": 181, "rotations started": 210,
    "rule abort_rotation": 971, "rule disrupt": 860, "rule pump": 395, "rule release": 204,
    "rule send": 451, "rule start_rotation": 660, "rule transmit": 245,
    "second implementation: valid": 2757, "second rotations refused": 451, "steps": 4019,
    "suspensions": 183, "switches": 181, "verdict duplicate": 9, "verdict next": 2154,
}


def run(profile: Profile, size: settings = SIZE) -> Counter[str]:
    machine = machine_for(profile)
    run_state_machine_as_test(machine, settings=size)
    return machine.TOTALS


def depth_run() -> Counter[str]:
    """One CI-size run of the seed flow's machine, as the depth test makes it: what it
    counted."""
    with same_draws_everywhere():  # the floors hold whatever else the session imported
        return run(Profile.SEED)


@pytest.mark.heavy
@req("ROT-2", "ROT-5", "ROT-6", "ROT-7", "ROT-8", "ROT-9", "ROT-10", "ROT-11", "ROT-12")
def test_the_seed_flow_keeps_every_message_under_the_machine(
        request: pytest.FixtureRequest) -> None:
    missing = shortfalls(depth_run(), FLOORS, claimed(request),
                         rules=RotationMachine.rule_names())
    assert not missing, "the machine ran too shallow: " + "; ".join(missing)


FIND = settings(SIZE, max_examples=300, phases=[Phase.generate], report_multiple_bugs=False)


def test_the_machine_finds_the_flaw_of_seed_002_as_written() -> None:
    with pytest.raises(AssertionError, match=r"never ended|received"):
        run(Profile.SEED_AS_WRITTEN, FIND)


@req("ROT-14")
def test_the_machine_finds_the_losses_of_the_deployed_flow() -> None:
    with pytest.raises(AssertionError, match=r"never ended|received"):
        run(Profile.DEPLOYED, FIND)


# The minimal traces Hypothesis shrank each failure to (docs/rotation.md walks through them).


def replay(profile: Profile, *rotations: str) -> RotationMachine:
    machine = machine_for(profile)()
    machine.learn_keys()
    for owner in rotations:
        machine.start_rotation(owner=owner, server=b"s1")
        machine.learn_keys()
        machine.nothing_duplicated_reordered_or_invented()
    return machine


def test_minimal_trace_seed_as_written_loses_a_qready() -> None:
    """Both sides rotate to s1. Alice's QHELLO is number 4 and reaches Bob before Alice's
    QREADY, number 3, which Bob then drops as a duplicate: Bob never sends QHELLO, and his
    rotation never ends."""
    machine = replay(Profile.SEED_AS_WRITTEN, "b", "a")
    with pytest.raises(AssertionError, match="b's rotation never ended"):
        machine.teardown()


@req("ROT-7", "DIV-33")
def test_the_same_trace_under_the_seed_flow_ends() -> None:
    replay(Profile.SEED, "b", "a").teardown()
    replay(Profile.SEED, "a", "b").teardown()


@req("ROT-14")
def test_minimal_trace_deployed_drops_a_quse() -> None:
    """Both sides rotate to s1. Bob queued QUSE for Alice's old queue; Alice's QUSE makes Bob
    send QTEST and move to her new queue, dropping what was queued for the old one, his own
    QUSE included: Alice never learns Bob's queue is ready, and his rotation never ends."""
    machine = replay(Profile.DEPLOYED, "a", "b")
    with pytest.raises(AssertionError, match="b's rotation never ended"):
        machine.teardown()


def _aad_without_kind(_kind: object, seq: int) -> bytes:
    """The ratchet's associated data without the record kind: one mistake in the module both
    the servers (sealing) and the agents (opening) use."""
    return b"SimpleXQueueRatchet" + seq.to_bytes(8, "big", signed=True)


def test_a_mistake_shared_by_the_servers_and_the_agents_fails_the_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents open every record with smpref's client, which shares the mistake; the
    network opens each again with the second implementation (smpref.independent), which
    refuses it: the machine fails on the first record."""
    monkeypatch.setattr(ratchet, "record_aad", _aad_without_kind)
    with pytest.raises(AssertionError, match="the second implementation finds invalid"):
        run(Profile.SEED, settings(SIZE, max_examples=10, phases=[Phase.generate]))
