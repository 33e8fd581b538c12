"""The agent envelope (ROT-5), its classification (ROT-6) and the agent messages' encodings
(ROT-1, DIV-20). Expected bytes are written out by hand from spec/commands.smpn, and hashes are
computed with hashlib over those bytes: a second path beside the notation's codecs."""

from __future__ import annotations

import hashlib
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reqs import req

from smpref.agent.envelope import (
    ZERO_HASH,
    ReceiveChain,
    SendChain,
    Verdict,
    decode_envelope,
    envelope_hash,
    probe,
)
from smpref.errors import EnvelopeError
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import AgentEnvelope, AgentMessage, QueueAddress

X25519_SPKI_PREFIX = bytes.fromhex("302a300506032b656e032100")
ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
DH = PublicKey(KeyAlgorithm.X25519, bytes(range(32)))
SIGN = PublicKey(KeyAlgorithm.ED25519, bytes(range(32, 64)))
ADDRESS = QueueAddress(server=b"smp.example", sender_id=b"S" * 24, dh_key=DH)


def by_hand_address() -> bytes:
    """QueueAddress: ShortString server, ShortString senderId, DhKey (ShortString of SPKI)."""
    spki = X25519_SPKI_PREFIX + bytes(range(32))
    return (bytes([11]) + b"smp.example" + bytes([24]) + b"S" * 24
            + bytes([len(spki)]) + spki)


def by_hand_envelope(msg_no: int, prev_hash: bytes, message: bytes) -> bytes:
    return struct.pack(">q", msg_no) + prev_hash + b" " + message


@req("ROT-1")
@pytest.mark.parametrize(("message", "expected"), [
    (AgentMessage.M(body=b"hello"), b"M hello"),
    (AgentMessage.QN(address=ADDRESS), b"QN " + by_hand_address()),
    (AgentMessage.QK(address=ADDRESS, sender_key=SIGN, dh_key=DH),
     b"QK " + by_hand_address() + bytes([44]) + ED25519_SPKI_PREFIX + bytes(range(32, 64))
     + bytes([44]) + X25519_SPKI_PREFIX + bytes(range(32))),
    (AgentMessage.QR(address=ADDRESS), b"QR " + by_hand_address()),
    (AgentMessage.QH(), b"QH"),
    (AgentMessage.QS(address=ADDRESS), b"QS " + by_hand_address()),
    (AgentMessage.QA(address=ADDRESS, replaced=ADDRESS),
     b"QA " + by_hand_address() + by_hand_address()),
    (AgentMessage.QU(address=ADDRESS), b"QU " + by_hand_address()),
    (AgentMessage.QT(address=ADDRESS), b"QT " + by_hand_address()),
], ids=lambda v: v.__class__.__name__ if not isinstance(v, bytes) else "")
def test_every_agent_message_encodes_as_the_notation_says(message: AgentMessage,
                                                          expected: bytes) -> None:
    envelope = AgentEnvelope(msg_no=7, prev_hash=b"\x01" * 32, message=message)
    data = bytes(envelope.encode())
    assert data == by_hand_envelope(7, b"\x01" * 32, expected)
    assert decode_envelope(data) == envelope


def test_qswitch_and_qready_have_different_tags() -> None:
    qready = bytes(AgentMessage.QR(address=ADDRESS).encode())
    qswitch = bytes(AgentMessage.QS(address=ADDRESS).encode())
    assert qready[:2] == b"QR" and qswitch[:2] == b"QS"


@req("ROT-5", "DIV-35")
def test_a_chain_numbers_from_one_and_hashes_each_envelope() -> None:
    chain = SendChain()
    first = chain.seal(AgentMessage.M(body=b"one"))
    second = chain.seal(AgentMessage.M(body=b"two"))
    first_bytes = by_hand_envelope(1, bytes(32), b"M one")
    assert bytes(first.encode()) == first_bytes
    assert bytes(second.encode()) == by_hand_envelope(
        2, hashlib.sha256(first_bytes).digest(), b"M two")
    assert envelope_hash(second) == hashlib.sha256(bytes(second.encode())).digest()


@req("ROT-5", "ROT-7")
def test_qhello_is_outside_the_sequence() -> None:
    hello = probe(AgentMessage.QH())
    assert bytes(hello.encode()) == by_hand_envelope(0, bytes(32), b"QH")
    assert bytes(32) == ZERO_HASH


@req("ROT-6")
def test_the_receiving_side_classifies_each_envelope() -> None:
    sender, receiver = SendChain(), ReceiveChain()
    one, two, three = (sender.seal(AgentMessage.M(body=b"%d" % n)) for n in (1, 2, 3))
    assert receiver.classify(two) is Verdict.GAP
    assert receiver.classify(one) is Verdict.NEXT
    receiver.accept(one)
    assert receiver.classify(one) is Verdict.DUPLICATE
    forged = AgentEnvelope(msg_no=2, prev_hash=b"\xee" * 32, message=two.message)
    assert receiver.classify(forged) is Verdict.CONFLICT
    assert receiver.classify(two) is Verdict.NEXT
    receiver.accept(two)
    assert receiver.classify(three) is Verdict.NEXT
    assert (receiver.last_no, receiver.last_hash) == (
        2, hashlib.sha256(bytes(two.encode())).digest())


@req("ROT-6")
@given(st.lists(st.binary(max_size=20), min_size=1, max_size=12), st.data())
def test_in_order_delivery_is_all_next_and_any_replay_is_a_duplicate(
        bodies: list[bytes], data: st.DataObject) -> None:
    sender, receiver = SendChain(), ReceiveChain()
    envelopes = [sender.seal(AgentMessage.M(body=b)) for b in bodies]
    for envelope in envelopes:
        assert receiver.classify(envelope) is Verdict.NEXT
        receiver.accept(envelope)
    again = data.draw(st.sampled_from(envelopes))
    assert receiver.classify(again) is Verdict.DUPLICATE


@req("ROT-5")
@pytest.mark.parametrize(("data", "what"), [
    (b"", "short"),
    (struct.pack(">q", 1) + bytes(32) + b"M", "M"),
    (struct.pack(">q", 1) + bytes(32) + b" QZ", "QZ"),
    (struct.pack(">q", 1) + bytes(32) + b" QH trailing", "trailing"),
])
def test_a_body_that_is_not_an_envelope_is_a_typed_error(data: bytes, what: str) -> None:
    with pytest.raises(EnvelopeError, match="not an agent envelope"):
        decode_envelope(data)
