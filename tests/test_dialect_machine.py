"""Both profiles under one state machine: each against the oracle, and against each other
(DEP-4, DEP-7, DEP-8, TRANS-11)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from machine_depth import claimed, shortfalls
from reqs import req

from smpref.crypto import ratchet
from smpref.model import delivery, effects, sessions
from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.dialect_machine import DialectMachine
from smpref.testing.dialect_oracle import Seen, coarse, render
from smpref.testing.loopback import Loopback
from smpref.wire.deployed import DeployedMessageBody
from smpref.wire.dialects import Dialect
from smpref.wire.messages import OK

#: the derandomized run below: 400 examples of up to 50 steps
EXAMPLES, STEPS = 400, 50

#: the least each counter of the depth run must reach: half, rounded up, of what the run counted on
#: 2026-11-28 (480 programs, 13,035 steps, 1,519 of them raw transmissions), so that a change which
#: makes the programs shallower fails here; the programs and the steps keep their earlier floors,
#: just under the count. The run is derandomized, and Hypothesis seeds it from
#: the source of the class it runs (``Observed`` below): after a change to it, or one that moves the
#: counts, measure again with `python tests/machine_depth.py dialect` and put the FLOORS it prints
#: here.
FLOORS = {
    "MSGs opened twice": 379, "another session above": 24, "another session below": 20,
    "answered ERR AUTH": 88, "answered ERR CMD SYNTAX": 243, "answered ERR CMD UNKNOWN": 183,
    "answered ERR SERVICE": 203, "answered ERR SESSION": 44, "checked AUTH-2": 156,
    "checked AUTH-4": 98, "checked DEP-10": 98, "checked DEP-4": 80, "checked DEP-7": 51,
    "checked DEP-8": 16, "checked MSG-2": 46, "checked MSG-6": 24, "checked RET-5": 16,
    "checked TRANS-11": 183, "programs": 400, "raw steps": 760, "rule ack": 322,
    "rule ack_in_flight": 23, "rule another_session": 44, "rule create": 369, "rule delete": 266,
    "rule get": 268, "rule key": 329, "rule notifier_subscribe": 258, "rule ping": 2449,
    "rule reconnect": 932, "rule send": 282, "rule send_burst": 302, "rule send_notified": 50,
    "rule service_signature": 176, "rule skey": 293, "rule subscribe": 319, "rule suspend": 239,
    "rule tick": 621, "rule undecodable": 182, "service-signed deleted": 4,
    "service-signed queue": 38, "service-signed unknown": 135, "steps": 11000,
    "taken deployed ACK.accepted": 17, "taken deployed ACK.no-queue": 34,
    "taken deployed ACK.not-authorized": 151, "taken deployed ACK.nothing-delivered": 133,
    "taken deployed ACK.other-message": 19, "taken deployed DEL.accepted": 79,
    "taken deployed DEL.no-queue": 100, "taken deployed DEL.not-authorized": 97,
    "taken deployed DeployedNEW.accepted": 369, "taken deployed GET.accepted": 86,
    "taken deployed GET.no-queue": 78, "taken deployed GET.not-authorized": 112,
    "taken deployed GET.session-subscribed": 26, "taken deployed KEY.accepted": 87,
    "taken deployed KEY.no-queue": 28, "taken deployed KEY.not-authorized": 150,
    "taken deployed KEY.other-key": 21, "taken deployed NSUB.accepted": 60,
    "taken deployed NSUB.no-queue": 245, "taken deployed OFF.accepted": 107,
    "taken deployed OFF.no-queue": 70, "taken deployed OFF.not-authorized": 100,
    "taken deployed PING.accepted": 2449, "taken deployed SEND.accepted": 235,
    "taken deployed SEND.no-queue": 237, "taken deployed SEND.queue-full": 25,
    "taken deployed SEND.quota-held": 10, "taken deployed SEND.signed-to-unsecured": 498,
    "taken deployed SEND.suspended": 34, "taken deployed SEND.unsigned-to-secured": 98,
    "taken deployed SKEY.accepted": 59, "taken deployed SKEY.contact": 158,
    "taken deployed SKEY.no-queue": 46, "taken deployed SKEY.other-key": 31,
    "taken deployed SUB.accepted": 121, "taken deployed SUB.no-queue": 17,
    "taken deployed SUB.not-authorized": 135, "taken deployed SUB.session-gets": 8,
    "taken deployed deleted": 41, "taken deployed deliver": 112, "taken deployed end": 46,
    "taken deployed expire.message": 21, "taken deployed notify": 43,
    "taken deployed sweep.slice": 621, "taken deployed touch": 83, "taken seed ACK.accepted": 296,
    "taken seed ACK.no-queue": 34, "taken seed ACK.not-authorized": 151,
    "taken seed ACK.nothing-delivered": 133, "taken seed ACK.other-message": 19,
    "taken seed DEL.accepted": 79, "taken seed DEL.no-queue": 100,
    "taken seed DEL.not-authorized": 97, "taken seed GET.accepted": 122,
    "taken seed GET.no-queue": 78, "taken seed GET.not-authorized": 112,
    "taken seed GET.session-subscribed": 26, "taken seed KEY.accepted": 87,
    "taken seed KEY.no-queue": 28, "taken seed KEY.not-authorized": 150,
    "taken seed KEY.other-key": 21, "taken seed NEW.accepted": 369, "taken seed NSUB.accepted": 60,
    "taken seed NSUB.no-queue": 245, "taken seed OFF.accepted": 107, "taken seed OFF.no-queue": 70,
    "taken seed OFF.not-authorized": 100, "taken seed PING.accepted": 2449,
    "taken seed SEND.accepted": 235, "taken seed SEND.no-queue": 237,
    "taken seed SEND.queue-full": 25, "taken seed SEND.quota-held": 10,
    "taken seed SEND.signed-to-unsecured": 498, "taken seed SEND.suspended": 34,
    "taken seed SEND.unsigned-to-secured": 98, "taken seed SKEY.accepted": 59,
    "taken seed SKEY.contact": 158, "taken seed SKEY.no-queue": 46, "taken seed SKEY.other-key": 31,
    "taken seed SUB.accepted": 121, "taken seed SUB.no-queue": 17,
    "taken seed SUB.not-authorized": 135, "taken seed SUB.session-gets": 8,
    "taken seed deliver": 368, "taken seed deliver.last": 7, "taken seed end": 87,
    "taken seed expire.message": 21, "taken seed notify": 43, "taken seed sweep.slice": 621,
    "taken seed touch": 83, "version 10": 187, "version 11": 176, "version 12": 216,
    "version 13": 198, "version 14": 201, "version 15": 144, "version 16": 175, "version 17": 194,
    "version 18": 221, "version 6": 226, "version 7": 157, "version 8": 180, "version 9": 165,
    "version newest": 183,
}


def observed_run(examples: int = EXAMPLES, shrink: bool = True) -> Counter[str]:
    """Run the machine derandomized; what it counted, with the rows of the rule table each
    profile took ("taken <profile> <row>"). Without `shrink`, a failing program fails as found
    (a planted bug need only be found)."""

    class Observed(DialectMachine):
        def make_loopback(self, dialect: Dialect) -> Loopback:
            loopback = super().make_loopback(dialect)
            taken = f"taken {dialect.value} "

            def observe(name: str, _requirements: tuple[str, ...]) -> None:
                self.stats[taken + name] += 1

            loopback.server.observer = observe
            return loopback

    with same_draws_everywhere():  # the same programs in one file's run as in the whole suite
        run_state_machine_as_test(Observed, settings=settings(
            max_examples=examples, stateful_step_count=STEPS, deadline=None, database=None,
            derandomize=True, suppress_health_check=list(HealthCheck),
            phases=settings.default.phases if shrink else [Phase.generate]))
    return Observed.totals()


def depth_run() -> Counter[str]:
    """The depth test's run: what it counted."""
    return observed_run()


@req("DEP-4", "DEP-7", "DEP-8", "TRANS-11", "MSG-2", "MSG-6", "RET-5", "AUTH-2", "AUTH-4",
     "DEP-10")
def test_both_profiles_meet_the_oracle_and_each_other(request: pytest.FixtureRequest) -> None:
    """Among the floors: transmissions refused before any rule (AUTH-2), commands that do not
    decode on both sides and, below version 7, another session's ID sorting below and above
    the own; every MSG of both profiles opened again by smpref.independent (issue 30); the
    rows of the rule table each profile takes ("taken <profile> <row>"), DELD to another
    subscriber among them (DEP-4); deployed sessions at every version of deployed's range
    (DEP-12, DEP-13)."""
    missing = shortfalls(depth_run(), FLOORS, claimed(request),
                         rules=DialectMachine.rule_names())
    assert not missing, "the machine ran too shallow: " + "; ".join(missing)


def test_rendering_spells_each_profile_and_coarse_forgets_the_spelling() -> None:
    for abstract, seed, deployed in (("SUBSCRIBED", "OK", "SOK"), ("SUSPENDED", "COUNT", "OK"),
                                     ("GONE", "END", "DELD"), ("MSG", "MSG", "MSG")):
        assert render(Seen(abstract), Dialect.SEED).tag == seed
        assert render(Seen(abstract), Dialect.DEPLOYED).tag == deployed
        assert render(Seen(abstract), Dialect.DEPLOYED, 18).tag == deployed
        assert coarse(render(Seen(abstract), Dialect.SEED)) == coarse(
            render(Seen(abstract), Dialect.DEPLOYED))
    # older versions spell two answers as before them (DEP-12)
    assert render(Seen("SUBSCRIBED"), Dialect.DEPLOYED, 15).tag == "OK"
    assert render(Seen("GONE"), Dialect.DEPLOYED, 9).tag == "END"
    assert render(Seen("GONE"), Dialect.DEPLOYED, 10).tag == "DELD"


@pytest.mark.heavy
@pytest.mark.parametrize("planted", ["sub-answers-ok", "deployed-body-loses-its-flag",
                                     "newest-tags-at-every-version"])
def test_a_planted_profile_bug_fails_the_machine(planted: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if planted == "sub-answers-ok":  # deployed SUB answered as in the seed design
        monkeypatch.setattr(effects, "subscribed", lambda _session: OK())
    elif planted == "newest-tags-at-every-version":  # SOK and DELD even where OK and END are
        monkeypatch.setattr(sessions, "encode_message",
                            lambda message, version=None: message.CODEC.at(version).encode(
                                message))
    else:  # deployed MSG bodies without the notification flag
        monkeypatch.setattr(delivery, "DeployedMessageBody", lambda ts, _flag, body, quota=False:
                            DeployedMessageBody(ts, False, body, quota=quota))
    with pytest.raises(AssertionError, match="deployed session"):
        # the first found by 200 derandomized programs; shrinking it would judge nothing more
        observed_run(examples=200, shrink=False)


def _aad_without_kind(_kind: object, seq: int) -> bytes:
    """The ratchet's associated data without the record kind: one mistake in the module both
    the seed server (sealing) and the seed client (opening) use."""
    return b"SimpleXQueueRatchet" + seq.to_bytes(8, "big", signed=True)


def test_a_mistake_shared_by_server_and_client_fails_the_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """smpref's seed client opens what its server seals with the same module, so it shares
    the mistake; the second implementation opening every MSG again does not."""
    monkeypatch.setattr(ratchet, "record_aad", _aad_without_kind)
    with pytest.raises(AssertionError, match="the second implementation refuses"):
        observed_run(examples=50, shrink=False)
