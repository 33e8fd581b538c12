"""The model's state machine over the journal store, against the memory store (STORE-18), with
the same oracle and depth floors as the model's own machine.

Its size follows the Hypothesis profile in force (HYPOTHESIS_PROFILE=long runs it long), as
the model's own machine does."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from machine_depth import SEED_READ_BACKS, claimed, seed_rows, shortfalls
from reqs import req

from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.differential import DifferentialMachine

_profile = settings.get_profile(settings._current_profile or "default")  # type: ignore[attr-defined]
LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
SIZE = settings(_profile, max_examples=_profile.max_examples * 2, deadline=None,
                stateful_step_count=120 if LONG else 60,
                # the depth floors hold for these exact runs; the long profile explores
                derandomize=not LONG, database=None if not LONG else _profile.database,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

#: the least each counter of the depth run must reach: half, rounded up, of what one CI-size run
#: (120 runs of up to 60 steps) counted on 2026-11-27, so that a change which stops a path fails
#: here; the counters are the model machine's (tests/test_model_machine.py), and the journal store
#: reopened, cleanly and after a crash. The run is derandomized, so it counts the same in every
#: session; after a change that moves the counts, measure again with
#: `python tests/machine_depth.py store` and put the FLOORS it prints here.
FLOORS = {
    "NEW refused: blob too large": 10, "NEW refused: long link ID": 10,
    "NEW refused: long notifier ID": 10, "NEW refused: long sender ID": 10,
    "NEW refused: low-order DH key": 10, "NEW refused: low-order notifier DH key": 10,
    "NEW refused: no password": 10, "NEW refused: one ID twice": 13,
    "NEW refused: optional part first": 10, "NEW refused: short link ID": 10,
    "NEW refused: short notifier ID": 10, "NEW refused: short sender ID": 10,
    "NEW refused: signed by another key": 10, "NEW refused: taken link ID": 7,
    "NEW refused: taken notifier ID": 10, "NEW refused: taken sender ID": 10,
    "NEW refused: two mandatory parts": 10, "NEW refused: wrong password": 10,
    "NEW without a queue request": 11, "blobs at the limit": 20, "blobs relieved": 61,
    "checked AUTH-1": 33, "checked AUTH-2": 24, "checked AUTH-3": 40, "checked CMD-10": 10,
    "checked CMD-15": 34, "checked CMD-22": 22, "checked CMD-23": 69, "checked CMD-33": 18,
    "checked LINK-11": 15, "checked LINK-4": 45, "checked LINK-5": 48, "checked LINK-6": 49,
    "checked LINK-7": 27, "checked LINK-8": 4, "checked LINK-9": 10, "checked MSG-1": 50,
    "checked MSG-2": 65, "checked MSG-3": 34, "checked MSG-4": 47, "checked MSG-5": 9,
    "checked MSG-6": 18, "checked MSG-7": 11, "checked MSG-8": 25, "checked MSG-9": 42,
    "checked QENC-1": 69, "checked QENC-2": 45, "checked QENC-4": 30, "checked QENC-5": 63,
    "checked QENC-6": 69, "checked QENC-7": 63, "checked QENC-9": 11, "checked QUEUE-1": 69,
    "checked QUEUE-10": 10, "checked QUEUE-11": 44, "checked QUEUE-3": 10, "checked QUEUE-4": 10,
    "checked QUEUE-5": 33, "checked QUEUE-6": 10, "checked QUEUE-8": 10, "checked QUEUE-9": 45,
    "checked RET-1": 23, "checked RET-2": 23, "checked RET-3": 41, "checked RET-5": 11,
    "checked RET-6": 23, "checked RET-7": 41, "checked ROT-3": 36, "checked ROT-4": 65,
    "checked STORE-18": 69, "checked STORE-7": 25, "checked TRANS-7": 13, "deliveries": 707,
    "gaps stepped over": 8, "last flags": 30, "links opened twice": 563, "low-order links": 10,
    "messages deleted with their queue": 56, "messages delivered": 343, "messages expired": 36,
    "messages sent": 473, "notifications": 32, "queues expired": 50,
    "queues expired at the period's end": 9, "quota answers": 201, "read back DEL": 30,
    "read back KEY": 26, "read back LGET": 32, "read back LSET": 208, "read back LSET refused": 22,
    "read back NDEL": 33, "read back NEW refused": 150, "read back OFF": 67, "read back SKEY": 17,
    "read back relief": 131, "read back securing": 35, "records opened twice": 630,
    "relief grown": 13, "rule ack": 130, "rule advance_and_expire": 61, "rule connect": 152,
    "rule conversation": 122, "rule create": 197, "rule delete": 30, "rule garbage": 80,
    "rule get": 103, "rule join_by_link": 75, "rule key": 121, "rule lget": 79, "rule lset": 122,
    "rule ndel": 59, "rule notifier_reconnects": 18, "rule nsub": 101, "rule off": 67,
    "rule ping": 42, "rule read_to_the_end": 128, "rule refusals": 10, "rule relief_by_day": 25,
    "rule reopen_store": 323, "rule send": 31, "rule send_burst": 57,
    "rule send_with_wrong_key": 52, "rule skey": 60, "rule sub": 74, "rule sweep_slices": 71,
    "rule unauthorized": 93, "rule under_pressure": 28, "slices into relief": 1,
    "store reopened after a crash": 249, "store reopened cleanly": 75,
    "suspended queues drained": 58, "sweep slices": 412, "table ACK.accepted": 548,
    "table ACK.no-queue": 41, "table ACK.not-authorized": 26, "table ACK.nothing-delivered": 110,
    "table ACK.other-message": 15, "table DEL.accepted": 50, "table DEL.no-queue": 41,
    "table DEL.not-authorized": 26, "table GET.accepted": 325, "table GET.no-queue": 41,
    "table GET.not-authorized": 26, "table GET.session-subscribed": 32, "table KEY.accepted": 82,
    "table KEY.no-queue": 41, "table KEY.not-authorized": 26, "table KEY.other-key": 65,
    "table LGET.accepted": 563, "table LGET.bad-signature": 4, "table LGET.low-order-k": 10,
    "table LGET.no-link": 141, "table LGET.other-key": 12, "table LGET.secures-contact": 70,
    "table LSET.accepted": 184, "table LSET.blob-too-large": 6, "table LSET.malformed-blob": 15,
    "table LSET.no-link": 33, "table LSET.no-queue": 41, "table LSET.not-authorized": 26,
    "table LSET.secured-invitation": 29, "table NDEL.accepted": 59, "table NDEL.no-queue": 41,
    "table NDEL.not-authorized": 26, "table NEW.accepted": 227, "table NEW.blob-too-large": 30,
    "table NEW.id-taken": 40, "table NEW.low-order-key": 20, "table NEW.malformed-blob": 20,
    "table NEW.malformed-link-ids": 40, "table NEW.malformed-notifier-id": 20,
    "table NEW.not-authorized": 10, "table NEW.wrong-password": 20, "table NSUB.accepted": 110,
    "table NSUB.no-queue": 71, "table NSUB.not-authorized": 40, "table OFF.accepted": 67,
    "table OFF.no-queue": 41, "table OFF.not-authorized": 26, "table PING.accepted": 42,
    "table SEND.accepted": 473, "table SEND.body-too-large": 9, "table SEND.no-queue": 158,
    "table SEND.queue-full": 47, "table SEND.quota-held": 154, "table SEND.signed-to-unsecured": 42,
    "table SEND.suspended": 258, "table SEND.unsigned-to-secured": 20, "table SKEY.accepted": 5,
    "table SKEY.contact": 33, "table SKEY.no-queue": 18, "table SKEY.not-authorized": 23,
    "table SKEY.other-key": 23, "table SUB.accepted": 134, "table SUB.no-queue": 71,
    "table SUB.not-authorized": 26, "table SUB.session-gets": 27, "table credentials": 212,
    "table deliver": 677, "table deliver.last": 30, "table end": 125, "table expire.message": 36,
    "table expire.queue": 55, "table link.drop-pending": 15, "table link.dropped": 19,
    "table notify": 32, "table quota.reopened": 37, "table ratchet.update": 99,
    "table relief.blob": 61, "table sweep.slice": 484, "table touch": 154, "to the period": 9,
}


def depth_run() -> Counter[str]:
    """One CI-size run of the machine, as the depth test makes it: what it counted."""
    class Run(DifferentialMachine):
        pass

    with same_draws_everywhere():  # the floors hold whatever else the session imported
        run_state_machine_as_test(Run, settings=SIZE)
    return Run.totals()


@pytest.mark.heavy
@req("STORE-18", "STORE-7", "MSG-9", "RET-5")
def test_the_journal_store_behaves_as_the_memory_store(request: pytest.FixtureRequest) -> None:
    # forged records are the model machine's (this one spends its steps on the store)
    rules = [rule for rule in DifferentialMachine.rule_names() if rule != "forged_record"]
    missing = shortfalls(depth_run(), FLOORS, claimed(request), rules=rules, table=seed_rows(),
                         read_backs=SEED_READ_BACKS)
    assert not missing, "the machine ran too shallow: " + "; ".join(missing)


def test_the_differential_machine_follows_the_profile() -> None:
    assert SIZE.max_examples == _profile.max_examples * 2
    assert SIZE.stateful_step_count == (120 if LONG else 60)
