"""The deployed profile of the model, below the wire: its store, its clock, its coverage
reports (DEP-1, DEP-2, DEP-7, DEP-8)."""

from __future__ import annotations

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
    GET,
    IDS,
    MSG,
    NEW,
    SEND,
    ConnectionMode,
    DeployedNEW,
    MsgFlags,
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


@req("DEP-2")
def test_a_deployed_session_reports_what_its_profile_exercises() -> None:
    rule = ("CMD-17", "MSG-2", "QENC-2", "QENC-4", "LINK-11")
    assert reported(rule, Dialect.SEED) == rule
    assert reported(rule, Dialect.DEPLOYED) == ("CMD-17", "MSG-2", "DEP-2")
    assert reported(("ROT-3", "ROT-4"), Dialect.DEPLOYED) == ("ROT-3", "DEP-2")
