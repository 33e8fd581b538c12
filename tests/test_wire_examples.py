"""Hand-checked encodings: byte compatibility with deployed SMP, and strict rejection.

Expected bytes here are written out by hand from deployed's layouts (ENC-1; simplexmq
Protocol.hs:1681-1712, 1825-1903, 1947-2001), not produced by smpref's encoder.
"""

from __future__ import annotations

import pytest
from reqs import req

from smpref.errors import (
    BadBoolError,
    BadKeyError,
    BadMaybeError,
    BadTagError,
    BadValueError,
    FieldTooLongError,
    ShortReadError,
    TrailingBytesError,
    UnknownCommandError,
    WireError,
)
from smpref.wire import (
    KeyAlgorithm,
    PublicKey,
    decode_message,
    message_class,
)
from smpref.wire.messages import (
    COUNT,
    CommandError,
    ConnectionMode,
    ErrorType,
    ProxyError,
    QueueRequest,
    SubscriptionMode,
)

ED25519_PREFIX = bytes.fromhex("302a300506032b6570032100")
X25519_PREFIX = bytes.fromhex("302a300506032b656e032100")
RCV_RAW = bytes(range(32))
DH_RAW = bytes(range(32, 64))
RCV_KEY = bytes([44]) + ED25519_PREFIX + RCV_RAW  # ss(x509 Ed25519)
DH_KEY = bytes([44]) + X25519_PREFIX + DH_RAW  # ss(x509 X25519)

NEW = message_class("NEW")
IDS = message_class("IDS")


@req("CMD-10", "CMD-11", "DIV-5")
def test_deployed_new_without_link_or_notifier_is_the_same_command() -> None:
    """DEP-3: `NEW ` + keys + `0S1M00` (no auth, subscribe, messaging, no link, no ntf)."""
    deployed = b"NEW " + RCV_KEY + DH_KEY + b"0S1M00"
    new = decode_message(deployed)
    assert new == NEW(
        rcv_auth_key=PublicKey(KeyAlgorithm.ED25519, RCV_RAW),
        rcv_dh_key=PublicKey(KeyAlgorithm.X25519, DH_RAW),
        basic_auth=None,
        sub_mode=SubscriptionMode.Subscribe,
        queue_request=QueueRequest(conn_mode=ConnectionMode.Invitation, queue_link=None),
        ntf_request=None,
    )
    assert new.encode() == deployed


@req("CMD-10")
def test_deployed_legacy_new_without_queue_request_decodes() -> None:
    new = decode_message(b"NEW " + RCV_KEY + DH_KEY + b"1" + bytes([3]) + b"pwdC00")
    assert new.basic_auth == b"pwd"
    assert new.sub_mode is SubscriptionMode.OnlyCreate
    assert new.queue_request is None


@req("CMD-11", "LINK-2")
def test_new_with_a_queue_link_lays_out_link_id_sender_id_and_large_data() -> None:
    link_id, sender_id, data = b"L" * 32, b"S" * 24, b"D" * 300
    # encLinkData is Framed(LinkBlob): Large(count, then each part: priority, Large(sealed))
    blob = b"\x01" + b"M" + (300).to_bytes(2, "big") + data
    body = (b"NEW " + RCV_KEY + DH_KEY + b"0S" + b"1C1" + bytes([32]) + link_id
            + bytes([24]) + sender_id + len(blob).to_bytes(2, "big") + blob + b"0")
    new = decode_message(body)
    (part,) = new.queue_request.queue_link.enc_link_data.parts
    assert part.sealed == data
    # LINK-2: the IDs in this order (a swap on both sides passes the round trip below)
    link = new.queue_request.queue_link
    assert (link.link_id, link.sender_id) == (link_id, sender_id)
    assert new.encode() == body


@req("CMD-30", "QUEUE-2", "DIV-11")
def test_ids_is_byte_identical_to_deployed_v17() -> None:
    """IDS = ss(rcvId) ss(sndId) ss(srvDhKey) Maybe(mode) Maybe(ss linkId) Maybe(ss serviceId)
    Maybe(ss(notifierId) ss(srvNtfDhKey))."""
    body = (b"IDS " + bytes([24]) + b"R" * 24 + bytes([24]) + b"S" * 24 + DH_KEY
            + b"1M" + b"0" + b"0" + b"0")
    ids = decode_message(body)
    assert ids.rcv_id == b"R" * 24 and ids.snd_id == b"S" * 24
    assert ids.queue_mode is ConnectionMode.Invitation
    assert ids.encode() == body


BASE_COMMANDS = [
    (b"KEY " + RCV_KEY, "KEY"),
    (b"SKEY " + RCV_KEY, "SKEY"),
    (b"SUB", "SUB"),
    (b"NDEL", "NDEL"),
    (b"GET", "GET"),
    (b"OFF", "OFF"),
    (b"DEL", "DEL"),
    (b"PING", "PING"),
    (b"NSUB", "NSUB"),
    (b"ACK " + bytes([24]) + b"m" * 24, "ACK"),
    (b"ACK " + bytes([0]), "ACK"),
    (b"SEND T hello", "SEND"),
    (b"SEND F ", "SEND"),
    (b"MSG " + bytes([24]) + b"m" * 24 + b"\x01\x02sealed", "MSG"),
    (b"OK", "OK"),
    (b"END", "END"),
    (b"PONG", "PONG"),
    (b"ERR AUTH", "ERR"),
    (b"ERR CMD SYNTAX", "ERR"),
    (b"ERR CMD NO_ENTITY", "ERR"),
    (b"ERR PROXY BROKER TRANSPORT HANDSHAKE IDENTITY", "ERR"),
    (b"ERR PROXY BROKER RESPONSE " + bytes([3]) + b"abc", "ERR"),
    (b"ERR PROXY PROTOCOL QUOTA", "ERR"),
    (b"ERR STORE disk full", "ERR"),
    (b"ERR BLOCKED reason=spam", "ERR"),
    (b"COUNT \x00\x00\x00\x07", "COUNT"),
]


@req("CMD-13", "CMD-15", "CMD-16", "CMD-17", "CMD-18", "CMD-19", "CMD-20", "CMD-21", "CMD-22",
     "CMD-23", "CMD-31")
@pytest.mark.parametrize(("wire", "tag"), BASE_COMMANDS)
def test_deployed_base_layouts_decode_and_re_encode_identically(wire: bytes, tag: str) -> None:
    message = decode_message(wire)
    assert tag == message.TAG
    assert message.encode() == wire


def test_error_values_are_structured() -> None:
    err = decode_message(b"ERR PROXY PROTOCOL CMD SYNTAX").error
    assert err == ErrorType.PROXY(error=ProxyError.PROTOCOL(
        error=ErrorType.CMD(error=CommandError.SYNTAX)))
    assert decode_message(b"SEND T hello").flags.notification is True


REJECTED = [
    (b"FOO", UnknownCommandError, "", 0),
    (b"SUB ", TrailingBytesError, "", 3),
    (b"SUBS", UnknownCommandError, "", 0),
    (b"KEY", TrailingBytesError, "", 3),
    (b"KEY " + RCV_KEY + b"x", TrailingBytesError, "KEY", 49),
    (b"KEY " + RCV_KEY[:-1], ShortReadError, "KEY.senderKey", 4),
    (b"KEY " + bytes([44]) + bytes(44), BadKeyError, "KEY.senderKey", 5),
    (b"SEND X hello", BadBoolError, "SEND.flags.notification", 5),
    (b"SEND Thello", BadTagError, "SEND", 6),
    (b"NEW " + RCV_KEY + DH_KEY + b"2S1M00", BadMaybeError, "NEW.basicAuth", 94),
    (b"NEW " + RCV_KEY + DH_KEY + b"0X1M00", BadTagError, "NEW.subMode", 95),
    (b"NEW " + RCV_KEY + DH_KEY + b"0S1Q00", BadTagError, "NEW.queueRequest.connMode", 97),
    (b"NEW " + RCV_KEY + RCV_KEY + b"0S1M00", BadKeyError, "NEW.rcvDhKey", 50),
    (b"ERR CMD", ShortReadError, "ERR.error.CMD", 7),
    (b"ERR CMD SYNTAXX", BadTagError, "ERR.error.CMD.error", 8),
    (b"ERR AUTH ", TrailingBytesError, "ERR", 8),
    (b"ERR NOPE", BadTagError, "ERR.error", 4),
    (b"ERR STORE \xff", BadValueError, "ERR.error.STORE.message", 10),
    (b"COUNT \x00\x00\x07", ShortReadError, "COUNT.remaining", 6),
    # DIV-23: deployed accepts these; smpref does not
    (b"ERR CMD NO_QUEUE", BadTagError, "ERR.error.CMD.error", 8),
    (b"SEND TF x", BadTagError, "SEND", 6),
]


@req("ENC-2", "ENC-3", "ENC-5", "ENC-6", "ENC-7", "ENC-8", "DIV-23")
@pytest.mark.parametrize(("wire", "error", "path", "offset"), REJECTED)
def test_malformed_bodies_raise_typed_errors_naming_field_and_offset(
    wire: bytes, error: type[WireError], path: str, offset: int
) -> None:
    with pytest.raises(error) as info:
        decode_message(wire)
    assert info.value.path == path
    assert info.value.offset == offset
    expected_err = "CMD UNKNOWN" if error is UnknownCommandError else "CMD SYNTAX"
    assert info.value.smp_error.value == expected_err


@req("ENC-4")
def test_constructors_and_encoders_refuse_values_that_do_not_fit() -> None:
    with pytest.raises(FieldTooLongError, match="basicAuth"):
        NEW(rcv_auth_key=PublicKey(KeyAlgorithm.ED25519, RCV_RAW),
            rcv_dh_key=PublicKey(KeyAlgorithm.X25519, DH_RAW), basic_auth=b"x" * 256,
            sub_mode=SubscriptionMode.Subscribe, queue_request=None, ntf_request=None)
    with pytest.raises(BadValueError, match="rcvDhKey"):
        NEW(rcv_auth_key=PublicKey(KeyAlgorithm.ED25519, RCV_RAW),
            rcv_dh_key=PublicKey(KeyAlgorithm.ED25519, DH_RAW), basic_auth=None,
            sub_mode=SubscriptionMode.Subscribe, queue_request=None, ntf_request=None)
    with pytest.raises(BadValueError, match="remaining"):
        COUNT(remaining=2**32)
    with pytest.raises(BadKeyError):
        PublicKey(KeyAlgorithm.X25519, b"short")
