"""SMP wire format: primitives, the typed messages and their derived codecs, transmissions and
blocks.

Importing any part of :mod:`smpref.wire` binds the codecs of spec/commands.smpn to the classes
of :mod:`smpref.wire.messages` (:mod:`smpref.wire.schema`).
"""

from __future__ import annotations

from smpref.wire.blocks import (
    BLOCK_SIZE,
    batch_transmissions,
    decode_batch,
    decode_block,
    encode_batch,
    encode_block,
    pad,
    unpad,
)
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.schema import (
    SCHEMA,
    decode_message,
    encode_message,
    message_class,
    message_from_json,
    message_to_json,
    parse_error,
    render_error,
)
from smpref.wire.structs import Command, Message, Response
from smpref.wire.transmission import Transmission, check_credentials, decode_transmission_message

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
    "message_class",
    "message_from_json",
    "message_to_json",
    "pad",
    "parse_error",
    "render_error",
    "unpad",
]
