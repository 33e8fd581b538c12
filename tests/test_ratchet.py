"""The seed 003 queue ratchet: chains, labels by an independent path, and every verdict."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from hypothesis import given
from hypothesis import strategies as st
from reqs import req

from smpref.crypto import ratchet as r
from smpref.crypto.primitives import x25519_public
from smpref.crypto.randomness import SeededRandom
from smpref.independent.ratchet_mirror import RatchetMirror

OWNER = hashlib.sha256(b"owner").digest()


def fresh(seed: int = 0) -> tuple[r.RatchetState, bytes, SeededRandom]:
    random = SeededRandom(seed)
    state, initial = r.start(x25519_public(OWNER), random)
    return state, initial, random


def expand(prk: bytes, label: bytes) -> bytes:
    return hmac.digest(prk, label + b"\x01", "sha512")[:32]  # RFC 5869, one block


@req("QENC-2", "QENC-10")
def test_message_step_by_an_independent_path() -> None:
    """Recompute one step with hmac and cryptography: every label is really used."""
    state, _, _ = fresh()
    _, record_bytes = r.encrypt(state, b"hello")
    record = r.decode_record(record_bytes)
    prk = hmac.digest(bytes(64), state.key, "sha512")
    mk = expand(prk, b"SimpleXQueueRatchet message")
    aad = b"SimpleXQueueRatchet" + b"M" + (1).to_bytes(8, "big")
    assert ChaCha20Poly1305(mk).decrypt(bytes(12), record.payload, aad) == b"hello"
    next_key = expand(prk, b"SimpleXQueueRatchet next")
    state2, _ = r.encrypt(state, b"x")
    assert state2.key == next_key and state2.seq == 2
    assert mk != next_key


@req("QENC-1", "QENC-2", "QENC-4", "QENC-5", "QENC-6")
@given(st.lists(st.one_of(st.binary(max_size=40), st.none()), min_size=64, max_size=90))
def test_long_chains_with_updates_decrypt_in_order(script: list[bytes | None]) -> None:
    """smpref's records opened by smpref's mirror and by the second implementation written from
    the spec (smpref.independent): a label or a derivation that both sides of smpref share
    wrongly shows as a record the second one does not open, or as a different key."""
    state, initial, random = fresh(len(script))
    mirror = r.ClientRatchet(OWNER)
    independent = RatchetMirror(OWNER)
    assert mirror.receive(initial).kind is r.RecordKind.Initial
    assert independent.receive(initial) == ("valid", b"", "")
    for item in [*script, None, b"after the last update"]:  # every chain has an update
        if item is None:
            state, record = r.update(state, x25519_public(OWNER), random)
            assert mirror.receive(record).kind is r.RecordKind.Update
            assert independent.receive(record) == ("valid", b"", "")
        else:
            state, record = r.encrypt(state, item)
            assert mirror.receive(record).body == item
            assert independent.receive(record) == ("valid", item, "")
    assert mirror.next_seq == independent.next == state.seq
    assert mirror.key == independent.key == state.key


def chain() -> tuple[r.ClientRatchet, list[bytes]]:
    state, initial, random = fresh()
    records = [initial]
    for body in (b"one", b"two", b"three"):
        state, record = r.encrypt(state, body)
        records.append(record)
    state, update = r.update(state, x25519_public(OWNER), random)
    records.append(update)
    state, record = r.encrypt(state, b"after")
    records.append(record)
    return r.ClientRatchet(OWNER), records


def rejected(mirror: r.ClientRatchet, record: bytes, reason: str) -> None:
    before = (mirror.next_seq, mirror.key)
    with pytest.raises(r.RatchetError) as info:
        mirror.receive(record)
    assert info.value.reason == reason
    assert (mirror.next_seq, mirror.key) == before  # a rejected record changes nothing


@req("QENC-8")
def test_verdicts() -> None:
    mirror, records = chain()
    rejected(mirror, records[1], "not-initialised")
    mirror.receive(records[0])
    assert mirror.receive(records[1]).verdict is r.RecordVerdict.VALID
    rejected(mirror, records[1], "replay")  # replay
    gap = mirror.receive(records[3])  # "two" was lost
    assert gap.verdict is r.RecordVerdict.GAP and gap.skipped == 1 and gap.body == b"three"
    rejected(mirror, records[2], "replay")  # reorder: "two" arrives late
    assert mirror.receive(records[4]).kind is r.RecordKind.Update
    assert mirror.receive(records[5]).body == b"after"
    rejected(mirror, records[0], "replay")


@req("QENC-8", "QENC-6")
def test_tampering_is_rejected() -> None:
    mirror, records = chain()
    mirror.receive(records[0])
    record = r.decode_record(records[1])
    record_type = r.RatchetRecord
    tampered_payload = record_type(kind=record.kind, seq=record.seq,
                          payload=record.payload[:-1] + bytes([record.payload[-1] ^ 1])).encode()
    rejected(mirror, tampered_payload, "tampered")
    wrong_seq = record_type(kind=record.kind, seq=2, payload=record.payload).encode()
    rejected(mirror, wrong_seq, "tampered")
    update = r.decode_record(records[4])
    wrong_kind = record_type(kind=r.RecordKind.Update, seq=1, payload=record.payload).encode()
    rejected(mirror, wrong_kind, "tampered")
    moved_update = record_type(kind=update.kind, seq=1, payload=update.payload).encode()
    rejected(mirror, moved_update, "tampered")  # sealed sequence number differs
    rejected(mirror, b"Mxx", "malformed")
    # a Message whose payload is shorter than its tag (a quota marker turned into a Message):
    # refused as tampered, not a crash (found by the model machine's forged records)
    for size in range(16):
        short = record_type(kind=record.kind, seq=record.seq, payload=bytes(size)).encode()
        rejected(mirror, short, "tampered")
    assert mirror.receive(records[1]).body == b"one"


@req("QENC-8")
def test_gaps_are_bounded() -> None:
    state, initial, _ = fresh()
    mirror = r.ClientRatchet(OWNER)
    mirror.receive(initial)
    far = r.RatchetRecord(kind=r.RecordKind.Message, seq=1 + r.MAX_SKIP + 1, payload=b"x" * 20)
    rejected(mirror, far.encode(), "gap-too-large")
    quota = r.quota_marker(r.RatchetState(seq=1, key=state.key))
    assert mirror.receive(quota).verdict is r.RecordVerdict.VALID and mirror.next_seq == 1
    beyond = r.quota_marker(r.RatchetState(seq=4, key=state.key))  # after lost messages
    assert mirror.receive(beyond).verdict is r.RecordVerdict.VALID and mirror.next_seq == 1


def leaked_key_opens(leaked: r.RatchetState, earlier: bytes) -> bool:
    """Whether an attacker holding the leaked state opens an earlier record. The attacker's
    sequence is rewound to the record's, so the record reaches decryption instead of being
    refused as a replay; only a failure to decrypt ("tampered") counts as the key not
    opening it."""
    attacker = r.ClientRatchet(b"\x01" * 32)
    attacker.key, attacker.next_seq = leaked.key, leaked.seq - 1
    try:
        attacker.receive(earlier)
    except r.RatchetError as exc:
        assert exc.reason == "tampered", exc  # refused by decryption, not by the sequence
        return False
    return True


def test_forward_secrecy_fails_for_a_ratchet_that_keeps_its_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a ratchet whose next key is its current key lets the leaked
    key open the message before the leak."""
    honest = r._steps
    monkeypatch.setattr(r, "_steps", lambda key: (honest(key)[0], key))
    state, _, _ = fresh()
    state, first = r.encrypt(state, b"before the leak")
    assert leaked_key_opens(state, first) is True


@req("QENC-2", "QENC-4")
def test_forward_secrecy_and_post_compromise_security() -> None:
    state, initial, random = fresh()
    state, first = r.encrypt(state, b"before the leak")
    leaked = state  # the server's whole ratchet state leaks here
    # Forward secrecy: nothing derivable from the leaked key opens the earlier message.
    assert leaked_key_opens(leaked, first) is False
    # Post-compromise security: after an update, the leaked state no longer helps.
    state, update = r.update(state, x25519_public(OWNER), random)
    state, later = r.encrypt(state, b"after the update")
    follow = r.ClientRatchet(b"\x01" * 32)  # cannot open the update's sealed box
    follow.key, follow.next_seq = leaked.key, leaked.seq
    with pytest.raises(r.RatchetError):
        follow.receive(update)
    with pytest.raises(r.RatchetError):
        follow.receive(later)  # stepping over the update with the old key fails too
    # an attacker who knows how an update derives the key, but not the sealed randomness
    guessed = r.RatchetState(seq=state.seq, key=r._updated(leaked.key, bytes(32)))
    assert leaked_key_opens(guessed, later) is False
    owner = r.ClientRatchet(OWNER)
    owner.receive(initial)
    owner.receive(first)
    owner.receive(update)
    assert owner.receive(later).body == b"after the update"


@req("QENC-8")
def test_a_gap_of_exactly_1024_lost_messages_is_stepped_over_and_1025_is_not() -> None:
    """QENC-8's bound, written as the spec writes it (1024), not read from the code."""
    state, initial, _ = fresh()
    records = []
    for n in range(1026):
        state, record = r.encrypt(state, b"%d" % n)
        records.append(record)
    mirror = r.ClientRatchet(OWNER)
    mirror.receive(initial)
    accepted = mirror.receive(records[1024])  # seq 1025: messages 1..1024 lost
    assert accepted.verdict is r.RecordVerdict.GAP and accepted.skipped == 1024
    assert accepted.body == b"1024"
    too_far = r.ClientRatchet(OWNER)
    too_far.receive(initial)
    rejected(too_far, records[1025], "gap-too-large")  # seq 1026: 1025 lost


@req("QENC-8", "QENC-6")
def test_an_initial_record_with_another_number_than_0_is_refused() -> None:
    _, initial, _ = fresh()
    record = r.decode_record(initial)
    for seq in (3, 1):
        moved = r.RatchetRecord(kind=record.kind, seq=seq, payload=record.payload).encode()
        rejected(r.ClientRatchet(OWNER), moved, "missing-key-record")
    mirror = r.ClientRatchet(OWNER)
    mirror.receive(initial)
    rejected(mirror, initial, "replay")


@req("QENC-8", "QENC-6")
def test_a_key_record_sealed_for_an_earlier_number_is_refused() -> None:
    """The sealed number must equal the record's, in both directions (QENC-6)."""
    state, initial, random = fresh()
    for body in (b"1", b"2"):
        state, _ = r.encrypt(state, body)
    state, update = r.update(state, x25519_public(OWNER), random)  # sealed for 3
    sealed = r.decode_record(update)
    later = r.RatchetRecord(kind=sealed.kind, seq=sealed.seq + 2, payload=sealed.payload)
    mirror = r.ClientRatchet(OWNER)
    mirror.receive(initial)
    rejected(mirror, later.encode(), "tampered")


@req("QENC-8")
def test_quota_markers_before_the_next_number_are_replays_and_nothing_is_skipped() -> None:
    mirror, records = chain()
    first = mirror.receive(records[0])
    assert first.skipped == 0 and first.verdict is r.RecordVerdict.VALID
    for record in records[1:4]:
        mirror.receive(record)
    state = r.RatchetState(seq=mirror.next_seq, key=b"\x00" * 32)
    here = mirror.receive(r.quota_marker(state))
    assert here.skipped == 0 and here.verdict is r.RecordVerdict.VALID
    rejected(mirror, r.quota_marker(r.RatchetState(seq=2, key=b"\x00" * 32)), "replay")


@req("QENC-8", "QENC-6")
def test_a_new_mirror_expects_number_0_first() -> None:
    """Numbers are signed Int64s on the wire: a record numbered below 0 is a replay even for a
    mirror that has received nothing yet."""
    mirror = r.ClientRatchet(OWNER)
    rejected(mirror, r.quota_marker(r.RatchetState(seq=-1, key=b"\x00" * 32)), "replay")
    rejected(mirror, r.RatchetRecord(kind=r.RecordKind.Message, seq=-1,
                                     payload=b"x" * 20).encode(), "replay")
    assert mirror.next_seq == 0
