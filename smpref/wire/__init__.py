"""SMP wire format: primitives, derived codecs, transmissions and blocks."""

from __future__ import annotations

from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.schema import (
    SCHEMA,
    Command,
    Message,
    Response,
    decode_message,
    encode_message,
    enum_type,
    message_class,
    message_from_json,
    message_to_json,
    type_class,
)
from smpref.wire.transmission import (
    BLOCK_SIZE,
    Transmission,
    batch_transmissions,
    check_credentials,
    decode_batch,
    decode_block,
    decode_transmission_message,
    encode_batch,
    encode_block,
    pad,
    unpad,
)

__all__ = [
    "BLOCK_SIZE",
    "SCHEMA",
    "Command",
    "KeyAlgorithm",
    "Message",
    "PublicKey",
    "Response",
    "Transmission",
    "batch_transmissions",
    "check_credentials",
    "decode_batch",
    "decode_block",
    "decode_message",
    "decode_transmission_message",
    "encode_batch",
    "encode_block",
    "encode_message",
    "enum_type",
    "message_class",
    "message_from_json",
    "message_to_json",
    "pad",
    "type_class",
    "unpad",
]
