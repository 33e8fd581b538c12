"""The model, rule by rule: each test drives the server over the wire and cites its IDs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from reqs import req

from smpref.client.core import (
    AuthKeyPair,
    DhKeyPair,
    LinkKeys,
    OwnedQueue,
    Reply,
    make_link_blob,
    read_link_blob,
)
from smpref.crypto import primitives
from smpref.errors import CryptoError, StoreError
from smpref.independent import basics, relay_boxes, salsa
from smpref.model import DAY, ServerConfig
from smpref.model.queue_store import MemoryStore
from smpref.testing.differential import DifferentialLoopback
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.testing.queue_exchanges import error_of
from smpref.wire import message_class
from smpref.wire.dialects import Dialect
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    KEY,
    LGET,
    LSET,
    MSG,
    NDEL,
    NEW,
    NSUB,
    OFF,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    DeployedNEW,
    LinkBlob,
    LinkData,
    LinkPart,
    LinkPartPriority,
    MsgFlags,
    NtfRequest,
    OptionalLinkData,
    OptionalPartKind,
    QueueLink,
    QueueReqData_M,
    QueueRequest,
    RecordKind,
    SubscriptionMode,
)
from smpref.wire.transmission import Transmission

Mode = ConnectionMode
SubMode = SubscriptionMode
Priority = LinkPartPriority
PartKind = OptionalPartKind
Optional = OptionalLinkData


def M(tag: str, **fields: Any) -> Any:  # noqa: N802
    return message_class(tag)(**fields)


@dataclass
class Q:
    owner: OwnedQueue
    conn: LoopbackConnection
    link: LinkKeys | None
    replies: list[Reply]

    @property
    def rid(self) -> bytes:
        return self.owner.recipient_id

    def cmd(self, message: Any, conn: LoopbackConnection | None = None) -> list[Reply]:
        return (conn or self.conn).send(message, self.rid, self.owner.auth_key)


def data(n: int = 0) -> tuple[Any, list[Any]]:
    return LinkData(conn_req=b"request %d" % n, user_data=b"user"), []


def create(lb: Loopback, conn: LoopbackConnection, *, mode: Any = None, link: bool = False,
           optional: int = 0, subscribe: bool = False, ntf: Any = None,
           auth: AuthKeyPair | None = None, link_keys: LinkKeys | None = None,
           blob: Any = None, sender_id: bytes | None = None) -> Q:
    rnd = lb.client_random
    owner = OwnedQueue(auth or AuthKeyPair.ed25519(rnd), DhKeyPair.generate(rnd))
    keys = link_keys or (LinkKeys.generate(rnd) if link else None)
    queue_link = None
    if keys is not None:
        payload = (LinkData(conn_req=b"req", user_data=b"u"),
                   [Optional(kind=PartKind.Profile, data=b"p" * 100) for _ in range(optional)])
        queue_link = QueueLink(
            link_id=keys.link_id, sender_id=sender_id or rnd(24),
            enc_link_data=blob or make_link_blob(keys, rnd, *payload))
    new = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
            basic_auth=None, sub_mode=SubMode.Subscribe if subscribe else SubMode.OnlyCreate,
            queue_request=QueueRequest(conn_mode=mode or Mode.Invitation,
                                                     queue_link=queue_link),
            ntf_request=ntf)
    replies = conn.send(new, key=owner.auth_key)
    if replies[0].tag == "IDS":
        owner.created(replies[0].message)
    return Q(owner, conn, keys, replies)


def deployed_invitation(lb: Loopback, conn: LoopbackConnection) -> OwnedQueue:
    """An unsecured invitation queue made by a deployed session's NEW (DEP-1)."""
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    new = DeployedNEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
                      basic_auth=None, sub_mode=SubMode.OnlyCreate,
                      queue_req_data=QueueReqData_M(link=None), ntf_creds=None)
    owner.created(conn.send(new, key=owner.auth_key)[0].expect(IDS))
    return owner


def notifier_request(lb: Loopback) -> tuple[Any, AuthKeyPair, DhKeyPair]:
    """A NEW's notifier request with fresh keys (CMD-12), and those keys."""
    key, dh = AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random)
    request = NtfRequest(notifier_id=lb.client_random(24),
                                       ntf_auth_key=key.public, rcv_ntf_dh_key=dh.public)
    return request, key, dh


def open_nmsg(notifier_secret: bytes, server_public: bytes, nmsg: Any) -> tuple[bytes, int]:
    """NMSG's msgId and timestamp, read as MSG-7 writes them, by the second implementation
    (smpref.independent), not the model's crypto or codecs: crypto_box with rcvNtfDhSecret,
    the nonce as sent, then ``pad(ss(msgId) || Int64 timestamp)``."""
    key = relay_boxes.box_key(notifier_secret, server_public)
    opened = salsa.box_open(key, nmsg.nonce, nmsg.enc_metadata)
    assert opened is not None and len(opened) == 128  # padded to 128 bytes
    meta = basics.unpad(opened)
    assert meta is not None and len(meta) == 1 + meta[0] + 8
    return meta[1 : 1 + meta[0]], int.from_bytes(meta[1 + meta[0]:], "big", signed=True)


def send(conn: LoopbackConnection, q: Q, body: bytes = b"hi", key: AuthKeyPair | None = None,
         notify: bool = False) -> list[Reply]:
    return conn.send(SEND(flags=MsgFlags(notification=notify), body=body),
                     q.owner.sender_id, key)


def drain(q: Q, conn: LoopbackConnection | None = None) -> list[bytes]:
    """GET and ACK everything; return the decrypted message bodies."""
    conn = conn or q.conn
    bodies = []
    for _ in range(50):
        replies = q.cmd(GET(), conn)
        if replies[0].tag != "MSG":
            break
        _, received, _ = q.owner.open_message(replies[0].message)
        if received.body is not None:
            bodies.append(received.body)
        assert q.cmd(ACK(msg_id=replies[0].message.msg_id), conn)[0].tag == "OK"
    return bodies


@pytest.fixture(params=["memory", "journal"])
def make_lb(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Loopback]:
    """Loopbacks over the memory store, or over the journal store checked step by step
    against the memory store (STORE-18): every rule test runs over both."""
    def make(seed: int, config: ServerConfig | None = None) -> Loopback:
        if request.param == "memory":
            return Loopback(seed=seed, config=config)
        return DifferentialLoopback(seed, tmp_path / f"store-{seed}", config or ServerConfig())
    return make


@pytest.fixture
def lb(make_lb: Callable[..., Loopback]) -> Loopback:
    return make_lb(3)


# --- creation (QUEUE) ------------------------------------------------------------------------


@req("QUEUE-10", "CMD-30", "QENC-1", "QUEUE-1", "DIV-27", "DIV-28")
def test_new_answers_ids_and_subscribes_with_the_initial_record(lb: Loopback) -> None:
    conn = lb.connect()
    q = create(lb, conn, mode=Mode.Contact, link=True, subscribe=True)
    ids, msg = q.replies
    assert ids.tag == "IDS" and ids.transmission.entity_id == b""
    assert ids.message.queue_mode is Mode.Contact and ids.message.link_id == q.link.link_id
    assert len(ids.message.rcv_id) == 24
    _, received, _ = q.owner.open_message(msg.message)
    assert received.kind is RecordKind.Initial


@req("QUEUE-10", "CMD-12", "MSG-7", "CMD-34", "DIV-10")
def test_notifier_request_and_nmsg(lb: Loopback) -> None:
    conn, notifier_conn, sender = lb.connect(), lb.connect(), lb.connect()
    request, ntf_key, ntf_dh = notifier_request(lb)
    notifier_id = request.notifier_id
    q = create(lb, conn, ntf=request)
    creds = q.replies[0].message.server_ntf_creds
    assert creds.notifier_id == notifier_id
    assert notifier_conn.send(NSUB(), notifier_id, ntf_key)[0].tag == "OK"
    lb.clock.advance(3 * 3600)  # the NMSG carries the time of the SEND, not of NEW
    sent_at = lb.clock.now()
    assert send(sender, q, notify=True)[0].tag == "OK"
    (nmsg,) = notifier_conn.inbox
    lb.clock.advance(60)
    initial = q.cmd(GET())[0].expect(MSG)  # the queue's first key record (QENC-1) comes first
    assert q.owner.open_message(initial)[1].kind is RecordKind.Initial
    assert q.cmd(ACK(msg_id=initial.msg_id))[0].tag == "OK"
    delivered = q.cmd(GET())[0].expect(MSG)
    assert q.owner.open_message(delivered)[1].body == b"hi"
    assert open_nmsg(ntf_dh.secret, creds.srv_ntf_dh_key.raw, nmsg.message) == (
        delivered.msg_id, sent_at)
    assert q.cmd(NDEL())[0].tag == "OK"
    assert error_of(notifier_conn.send(NSUB(), notifier_id, ntf_key)[0]) == "AUTH"


@req("QUEUE-10", "QUEUE-3")
def test_new_rejections(lb: Loopback, make_lb: Callable[..., Loopback]) -> None:
    conn = lb.connect()
    keys = LinkKeys.generate(lb.client_random)
    first = create(lb, conn, link_keys=keys)
    assert first.replies[0].tag == "IDS"
    assert error_of(create(lb, conn, link_keys=keys).replies[0]) == "AUTH"  # link ID taken
    short = create(lb, conn, link=True, sender_id=b"x" * 5)
    assert error_of(short.replies[0]) == "CMD SYNTAX"
    guarded = make_lb(4, config=ServerConfig(basic_auth=b"pw"))
    assert error_of(create(guarded, guarded.connect()).replies[0]) == "AUTH"
    # a NEW signed with another key than rcvAuthKey
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    new = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
            basic_auth=None, sub_mode=SubMode.OnlyCreate, queue_request=None, ntf_request=None)
    assert error_of(conn.send(new, key=AuthKeyPair.ed25519(lb.client_random))[0]) == "AUTH"
    assert conn.send(new, key=owner.auth_key)[0].message.queue_mode is Mode.Contact  # DIV-5


@req("QUEUE-6", "QUEUE-8")
def test_blob_structure_and_size(lb: Loopback) -> None:
    conn = lb.connect()
    keys = LinkKeys.generate(lb.client_random)
    part = LinkPart(priority=Priority.Optional, sealed=b"x" * 60)
    mand = LinkPart(priority=Priority.Mandatory, sealed=b"x" * 60)
    for parts in ((part, mand), (mand, mand)):
        q = create(lb, conn, link_keys=keys, blob=LinkBlob(parts=parts))
        assert error_of(q.replies[0]) == "CMD SYNTAX"
    big = LinkBlob(parts=(LinkPart(priority=Priority.Mandatory, sealed=b"x" * 8200),))
    assert error_of(create(lb, conn, link_keys=keys, blob=big).replies[0]) == "LARGE_MSG"
    fits = create(lb, conn, link_keys=keys, mode=Mode.Contact, blob=big)
    assert fits.replies[0].tag == "IDS"  # contact queues take up to 15360 bytes


@req("QUEUE-9", "QUEUE-7", "DIV-15", "RET-7")
def test_pressure_drops_optional_parts_of_least_recently_updated_queues(
        make_lb: Callable[..., Loopback]) -> None:
    # Each blob: three parts of 299 bytes (24 nonce + 16 tag + 256 padded, 3 framing) + 1.
    lb = make_lb(5, config=ServerConfig(blob_bytes_high_water=1500,
                                              blob_bytes_low_water=1300))
    conn, reader = lb.connect(), lb.connect()
    old = create(lb, conn, mode=Mode.Contact, link=True, optional=2)
    assert lb.store.blob_bytes() == 898
    lb.clock.advance(2 * DAY)
    newer = create(lb, conn, mode=Mode.Contact, link=True, optional=2)
    assert lb.store.blob_bytes() == 2 * 898  # relief waits for the sweep (RET-7)
    lb.expire()
    for q, expect_optional in ((old, 0), (newer, 2)):
        corr, replies = reader.request(LGET(sender_key=None), q.link.k)
        queue_link = reader.client.open_link(q.link, corr, replies[0].message.sealed)
        mandatory, optional = read_link_blob(q.link, queue_link.enc_link_data)
        assert mandatory.conn_req == b"req"
        assert len(optional) == expect_optional
    assert lb.store.blob_bytes() == 898 + 300  # the old queue kept only its mandatory part


# --- securing and links ----------------------------------------------------------------------


@req("QUEUE-11", "CMD-13", "CMD-14")
def test_key_and_skey(lb: Loopback) -> None:
    conn, sender = lb.connect(), lb.connect()
    q = create(lb, conn)
    key, other = AuthKeyPair.ed25519(lb.client_random), AuthKeyPair.ed25519(lb.client_random)
    assert q.cmd(KEY(sender_key=key.public))[0].tag == "OK"
    assert q.cmd(KEY(sender_key=key.public))[0].tag == "OK"
    assert error_of(q.cmd(KEY(sender_key=other.public))[0]) == "AUTH"
    assert sender.send(SKEY(sender_key=key.public), q.owner.sender_id, key)[0].tag == "OK"
    assert error_of(sender.send(SKEY(sender_key=other.public), q.owner.sender_id,
                                other)[0]) == "AUTH"
    contact = create(lb, conn, mode=Mode.Contact)
    assert error_of(sender.send(SKEY(sender_key=key.public), contact.owner.sender_id,
                                key)[0]) == "AUTH"
    # signed by another key than the one it carries
    fresh = create(lb, conn)
    assert error_of(sender.send(SKEY(sender_key=key.public), fresh.owner.sender_id,
                                other)[0]) == "AUTH"


@req("LINK-6", "LINK-7", "LINK-9", "LINK-10", "LINK-11", "DIV-3", "DIV-4", "DIV-12",
     "DIV-14")
def test_lget_reads_and_secures(lb: Loopback) -> None:
    conn, reader, other = lb.connect(), lb.connect(), lb.connect()
    q = create(lb, conn, link=True)
    corr, replies = reader.request(LGET(sender_key=None), q.link.k)
    assert replies[0].transmission.entity_id == q.link.k
    queue_link = reader.client.open_link(q.link, corr, replies[0].message.sealed)
    assert queue_link.sender_id == q.owner.sender_id
    with pytest.raises(CryptoError):  # LINK-9: sealed for this session's key only
        other.client.open_link(q.link, corr, replies[0].message.sealed)
    with pytest.raises(CryptoError):  # LINK-10: another link's keys
        reader.client.open_link(LinkKeys.generate(lb.client_random), corr,
                                replies[0].message.sealed)
    assert error_of(reader.send(LGET(sender_key=None), lb.client_random(32))[0]) == "AUTH"
    assert error_of(reader.send(LGET(sender_key=None), q.link.link_id[:31])[0]) == "AUTH"
    key = AuthKeyPair.ed25519(lb.client_random)
    for _ in range(2):  # LINK-11: repeatable with the same key until the first SEND
        assert reader.send(LGET(sender_key=key.public), q.link.k, key)[0].tag == "LINK"
    other_key = AuthKeyPair.ed25519(lb.client_random)
    assert error_of(reader.send(LGET(sender_key=other_key.public), q.link.k,
                                other_key)[0]) == "AUTH"
    assert error_of(send(reader, q)[0]) == "AUTH"  # secured: unsigned SEND refused
    assert send(reader, q, key=key)[0].tag == "OK"
    assert error_of(reader.send(LGET(sender_key=key.public), q.link.k, key)[0]) == "AUTH"


@req("LINK-7", "LINK-11", "LINK-5")
def test_link_rules_by_queue_type(lb: Loopback) -> None:
    conn, reader = lb.connect(), lb.connect()
    contact = create(lb, conn, mode=Mode.Contact, link=True)
    key = AuthKeyPair.ed25519(lb.client_random)
    assert error_of(reader.send(LGET(sender_key=key.public), contact.link.k,
                                key)[0]) == "AUTH"
    blob = make_link_blob(contact.link, lb.client_random, *data(2))
    assert contact.cmd(LSET(enc_link_data=blob))[0].tag == "OK"
    corr, replies = reader.request(LGET(sender_key=None), contact.link.k)
    link = reader.client.open_link(contact.link, corr, replies[0].message.sealed)
    assert read_link_blob(contact.link, link.enc_link_data)[0].conn_req == b"request 2"
    invitation = create(lb, conn, link=True)
    assert invitation.cmd(KEY(sender_key=key.public))[0].tag == "OK"  # drops the link
    assert error_of(reader.send(LGET(sender_key=None), invitation.link.k)[0]) == "AUTH"
    assert error_of(invitation.cmd(LSET(enc_link_data=blob))[0]) == "AUTH"
    plain = create(lb, conn)
    assert error_of(plain.cmd(LSET(enc_link_data=blob))[0]) == "CMD PROHIBITED"


# --- messaging -------------------------------------------------------------------------------


@req("MSG-1", "MSG-5", "MSG-2", "QENC-5", "QENC-7", "TRANS-12", "DIV-29")
def test_send_rules_and_delivery(lb: Loopback) -> None:
    conn, sender = lb.connect(), lb.connect()
    q = create(lb, conn, subscribe=True)
    q.owner.open_message(q.replies[1].message)
    assert send(sender, q, b"one")[0].tag == "OK"
    assert not conn.inbox  # one record in flight per subscription: the Initial record
    one = q.cmd(ACK(msg_id=q.replies[1].message.msg_id))[0]
    assert one.tag == "MSG"
    assert send(sender, q, b"two")[0].tag == "OK"
    two = q.cmd(ACK(msg_id=one.message.msg_id))[0]  # "two" waited for this ACK
    assert two.tag == "MSG"
    assert q.cmd(ACK(msg_id=two.message.msg_id))[0].tag == "OK"
    assert send(sender, q, b"three")[0].tag == "OK"
    (pushed,) = conn.inbox  # pushed at once to the idle subscriber
    assert q.owner.open_message(pushed.message)[1].body == b"three"
    key = AuthKeyPair.ed25519(lb.client_random)
    assert error_of(send(sender, q, key=key)[0]) == "AUTH"  # signed, but not secured
    q.cmd(KEY(sender_key=key.public))
    assert error_of(send(sender, q)[0]) == "AUTH"
    assert error_of(send(sender, q, b"x" * 16049, key=key)[0]) == "LARGE_MSG"
    assert send(sender, q, b"x" * 16048, key=key)[0].tag == "OK"


@req("MSG-6")
def test_quota_is_sticky_until_the_queue_is_empty(make_lb: Callable[..., Loopback]) -> None:
    lb = make_lb(6, config=ServerConfig(quota=2))
    conn, sender = lb.connect(), lb.connect()
    q = create(lb, conn)
    assert [send(sender, q, b"%d" % i)[0].tag for i in range(2)] == ["OK", "OK"]
    assert [error_of(send(sender, q)[0]) for _ in range(2)] == ["QUOTA", "QUOTA"]
    kinds = [r.kind for r in lb.store.records(q.rid)]
    assert kinds.count(RecordKind.Quota) == 1  # one marker
    assert drain(q) == [b"0", b"1"]
    assert send(sender, q, b"again")[0].tag == "OK"


@req("MSG-2", "MSG-3", "MSG-4", "CMD-33")
def test_subscriptions(lb: Loopback) -> None:
    a, b = lb.connect(), lb.connect()
    q = create(lb, a, subscribe=True)
    first = q.replies[1].message.msg_id
    replies = q.cmd(SUB())
    assert [r.tag for r in replies] == ["OK", "MSG"]
    assert replies[1].message.msg_id == first  # repeated SUB: the record in flight again
    assert [r.tag for r in q.cmd(SUB(), b)] == ["OK", "MSG"]
    assert [r.tag for r in a.inbox] == ["END"]
    assert error_of(q.cmd(GET(), b)[0]) == "CMD PROHIBITED"
    assert q.cmd(GET(), a)[0].tag == "MSG"
    assert error_of(q.cmd(SUB(), a)[0]) == "CMD PROHIBITED"
    assert error_of(q.cmd(ACK(msg_id=b"\x01" * 24), b)[0]) == "NO_MSG"
    assert q.cmd(ACK(msg_id=first), b)[0].tag == "OK"
    assert error_of(q.cmd(ACK(msg_id=first), b)[0]) == "NO_MSG"


@req("MSG-4")
def test_an_empty_ack_removes_nothing(lb: Loopback) -> None:
    """ACK with an empty ID clears what is in flight and removes nothing, as deployed does
    (simplexmq 6.5.5 Server.hs:1815-1820, Server/MsgStore/Types.hs:94-110): on a subscription
    the same record comes back as its answer; after GET it is answered OK and the record stays
    for the next GET, and the ID it had is no longer in flight."""
    a, b = lb.connect(), lb.connect()
    q = create(lb, a, subscribe=True)
    first = q.replies[1].message.msg_id
    again = q.cmd(ACK(msg_id=b""))[0]
    assert again.tag == "MSG" and again.message.msg_id == first
    assert q.cmd(ACK(msg_id=b""))[0].message.msg_id == first
    assert [r.tag for r in q.cmd(DEL(), a)] == ["OK"]
    q = create(lb, b)
    first = q.cmd(GET(), b)[0].message.msg_id
    assert q.cmd(ACK(msg_id=b""), b)[0].tag == "OK"
    assert error_of(q.cmd(ACK(msg_id=first), b)[0]) == "NO_MSG"
    assert q.cmd(GET(), b)[0].message.msg_id == first
    assert q.cmd(ACK(msg_id=first), b)[0].tag == "OK"
    assert q.cmd(GET(), b)[0].tag == "OK"  # now the queue is empty


@req("MSG-2", "MSG-4")
def test_a_repeated_sub_forgets_a_record_another_session_acknowledged(lb: Loopback) -> None:
    """Found by a campaign (model target, seed 9392): GET on one session, SUB on another (the
    record is delivered to both), ACK on the first, SUB again on the second. The queue is empty,
    so the repeated SUB leaves nothing in flight, and ACK of the forgotten record is NO_MSG."""
    getter, subscriber = lb.connect(), lb.connect()
    q = create(lb, getter)
    record = q.cmd(GET(), getter)[0].message.msg_id
    assert [r.tag for r in q.cmd(SUB(), subscriber)] == ["OK", "MSG"]
    assert q.cmd(ACK(msg_id=record), getter)[0].tag == "OK"
    assert [r.tag for r in q.cmd(SUB(), subscriber)] == ["OK"]  # nothing left to deliver
    assert error_of(q.cmd(ACK(msg_id=record), subscriber)[0]) == "NO_MSG"


@req("ROT-3", "ROT-4", "MSG-8", "CMD-21", "DIV-19", "DIV-21", "DIV-48")
def test_off_count_last_flag_and_del(lb: Loopback) -> None:
    conn, sender, watcher = lb.connect(), lb.connect(), lb.connect()
    q = create(lb, conn)
    for body in (b"a", b"b"):
        send(sender, q, body)
    assert q.cmd(OFF())[0].message.remaining == 3  # Initial and two messages
    assert q.cmd(OFF())[0].message.remaining == 3
    assert error_of(send(sender, q)[0]) == "AUTH"
    flags = []
    for _ in range(3):
        msg = q.cmd(GET())[0]
        body, _, _ = q.owner.open_message(msg.message)
        flags.append(body.flags.last)
        q.cmd(ACK(msg_id=msg.message.msg_id))
    assert flags == [False, False, True]
    assert q.cmd(OFF())[0].message.remaining == 0
    q.cmd(SUB(), watcher)
    assert q.cmd(DEL())[-1].tag == "OK"
    assert [r.tag for r in watcher.inbox] == ["END"]
    assert error_of(q.cmd(SUB())[0]) == "AUTH"


# --- authorization ---------------------------------------------------------------------------


@req("AUTH-1", "AUTH-2")
def test_x25519_authenticators_work_for_recipients(lb: Loopback) -> None:
    conn = lb.connect()
    q = create(lb, conn, auth=AuthKeyPair.x25519(lb.client_random))
    assert q.replies[0].tag == "IDS"
    assert q.cmd(GET())[0].tag == "MSG"
    other_session = lb.connect()
    _, data_ = conn.client.transmission(GET(), q.rid, q.owner.auth_key)
    # an authenticator is bound to its session's server key: replayed elsewhere it fails
    assert error_of(other_session.send_raw(data_)[0]) == "AUTH"


@req("AUTH-3")
def test_unknown_queues_cost_the_same_verification(lb: Loopback,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    conn = lb.connect()
    q = create(lb, conn)
    calls: list[bytes] = []
    original = primitives.ed25519_verify

    def counting(public: bytes, message: bytes, signature: bytes) -> bool:
        calls.append(public)
        return original(public, message, signature)

    monkeypatch.setattr("smpref.crypto.auth.ed25519_verify", counting)
    assert error_of(conn.send(SUB(), lb.client_random(24), q.owner.auth_key)[0]) == "AUTH"
    assert q.cmd(SUB())[0].tag == "OK"
    servers = 2 if isinstance(lb, DifferentialLoopback) else 1  # it also runs a shadow
    dummy, real = calls[:servers], calls[servers:]
    assert len(dummy) == len(real) == servers  # one dummy verification, one real, per server
    assert set(dummy).isdisjoint(real)


@req("AUTH-4", "AUTH-2")
def test_service_signatures_and_order_of_checks(lb: Loopback) -> None:
    conn = lb.connect()
    tx = Transmission(b"s" * 64, b"c" * 24, b"e" * 24, b"SUB", service_signature=b"x" * 64)
    assert error_of(conn.send_raw(tx.encode())[0]) == "SERVICE"
    assert error_of(conn.send_raw(b"\x05")[0]) == "BLOCK"
    unknown = Transmission(b"", b"c" * 24, b"", b"FOO").encode()
    assert error_of(conn.send_raw(unknown)[0]) == "CMD UNKNOWN"
    bad = Transmission(b"", b"c" * 24, b"e", b"SUB x").encode()
    assert error_of(conn.send_raw(bad)[0]) == "CMD SYNTAX"
    no_auth = Transmission(b"", b"c" * 24, b"e", b"SUB").encode()
    assert error_of(conn.send_raw(no_auth)[0]) == "CMD NO_AUTH"


# --- retention -------------------------------------------------------------------------------


@req("RET-1", "RET-2", "RET-3", "RET-4", "RET-6", "QUEUE-5", "DIV-16", "DIV-17")
def test_retention_periods(lb: Loopback) -> None:
    conn, sender = lb.connect(), lb.connect()
    unsecured = create(lb, conn)
    secured = create(lb, conn)
    key = AuthKeyPair.ed25519(lb.client_random)
    secured.cmd(KEY(sender_key=key.public))
    contact = create(lb, conn, mode=Mode.Contact)
    # the same kind of queue as ``unsecured``, created in deployed SMP: never expired (DIV-17)
    deployed = deployed_invitation(lb, lb.connect(Dialect.DEPLOYED))
    lb.clock.advance(90 * DAY)
    lb.expire()
    assert lb.store.get(unsecured.rid) is not None  # day 90: inside the period
    lb.clock.advance(DAY)
    lb.expire()
    assert lb.store.get(unsecured.rid) is None
    assert lb.store.get(secured.rid) is not None
    send(sender, contact)  # moves updated_at
    lb.clock.advance(1095 * DAY)
    lb.expire()
    assert lb.store.get(contact.rid) is not None
    lb.clock.advance(DAY)
    lb.expire()
    assert lb.store.get(contact.rid) is None
    assert lb.store.get(secured.rid) is not None
    assert lb.store.get(deployed.recipient_id) is not None


@req("QUEUE-5", "DIV-18")
def test_link_reads_do_not_keep_an_invitation_alive(lb: Loopback) -> None:
    conn, reader = lb.connect(), lb.connect()
    q = create(lb, conn, link=True)
    for _ in range(3):
        lb.clock.advance(40 * DAY)
        reader.send(LGET(sender_key=None), q.link.k)
        lb.expire()
    assert lb.store.get(q.rid) is None


@req("RET-5", "QENC-9", "QENC-8", "DIV-30")
def test_message_expiry_keeps_key_records_and_the_mirror_steps_over_gaps(
        make_lb: Callable[..., Loopback]) -> None:
    lb = make_lb(7, config=ServerConfig(message_ttl_seconds=DAY,
                                              ratchet_update_interval=2))
    conn, sender = lb.connect(), lb.connect()
    q = create(lb, conn)
    for body in (b"1", b"2", b"3"):
        send(sender, q, body)
    lb.clock.advance(2 * DAY)
    send(sender, q, b"4")
    lb.expire()
    kinds = [r.kind for r in lb.store.records(q.rid)]
    assert kinds == [RecordKind.Initial, RecordKind.Update, RecordKind.Message]
    assert drain(q) == [b"4"]


@req("QUEUE-10", "AUTH-3")
def test_low_order_x25519_keys_are_refused_not_crashed_on(lb: Loopback) -> None:
    """Found by the totality test: low-order points made key agreement raise."""
    from smpref.wire import KeyAlgorithm, PublicKey

    conn, sender = lb.connect(), lb.connect()
    zero = PublicKey(KeyAlgorithm.X25519, bytes(32))
    owner = AuthKeyPair.ed25519(lb.client_random)
    new = NEW(rcv_auth_key=owner.public, rcv_dh_key=zero, basic_auth=None,
            sub_mode=SubMode.OnlyCreate, queue_request=None, ntf_request=None)
    assert error_of(conn.send(new, key=owner)[0]) == "CMD SYNTAX"
    q = create(lb, conn)
    tx = Transmission(b"a" * 80, b"c" * 24, q.owner.sender_id,
                      SKEY(sender_key=zero).encode())
    assert error_of(sender.send_raw(tx.encode())[0]) == "AUTH"


@req("QENC-3", "STORE-3")
def test_stored_records_never_hold_the_plaintext(lb: Loopback) -> None:
    conn, sender = lb.connect(), lb.connect()
    q = create(lb, conn)
    secret = b"a message only the owner may read"
    assert send(sender, q, secret)[0].tag == "OK"
    stored = lb.store.records(q.rid)
    assert all(secret not in record.data for record in stored)
    assert drain(q) == [secret]


@req("QUEUE-4", "QUEUE-3", "DIV-9", "DIV-45")
def test_one_id_space_across_roles(lb: Loopback) -> None:
    conn = lb.connect()
    first = create(lb, conn)
    # a client-chosen sender ID equal to an existing recipient ID is refused
    clash = create(lb, conn, link=True, sender_id=first.rid)
    assert error_of(clash.replies[0]) == "AUTH"
    ok = create(lb, conn, link=True, sender_id=b"s" * 24)
    assert ok.replies[0].message.snd_id == b"s" * 24


@req("MSG-4", "MSG-9")
def test_two_readers_of_one_queue(make_lb: Callable[..., Loopback]) -> None:
    """Found by the long state-machine run (seed 100029): a subscriber and a GET reader."""
    lb = make_lb(8)
    subscriber, reader, sender = lb.connect(), lb.connect(), lb.connect()
    q = create(lb, subscriber, subscribe=True)
    initial = q.replies[1].message
    q.owner.open_message(initial)
    send(sender, q, b"m1")
    got = q.cmd(GET(), reader)[0].message  # the Initial record again, on another session
    assert got.msg_id == initial.msg_id and q.owner.open_message(got)[2]
    assert q.cmd(ACK(msg_id=got.msg_id), reader)[0].tag == "OK"
    m1 = q.cmd(GET(), reader)[0].message
    assert q.owner.open_message(m1)[1].body == b"m1"
    # the subscriber's ACK of the record the reader already removed still moves it on
    again = q.cmd(ACK(msg_id=initial.msg_id), subscriber)[0]
    assert again.tag == "MSG" and again.message.msg_id == m1.msg_id
    _, received, repeated = q.owner.open_message(again.message)
    assert repeated and received.body == b"m1"  # recognised, not passed to the mirror twice


@req("QUEUE-10", "QUEUE-3", "LINK-2", "CMD-12")
@pytest.mark.parametrize("field", ["link_id", "sender_id", "notifier_id"])
@pytest.mark.parametrize("delta", [-1, 1])
def test_chosen_ids_of_any_other_length_are_refused(lb: Loopback, field: str,
                                                    delta: int) -> None:
    """One byte short or one byte long: both are CMD SYNTAX (the link ID is 32 bytes, the
    sender and notifier IDs 24)."""
    conn = lb.connect()
    keys = LinkKeys.generate(lb.client_random)
    rnd = lb.client_random
    request, _, _ = notifier_request(lb)
    sizes = {"link_id": 32, "sender_id": 24, "notifier_id": 24}
    chosen = {name: rnd(size + (delta if name == field else 0)) for name, size in sizes.items()}
    owner = OwnedQueue(AuthKeyPair.ed25519(rnd), DhKeyPair.generate(rnd))
    link = QueueLink(link_id=chosen["link_id"], sender_id=chosen["sender_id"],
                     enc_link_data=make_link_blob(keys, rnd, LinkData(conn_req=b"r",
                                                                      user_data=b""), []))
    new = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
              basic_auth=None, sub_mode=SubMode.OnlyCreate,
              queue_request=QueueRequest(conn_mode=Mode.Invitation, queue_link=link),
              ntf_request=NtfRequest(notifier_id=chosen["notifier_id"],
                                     ntf_auth_key=request.ntf_auth_key,
                                     rcv_ntf_dh_key=request.rcv_ntf_dh_key))
    assert error_of(conn.send(new, key=owner.auth_key)[0]) == "CMD SYNTAX"


@req("QUEUE-3", "QUEUE-4")
def test_one_id_chosen_twice_in_one_new_is_refused(lb: Loopback) -> None:
    conn = lb.connect()
    request, _, _ = notifier_request(lb)
    twice = NtfRequest(notifier_id=b"s" * 24, ntf_auth_key=request.ntf_auth_key,
                       rcv_ntf_dh_key=request.rcv_ntf_dh_key)
    assert error_of(create(lb, conn, link=True, sender_id=b"s" * 24,
                           ntf=twice).replies[0]) == "AUTH"
    assert create(lb, conn, link=True, sender_id=b"t" * 24, ntf=request).replies[0].tag == "IDS"


@req("QUEUE-10")
def test_a_password_sent_to_a_server_without_one_is_ignored(lb: Loopback) -> None:
    """Only a server with a password checks NEW's basicAuth."""
    conn = lb.connect()
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    new = NEW(rcv_auth_key=owner.auth_key.public, rcv_dh_key=owner.dh_key.public,
              basic_auth=b"anything", sub_mode=SubMode.OnlyCreate, queue_request=None,
              ntf_request=None)
    assert conn.send(new, key=owner.auth_key)[0].tag == "IDS"


@req("QUEUE-10")
@pytest.mark.parametrize("which", ["rcv_dh_key", "rcv_ntf_dh_key"])
def test_either_low_order_dh_key_refuses_new(lb: Loopback, which: str) -> None:
    from smpref.wire import KeyAlgorithm, PublicKey

    conn = lb.connect()
    zero = PublicKey(KeyAlgorithm.X25519, bytes(32))
    request, _, _ = notifier_request(lb)
    owner = OwnedQueue(AuthKeyPair.ed25519(lb.client_random), DhKeyPair.generate(lb.client_random))
    ntf = NtfRequest(notifier_id=request.notifier_id, ntf_auth_key=request.ntf_auth_key,
                     rcv_ntf_dh_key=zero if which == "rcv_ntf_dh_key" else request.rcv_ntf_dh_key)
    new = NEW(rcv_auth_key=owner.auth_key.public,
              rcv_dh_key=zero if which == "rcv_dh_key" else owner.dh_key.public,
              basic_auth=None, sub_mode=SubMode.OnlyCreate, queue_request=None, ntf_request=ntf)
    assert error_of(conn.send(new, key=owner.auth_key)[0]) == "CMD SYNTAX"


@req("QUEUE-6")
@pytest.mark.parametrize("mode", ["invitation", "contact"])
def test_a_blob_of_exactly_the_limit_fits_and_one_byte_more_does_not(lb: Loopback,
                                                                      mode: str) -> None:
    conn = lb.connect()
    config = ServerConfig()
    limit = config.invitation_blob_limit if mode == "invitation" else config.contact_blob_limit

    def blob_of(size: int) -> LinkBlob:
        overhead = len(LinkBlob(parts=(LinkPart(priority=Priority.Mandatory,
                                                sealed=b"x" * (size - 8)),)).encode()) - size + 8
        blob = LinkBlob(parts=(LinkPart(priority=Priority.Mandatory,
                                        sealed=b"x" * (size - overhead)),))
        assert len(blob.encode()) == size
        return blob

    connection_mode = Mode.Invitation if mode == "invitation" else Mode.Contact
    fits = create(lb, conn, link=True, mode=connection_mode, blob=blob_of(limit))
    assert fits.replies[0].tag == "IDS"
    over = create(lb, conn, link=True, mode=connection_mode, blob=blob_of(limit + 1))
    assert error_of(over.replies[0]) == "LARGE_MSG"


def _optional_parts_left(lb: Loopback, q: Q) -> int:
    reader = lb.connect()
    assert q.link is not None
    corr, replies = reader.request(LGET(sender_key=None), q.link.k)
    queue_link = reader.client.open_link(q.link, corr, replies[0].message.sealed)
    return len(read_link_blob(q.link, queue_link.enc_link_data)[1])


@req("QUEUE-9", "RET-7")
def test_relief_takes_the_oldest_first_then_the_cutoff_day_only_as_far_as_needed(
        make_lb: Callable[..., Loopback]) -> None:
    """Three queues of 898 blob bytes each (300 of them mandatory): one updated on day 0, two
    on day 2. Getting from 2694 to the low water mark of 1900 takes the day-0 queue's 598
    optional bytes and one day-2 queue's: never both day-2 queues while the older one keeps its
    parts, whatever order the queues' IDs put them in."""
    orders = set()
    for seed in range(12):
        lb = make_lb(100 + seed, config=ServerConfig(blob_bytes_high_water=2600,
                                                     blob_bytes_low_water=1900))
        conn = lb.connect()
        old = create(lb, conn, mode=Mode.Contact, link=True, optional=2)
        lb.clock.advance(2 * DAY)
        newer = [create(lb, conn, mode=Mode.Contact, link=True, optional=2) for _ in range(2)]
        assert lb.store.blob_bytes() == 3 * 898
        orders.add(sorted([old.rid, *(q.rid for q in newer)]).index(old.rid))
        lb.expire()
        assert _optional_parts_left(lb, old) == 0
        assert sorted(_optional_parts_left(lb, q) for q in newer) == [0, 2]
        assert lb.store.blob_bytes() == 300 + 300 + 898
    assert orders == {0, 1, 2}  # the oldest queue came first, in the middle and last


@req("QUEUE-9")
@pytest.mark.parametrize("high_water", [2 * 898, 2 * 898 + 100])
def test_blobs_at_or_under_the_high_water_mark_are_left_alone(
        make_lb: Callable[..., Loopback], high_water: int) -> None:
    lb = make_lb(7, config=ServerConfig(blob_bytes_high_water=high_water,
                                        blob_bytes_low_water=898))
    conn = lb.connect()
    queues = [create(lb, conn, mode=Mode.Contact, link=True, optional=2) for _ in range(2)]
    lb.clock.advance(DAY)
    lb.expire()
    assert [_optional_parts_left(lb, q) for q in queues] == [2, 2]


# The sliced sweeps below call the model's sweep directly, which the differential loopback
# would not mirror: they run over the memory store only.


@req("RET-7", "RET-2")
def test_a_sweep_in_slices_of_one_queue_reaches_every_queue() -> None:
    lb = Loopback(seed=9, config=ServerConfig(contact_days=1))
    conn = lb.connect()
    queues = [create(lb, conn, mode=Mode.Contact) for _ in range(4)]
    lb.clock.advance(3 * DAY)
    for _ in range(10):
        _, done = lb.server.sweep(limit=1)
        if done:
            break
    assert all(lb.store.get(q.rid) is None for q in queues)


@req("RET-7", "QUEUE-9")
def test_a_sweep_in_slices_counts_each_queue_once() -> None:
    """Three queues updated on days 0, 1 and 2, swept two at a time: reaching the low water
    mark takes the day-0 queue's optional parts and the day-1 queue's, wherever their IDs put
    them. A slice that started again inside the last one would count a queue's bytes twice
    and stop too early."""
    positions = set()
    for seed in range(12):
        lb = Loopback(seed=200 + seed, config=ServerConfig(blob_bytes_high_water=2600,
                                                           blob_bytes_low_water=1900))
        conn = lb.connect()
        queues = []
        for _ in range(3):
            queues.append(create(lb, conn, mode=Mode.Contact, link=True, optional=2))
            lb.clock.advance(DAY)
        positions.add(sorted(q.rid for q in queues).index(queues[0].rid))
        for _ in range(20):
            _, done = lb.server.sweep(limit=2)
            if done:
                break
        assert [_optional_parts_left(lb, q) for q in queues] == [0, 0, 2]
    assert positions == {0, 1, 2}


@req("QUEUE-9")
def test_relief_takes_a_single_optional_part_too(make_lb: Callable[..., Loopback]) -> None:
    lb = make_lb(11, config=ServerConfig(blob_bytes_high_water=500, blob_bytes_low_water=400))
    conn = lb.connect()
    q = create(lb, conn, mode=Mode.Contact, link=True, optional=1)
    assert lb.store.blob_bytes() == 599
    lb.expire()
    assert _optional_parts_left(lb, q) == 0 and lb.store.blob_bytes() == 300


@req("QUEUE-9")
@pytest.mark.parametrize("low_water", [1300, 898])
def test_relief_stops_at_the_low_water_mark_even_where_its_plan_says_more(
        low_water: int) -> None:
    """The relief plan is made when the scan ends; a queue deleted before relief reaches the
    others brings the blobs under (or exactly to) the low water mark, and relief then drops
    nothing."""
    lb = Loopback(seed=5, config=ServerConfig(blob_bytes_high_water=1500,
                                              blob_bytes_low_water=low_water))
    conn = lb.connect()
    old = create(lb, conn, mode=Mode.Contact, link=True, optional=2)
    lb.clock.advance(2 * DAY)
    newer = create(lb, conn, mode=Mode.Contact, link=True, optional=2)
    for _ in range(10):
        lb.server.sweep(limit=1)
        if lb.server.sweep_state.relieving:
            break
    assert lb.server.sweep_state.relieving  # the plan says: drop the old queue's parts
    assert newer.cmd(DEL())[0].tag == "OK"
    for _ in range(10):
        if lb.server.sweep(limit=1)[1]:
            break
    assert _optional_parts_left(lb, old) == 2 and lb.store.blob_bytes() == 898


@req("QUEUE-9", "RET-7")
@pytest.mark.parametrize(("excess", "cutoff_day_drops"), [(1196, 1), (1197, 2)])
def test_relief_of_the_cutoff_day_keeps_to_its_byte_budget(excess: int,
                                                           cutoff_day_drops: int) -> None:
    """Day 0: a queue with 598 optional bytes and one with none; day 1: two with 598 each.
    To free 1196 bytes relief takes day 0's 598 and a budget of exactly 598 from day 1: one
    queue. To free 1197 the budget is 599: both. A queue added between the plan and the relief
    keeps the stored bytes above the low water mark, so only the budget decides."""
    def four_queues(config: ServerConfig) -> tuple[Loopback, LoopbackConnection, list[Q], list[Q]]:
        lb = Loopback(seed=21, config=config)  # the same seed: the same blob sizes
        conn = lb.connect()
        day0 = [create(lb, conn, mode=Mode.Contact, link=True, optional=n) for n in (2, 0)]
        lb.clock.advance(DAY)
        day1 = [create(lb, conn, mode=Mode.Contact, link=True, optional=2) for _ in range(2)]
        return lb, conn, day0, day1

    total = four_queues(ServerConfig())[0].store.blob_bytes()
    lb, conn, day0, day1 = four_queues(ServerConfig(blob_bytes_high_water=total - 1,
                                                    blob_bytes_low_water=total - excess))
    lb.clock.advance(DAY)
    for _ in range(10):
        lb.server.sweep(limit=1)
        if lb.server.sweep_state.relieving:
            break
    assert lb.server.sweep_state.relieving
    create(lb, conn, mode=Mode.Contact, link=True, optional=2)  # day 2: not relieved
    for _ in range(20):
        if lb.server.sweep(limit=1)[1]:
            break
    assert _optional_parts_left(lb, day0[0]) == 0
    assert sum(_optional_parts_left(lb, q) == 0 for q in day1) == cutoff_day_drops


class BrokenQueueStore(MemoryStore):
    """A memory store that cannot read one queue (``broken``): its record with ``get``, or
    its records with ``records``, as ``method`` says."""

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method, self.broken = method, b""

    def _check(self, method: str, rid: bytes) -> None:
        if method == self.method and rid == self.broken:
            raise StoreError(rid.hex(), "cannot be read")

    def get(self, rid: bytes) -> Any:
        self._check("get", rid)
        return super().get(rid)

    def records(self, rid: bytes) -> Any:
        self._check("records", rid)
        return super().records(rid)


@req("RET-7", "RET-2")
def test_a_queue_the_store_cannot_read_is_skipped_and_the_sweep_goes_on() -> None:
    store = BrokenQueueStore("get")
    lb = Loopback(seed=13, config=ServerConfig(contact_days=1), store=store)
    conn = lb.connect()
    queues = [create(lb, conn, mode=Mode.Contact) for _ in range(3)]
    store.broken = queues[1].rid
    lb.clock.advance(3 * DAY)
    lb.expire()
    assert [lb.store.get(q.rid) is None for q in queues[::2]] == [True, True]
    store.broken = b""
    assert lb.store.get(queues[1].rid) is not None
    assert len(lb.server.store_errors) == 1 and queues[1].rid.hex() in lb.server.store_errors[0]


@req("STORE-11", "STORE-12")
def test_a_store_failure_answers_err_store_and_the_server_serves_the_other_queues() -> None:
    store = BrokenQueueStore("records")
    lb = Loopback(seed=17, store=store)
    conn = lb.connect()
    broken, fine = create(lb, conn), create(lb, conn)
    store.broken = broken.rid
    assert error_of(broken.cmd(GET())[0]) == "STORE"
    assert fine.cmd(GET())[0].tag == "MSG"  # its Initial record
    assert len(lb.server.store_errors) == 1


@req("RET-7")
def test_a_sweep_slice_handles_256_queues_by_default() -> None:
    lb = Loopback(seed=19, config=ServerConfig(contact_days=1))
    conn = lb.connect()
    queues = [create(lb, conn, mode=Mode.Contact) for _ in range(257)]
    lb.clock.advance(3 * DAY)
    _, done = lb.server.sweep()
    assert not done
    assert sum(lb.store.get(q.rid) is None for q in queues) == 256
