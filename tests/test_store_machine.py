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
#: (120 runs of up to 60 steps) counted on 2026-11-28, so that a change which stops a path fails
#: here; the counters are the model machine's (tests/test_model_machine.py), and the journal store
#: reopened, cleanly and after a crash. The run is derandomized, so it counts the same in every
#: session; after a change that moves the counts, measure again with
#: `python tests/machine_depth.py store` and put the FLOORS it prints here.
FLOORS = {
    "NEW refused: blob too large": 69, "NEW refused: long link ID": 72,
    "NEW refused: long notifier ID": 59, "NEW refused: long sender ID": 59,
    "NEW refused: low-order DH key": 65, "NEW refused: low-order notifier DH key": 67,
    "NEW refused: no password": 73, "NEW refused: one ID twice": 96,
    "NEW refused: optional part first": 59, "NEW refused: short link ID": 63,
    "NEW refused: short notifier ID": 57, "NEW refused: short sender ID": 66,
    "NEW refused: signed by another key": 66, "NEW refused: taken link ID": 22,
    "NEW refused: taken notifier ID": 70, "NEW refused: taken sender ID": 64,
    "NEW refused: two mandatory parts": 57, "NEW refused: wrong password": 67,
    "NEW without a queue request": 42, "blobs at the limit": 149, "blobs relieved": 61,
    "checked AUTH-1": 46, "checked AUTH-2": 29, "checked AUTH-3": 60, "checked CMD-10": 42,
    "checked CMD-15": 48, "checked CMD-22": 44, "checked CMD-23": 71, "checked CMD-33": 39,
    "checked LINK-11": 40, "checked LINK-4": 46, "checked LINK-5": 48, "checked LINK-6": 49,
    "checked LINK-7": 40, "checked LINK-8": 20, "checked LINK-9": 40, "checked MSG-1": 52,
    "checked MSG-2": 65, "checked MSG-3": 46, "checked MSG-4": 53, "checked MSG-5": 30,
    "checked MSG-6": 36, "checked MSG-7": 27, "checked MSG-8": 45, "checked MSG-9": 50,
    "checked QENC-1": 71, "checked QENC-2": 52, "checked QENC-4": 44, "checked QENC-5": 63,
    "checked QENC-6": 71, "checked QENC-7": 63, "checked QENC-9": 28, "checked QUEUE-1": 71,
    "checked QUEUE-10": 42, "checked QUEUE-11": 48, "checked QUEUE-3": 42, "checked QUEUE-4": 42,
    "checked QUEUE-5": 44, "checked QUEUE-6": 42, "checked QUEUE-8": 42, "checked QUEUE-9": 46,
    "checked RET-1": 39, "checked RET-2": 39, "checked RET-3": 48, "checked RET-5": 28,
    "checked RET-6": 39, "checked RET-7": 48, "checked ROT-3": 54, "checked ROT-4": 65,
    "checked STORE-18": 71, "checked STORE-7": 39, "checked TRANS-7": 25, "deliveries": 1169,
    "gaps stepped over": 10, "last flags": 86, "links opened twice": 581, "low-order links": 40,
    "messages deleted with their queue": 68, "messages delivered": 579, "messages expired": 56,
    "messages sent": 771, "notifications": 132, "queues expired": 56,
    "queues expired at the period's end": 23, "quota answers": 228, "read back DEL": 40,
    "read back KEY": 46, "read back LGET": 36, "read back LSET": 208, "read back LSET refused": 74,
    "read back NDEL": 61, "read back NEW refused": 960, "read back OFF": 99, "read back SKEY": 18,
    "read back relief": 131, "read back securing": 47, "records opened twice": 981,
    "refusal ACK of another message": 55, "refusal LGET of a low-order k": 40,
    "refusal LGET signed by another key": 55, "refusal LSET of a bad blob": 72,
    "refusal LSET of a bad blob to a link that can be set": 32,
    "refusal NEW without a queue request": 34, "refusal NEW: blob too large": 69,
    "refusal NEW: long link ID": 72, "refusal NEW: long notifier ID": 59,
    "refusal NEW: long sender ID": 59, "refusal NEW: low-order DH key": 65,
    "refusal NEW: low-order notifier DH key": 67, "refusal NEW: no password": 73,
    "refusal NEW: one ID twice": 61, "refusal NEW: optional part first": 59,
    "refusal NEW: short link ID": 63, "refusal NEW: short notifier ID": 57,
    "refusal NEW: short sender ID": 66, "refusal NEW: signed by another key": 66,
    "refusal NEW: taken link ID": 57, "refusal NEW: taken notifier ID": 70,
    "refusal NEW: taken sender ID": 64, "refusal NEW: two mandatory parts": 57,
    "refusal NEW: wrong password": 67, "refusal SEND at the size limit": 63,
    "refusal SEND over the size limit": 56, "refusal SEND to a deleted queue": 23,
    "refusal SKEY to a deleted queue": 20, "refusal SKEY to no queue": 66,
    "refusal SKEY with another key to a secured invitation": 36, "refusal SUB after GET": 68,
    "refusal blobs at each type's limit": 75, "refusal two senders race for a link": 50,
    "relief grown": 13, "rule ack": 232, "rule advance_and_expire": 101, "rule connect": 152,
    "rule conversation": 147, "rule create": 197, "rule delete": 40, "rule garbage": 80,
    "rule get": 175, "rule join_by_link": 99, "rule key": 124, "rule lget": 120, "rule lset": 132,
    "rule ndel": 96, "rule notifier_reconnects": 56, "rule nsub": 101, "rule off": 69,
    "rule ping": 80, "rule read_to_the_end": 138, "rule refusals": 83, "rule relief_by_day": 28,
    "rule reopen_store": 323, "rule send": 168, "rule send_burst": 86,
    "rule send_with_wrong_key": 104, "rule skey": 86, "rule sub": 98, "rule sweep_slices": 81,
    "rule unauthorized": 98, "rule under_pressure": 29, "slices into relief": 4,
    "store reopened after a crash": 249, "store reopened cleanly": 75,
    "suspended queues drained": 67, "sweep slices": 412, "table ACK.accepted": 909,
    "table ACK.no-queue": 41, "table ACK.not-authorized": 34, "table ACK.nothing-delivered": 169,
    "table ACK.other-message": 86, "table DEL.accepted": 189, "table DEL.no-queue": 41,
    "table DEL.not-authorized": 34, "table GET.accepted": 649, "table GET.no-queue": 41,
    "table GET.not-authorized": 34, "table GET.session-subscribed": 32, "table KEY.accepted": 112,
    "table KEY.no-queue": 41, "table KEY.not-authorized": 34, "table KEY.other-key": 65,
    "table LGET.accepted": 581, "table LGET.bad-signature": 23, "table LGET.low-order-k": 40,
    "table LGET.no-link": 314, "table LGET.other-key": 41, "table LGET.secures-contact": 95,
    "table LSET.accepted": 184, "table LSET.blob-too-large": 20, "table LSET.malformed-blob": 39,
    "table LSET.no-link": 76, "table LSET.no-queue": 41, "table LSET.not-authorized": 34,
    "table LSET.secured-invitation": 55, "table NDEL.accepted": 96, "table NDEL.no-queue": 41,
    "table NDEL.not-authorized": 34, "table NEW.accepted": 423, "table NEW.blob-too-large": 218,
    "table NEW.id-taken": 252, "table NEW.low-order-key": 131, "table NEW.malformed-blob": 116,
    "table NEW.malformed-link-ids": 259, "table NEW.malformed-notifier-id": 116,
    "table NEW.not-authorized": 66, "table NEW.wrong-password": 140, "table NSUB.accepted": 157,
    "table NSUB.no-queue": 88, "table NSUB.not-authorized": 40, "table OFF.accepted": 99,
    "table OFF.no-queue": 41, "table OFF.not-authorized": 34, "table PING.accepted": 80,
    "table SEND.accepted": 771, "table SEND.body-too-large": 43, "table SEND.no-queue": 982,
    "table SEND.queue-full": 94, "table SEND.quota-held": 154, "table SEND.signed-to-unsecured": 57,
    "table SEND.suspended": 428, "table SEND.unsigned-to-secured": 101, "table SKEY.accepted": 17,
    "table SKEY.contact": 34, "table SKEY.no-queue": 86, "table SKEY.not-authorized": 27,
    "table SKEY.other-key": 64, "table SUB.accepted": 162, "table SUB.no-queue": 71,
    "table SUB.not-authorized": 34, "table SUB.session-gets": 84, "table credentials": 328,
    "table deliver": 1083, "table deliver.last": 86, "table end": 170, "table expire.message": 56,
    "table expire.queue": 78, "table link.drop-pending": 34, "table link.dropped": 40,
    "table notify": 132, "table quota.reopened": 85, "table ratchet.update": 164,
    "table relief.blob": 61, "table sweep.slice": 536, "table touch": 192, "to the period": 23,
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
