"""Layouts by version (DEP-11, DEP-12): what spec/commands.smpn declares per version, the codecs
derived from it, and an independent reading of the same layouts (tests/deployed_client.py,
written from simplexmq Protocol.hs:1682-1689, 1826-1833) agreeing byte for byte."""

from __future__ import annotations

from dataclasses import replace

import pytest
from deployed_client import Keys, new_command, parse_ids
from hypothesis import given
from hypothesis import strategies as st
from reqs import req

from smpref.errors import BadValueError, WireError
from smpref.notation import load
from smpref.testing.strategies import EDGE_LENGTHS, message_strategy
from smpref.wire.dialects import Dialect
from smpref.wire.keys import AUTH_ALGORITHMS, DH_ALGORITHMS, PublicKey
from smpref.wire.messages import (
    ERR,
    IDS,
    ConnectionMode,
    DeployedNEW,
    ErrorType,
    QueueReqData,
)
from smpref.wire.schema import SCHEMA, decode_message, encode_message

DEPLOYED = range(6, 19)


def test_the_notation_declares_new_and_ids_by_version() -> None:
    defs = load()
    new = defs.deployed["NEW"]
    assert new.layout_versions == (0, 9, 15, 17)
    assert [f.name for f in new.items_at(6)] == ["rcvAuthKey", "rcvDhKey", "basicAuth",
                                                 "subMode"]
    assert [f.name for f in new.items_at(12)][-1] == "sndSecure"
    ids = defs.messages["IDS"]
    assert ids.layout_versions == (0, 9, 15, 16, 17)
    assert defs.deployed["SOK"].older == "OK" and defs.deployed["DELD"].older == "END"


@given(data=st.data())
def test_every_deployed_message_round_trips_at_every_version(data: st.DataObject) -> None:
    version = data.draw(st.sampled_from(DEPLOYED))
    tag = data.draw(st.sampled_from(sorted(SCHEMA.deployed)))
    message = data.draw(message_strategy(tag.decode(), dialect=Dialect.DEPLOYED,
                                         version=version, edges=EDGE_LENGTHS))
    if version not in message.DEF.versions:  # sent as its older response, if it can be
        if any(getattr(message, f.attr) is not None for f in message.CODEC.fields):
            with pytest.raises(BadValueError, match="cannot carry"):
                encode_message(message, version)
        else:
            assert encode_message(message, version) == message.DEF.older.encode()
        return
    decoded = decode_message(encode_message(message, version), dialect=Dialect.DEPLOYED,
                             version=version)
    if isinstance(message, ERR) and isinstance(message.error, ErrorType.BLOCKED) and \
            version < 12:
        assert decoded == ERR(error=ErrorType.AUTH())  # BLOCKED is AUTH below 12
        return
    assert decoded == message


@req("DEP-11", "DEP-12")
@pytest.mark.parametrize("version", DEPLOYED)
@pytest.mark.parametrize("mode", [b"M", b"C"])
def test_new_as_an_independent_client_writes_it_decodes_at_its_version(
        version: int, mode: bytes) -> None:
    owner = Keys()
    data = new_command(owner, mode=mode, password=b"secret", subscribe=False, version=version)
    new = decode_message(data, kind="command", dialect=Dialect.DEPLOYED, version=version)
    assert isinstance(new, DeployedNEW)
    assert new.rcv_auth_key == PublicKey.from_der(owner.auth_spki, AUTH_ALGORITHMS)
    assert new.rcv_dh_key == PublicKey.from_der(owner.dh_spki, DH_ALGORITHMS)
    assert new.basic_auth == b"secret"
    invitation = mode == b"M"
    assert new.snd_secure == (invitation if 9 <= version <= 14 else None)
    if version >= 15:
        assert isinstance(new.queue_req_data,
                          QueueReqData.M if invitation else QueueReqData.C)
    else:
        assert new.queue_req_data is None
    assert new.ntf_creds is None
    assert encode_message(new, version) == data  # and back, byte for byte
    # where the next version changes the layout, its NEW does not decode at this one
    if version in (8, 14, 16):
        with pytest.raises(WireError):
            decode_message(new_command(owner, mode=mode, version=version + 1), kind="command",
                           dialect=Dialect.DEPLOYED, version=version)


@req("DEP-12")
@pytest.mark.parametrize("version", DEPLOYED)
def test_ids_reads_as_an_independent_client_parses_it(version: int) -> None:
    dh = PublicKey.from_der(Keys().dh_spki, DH_ALGORITHMS)
    ids = IDS(rcv_id=b"r" * 24, snd_id=b"s" * 24, rcv_public_dh_key=dh,
              sender_can_secure=True if 9 <= version <= 14 else None,
              queue_mode=ConnectionMode.Invitation if version >= 15 else None,
              link_id=b"l" * 24 if version >= 15 else None)
    encoded = encode_message(ids, version)
    assert encoded.startswith(b"IDS ")
    parsed = parse_ids(encoded[len(b"IDS "):], version)
    assert (parsed.recipient_id, parsed.sender_id) == (b"r" * 24, b"s" * 24)
    assert parsed.server_dh == dh.raw
    assert parsed.mode == (None if version < 9 else b"M")
    assert parsed.link_id == (b"l" * 24 if version >= 15 else None)


def test_a_field_the_layout_lacks_is_refused_not_dropped() -> None:
    dh = PublicKey.from_der(Keys().dh_spki, DH_ALGORITHMS)
    with_mode = IDS(rcv_id=b"r", snd_id=b"s", rcv_public_dh_key=dh, sender_can_secure=False,
                    queue_mode=ConnectionMode.Contact)
    with pytest.raises(BadValueError, match="queueMode"):
        encode_message(with_mode, 12)
    without_flag = IDS(rcv_id=b"r", snd_id=b"s", rcv_public_dh_key=dh)
    with pytest.raises(BadValueError, match="senderCanSecure"):
        encode_message(without_flag, 12)


def test_the_client_refuses_what_a_version_cannot_say() -> None:
    """at_version sends a seed NEW as the version's deployed NEW, and refuses, never drops,
    what that version's NEW cannot carry."""
    from smpref.client.connection import at_version
    from smpref.errors import UnsupportedError
    from smpref.wire.messages import NEW, NewNtfCreds, QueueRequest, SubscriptionMode

    owner = PublicKey.from_der(Keys().auth_spki, AUTH_ALGORITHMS)
    dh = PublicKey.from_der(Keys().dh_spki, DH_ALGORITHMS)

    def seed_new(mode: ConnectionMode | None) -> NEW:
        return NEW(rcv_auth_key=owner, rcv_dh_key=dh, basic_auth=None,
                   sub_mode=SubscriptionMode.Subscribe, ntf_request=None,
                   queue_request=None if mode is None else QueueRequest(conn_mode=mode,
                                                                        queue_link=None))
    assert at_version(seed_new(None), 6).snd_secure is None  # type: ignore[attr-defined]
    assert at_version(seed_new(ConnectionMode.Invitation), 9).snd_secure is True  # type: ignore[attr-defined]
    with pytest.raises(UnsupportedError, match="no queue mode at version 8"):
        at_version(seed_new(ConnectionMode.Contact), 8)
    creds = NewNtfCreds(ntf_auth_key=owner, rcv_ntf_dh_key=dh)
    deployed = DeployedNEW(rcv_auth_key=owner, rcv_dh_key=dh, basic_auth=None,
                           sub_mode=SubscriptionMode.Subscribe, ntf_creds=creds,
                           queue_req_data=QueueReqData.C(link=None))
    with pytest.raises(UnsupportedError, match="notifier credentials at version 16"):
        at_version(deployed, 16)
    with pytest.raises(UnsupportedError, match="queueReqData at version 14"):
        at_version(replace(deployed, ntf_creds=None), 14)
