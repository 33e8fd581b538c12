"""Transmissions, the credential rules of TRANS-7, padding and blocks."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from reqs import req

from smpref.errors import BadValueError, BlockError, CredentialError, ErrorCode, WireError
from smpref.testing.strategies import EDGE_LENGTHS, MESSAGE_LIMIT, messages, short_strings
from smpref.wire import (
    BLOCK_SIZE,
    Message,
    Transmission,
    batch_transmissions,
    decode_block,
    decode_transmission_message,
    encode_block,
    pad,
    unpad,
)
from smpref.wire.messages import SEND, MsgFlags

SIG = b"s" * 64
AUTHS = st.sampled_from([b"", b"a" * 64, b"b" * 80, b"c" * 114])


#: a ShortString of a transmission, at its edges too (0, 1, 255)
SHORT = short_strings(edges=EDGE_LENGTHS)


@st.composite
def transmissions(draw: st.DrawFn) -> Transmission:
    auth = draw(AUTHS)
    service = draw(st.none() | SHORT) if auth else None
    command = draw(messages(edges=EDGE_LENGTHS)).encode()
    return Transmission(auth, draw(SHORT), draw(SHORT), command, service)


@req("TRANS-4")
@given(transmissions())
def test_transmissions_round_trip(tx: Transmission) -> None:
    assert Transmission.decode(tx.encode()) == tx


@req("TRANS-4", "TRANS-6")
def test_transmission_layout_and_authorized_bytes_are_as_deployed() -> None:
    tx = Transmission(SIG, b"C" * 24, b"E" * 3, b"SUB")
    assert tx.encode() == bytes([64]) + SIG + b"0" + bytes([24]) + b"C" * 24 + b"\x03EEE" + b"SUB"
    unsigned = Transmission(b"", b"C" * 24, b"", b"PING")
    assert unsigned.encode() == b"\x00" + bytes([24]) + b"C" * 24 + b"\x00PING"
    assert tx.authorized_bytes(b"S" * 32) == (
        bytes([32]) + b"S" * 32 + bytes([24]) + b"C" * 24 + b"\x03EEE" + b"SUB")


@req("TRANS-5")
def test_authorization_length_must_name_a_signature_or_authenticator() -> None:
    with pytest.raises(BadValueError, match="authorization"):
        Transmission(b"x" * 65, b"", b"", b"PING")
    with pytest.raises(WireError) as info:
        Transmission.decode(bytes([10]) + b"x" * 10 + b"0\x00\x00PING")
    assert info.value.smp_error is ErrorCode.BLOCK
    with pytest.raises(WireError) as info2:
        Transmission.decode(bytes([64]) + SIG + b"7\x00\x00PING")
    assert info2.value.path == "serviceSignature"


@req("TRANS-4")
@pytest.mark.parametrize("field", ["corr_id", "entity_id", "service_signature"])
def test_a_short_string_of_a_transmission_holds_255_bytes_and_not_256(field: str) -> None:
    signed = Transmission(SIG, b"c", b"e", b"PING")
    largest = replace(signed, **{field: b"x" * 255})
    assert Transmission.decode(largest.encode()) == largest
    with pytest.raises(BadValueError, match="at most 255 bytes"):
        replace(signed, **{field: b"x" * 256})


# (command body, authorization?, entity?, expected ERR or None) per TRANS-7 and LGET's
# seed rule (auth exactly when it carries a key).
KEY = bytes([44]) + bytes.fromhex("302a300506032b6570032100") + bytes(32)
CREDENTIALS = [
    (b"NEW " + KEY + bytes([44]) + bytes.fromhex("302a300506032b656e032100") + bytes(32)
     + b"0S1M00", True, False, None),
    (b"NEW " + KEY + bytes([44]) + bytes.fromhex("302a300506032b656e032100") + bytes(32)
     + b"0S1M00", False, False, "CMD NO_AUTH"),
    (b"NEW " + KEY + bytes([44]) + bytes.fromhex("302a300506032b656e032100") + bytes(32)
     + b"0S1M00", True, True, "CMD HAS_AUTH"),
    (b"SEND F x", False, True, None),
    (b"SEND F x", True, True, None),
    (b"SEND F x", False, False, "CMD NO_ENTITY"),
    (b"PING", False, False, None),
    (b"PING", True, False, "CMD HAS_AUTH"),
    (b"PING", False, True, "CMD HAS_AUTH"),
    (b"SUB", True, True, None),
    (b"SUB", False, True, "CMD NO_AUTH"),
    (b"SUB", True, False, "CMD NO_AUTH"),
    (b"KEY " + KEY, True, True, None),
    (b"ACK \x00", False, True, "CMD NO_AUTH"),
    (b"NSUB", True, True, None),
    (b"LGET 0", False, True, None),
    (b"LGET 0", True, True, "CMD HAS_AUTH"),
    (b"LGET 0", False, False, "CMD NO_ENTITY"),
    (b"LGET 1" + KEY, True, True, None),
    (b"LGET 1" + KEY, False, True, "CMD NO_AUTH"),
    (b"PONG", False, False, None),
    (b"PONG", False, True, "CMD HAS_AUTH"),
    (b"OK", False, False, "CMD NO_ENTITY"),
    (b"ERR AUTH", False, False, None),
    (b"OK", True, True, "CMD HAS_AUTH"),
]


@req("TRANS-7", "LINK-8")
@pytest.mark.parametrize(("body", "auth", "entity", "error"), CREDENTIALS)
def test_credential_rules(body: bytes, auth: bool, entity: bool, error: str | None) -> None:
    tx = Transmission(SIG if auth else b"", b"c" * 24, b"e" * 24 if entity else b"", body)
    if error is None:
        assert decode_transmission_message(tx).encode() == body
    else:
        with pytest.raises(CredentialError) as info:
            decode_transmission_message(tx)
        assert info.value.smp_error.value == error


@req("ENC-1", "TRANS-2")
def test_pad_is_length_content_and_hashes() -> None:
    assert pad(b"abc", 8) == b"\x00\x03abc###"
    assert unpad(b"\x00\x03abc###") == b"abc"
    with pytest.raises(BlockError):
        pad(b"x" * 7, 8)
    with pytest.raises(BlockError):
        unpad(b"\x00\x09abc")
    with pytest.raises(BlockError):
        unpad(b"\x00")
    # An unencrypted block is the content padded to 16384 bytes (TRANS-2), written out here.
    assert pad(b"abc") == b"\x00\x03abc" + b"#" * (16384 - 5)


@req("TRANS-2", "TRANS-3")
@given(st.lists(st.binary(max_size=5000), min_size=1, max_size=12))
@example([b"x" * 16377, b""])  # 16379 + 2 bytes with prefixes: exactly a padded block's 16381
def test_batching_packs_in_order_into_full_size_blocks(items: list[bytes]) -> None:
    blocks = batch_transmissions(items)
    assert all(len(b) == 16384 for b in blocks)
    assert [t for b in blocks for t in decode_block(b)] == items
    # Greedy packing: the first transmission of each block did not fit in the block before.
    contents = [decode_block(b) for b in blocks]
    for before, after in itertools.pairwise(contents):
        used = sum(2 + len(t) for t in before)
        assert used + 2 + len(after[0]) > 16381 or len(before) == 255


@req("TRANS-3")
def test_block_edge_cases() -> None:
    with pytest.raises(BlockError):
        batch_transmissions([b"x" * (BLOCK_SIZE - 4)])
    assert len(batch_transmissions([b"x" * (BLOCK_SIZE - 5)])) == 1
    assert len(batch_transmissions([b""] * 256)) == 2  # at most 255 per block
    with pytest.raises(BlockError, match="0 transmissions"):
        decode_block(pad(b"\x00"))
    with pytest.raises(BlockError, match="16384"):
        decode_block(encode_block([b"x"])[:-1])


@given(st.lists(messages(), min_size=1, max_size=3))
@example([SEND(flags=MsgFlags(notification=False), body=b"x" * MESSAGE_LIMIT)])  # fits (TRANS-12)
def test_blocks_of_messages_decode(batch: list[Message]) -> None:
    block = encode_block([Transmission(b"", b"c", b"e", m.encode()).encode() for m in batch])
    decoded = [Transmission.decode(t).command for t in decode_block(block)]
    assert decoded == [m.encode() for m in batch]
