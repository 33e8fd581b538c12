"""The deployed profile of the model, below the wire: its store, its clock, its coverage
reports (DEP-1, DEP-2, DEP-7, DEP-8)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from reqs import req

from smpref.client.connection import open_deployed_message
from smpref.client.core import AuthKeyPair, DhKeyPair, OwnedQueue
from smpref.model.config import DAY, ServerConfig
from smpref.model.server import reported
from smpref.store.journal import JournalStore
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    ACK,
    GET,
    IDS,
    KEY,
    MSG,
    NEW,
    SEND,
    ConnectionMode,
    DeployedLGET,
    DeployedLinkData,
    DeployedLNK,
    DeployedLSET,
    DeployedNEW,
    MessagingLink,
    MsgFlags,
    QueueReqData_C,
    QueueReqData_M,
    QueueRequest,
    SubscriptionMode,
)


def deployed_queue(lb: Loopback, conn: LoopbackConnection) -> OwnedQueue:
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    new = DeployedNEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
                      basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate,
                      queue_req_data=QueueReqData_M(link=None), ntf_creds=None)
    owner.created(conn.send(new, b"", owner.auth_key)[0].expect(IDS))
    return owner


def seed_queue(lb: Loopback, conn: LoopbackConnection) -> OwnedQueue:
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    new = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
              basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate,
              queue_request=QueueRequest(conn_mode=ConnectionMode.Invitation, queue_link=None),
              ntf_request=None)
    owner.created(conn.send(new, b"", owner.auth_key)[0].expect(IDS))
    return owner


@req("DEP-1", "DEP-7", "STORE-3")
def test_a_deployed_queue_keeps_its_protocol_and_bodies_across_a_restart(tmp_path: Path) -> None:
    first = Loopback(seed=1, store=JournalStore(tmp_path, clock=None, sync=False))
    conn = first.connect(Dialect.DEPLOYED)
    owner = deployed_queue(first, conn)
    send = SEND(flags=MsgFlags(notification=True), body=b"kept as sent")
    assert conn.send(send, owner.sender_id)[0].tag == "OK"
    first.store.close()
    store = JournalStore(tmp_path, clock=None, sync=False)
    record = store.get(owner.recipient_id)
    assert record is not None and record.dialect is Dialect.DEPLOYED
    # the journal holds the body as received: deployed SMP has no server-side ratchet
    assert [r.data for r in store.records(owner.recipient_id)] == [b"kept as sent"]
    again = Loopback(seed=2, store=store)
    deployed, seed = again.connect(Dialect.DEPLOYED), again.connect(Dialect.SEED)
    assert seed.send(GET(), owner.recipient_id, owner.auth_key)[0].transmission.command == \
        b"ERR AUTH"  # another protocol's session does not see it
    reply = deployed.send(GET(), owner.recipient_id, owner.auth_key)[0]
    body = open_deployed_message(owner.rcv_dh_secret, reply.expect(MSG))
    assert (body.body, body.notification, body.quota) == (b"kept as sent", True, False)
    store.close()


@req("DEP-8", "RET-1")
def test_only_seed_queues_expire_by_date() -> None:
    lb = Loopback(seed=3, config=ServerConfig(unsecured_invitation_days=5))
    deployed_conn, seed_conn = lb.connect(Dialect.DEPLOYED), lb.connect(Dialect.SEED)
    deployed, seed = deployed_queue(lb, deployed_conn), seed_queue(lb, seed_conn)
    lb.clock.advance(6 * DAY)
    lb.expire()
    assert lb.store.get(seed.recipient_id) is None
    assert lb.store.get(deployed.recipient_id) is not None
    assert deployed_conn.send(GET(), deployed.recipient_id, deployed.auth_key)[0].tag == "OK"


def test_a_deployed_session_reports_what_its_profile_exercises() -> None:
    rule = ("CMD-17", "MSG-2", "QENC-2", "QENC-4", "LINK-11")
    assert reported(rule, Dialect.SEED) == rule
    assert reported(rule, Dialect.DEPLOYED) == ("CMD-17", "MSG-2", "DEP-2")
    assert reported(("ROT-3", "ROT-4"), Dialect.DEPLOYED) == ("ROT-3", "DEP-2")


@req("DEP-5")
def test_a_deployed_invitation_keeps_its_link_until_the_first_send_and_reports_dep_5() -> None:
    """Deployed SMP drops a secured invitation's link data at the first SEND, however it was
    secured (DEP-5; simplexmq Server.hs:1861-1862); the seed design drops it at KEY (LINK-11).
    The coverage report names the deployed requirement, never the seed one."""
    lb = Loopback(seed=4)
    seen: list[tuple[str, tuple[str, ...]]] = []
    lb.server.observer = lambda name, requirements: seen.append((name, requirements))
    conn = lb.connect(Dialect.DEPLOYED)
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    corr = bytes(range(24))
    link = MessagingLink(sender_id=hashlib.sha3_384(corr).digest()[:24],
                         link_data=DeployedLinkData(enc_fixed=b"f" * 40, enc_user=b"u" * 40))
    new = DeployedNEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
                      basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate,
                      queue_req_data=QueueReqData_M(link=link), ntf_creds=None)
    owner.created(conn.send(new, b"", owner.auth_key, corr_id=corr)[0].expect(IDS))
    sender = AuthKeyPair.ed25519(lb.client_random)
    seen.clear()
    assert conn.send(KEY(sender_key=sender.public), owner.recipient_id,
                     owner.auth_key)[0].tag == "OK"
    drops = [(name, r) for name, r in seen if name.startswith("link.")]
    assert drops == [("link.drop-pending", ("DEP-5",))]
    queue = lb.store.get(owner.recipient_id)
    assert queue is not None and queue.link is not None  # kept until the first SEND
    send = SEND(flags=MsgFlags(notification=False), body=b"hello")
    assert conn.send(send, owner.sender_id, sender)[0].tag == "OK"
    queue = lb.store.get(owner.recipient_id)
    assert queue is not None and queue.link is None


@req("RET-5", "DEP-8", "MSG-4")
def test_message_expiry_stops_at_the_record_in_flight_and_reports_dep_8() -> None:
    """Expiry drops expired messages from the head but stops at the record in flight (RET-5):
    the older message behind it stays until a sweep after the ACK, and that sweep reports the
    deployed requirement."""
    lb = Loopback(seed=5, config=ServerConfig(message_ttl_seconds=DAY))
    expired: list[tuple[str, ...]] = []
    lb.server.observer = lambda name, requirements: (
        expired.append(requirements) if name == "expire.message" else None)
    conn = lb.connect(Dialect.DEPLOYED)
    owner = deployed_queue(lb, conn)
    for body in (b"first", b"second"):
        send = SEND(flags=MsgFlags(notification=False), body=body)
        assert conn.send(send, owner.sender_id)[0].tag == "OK"
    first = conn.send(GET(), owner.recipient_id, owner.auth_key)[0].expect(MSG)
    lb.clock.advance(2 * DAY)
    lb.expire()
    assert expired == []  # the head is in flight: nothing behind it goes either
    assert conn.send(ACK(msg_id=first.msg_id), owner.recipient_id,
                     owner.auth_key)[0].tag == "OK"
    second = conn.send(GET(), owner.recipient_id, owner.auth_key)[0].expect(MSG)
    assert open_deployed_message(owner.rcv_dh_secret, second).body == b"second"
    assert conn.send(ACK(msg_id=second.msg_id), owner.recipient_id,
                     owner.auth_key)[0].tag == "OK"
    assert conn.send(SEND(flags=MsgFlags(notification=False), body=b"third"),
                     owner.sender_id)[0].tag == "OK"
    lb.clock.advance(2 * DAY)
    lb.expire()
    assert expired == [("RET-5", "DEP-8")]
    assert conn.send(GET(), owner.recipient_id, owner.auth_key)[0].tag == "OK"  # empty


@req("DEP-5")
def test_lset_gives_a_contact_queue_a_link_that_sends_do_not_drop() -> None:
    """A contact queue created without a link gets one with LSET; only a secured invitation
    loses its link data at the first SEND (DEP-5), so this one stays."""
    lb = Loopback(seed=6)
    conn = lb.connect(Dialect.DEPLOYED)
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    new = DeployedNEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
                      basic_auth=None, sub_mode=SubscriptionMode.OnlyCreate,
                      queue_req_data=QueueReqData_C(link=None), ntf_creds=None)
    owner.created(conn.send(new, b"", owner.auth_key)[0].expect(IDS))
    link_id = bytes(range(100, 124))
    data = DeployedLinkData(enc_fixed=b"f" * 40, enc_user=b"u" * 40)
    assert conn.send(DeployedLSET(link_id=link_id, link_data=data), owner.recipient_id,
                     owner.auth_key)[0].tag == "OK"
    for body in (b"one", b"two"):
        assert conn.send(SEND(flags=MsgFlags(notification=False), body=body),
                         owner.sender_id)[0].tag == "OK"
    lnk = conn.send(DeployedLGET(), link_id)[0].expect(DeployedLNK)
    assert (lnk.sender_id, lnk.link_data) == (owner.sender_id, data)
