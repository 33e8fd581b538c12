"""Property tests of the derived codecs, over every command and response of the spec.

Byte fields are drawn at the edges of their prefixes too (EDGE_LENGTHS: 255, 256, 65,535, a
body at the message size limit), where a free draw seldom goes; the primitives are checked at
each edge explicitly, and a batch at the edges is always among the batches tried.
tests/test_strategy_reach.py checks that the draws reach the edges.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from reqs import req

from smpref.errors import FieldTooLongError, WireError
from smpref.notation import load, message_open_ended
from smpref.testing.strategies import EDGE_LENGTHS, message_strategy, messages
from smpref.wire import (
    Message,
    decode_batch,
    decode_message,
    encode_batch,
    message_from_json,
    message_to_json,
)
from smpref.wire.buffer import Reader, Writer, encode
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    ACK,
    LSET,
    SEND,
    DeployedLinkData,
    DeployedLSET,
    LinkBlob,
    LinkPart,
    LinkPartPriority,
    MsgFlags,
)
from smpref.wire.schema import encode_message

TAGS = sorted(load().messages)
CLOSED_TAGS = [t for t in TAGS if not message_open_ended(load(), load().messages[t])]
#: the edges up to 257 bytes, for the tests that decode every cut of an encoding (a 16 KB
#: field would make that thousands of decodes an example) and for batches, which must fit
#: one block
NEAR_EDGES = tuple(n for n in EDGE_LENGTHS if n <= 257)


def pattern(length: int) -> bytes:
    return bytes(i % 251 for i in range(length))


@req("ENC-1")
@pytest.mark.parametrize("length", [0, 1, 254, 255])
def test_a_short_string_is_its_length_byte_and_up_to_255_bytes(length: int) -> None:
    value = pattern(length)
    encoded = encode(lambda w: w.short_string(value))
    assert encoded == bytes([length]) + value
    reader = Reader(encoded)
    assert reader.short_string() == value
    reader.finish()


@req("ENC-1")
@pytest.mark.parametrize("length", [0, 1, 255, 256, 257, 4096, 16_384, 0xFFFF])
def test_a_large_is_its_word16_length_and_up_to_65535_bytes(length: int) -> None:
    value = pattern(length)
    encoded = encode(lambda w: w.large(value))
    assert encoded == length.to_bytes(2, "big") + value
    reader = Reader(encoded)
    assert reader.large() == value
    reader.finish()


@req("ENC-4")
def test_one_byte_over_either_prefix_is_refused_before_anything_is_written() -> None:
    writer = Writer()
    with pytest.raises(FieldTooLongError):
        writer.short_string(pattern(256))
    with pytest.raises(FieldTooLongError):
        writer.large(pattern(0x10000))
    assert writer == b""
    with pytest.raises(FieldTooLongError):
        ACK(msg_id=pattern(256)).encode()


@req("ENC-4")
def test_a_large_field_of_a_message_holds_65535_bytes_and_not_one_more() -> None:
    """The field's codec, not only the primitive: deployed LSET's link data parts are Large."""
    def lset(length: int) -> DeployedLSET:
        return DeployedLSET(link_id=b"l" * 24,
                            link_data=DeployedLinkData(enc_fixed=pattern(length), enc_user=b""))
    largest = lset(0xFFFF)
    encoded = encode_message(largest, 18)
    assert decode_message(encoded, dialect=Dialect.DEPLOYED, version=18) == largest
    with pytest.raises(FieldTooLongError):
        encode_message(lset(0x10000), 18)


@req("ENC-10", "CMD-1")
@pytest.mark.parametrize("tag", TAGS)
@given(data=st.data())
def test_every_message_round_trips(tag: str, data: st.DataObject) -> None:
    """Every message, in bytes and in its JSON form (each tag drawn on its own, so that each
    reaches its fields' edges)."""
    message = data.draw(message_strategy(tag, edges=EDGE_LENGTHS))
    encoded = message.encode()
    assert encoded.startswith(tag.encode())
    decoded = decode_message(encoded)
    assert decoded == message
    assert decoded.encode() == encoded
    assert message_from_json(message_to_json(message)) == message


@req("ENC-2")
@pytest.mark.parametrize("tag", CLOSED_TAGS)
@given(data=st.data())
def test_closed_layouts_reject_every_truncation_and_extension(
    tag: str, data: st.DataObject
) -> None:
    """Messages whose last field is self-delimiting: any cut or added byte is an error."""
    encoded = data.draw(message_strategy(tag, edges=NEAR_EDGES)).encode()
    for cut in range(len(encoded)):
        with pytest.raises(WireError):
            decode_message(encoded[:cut])
    for extra in (b"\x00", b" ", b"0", b"1", b"T", b"\xff"):
        with pytest.raises(WireError):
            decode_message(encoded + extra)


@req("ENC-2", "ENC-9")
@given(messages(edges=NEAR_EDGES))
def test_open_layouts_never_decode_a_cut_ambiguously(message: Message) -> None:
    """Any message: a truncated or extended encoding is rejected, or decodes to a message whose
    own encoding is exactly those bytes (so no value has two encodings)."""
    encoded = message.encode()
    variants = [encoded[:cut] for cut in range(len(encoded))]
    variants += [encoded + extra for extra in (b"\x00", b" ", b"0", b"A")]
    for variant in variants:
        try:
            decoded = decode_message(variant)
        except WireError:
            continue
        assert decoded.encode() == variant


#: a batch at the edges NEAR_EDGES reaches: drawn, a batch's ShortStrings seldom reach 255 (1
#: of 67 in a CI run) and its Large fields never reached 256
EDGE_BATCH = [
    ACK(msg_id=pattern(255)),
    LSET(enc_link_data=LinkBlob(parts=(
        LinkPart(priority=LinkPartPriority.Mandatory, sealed=pattern(256)),
        LinkPart(priority=LinkPartPriority.Optional, sealed=pattern(257))))),
    SEND(flags=MsgFlags(notification=True), body=pattern(257)),
    ACK(msg_id=b""),
]


@req("TRANS-3", "ENC-9")
@given(st.lists(messages(edges=NEAR_EDGES), min_size=1, max_size=4))
@example(EDGE_BATCH)
def test_framed_in_a_batch_every_truncation_and_extension_is_rejected(
    batch: list[Message],
) -> None:
    """Inside a block, each transmission is Large-framed, so even Tail-terminated messages are
    delimited: no cut and no extra byte goes unnoticed."""
    content = encode_batch([m.encode() for m in batch])
    assert [decode_message(t) for t in decode_batch(content)] == batch
    for cut in range(len(content)):
        with pytest.raises(WireError):
            decode_batch(content[:cut])
    for extra in (b"\x00", b"#", b"\x01"):
        with pytest.raises(WireError):
            decode_batch(content + extra)

