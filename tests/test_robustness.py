"""No input of any kind makes smpref raise anything but its own typed errors.

A server decodes whatever arrives on a socket and a CLI whatever a user pastes: both rely on
every failure being a SmprefError they can turn into ERR or one line of text.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from reqs import req

from smpref.errors import SmprefError, UriSyntaxError, WireError
from smpref.testing.strategies import EDGE_LENGTHS, messages
from smpref.text.addresses import parse_uri
from smpref.text.short_links import parse_short_link
from smpref.wire import (
    Message,
    Transmission,
    decode_batch,
    decode_message,
    decode_transmission_message,
)
from smpref.wire.json_forms import decode_to_json, encode_from_json

TAGS = [b"NEW ", b"IDS ", b"ERR ", b"LGET ", b"SEND ", b"MSG ", b"KEY ", b"COUNT ", b"ACK "]


@req("ENC-7")
@given(st.binary(max_size=300) | st.builds(lambda t, b: t + b, st.sampled_from(TAGS),
                                           st.binary(max_size=300)))
def test_arbitrary_bytes_decode_or_raise_wire_errors(data: bytes) -> None:
    for decode in (decode_message, lambda d: decode_transmission_message(Transmission.decode(d)),
                   decode_batch):
        try:
            decode(data)
        except WireError as exc:
            assert exc.smp_error.value in {"CMD SYNTAX", "CMD UNKNOWN", "BLOCK", "CMD NO_AUTH",
                                     "CMD HAS_AUTH", "CMD NO_ENTITY"}


@req("ENC-10")
@given(messages(edges=EDGE_LENGTHS), st.data())
def test_mutated_encodings_are_rejected_or_canonical(message: Message, data: st.DataObject) -> None:
    encoded = bytearray(message.encode())
    index = data.draw(st.integers(0, len(encoded) - 1))
    encoded[index] = data.draw(st.integers(0, 255))
    try:
        decoded = decode_message(bytes(encoded))
    except WireError:
        return
    assert decoded.encode() == bytes(encoded)


@req("SLINK-9")
@given(st.text(max_size=120) | st.builds(lambda a, b: a + b,
                                          st.sampled_from(["https://", "smp://", "https://h/c#/"]),
                                          st.text(max_size=100)))
def test_arbitrary_text_parses_or_raises_a_syntax_error(text: str) -> None:
    for parse in (parse_short_link, parse_uri):
        try:
            parse(text)
        except UriSyntaxError as exc:
            assert exc.column >= 1


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["tag", "fields", "message", "corrId", "transmissions", "flags", "x"]),
        inner, max_size=4),
    max_leaves=12,
)


@given(JSON | st.fixed_dictionaries({"tag": st.sampled_from(["NEW", "SEND", "ERR", "LGET"]),
                                      "fields": JSON}))
def test_arbitrary_json_encodes_or_raises_typed_errors(data: object) -> None:
    try:
        encoded = encode_from_json(data)
    except SmprefError:
        return
    assert isinstance(encoded, bytes)


@given(messages(edges=EDGE_LENGTHS))
def test_decode_to_json_matches_encode_from_json(message: Message) -> None:
    body = message.encode()
    assert encode_from_json(json.loads(json.dumps(decode_to_json(body, "message")))) == body
