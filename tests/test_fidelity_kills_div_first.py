"""Checks for rows DIV-4 to DIV-22 of spec/deployed-fidelity.md whose cited checks let a
planted deviation (mutation/deviations/div_1_to_25.py) survive: each test pins the one
behaviour the row and its divergence (spec/divergences.md) give smpref."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import nacl.bindings
import pytest
from reqs import req
from test_wire_examples import DH_KEY, RCV_KEY

from smpref.agent.agent import Agent, connect
from smpref.agent.envelope import decode_envelope
from smpref.agent.state import Profile
from smpref.client.core import (
    AuthKeyPair,
    DhKeyPair,
    LinkKeys,
    OwnedQueue,
    Reply,
    make_link_blob,
)
from smpref.crypto import deployed_links as links
from smpref.crypto.randomness import SeededRandom
from smpref.independent.salsa import hsalsa20
from smpref.testing.agent_network import Network
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.testing.queue_exchanges import error_of
from smpref.wire import decode_message
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    IDS,
    LGET,
    NEW,
    NSUB,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    DeployedLinkData,
    DeployedLKEY,
    DeployedLNK,
    DeployedNEW,
    LinkData,
    MessagingLink,
    MsgFlags,
    NtfRequest,
    QueueLink,
    QueueReqData_M,
    QueueRequest,
    SubscriptionMode,
)


def _new(lb: Loopback, conn: LoopbackConnection, request: QueueRequest | None,
         ntf: NtfRequest | None = None) -> tuple[OwnedQueue, list[Reply]]:
    """A seed NEW with this queue request (None: absent) and notifier request."""
    rnd = lb.client_random
    owner = OwnedQueue(AuthKeyPair.ed25519(rnd), DhKeyPair.generate(rnd))
    new = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
              basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate, queue_request=request,
              ntf_request=ntf)
    replies = conn.send(new, key=owner.auth_key)
    assert replies[0].tag == "IDS", replies[0].tag
    owner.created(replies[0].message)
    return owner, replies


def _send(conn: LoopbackConnection, owner: OwnedQueue, key: AuthKeyPair | None = None
          ) -> list[Reply]:
    return conn.send(SEND(flags=MsgFlags(notification=False), body=b"hi"), owner.sender_id,
                     key)


@req("LINK-8", "DIV-4")
def test_lget_with_a_key_is_refused_unless_that_key_signs_it() -> None:
    """DIV-4 (Protocol.hs:1806-1809; Server.hs:1255-1256; Server.hs:1462-1464): smpref's one
    LGET carries `Maybe senderKey` and is signed by that key exactly when it carries one
    (LINK-8). An LGET whose carried key did not sign it is `ERR AUTH` and secures nothing."""
    lb = Loopback(seed=11)
    conn, reader = lb.connect(), lb.connect()
    keys = LinkKeys.generate(lb.client_random)
    blob = make_link_blob(keys, lb.client_random, LinkData(conn_req=b"req", user_data=b"u"),
                          [])
    owner, _ = _new(lb, conn, QueueRequest(
        conn_mode=ConnectionMode.Invitation,
        queue_link=QueueLink(link_id=keys.link_id, sender_id=lb.client_random(24),
                             enc_link_data=blob)))
    key, signer = AuthKeyPair.ed25519(lb.client_random), AuthKeyPair.ed25519(lb.client_random)
    assert error_of(reader.send(LGET(sender_key=key.public), keys.k, signer)[0]) == "AUTH"
    assert _send(reader, owner)[0].tag == "OK"  # still unsecured: an unsigned SEND goes in
    assert error_of(_send(reader, owner, key)[0]) == "AUTH"  # and the key secures nothing


@req("CMD-11", "DIV-5")
def test_a_new_without_a_queue_request_creates_a_contact_queue() -> None:
    """DIV-5 (Protocol.hs:1682-1689; Protocol.hs:1765-1783; Server.hs:1531): a seed NEW whose
    queue request is absent (`'0'`, deployed's legacy mode `Nothing`) creates a contact queue:
    IDS reports the contact mode and the sender cannot secure it with SKEY."""
    lb = Loopback(seed=12)
    conn, sender = lb.connect(), lb.connect()
    owner, replies = _new(lb, conn, None)
    assert replies[0].message.queue_mode is ConnectionMode.Contact
    key = AuthKeyPair.ed25519(lb.client_random)
    assert error_of(sender.send(SKEY(sender_key=key.public), owner.sender_id, key)[0]) == "AUTH"


@req("CMD-11", "LINK-2", "DIV-6")
@pytest.mark.parametrize(("mode", "conn_mode"), [(b"M", ConnectionMode.Invitation),
                                                 (b"C", ConnectionMode.Contact)])
def test_a_queue_link_reads_the_link_id_first_and_the_sender_id_second(
        mode: bytes, conn_mode: ConnectionMode) -> None:
    """DIV-6 (Protocol.hs:607; Protocol.hs:620-634; Protocol.hs:661-669): seed 004's QueueLink
    is `ss(linkId) ss(senderId) Large(encLinkData)` for both queue types (`M` and `C`); bytes
    written out by hand decode to the link ID and the sender ID in that order."""
    link_id, sender_id, data = b"L" * 32, b"S" * 24, b"D" * 300
    blob = b"\x01" + b"M" + (300).to_bytes(2, "big") + data  # one part, mandatory ('M')
    body = (b"NEW " + RCV_KEY + DH_KEY + b"0S" + b"1" + mode + b"1" + bytes([32]) + link_id
            + bytes([24]) + sender_id + len(blob).to_bytes(2, "big") + blob + b"0")
    request = decode_message(body).queue_request
    assert request.conn_mode is conn_mode
    assert (request.queue_link.link_id, request.queue_link.sender_id) == (link_id, sender_id)


@req("DIV-13")
def test_a_deployed_link_part_is_a_hsalsa_prekeyed_secretbox() -> None:
    """DIV-13 (Crypto/ShortLink.hs:41-53; Crypto/ShortLink.hs:86-98; Crypto.hs:1300-1307;
    Crypto.hs:1466-1480): a part is `nonce || sbEncrypt(key, nonce, pad(data, n))`, where
    sbEncrypt is libsodium's secretbox under `HSalsa20(key, 0^16)` and n is 2008 for the
    fixed part and 13784 for the user part (Crypto/ShortLink.hs:42, 45); computed here with
    libsodium and smpref.independent's HSalsa20, padding and sizes written out by hand."""
    sb_key, nonce = bytes(range(32)), bytes(range(100, 124))
    for data, size, smprefs in ((b"fixed data", 2008, links.FIXED_PADDED),
                                (b"user data", 13784, links.USER_PADDED)):
        padded = len(data).to_bytes(2, "big") + data + b"#" * (size - 2 - len(data))
        expected = nonce + nacl.bindings.crypto_secretbox(padded, nonce,
                                                          hsalsa20(sb_key, bytes(16)))
        assert links.seal_part(sb_key, nonce, data, smprefs) == expected, size


S1, S2, S3 = b"s1", b"s2", b"s3"


@req("ROT-1", "DIV-20")
def test_a_seed_rotation_sends_seed_002s_messages(tmp_path: Path) -> None:
    """DIV-20 (Agent/Protocol.hs:978-1000): in the seed design the agents send seed 002's
    QNEW `QN`, QKEYS `QK`, QREADY `QR`, QHELLO `QH` and QSWITCH `QS`, never deployed's
    QADD `QA`, QUSE `QU` or QTEST `QT`."""
    net = Network([S1, S2, S3], root=tmp_path)
    a = net.add(Agent("a", Profile.SEED, net.port("a"), SeededRandom(b"a")))
    b = net.add(Agent("b", Profile.SEED, net.port("b"), SeededRandom(b"b")))
    connect(a, b, S1, S2)
    net.release_all("a", S1)
    net.release_all("b", S2)
    sent: list[tuple[str, bytes]] = []
    request = net.request

    def spy(agent: str, server: bytes, message: Any, entity_id: bytes,
            key: AuthKeyPair | None) -> Reply:
        if isinstance(message, SEND):
            sent.append((agent, bytes(decode_envelope(message.body).message.encode())[:2]))
        return request(agent, server, message, entity_id, key)

    net.request = spy  # type: ignore[method-assign]
    a.start_rotation(S3)
    a.transmit_all()  # QNEW to Bob's queue on s2
    net.release_all("b", S2)
    b.transmit_all()  # QKEYS to Alice's old queue on s1
    net.release_all("a", S1)  # Alice secures the new queue
    a.transmit_all()  # QREADY
    net.release_all("b", S2)  # Bob sends QHELLO to s3
    net.release_all("a", S3)  # Alice queues QSWITCH
    a.transmit_all()
    assert sent == [("a", b"QN"), ("b", b"QK"), ("a", b"QR"), ("b", b"QH"), ("a", b"QS")]


@req("CMD-16", "CMD-23", "DIV-22")
def test_seed_sub_and_nsub_are_answered_with_ok() -> None:
    """DIV-22 (Protocol.hs:1835-1837; Server.hs:1644; Server.hs:1773; Protocol.hs:1659-1663):
    in the seed design SUB and NSUB are answered with `OK`, as deployed below v16, not with
    deployed's `SOK`."""
    lb = Loopback(seed=13)
    conn, ntf_conn = lb.connect(), lb.connect()
    ntf_key, ntf_dh = AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random)
    notifier_id = lb.client_random(24)
    owner, _ = _new(lb, conn, QueueRequest(conn_mode=ConnectionMode.Invitation, queue_link=None),
                    NtfRequest(notifier_id=notifier_id, ntf_auth_key=ntf_key.public,
                               rcv_ntf_dh_key=ntf_dh.public))
    assert conn.send(SUB(), owner.recipient_id, owner.auth_key)[0].tag == "OK"
    assert ntf_conn.send(NSUB(), notifier_id, ntf_key)[0].tag == "OK"


@req("DEP-3", "DEP-5", "DIV-8")
def test_a_deployed_messaging_link_id_is_the_servers_own() -> None:
    """DIV-8 (Crypto/ShortLink.hs:47-53; Server.hs:1517): a deployed messaging (one-time)
    link's LinkId is a random ID the server makes, reported in IDS: 24 bytes, none of the
    queue's other IDs, and it names the link for LKEY."""
    lb = Loopback(seed=14)
    conn, reader = lb.connect(Dialect.DEPLOYED), lb.connect(Dialect.DEPLOYED)
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    corr = bytes(range(24))
    data = DeployedLinkData(enc_fixed=b"f" * 40, enc_user=b"u" * 40)
    link = MessagingLink(sender_id=hashlib.sha3_384(corr).digest()[:24], link_data=data)
    new = DeployedNEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
                      basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate,
                      queue_req_data=QueueReqData_M(link=link), ntf_creds=None)
    ids = conn.send(new, b"", owner.auth_key, corr_id=corr)[0].expect(IDS)
    assert ids.link_id is not None and len(ids.link_id) == 24
    assert ids.link_id not in (ids.snd_id, ids.rcv_id, corr)
    sender = AuthKeyPair.ed25519(lb.client_random)
    lnk = reader.send(DeployedLKEY(sender_key=sender.public), ids.link_id, sender)[0]
    assert lnk.expect(DeployedLNK).link_data == data
