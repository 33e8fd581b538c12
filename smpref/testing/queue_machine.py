"""A Hypothesis state machine that drives the model through random interleavings.

Several sessions create, link, secure, message, suspend, expire and delete queues through the
wire format (:mod:`smpref.testing.loopback`), while the clock advances across retention periods.
The machine keeps a small oracle of what each owner and sender knows, checks each answer
against the spec, and checks these invariants after every step:

* no message is delivered twice or lost (MSG-9): each queue's decrypted messages are the sent
  messages in order, minus only those that expired (RET-5);
* a secured queue never accepts an unsigned SEND (MSG-1);
* link data decrypts only with its own link key, never another queue's (LINK-4, LINK-6);
* retention never removes a queue inside its period (RET-3);
* dropped blobs never take the mandatory part (QUEUE-9);
* the ratchet mirror decrypts every delivered record (QENC-5).

It lives in the package, not in tests/, so that ``smpref model fuzz`` and other programs can
run it by seed (:func:`run_seed`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from smpref.client.core import (
    AuthKeyPair,
    DhKeyPair,
    LinkKeys,
    OwnedQueue,
    Reply,
    make_link_blob,
    read_link_blob,
)
from smpref.errors import CryptoError
from smpref.model.config import DAY, ServerConfig
from smpref.model.records import StoredRecord
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.wire.messages import (
    ACK,
    COUNT,
    DEL,
    ERR,
    GET,
    IDS,
    KEY,
    LGET,
    LINK,
    LSET,
    MSG,
    NEW,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    ErrorType_CMD,
    LinkData,
    LinkPartPriority,
    MsgFlags,
    NtfRequest,
    OptionalLinkData,
    OptionalPartKind,
    QueueLink,
    QueueRequest,
    RecordKind,
    SubscriptionMode,
)
from smpref.wire.schema import render_error
from smpref.wire.type_codecs import VariantCodec

#: small limits, so that quotas, key updates, pressure and expiry happen in short runs
MACHINE_CONFIG = ServerConfig(
    quota=4,
    message_ttl_seconds=3 * DAY,
    unsecured_invitation_days=5,
    contact_days=9,
    ratchet_update_interval=3,
    blob_bytes_high_water=3000,
    blob_bytes_low_water=2000,
    invitation_blob_limit=2048,
    contact_blob_limit=2048,
)



def error_of(reply: Reply) -> str:
    """The kind of an ERR reply: "AUTH", "CMD PROHIBITED", "STORE" (without STORE's free
    text); "" for any other reply."""
    if not isinstance(reply.message, ERR):
        return ""
    error = reply.message.error
    if isinstance(error, ErrorType_CMD):
        return render_error(error)
    return error.CODEC.tag.decode() if isinstance(error.CODEC, VariantCodec) else ""


@dataclass
class QueueHandle:
    """What the machine's oracle knows about one queue."""

    owner: OwnedQueue
    owner_session: LoopbackConnection
    mode: ConnectionMode
    created_day: int
    link: LinkKeys | None = None
    link_data: tuple[LinkData, list[OptionalLinkData]] | None = None
    sender_key: AuthKeyPair | None = None
    secured: bool = False
    suspended: bool = False
    deleted: bool = False
    updated_day: int = 0
    sent: list[bytes] = field(default_factory=list)
    delivered: list[bytes] = field(default_factory=list)
    skipped: int = 0
    subscribed: LoopbackConnection | None = None
    get_sessions: list[LoopbackConnection] = field(default_factory=list)
    in_flight: dict[bytes, bytes] = field(default_factory=dict)  # session -> msg id
    expired: int = 0  # Message records removed by expiry (RET-5)

    @property
    def rid(self) -> bytes:
        return self.owner.recipient_id


class QueueMachine(RuleBasedStateMachine):
    """Random interleavings of every command, from several sessions, with time passing."""

    sessions = Bundle("sessions")
    queues = Bundle("queues")
    keys = Bundle("keys")  # sender keys, shared across queues to try them where they don't fit
    links = Bundle("links")  # link keys, to read links from any session

    def __init__(self) -> None:
        super().__init__()
        self.lb = self.make_loopback()
        self.handles: list[QueueHandle] = []
        self.trace: list[str] = []
        self.counter = 0

    def make_loopback(self) -> Loopback:
        """The server under test; subclasses put it over another store
        (:mod:`smpref.testing.differential`)."""
        return Loopback(seed=0, config=MACHINE_CONFIG)

    # --- plumbing --------------------------------------------------------------------------

    def _body(self) -> bytes:
        self.counter += 1
        return b"message %d" % self.counter


    def _log(self, step: str, replies: list[Reply]) -> None:
        self.trace.append(f"{step} -> {','.join(r.tag + ':' + error_of(r) for r in replies)}")

    def _handle_for(self, rid: bytes) -> QueueHandle | None:
        return next((h for h in self.handles if h.rid == rid and not h.deleted), None)

    def _take(self, connection: LoopbackConnection, reply: Reply) -> None:
        """A MSG reaching a session: its queue's owner opens it (QENC-5, MSG-9)."""
        if reply.tag == "END":
            handle = self._handle_for(reply.transmission.entity_id)
            if handle is not None and handle.subscribed is connection:
                handle.subscribed = None
                handle.in_flight.pop(connection.session_id, None)
            return
        if reply.tag != "MSG":
            return
        handle = self._handle_for(reply.transmission.entity_id)
        assert handle is not None, "MSG for an unknown queue"
        body, received, again = handle.owner.open_message(reply.expect(MSG))  # QENC-5
        handle.in_flight[connection.session_id] = reply.expect(MSG).msg_id
        if again:
            return
        handle.skipped += received.skipped
        if received.kind is RecordKind.Message:
            assert received.body is not None
            handle.delivered.append(received.body)
        if body.flags.last:  # ROT-4: only the last record of a suspended queue
            assert handle.suspended, "last flag on a queue that is not suspended"

    def _drain(self) -> None:
        for connection in list(self.lb.connections.values()):
            while connection.inbox:
                self._take(connection, connection.inbox.popleft())

    def _replies(self, connection: LoopbackConnection, replies: list[Reply]) -> list[Reply]:
        for reply in replies:
            self._take(connection, reply)
        self._drain()
        return replies

    # --- rules -----------------------------------------------------------------------------

    @initialize(target=sessions)
    def first_session(self) -> LoopbackConnection:
        return self.lb.connect()

    @rule(target=keys)
    def new_key(self) -> AuthKeyPair:
        return AuthKeyPair.ed25519(self.lb.client_random)

    @rule(target=links, handle=queues)
    def share_link(self, handle: QueueHandle) -> MultipleResults[LinkKeys]:
        return multiple(handle.link) if handle.link is not None else multiple()

    @rule(handle=queues, session=sessions, key=keys)
    def send_with_key(self, handle: QueueHandle, session: LoopbackConnection,
                      key: AuthKeyPair) -> None:
        """SEND signed with some key: only the queue's own sender key is accepted (MSG-1)."""
        if handle.deleted:
            return
        body = self._body()
        replies = session.send(SEND(flags=MsgFlags(notification=False), body=body),
                               handle.owner.sender_id, key)
        self._log("SEND*", replies)
        if key != handle.sender_key:
            assert error_of(replies[0]) == "AUTH", replies[0].tag
            return
        if replies[0].tag == "OK":
            handle.sent.append(body)
            handle.updated_day = self.lb.clock.now() // DAY
            if handle.link_data is not None and handle.mode is ConnectionMode.Invitation:
                handle.link_data = None  # LINK-11
            self._replies(session, replies)
        else:
            assert error_of(replies[0]) in ("AUTH", "QUOTA"), error_of(replies[0])

    @rule(link=links, session=sessions)
    def lget_any(self, link: LinkKeys, session: LoopbackConnection) -> None:
        """LGET a link from any session: it reads that link's queue, never another's."""
        owner = next((h for h in self.handles if h.link is link), None)
        assert owner is not None
        corr, replies = session.request(LGET(sender_key=None), link.k)
        self._log("LGET*", replies)
        if owner.deleted or owner.link_data is None:
            assert error_of(replies[0]) == "AUTH", replies[0].tag
            return
        assert replies[0].tag == "LINK", error_of(replies[0])
        queue_link = session.client.open_link(link, corr, replies[0].expect(LINK).sealed)
        assert queue_link.sender_id == owner.owner.sender_id
        assert read_link_blob(link, queue_link.enc_link_data)[0] == owner.link_data[0]

    @rule(target=sessions)
    def connect(self) -> LoopbackConnection:
        self.trace.append("CONNECT")
        return self.lb.connect()

    @rule(target=queues, session=sessions, contact=st.booleans(), with_link=st.booleans(),
          optional_parts=st.integers(0, 2), with_ntf=st.booleans(), subscribe=st.booleans(),
          x25519_auth=st.booleans())
    def create(self, session: LoopbackConnection, contact: bool, with_link: bool,  # noqa: PLR0917
               optional_parts: int, with_ntf: bool, subscribe: bool, x25519_auth: bool
               ) -> QueueHandle:
        rnd = self.lb.client_random
        auth = AuthKeyPair.x25519(rnd) if x25519_auth else AuthKeyPair.ed25519(rnd)
        owner = OwnedQueue(auth, DhKeyPair.generate(rnd))
        mode = ConnectionMode.Contact if contact else ConnectionMode.Invitation
        link, link_data, queue_link = None, None, None
        if with_link:
            link = LinkKeys.generate(rnd)
            link_data = (LinkData(conn_req=b"request %d" % self.counter, user_data=b"u"),
                         [OptionalLinkData(kind=OptionalPartKind.Profile, data=b"p" * 300)
                          for _ in range(optional_parts)])
            queue_link = QueueLink(link_id=link.link_id, sender_id=rnd(24),
                                   enc_link_data=make_link_blob(link, rnd, *link_data))
        ntf = NtfRequest(notifier_id=rnd(24), ntf_auth_key=AuthKeyPair.ed25519(rnd).public,
                         rcv_ntf_dh_key=DhKeyPair.generate(rnd).public) if with_ntf else None
        new = NEW(rcv_auth_key=auth.public, rcv_dh_key=owner.dh_key.public, basic_auth=None,
                sub_mode=SubscriptionMode.Subscribe if subscribe else SubscriptionMode.OnlyCreate,
                queue_request=QueueRequest(conn_mode=mode, queue_link=queue_link),
                ntf_request=ntf)
        replies = session.send(new, key=auth)
        self._log("NEW", replies)
        assert replies[0].tag == "IDS", error_of(replies[0])
        owner.created(replies[0].expect(IDS))
        assert replies[0].expect(IDS).queue_mode is mode
        today = self.lb.clock.now() // DAY
        handle = QueueHandle(owner, session, mode, today, link, link_data, updated_day=today,
                             subscribed=session if subscribe else None)
        self.handles.append(handle)
        self._replies(session, replies[1:])
        return handle

    @rule(handle=queues, same_key=st.booleans())
    def key(self, handle: QueueHandle, same_key: bool) -> None:
        if handle.deleted:
            return
        new_key = handle.sender_key if same_key and handle.sender_key else AuthKeyPair.ed25519(
            self.lb.client_random)
        replies = handle.owner_session.send(KEY(sender_key=new_key.public),
                                            handle.rid, handle.owner.auth_key)
        self._log("KEY", replies)
        if handle.sender_key is None or handle.sender_key == new_key:
            assert replies[0].tag == "OK", error_of(replies[0])  # QUEUE-11
            self._secured(handle, new_key)
        else:
            assert error_of(replies[0]) == "AUTH"  # another key: AUTH (QUEUE-11)

    def _secured(self, handle: QueueHandle, key: AuthKeyPair) -> None:
        if handle.secured:
            return  # the same key again changes nothing (QUEUE-11)
        if handle.mode is ConnectionMode.Invitation:
            handle.link_data = None  # LINK-11 (LGET: dropped at the first SEND instead)
        handle.sender_key, handle.secured = key, True
        handle.updated_day = self.lb.clock.now() // DAY

    @rule(handle=queues, session=sessions)
    def skey(self, handle: QueueHandle, session: LoopbackConnection) -> None:
        if handle.deleted:
            return
        key = handle.sender_key or AuthKeyPair.ed25519(self.lb.client_random)
        replies = session.send(SKEY(sender_key=key.public), handle.owner.sender_id, key)
        self._log("SKEY", replies)
        if handle.mode is ConnectionMode.Contact:
            assert error_of(replies[0]) == "AUTH"  # QUEUE-11
        else:
            assert replies[0].tag == "OK", error_of(replies[0])
            self._secured(handle, key)

    @rule(handle=queues, session=sessions, with_key=st.booleans(), other=queues)
    def lget(self, handle: QueueHandle, session: LoopbackConnection, with_key: bool,
             other: QueueHandle) -> None:
        if handle.link is None or handle.deleted:
            return
        key = (handle.sender_key or AuthKeyPair.ed25519(self.lb.client_random)) if with_key \
            else None
        corr, replies = session.request(LGET(sender_key=key.public if key else None),
                                        handle.link.k, key)
        self._log("LGET", replies)
        expect_ok = handle.link_data is not None and not (
            key is not None and handle.mode is ConnectionMode.Contact)
        if not expect_ok:
            assert error_of(replies[0]) == "AUTH", replies[0].tag  # LINK-6, LINK-7
            return
        assert replies[0].tag == "LINK", error_of(replies[0])
        assert handle.link_data is not None
        queue_link = session.client.open_link(handle.link, corr, replies[0].expect(LINK).sealed)
        data, optional = read_link_blob(handle.link, queue_link.enc_link_data)
        assert data == handle.link_data[0]
        assert all(part in handle.link_data[1] for part in optional)  # QUEUE-9: only drops
        if other is not handle and other.link is not None:  # never with another link's key
            try:
                read_link_blob(other.link, queue_link.enc_link_data)
            except CryptoError:
                pass
            else:
                raise AssertionError("link data decrypted with another queue's link key")
        if key is not None and not handle.secured:
            handle.sender_key, handle.secured = key, True  # dropped at the first SEND
            handle.updated_day = self.lb.clock.now() // DAY

    @rule(handle=queues, optional_parts=st.integers(0, 2))
    def lset(self, handle: QueueHandle, optional_parts: int) -> None:
        if handle.deleted:
            return
        link = handle.link or LinkKeys.generate(self.lb.client_random)
        payload = (LinkData(conn_req=b"set %d" % self.counter, user_data=b""),
                   [OptionalLinkData(kind=OptionalPartKind.Preferences, data=b"q" * 200)
                    for _ in range(optional_parts)])
        blob = make_link_blob(link, self.lb.client_random, *payload)
        replies = handle.owner_session.send(LSET(enc_link_data=blob), handle.rid,
                                            handle.owner.auth_key)
        self._log("LSET", replies)
        if handle.link is None:
            assert error_of(replies[0]) in ("CMD PROHIBITED", "AUTH")  # LINK-5
        elif handle.mode is ConnectionMode.Invitation and handle.secured:
            assert error_of(replies[0]) == "AUTH"
        else:
            assert replies[0].tag == "OK", error_of(replies[0])
            handle.link_data = payload

    @rule(handle=queues, session=sessions, signed=st.booleans(), notify=st.booleans())
    def send(self, handle: QueueHandle, session: LoopbackConnection, signed: bool,
             notify: bool) -> None:
        if handle.deleted:
            return
        body = self._body()
        key = handle.sender_key if signed else None
        replies = session.send(SEND(flags=MsgFlags(notification=notify), body=body),
                               handle.owner.sender_id, key)
        self._log("SEND", replies)
        err = error_of(replies[0])
        if handle.secured and key is None:
            assert err == "AUTH", "a secured queue accepted an unsigned SEND"  # MSG-1
            self._replies(session, replies)
            return
        if handle.suspended or (key is not None and not handle.secured):
            assert err == "AUTH", err
            return
        if err == "QUOTA":  # MSG-6: only with a full queue, or while the marker is stored
            counted = [r for r in self._stored(handle)
                       if r.kind in (RecordKind.Message, RecordKind.Quota)]
            assert len(counted) >= MACHINE_CONFIG.quota or any(
                r.kind is RecordKind.Quota for r in counted), "QUOTA on a queue with room"
            return
        assert replies[0].tag == "OK", err
        handle.sent.append(body)
        handle.updated_day = self.lb.clock.now() // DAY
        if handle.link_data is not None and handle.secured and \
                handle.mode is ConnectionMode.Invitation:
            handle.link_data = None  # LINK-11: secured by LGET, dropped at the first SEND
        self._replies(session, replies)

    @rule(handle=queues, session=sessions, count=st.integers(1, 4))
    def send_burst(self, handle: QueueHandle, session: LoopbackConnection, count: int) -> None:
        """Several messages in a row, signed when the queue is secured: quotas, key updates."""
        for _ in range(count):
            self.send(handle, session, signed=True, notify=False)

    @rule(handle=queues, session=sessions)
    def sub(self, handle: QueueHandle, session: LoopbackConnection) -> None:
        if handle.deleted:
            return
        replies = session.send(SUB(), handle.rid, handle.owner.auth_key)
        self._log("SUB", replies)
        if session in handle.get_sessions:
            assert error_of(replies[0]) == "CMD PROHIBITED"  # MSG-3
            return
        assert replies[0].tag == "OK", error_of(replies[0])
        if handle.subscribed is not None and handle.subscribed is not session:
            handle.in_flight.pop(handle.subscribed.session_id, None)
        # MSG-2: a SUB forgets what was in flight on this session; the MSG it brings, if any,
        # is the new record in flight (found by a campaign, seed 9392).
        handle.in_flight.pop(session.session_id, None)
        handle.subscribed = session
        handle.updated_day = self.lb.clock.now() // DAY
        self._replies(session, replies)

    @rule(handle=queues, session=sessions)
    def get(self, handle: QueueHandle, session: LoopbackConnection) -> None:
        if handle.deleted:
            return
        replies = session.send(GET(), handle.rid, handle.owner.auth_key)
        self._log("GET", replies)
        if handle.subscribed is session:
            assert error_of(replies[0]) == "CMD PROHIBITED"  # MSG-3
            return
        assert replies[0].tag in ("MSG", "OK"), error_of(replies[0])
        if session not in handle.get_sessions:
            handle.get_sessions.append(session)
        self._replies(session, replies)

    @rule(handle=queues, session=sessions, wrong_id=st.booleans())
    def ack(self, handle: QueueHandle, session: LoopbackConnection, wrong_id: bool) -> None:
        if handle.deleted:
            return
        in_flight = handle.in_flight.get(session.session_id)
        msg_id = b"\x00" * 24 if wrong_id else (in_flight or b"")
        replies = session.send(ACK(msg_id=msg_id), handle.rid, handle.owner.auth_key)
        self._log("ACK", replies)
        if in_flight is None or wrong_id:
            assert error_of(replies[0]) == "NO_MSG", replies[0].tag  # MSG-4
            return
        assert replies[0].tag in ("OK", "MSG"), error_of(replies[0])
        del handle.in_flight[session.session_id]
        self._replies(session, replies)

    @rule(handle=queues)
    def off(self, handle: QueueHandle) -> None:
        if handle.deleted:
            return
        replies = handle.owner_session.send(OFF(), handle.rid, handle.owner.auth_key)
        self._log("OFF", replies)
        assert replies[0].tag == "COUNT", error_of(replies[0])
        assert replies[0].expect(COUNT).remaining == len(self._stored(handle))  # ROT-3
        handle.suspended = True

    @rule(handle=consumes(queues))
    def delete(self, handle: QueueHandle) -> None:
        if handle.deleted:
            return
        replies = handle.owner_session.send(DEL(), handle.rid, handle.owner.auth_key)
        self._log("DEL", replies)
        assert replies[-1].tag == "OK", error_of(replies[-1])
        handle.deleted = True
        self._drain()
        after = handle.owner_session.send(SUB(), handle.rid, handle.owner.auth_key)
        assert error_of(after[0]) == "AUTH"  # MSG-8

    @rule(session=sessions, data=st.binary(max_size=64))
    def garbage(self, session: LoopbackConnection, data: bytes) -> None:
        """Malformed bytes never crash the server and are answered with one ERR."""
        replies = session.send_raw(data)
        self._log("GARBAGE", replies)
        # Random bytes are an ERR, unless they happen to spell a PING (b"\x00\x00\x00PING").
        assert len(replies) == 1 and replies[0].tag in ("ERR", "PONG")

    @rule(session=sessions)
    def ping(self, session: LoopbackConnection) -> None:
        replies = session.send(PING())
        assert [r.tag for r in replies] == ["PONG"]

    @precondition(lambda self: len(self.handles) > 0)
    @rule(days=st.integers(0, 4))
    def advance_and_expire(self, days: int) -> None:
        before = {h.rid: len(self._messages(h)) for h in self.handles if not h.deleted}
        self.lb.clock.advance(days * DAY)
        self.lb.expire()
        self._drain()
        today = self.lb.clock.now() // DAY
        for handle in self.handles:
            if handle.deleted:
                continue
            exists = self.lb.store.get(handle.rid) is not None
            age = today - handle.updated_day
            contact = handle.mode is ConnectionMode.Contact
            period = MACHINE_CONFIG.contact_days if contact else \
                MACHINE_CONFIG.unsecured_invitation_days
            expirable = contact or not handle.secured
            if not expirable or age <= period:
                assert exists, f"queue removed inside its period (age {age})"  # RET-3
            elif exists:
                raise AssertionError(f"queue kept past its period (age {age}, {period})")
            if not exists:
                handle.deleted = True
                continue
            handle.expired += before[handle.rid] - len(self._messages(handle))
        self.trace.append(f"EXPIRE {days}")

    # --- invariants ------------------------------------------------------------------------

    def _stored(self, handle: QueueHandle) -> tuple[StoredRecord, ...]:
        return self.lb.store.records(handle.rid)

    def _messages(self, handle: QueueHandle) -> list[StoredRecord]:
        return [r for r in self._stored(handle) if r.kind is RecordKind.Message]

    @invariant()
    def no_message_delivered_twice_or_lost(self) -> None:
        for handle in self.handles:
            if handle.deleted:
                continue
            delivered = handle.delivered
            assert len(set(delivered)) == len(delivered), "a message was delivered twice"
            sent_iter = iter(handle.sent)
            assert all(any(d == s for s in sent_iter) for d in delivered), \
                "delivered messages are not the sent ones in order"
            in_flight = set(handle.in_flight.values())
            waiting = [r for r in self._messages(handle) if r.msg_id not in in_flight]
            missing = len(handle.sent) - len(delivered) - len(waiting)
            # Only expiry may take a message that was never delivered (RET-5); the mirror
            # then steps over it when it reads on (QENC-8).
            assert 0 <= missing <= handle.expired, f"{missing} messages lost"
            assert handle.skipped <= missing + handle.expired

    @invariant()
    def mandatory_part_is_never_dropped(self) -> None:
        for handle in self.handles:
            queue = None if handle.deleted else self.lb.store.get(handle.rid)
            if queue is None or queue.link is None:
                continue
            priorities = [p.priority for p in queue.link.blob.parts]
            assert priorities[0] is LinkPartPriority.Mandatory  # QUEUE-9
            assert priorities.count(LinkPartPriority.Mandatory) == 1

    @invariant()
    def secured_queues_keep_their_key(self) -> None:
        for handle in self.handles:
            queue = None if handle.deleted else self.lb.store.get(handle.rid)
            if queue is not None and handle.secured:
                assert handle.sender_key is not None
                assert queue.sender_key == handle.sender_key.public

    @precondition(lambda self: len(self.handles) > 0)
    @rule(handle=queues)
    def drain_with_get(self, handle: QueueHandle) -> None:
        """Read a queue to the end with GET and ACK from a fresh session."""
        if handle.deleted or handle.subscribed is not None:
            return
        session = handle.get_sessions[0] if handle.get_sessions else self.lb.connect()
        if session not in handle.get_sessions:
            handle.get_sessions.append(session)
        for _ in range(20):
            replies = session.send(GET(), handle.rid, handle.owner.auth_key)
            self._replies(session, replies)
            if replies[0].tag != "MSG":
                break
            acked = session.send(ACK(msg_id=replies[0].expect(MSG).msg_id), handle.rid,
                                 handle.owner.auth_key)
            assert acked[0].tag == "OK", error_of(acked[0])
            handle.in_flight.pop(session.session_id, None)


QueueMachine.TestCase.settings = settings(
    max_examples=30, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@dataclass(frozen=True)
class RunResult:
    """The outcome of one seeded run, as plain data."""

    seed: int
    ok: bool
    steps: int
    trace_digest: str
    seconds: float
    failure: str = ""


def run_seed(seed: int, *, examples: int = 5, steps: int = 40,
             machine_class: type[QueueMachine] = QueueMachine) -> RunResult:
    """Run a machine under one Hypothesis seed; the same seed gives the same trace."""
    traces: list[str] = []

    class Seeded(machine_class):  # type: ignore[valid-type,misc]
        def teardown(self) -> None:
            super().teardown()
            traces.extend(self.trace)
            traces.append("--")

    machine = hypothesis_seed(seed)(Seeded)
    started = time.perf_counter()
    failure = ""
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
            derandomize=False, print_blob=True,
            suppress_health_check=list(HealthCheck)))
    except Exception as exc:  # a failing run is data, not a crash: the caller reports it
        notes = "\n".join(getattr(exc, "__notes__", []))
        failure = f"{type(exc).__name__}: {exc}\n{notes}"
    digest = hashlib.sha256("\n".join(traces).encode()).hexdigest()
    return RunResult(seed, not failure, sum(1 for t in traces if t != "--"), digest,
                     time.perf_counter() - started, failure)
