"""The model's state machine: the commands of a queue's life. Sessions connect; owners create
queues (with links, notifiers, subscriptions), secure them (KEY, and SKEY from a sender), read
them (SUB, GET, ACK, to the end), suspend (OFF) and delete them; senders join through links
and send; the notification server subscribes (NSUB) and owners delete notifiers (NDEL);
commands come with the wrong credentials and as malformed bytes. Every answer is the oracle's.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from smpref.client.core import (
    AuthKeyPair,
    DhKeyPair,
    LinkKeys,
    OwnedQueue,
    make_link_blob,
)
from smpref.crypto.primitives import box_key
from smpref.independent.ratchet_mirror import RatchetMirror
from smpref.testing.loopback import LoopbackConnection
from smpref.testing.machine_base import counted
from smpref.testing.queue_exchanges import (
    LIMITS,
    MACHINE_CONFIG,
    MAX_QUEUES,
    MAX_SESSIONS,
    PICK,
    QueueHandle,
    error_of,
)
from smpref.testing.queue_links import QueueLinks
from smpref.testing.queue_oracle import Expected
from smpref.wire.messages import (
    ACK,
    DEL,
    GET,
    IDS,
    KEY,
    LSET,
    NDEL,
    NEW,
    NSUB,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    LinkData,
    MsgFlags,
    NtfRequest,
    OptionalLinkData,
    OptionalPartKind,
    QueueLink,
    QueueRequest,
    SubscriptionMode,
)
from smpref.wire.structs import Message

#: OFFs a run sends at most (read_to_the_end's included): a suspended queue takes no message
#: again (ROT-3) but keeps its place among the MAX_QUEUES live ones, so more would leave the run
#: without a queue to hold the conversations
MAX_SUSPENSIONS = 2


class QueueCommands(QueueLinks):
    """The rules of a queue's life, above links."""

    def __init__(self) -> None:
        super().__init__()
        #: the OFFs this run sent (see MAX_SUSPENSIONS)
        self.suspensions = 0

    @precondition(lambda self: len(self.sessions) < MAX_SESSIONS)
    @rule()
    @counted
    def connect(self) -> None:
        self.trace.append("CONNECT")
        self.sessions.append(self.lb.connect())

    @initialize(contact=st.booleans(), subscribe=st.booleans(), with_link=st.booleans())
    def first_queue(self, contact: bool, subscribe: bool, with_link: bool) -> None:
        """Every run starts with a queue, so that no run is spent without one; it has a
        notifier, subscribed from a second session (queues created later may have neither)."""
        self.create(
            s=0,
            contact=contact,
            with_link=with_link,
            optional_parts=1,
            with_ntf=True,
            subscribe=subscribe,
            x25519_auth=False,
        )
        self.connect()
        self._nsub(self.handles[0], self.sessions[1], right_key=True)

    @precondition(lambda self: len(self._live()) < MAX_QUEUES)
    @rule(
        s=PICK,
        contact=st.booleans(),
        with_link=st.booleans(),
        optional_parts=st.integers(0, 2),
        with_ntf=st.booleans(),
        subscribe=st.booleans(),
        x25519_auth=st.booleans(),
    )
    @counted
    def create(
        self,
        *,
        s: int,
        contact: bool,
        with_link: bool,
        optional_parts: int,
        with_ntf: bool,
        subscribe: bool,
        x25519_auth: bool,
    ) -> None:
        session = self._session(s)
        rnd = self.lb.client_random
        auth = AuthKeyPair.x25519(rnd) if x25519_auth else AuthKeyPair.ed25519(rnd)
        owner = OwnedQueue(auth, DhKeyPair.generate(rnd))
        mode = ConnectionMode.Contact if contact else ConnectionMode.Invitation
        link, link_data, queue_link = None, None, None
        if with_link:
            link = LinkKeys.generate(rnd)
            link_data = (
                LinkData(conn_req=b"request %d" % self.counter, user_data=b"u"),
                [
                    OptionalLinkData(kind=OptionalPartKind.Profile, data=b"p" * 300)
                    for _ in range(optional_parts)
                ],
            )
            queue_link = QueueLink(
                link_id=link.link_id,
                sender_id=rnd(24),
                enc_link_data=make_link_blob(link, rnd, *link_data),
            )
            assert len(queue_link.enc_link_data.encode()) <= MACHINE_CONFIG.invitation_blob_limit
        notifier_key = AuthKeyPair.ed25519(rnd) if with_ntf else None
        ntf_dh = DhKeyPair.generate(rnd) if notifier_key else None
        ntf = (
            NtfRequest(
                notifier_id=rnd(24),
                ntf_auth_key=notifier_key.public,
                rcv_ntf_dh_key=ntf_dh.public,
            )
            if notifier_key and ntf_dh
            else None
        )
        new = NEW(
            rcv_auth_key=auth.public,
            rcv_dh_key=owner.dh_key.public,
            basic_auth=MACHINE_CONFIG.basic_auth,
            sub_mode=SubscriptionMode.Subscribe if subscribe else SubscriptionMode.OnlyCreate,
            # a contact queue without a link or a notifier is asked for without a queue
            # request: an absent one creates a contact queue (DIV-5)
            queue_request=None if contact and not with_link and not with_ntf else QueueRequest(
                conn_mode=mode, queue_link=queue_link),
            ntf_request=ntf,
        )
        self.stats["NEW without a queue request"] += new.queue_request is None
        spec, expected = self.spec.new(
            session.session_id,
            "contact" if contact else "invitation",
            self.now,
            subscribe,
            ntf.notifier_id if ntf else None,
        )
        handle = QueueHandle(
            owner,
            session,
            spec,
            link,
            link_data,
            notifier_key=notifier_key,
            notifier_id=ntf.notifier_id if ntf else b"",
        )
        self._ids_of(handle, spec.records)
        replies = session.send(new, key=auth)
        assert replies[0].tag == "IDS", error_of(replies[0])
        ids = replies[0].expect(IDS)
        owner.created(ids)
        spec.rid = ids.rcv_id
        self._stored_blob(spec, queue_link.enc_link_data if queue_link else None)
        handle.server_dh = ids.rcv_public_dh_key.raw
        handle.independent = RatchetMirror(owner.dh_key.secret)
        assert ids.queue_mode is mode
        if ntf_dh is not None:
            assert ids.server_ntf_creds is not None, "NEW with a notifier: no credentials"
            handle.ntf_secret = box_key(ids.server_ntf_creds.srv_ntf_dh_key.raw, ntf_dh.secret)
        else:
            assert ids.server_ntf_creds is None, "notifier credentials for a queue without one"
        self.handles.append(handle)
        self._check("NEW", self._collect(session, replies), expected)

    @precondition(lambda self: self._live())
    @rule(q=PICK, same_key=st.booleans())
    @counted
    def key(self, q: int, same_key: bool) -> None:
        self._key(self._queue(q), same_key)

    def _key(self, handle: QueueHandle, same_key: bool) -> None:
        new_key = (
            handle.sender_key
            if same_key and handle.sender_key
            else AuthKeyPair.ed25519(self.lb.client_random)
        )
        expected = self.spec.secure(
            handle.spec, handle.owner_session.session_id, new_key.public.raw, self.now, allowed=True
        )
        self._as_owner("KEY", handle, KEY(sender_key=new_key.public), expected)
        self._secured(handle, new_key)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, own_key=st.booleans(), signed_by_other=st.booleans())
    @counted
    def skey(self, q: int, s: int, own_key: bool, signed_by_other: bool) -> None:
        """SKEY with the queue's key or a new one, signed by the key it carries or, to check
        AUTH-1, by another."""
        self._skey(self._queue(q), self._session(s), own_key, signed_by_other)

    def _skey(
        self, handle: QueueHandle, session: LoopbackConnection, own_key: bool, signed_by_other: bool
    ) -> None:
        rnd = self.lb.client_random
        key = handle.sender_key if own_key and handle.sender_key else AuthKeyPair.ed25519(rnd)
        if signed_by_other:
            expected = Expected.one(session.session_id, "ERR AUTH", "AUTH-1")
            self._exchange(
                "SKEY*",
                session,
                SKEY(sender_key=key.public),
                handle.owner.sender_id,
                AuthKeyPair.ed25519(rnd),
                expected=expected,
            )
            return
        expected = self.spec.secure(
            handle.spec, session.session_id, key.public.raw, self.now, allowed=not handle.contact
        )
        self._exchange(
            "SKEY",
            session,
            SKEY(sender_key=key.public),
            handle.owner.sender_id,
            key,
            expected=expected,
        )
        self._secured(handle, key)

    @precondition(lambda self: any(h.link for h in self._live()))
    @rule(q=PICK, s=PICK, how=st.sampled_from(["SKEY", "LGET", "KEY"]))
    @counted
    def join_by_link(self, q: int, s: int, how: str) -> None:
        """A sender joins through the link as a client does: reads it, secures the queue (SKEY,
        LGET with a key, or the owner's KEY), reads it again, sends, reads it again. What the
        link shows at each point is LINK-11's: an invitation's data goes at securing, or at the
        first SEND after LGET secured it; a contact's stays."""
        linked = [h for h in self._live() if h.link is not None]
        handle, session = linked[q % len(linked)], self._session(s)
        self._lget(handle, session, with_key=False, other_key=False)
        if how == "SKEY":
            self._skey(handle, session, own_key=False, signed_by_other=False)
        elif how == "KEY":
            self._key(handle, same_key=False)
        else:
            self._lget(handle, session, with_key=True, other_key=False)
            # another would-be sender comes second: its key is not the queue's (LINK-7)
            self._lget(handle, session, with_key=True, other_key=True)
        self._lget(handle, session, with_key=False, other_key=False)
        if not handle.spec.deleted:  # read back: the key that secured it signs a SEND
            self._send(handle, session, handle.sender_key, notify=False)
            self.stats["read back " + how] += 1
            self._lget(handle, session, with_key=False, other_key=False)

    def _send(
        self,
        handle: QueueHandle,
        session: LoopbackConnection,
        key: AuthKeyPair | None,
        notify: bool,
        label: str = "SEND",
        *,
        size: int = 0,
    ) -> None:
        """A SEND of a new body (``size`` bytes long when given), predicted and checked."""
        body = self._body()
        body += b"x" * max(0, size - len(body))
        expected = self.spec.send(
            handle.spec,
            session.session_id,
            key.public.raw if key else None,
            body,
            notify=notify,
            now=self.now,
        )
        self._ids_of(handle, handle.spec.records)
        replies = self._exchange(
            label,
            session,
            SEND(flags=MsgFlags(notification=notify), body=body),
            handle.owner.sender_id,
            key,
            expected=expected,
        )
        if replies[0].tag == "OK":
            handle.sent.append(body)
            self.stats["messages sent"] += 1
            if handle.link_dropped_on_send:
                handle.link_data, handle.link_dropped_on_send = None, False  # LINK-11
        elif error_of(replies[0]) == "QUOTA":
            self.stats["quota answers"] += 1

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, signed=st.booleans(), notify=st.booleans())
    @counted
    def send(self, q: int, s: int, signed: bool, notify: bool) -> None:
        """SEND signed with the queue's sender key, or unsigned (MSG-1)."""
        handle = self._queue(q)
        self._send(handle, self._session(s), handle.sender_key if signed else None, notify)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, count=st.integers(1, 6), notify=st.booleans())
    @counted
    def send_burst(self, q: int, s: int, count: int, notify: bool) -> None:
        """Several messages in a row, as the sender would send them: quotas, key updates,
        notifications."""
        handle = self._queue(q)
        for _ in range(count):
            self._send(handle, self._session(s), handle.sender_key, notify=notify)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK)
    @counted
    def send_with_wrong_key(self, q: int, s: int) -> None:
        """SEND signed with a key that is not the queue's: ERR AUTH, nothing stored (MSG-1)."""
        handle = self._queue(q)
        self._send(
            handle,
            self._session(s),
            AuthKeyPair.ed25519(self.lb.client_random),
            notify=False,
            label="SEND*",
        )

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK)
    @counted
    def sub(self, q: int, s: int) -> None:
        handle, session = self._queue(q), self._session(s)
        expected = self.spec.sub(handle.spec, session.session_id, handle.rid, self.now)
        self._exchange("SUB", session, SUB(), handle.rid, handle.owner.auth_key, expected=expected)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK)
    @counted
    def get(self, q: int, s: int) -> None:
        handle, session = self._queue(q), self._session(s)
        expected = self.spec.get(handle.spec, session.session_id)
        self._exchange("GET", session, GET(), handle.rid, handle.owner.auth_key, expected=expected)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, which=st.sampled_from(["in flight", "empty", "below", "above"]))
    @counted
    def ack(self, q: int, s: int, which: str) -> None:
        """ACK of the record in flight by its ID, with an empty ID (matches any), or with an ID
        no record has (MSG-4)."""
        handle, session = self._queue(q), self._session(s)
        in_flight = handle.spec.in_flight.get(session.session_id)
        msg_id = {
            "in flight": in_flight.msg_id if in_flight and in_flight.msg_id else b"",
            "empty": b"",
            "below": b"\x00" * 24,
            "above": b"\xff" * 24,
        }[which]
        expected = self.spec.ack(handle.spec, session.session_id, msg_id)
        self._exchange(
            "ACK", session, ACK(msg_id=msg_id), handle.rid, handle.owner.auth_key, expected=expected
        )

    def _read_all(self, handle: QueueHandle, s: int) -> None:
        """The owner reads a queue to the end, as an agent does: through its subscription when
        it has one, else with GET and ACK from a session."""
        spec = handle.spec
        session = next(
            (c for c in self.sessions if c.session_id == spec.subscriber), None
        ) or self._session(s)
        subscribed = spec.subscriber == session.session_id
        for _ in range(2 * LIMITS.quota + 4):
            if spec.deleted:
                return
            if not subscribed:
                expected = self.spec.get(spec, session.session_id)
                self._exchange(
                    "GET", session, GET(), handle.rid, handle.owner.auth_key, expected=expected
                )
            in_flight = spec.in_flight.get(session.session_id)
            if in_flight is None or (not subscribed and in_flight not in spec.records):
                return
            expected = self.spec.ack(spec, session.session_id, in_flight.msg_id or b"")
            self._exchange(
                "ACK",
                session,
                ACK(msg_id=in_flight.msg_id or b""),
                handle.rid,
                handle.owner.auth_key,
                expected=expected,
            )

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, suspend=st.booleans())
    @counted
    def read_to_the_end(self, q: int, s: int, suspend: bool) -> None:
        """The owner reads a queue to the end; with ``suspend``, after OFF (ROT-3, ROT-4),
        which a sender has just raced with two messages, so that ``last`` goes to the last
        record and not to the first of several."""
        handle = self._queue(q)
        if suspend and self.suspensions < MAX_SUSPENSIONS:
            for _ in range(2):
                self._send(handle, self._session(s), handle.sender_key, notify=False)
            self.off(q)
        self._read_all(handle, s)
        if handle.spec.suspended and not handle.spec.records:
            self.stats["suspended queues drained"] += 1

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, count=st.integers(1, 6), notify=st.booleans())
    @counted
    def conversation(self, q: int, s: int, count: int, notify: bool) -> None:
        """What a queue is for: its sender sends a few messages, its owner reads them all."""
        handle = self._queue(q)
        for _ in range(count):
            self._send(handle, self._session(s), handle.sender_key, notify=notify)
        self._read_all(handle, s)

    @precondition(lambda self: self._live() and self.suspensions < MAX_SUSPENSIONS)
    @rule(q=PICK)
    @counted
    def off(self, q: int) -> None:
        """OFF (ROT-3), read back: a suspended queue takes no message."""
        self.suspensions += 1
        handle = self._queue(q)
        expected = self.spec.off(handle.spec, handle.owner_session.session_id)
        self._as_owner("OFF", handle, OFF(), expected)
        # read back: a suspended queue takes no message (ROT-3)
        self._send(handle, handle.owner_session, handle.sender_key, notify=False,
                   label="SEND after OFF")
        self.stats["read back OFF"] += 1

    # at most twice a run: a deleted queue takes its messages with it, and the runs need
    # queues that live long enough to fill to their quota and to expire
    @precondition(lambda self: self._live() and self.fired["delete"] < 2)
    @rule(q=PICK, s=PICK, unread=st.integers(0, 3))
    @counted
    def delete(self, q: int, s: int, unread: int) -> None:
        """DEL, after the sender sent ``unread`` more messages: a queue deleted with messages
        in it, and with its subscriptions, takes them all (MSG-8)."""
        handle = self._queue(q)
        for _ in range(unread):
            self._send(handle, self._session(s), handle.sender_key, notify=False)
        pending = sum(r.kind == "M" for r in handle.spec.records)
        self.stats["messages deleted with their queue"] += pending
        expected = self.spec.delete(handle.spec, handle.owner_session.session_id, handle.rid)
        self._as_owner("DEL", handle, DEL(), expected)
        again = Expected.one(handle.owner_session.session_id, "ERR AUTH", "AUTH-3").note("MSG-8")
        self.stats["read back DEL"] += 1
        self._as_owner("SUB", handle, SUB(), again)

    @precondition(lambda self: any(h.spec.ntf_subscriber for h in self._live()))
    @rule(q=PICK, send_first=st.booleans())
    @counted
    def notifier_reconnects(self, q: int, send_first: bool) -> None:
        """The notification server subscribes again from a new connection: the old one gets
        END (CMD-33), and the next notified message reaches only the new one (MSG-7)."""
        subscribed = [h for h in self._live() if h.spec.ntf_subscriber]
        handle = subscribed[q % len(subscribed)]
        if send_first:
            self._send(handle, self.sessions[0], handle.sender_key, notify=True)
        if len(self.sessions) < MAX_SESSIONS:
            self.connect()
        others = [c for c in self.sessions if c.session_id != handle.spec.ntf_subscriber]
        self._nsub(handle, others[-1], right_key=True)
        self._send(handle, self.sessions[0], handle.sender_key, notify=True)

    @precondition(lambda self: any(h.notifier_key for h in self._live()))
    @rule(q=PICK, s=PICK, right_key=st.booleans())
    @counted
    def nsub(self, q: int, s: int, right_key: bool) -> None:
        """NSUB with the notifier key, or another (AUTH-1)."""
        notified = [h for h in self.handles if h.notifier_key is not None]
        self._nsub(notified[q % len(notified)], self._session(s), right_key)

    def _nsub(self, handle: QueueHandle, session: LoopbackConnection, right_key: bool) -> None:
        assert handle.notifier_key is not None
        key = handle.notifier_key if right_key else AuthKeyPair.ed25519(self.lb.client_random)
        expected = (
            self.spec.nsub(handle.spec, session.session_id)
            if right_key
            # another key (AUTH-1), or a notifier ID that names nothing now (AUTH-3)
            else Expected.one(session.session_id, "ERR AUTH", "AUTH-1" if (
                handle.spec.notifier_id and not handle.spec.deleted) else "AUTH-3")
        )
        self._exchange("NSUB", session, NSUB(), handle.notifier_id, key, expected=expected)

    # at most twice a run: a queue's notifier, once deleted, is gone for good, and the runs
    # need notifications (MSG-7)
    @precondition(lambda self: self._live() and self.fired["ndel"] < 2)
    @rule(q=PICK)
    @counted
    def ndel(self, q: int) -> None:
        handle = self._queue(q)
        expected = self.spec.ndel(handle.spec, handle.owner_session.session_id)
        self._as_owner("NDEL", handle, NDEL(), expected)
        if handle.notifier_key is not None:  # read back: its credentials subscribe no more
            self._nsub(handle, handle.owner_session, right_key=True)
            self.stats["read back NDEL"] += 1

    @precondition(lambda self: self._live())
    @rule(
        q=PICK,
        s=PICK,
        credential=st.sampled_from(["none", "other key", "sender ID"]),
    )
    @counted
    def unauthorized(self, q: int, s: int, credential: str) -> None:
        """Every recipient command without its key, with another key, or naming the queue by
        its sender ID: refused (TRANS-7, AUTH-1, AUTH-2), and nothing changes."""
        for command in ("KEY", "LSET", "NDEL", "SUB", "ACK", "GET", "OFF", "DEL"):
            self._unauthorized(self._queue(q), self._session(s), command, credential)

    def _unauthorized(self, handle: QueueHandle, session: LoopbackConnection, command: str,
                      credential: str) -> None:
        rnd = self.lb.client_random
        message: Message = {
            "KEY": lambda: KEY(sender_key=AuthKeyPair.ed25519(rnd).public),
            "LSET": lambda: LSET(
                enc_link_data=make_link_blob(
                    LinkKeys.generate(rnd), rnd, LinkData(conn_req=b"x", user_data=b""), []
                )
            ),
            "NDEL": NDEL,
            "SUB": SUB,
            "ACK": lambda: ACK(msg_id=b""),
            "GET": GET,
            "OFF": OFF,
            "DEL": DEL,
        }[command]()
        entity = handle.owner.sender_id if credential == "sender ID" else handle.rid
        key = {
            "none": None,
            "other key": AuthKeyPair.ed25519(rnd),
            "sender ID": handle.owner.auth_key,
        }[credential]
        error = "ERR CMD NO_AUTH" if credential == "none" else "ERR AUTH"
        # the credential rule (TRANS-7), a key that does not verify (AUTH-1), or an ID that
        # names no queue in the recipient's role (AUTH-3); checked in AUTH-2's order
        expected = Expected.one(session.session_id, error, {
            "none": "TRANS-7", "other key": "AUTH-1", "sender ID": "AUTH-3"}[credential]
        ).note("AUTH-2")
        self._exchange(command + "*", session, message, entity, key, expected=expected)

    # a few a run: malformed bytes are answered alike, and the steps go to the conversations
    @precondition(lambda self: self.fired["garbage"] < 3)
    @rule(s=PICK, data=st.binary(max_size=64))
    @counted
    def garbage(self, s: int, data: bytes) -> None:
        """Malformed bytes never crash the server and are answered with one ERR."""
        session = self._session(s)
        replies = session.send_raw(data)
        self.trace.append(f"GARBAGE -> {[r.tag for r in replies]}")
        # Random bytes are an ERR, unless they happen to spell a PING (b"\x00\x00\x00PING").
        assert len(replies) == 1 and replies[0].tag in ("ERR", "PONG")
        assert not self._collect(None, []), "garbage made the server push to a session"

    # a few a run: PING is answered alike, and the steps go to the conversations
    @precondition(lambda self: self.fired["ping"] < 2)
    @rule(s=PICK)
    @counted
    def ping(self, s: int) -> None:
        session = self._session(s)
        self._exchange(
            "PING",
            session,
            PING(),
            b"",
            None,
            expected=Expected.one(session.session_id, "PONG", "CMD-22"),
        )
