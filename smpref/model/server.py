"""The reference model of an SMP server: pure, deterministic, sans-IO.

Theory of operation
-------------------
A :class:`Server` owns a :class:`~smpref.model.queue_store.QueueStore`, an injected clock and an
injected random source, and any number of sessions. A transport hands it the bytes of one
transmission at a time, with the session they arrived on (:meth:`Server.receive`); it returns
the transmissions to send, each addressed to a session (:class:`Outgoing`): the response to the
command, and events pushed to other sessions (MSG to a subscriber, END to a replaced one, NMSG
to a notifier). :meth:`Server.sweep` runs one slice of the retention, message-expiry and
blob-pressure sweep (RET-7, QUEUE-9); :meth:`Server.expire` runs a whole cycle of it.

The store's changes are committed once per transmission, before the answer is returned
(STORE-7); a store that cannot write makes that one transmission fail with ``ERR STORE``.

Processing order for one transmission (TRANS-7, AUTH-2):

1. decode the transmission (``ERR BLOCK``) and the command (``ERR CMD UNKNOWN`` / ``SYNTAX``);
2. the command's credential rule (``ERR CMD NO_AUTH`` / ``HAS_AUTH`` / ``NO_ENTITY``);
3. find the queue and verify the authorization, against a dummy key if there is no queue
   (``ERR AUTH``), at the same cost either way;
4. the command's own rules, which may answer any error of its definition.

Nothing here touches a socket, the wall clock or ``os.urandom``; the same code runs in tests,
state machines, the TLS server, the conformance oracle and Spark tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from smpref.crypto import ratchet
from smpref.crypto.auth import verify
from smpref.crypto.link_crypto import seal_link_response
from smpref.crypto.primitives import CryptoError, box_key, secretbox, sha256, x25519_public
from smpref.errors import CredentialError, StoreError, UnknownCommandError, WireError
from smpref.model.config import DAY, ServerConfig
from smpref.model.environment import Clock, Random
from smpref.model.queue_store import QueueStore
from smpref.model.records import Link, Notifier, QueueRecord, StoredRecord
from smpref.wire.keys import KeyAlgorithm, PublicKey
from smpref.wire.messages import (
    COUNT,
    END,
    ERR,
    IDS,
    LINK,
    MSG,
    NMSG,
    OK,
    PONG,
    CommandError,
    ConnectionMode,
    ErrorType,
    LinkBlob,
    LinkPartPriority,
    NtfMetadata,
    QueueLink,
    RcvMessage,
    RcvMsgFlags,
    RecordKind,
    ServerNtfCreds,
    SubscriptionMode,
)
from smpref.wire.schema import decode_message
from smpref.wire.structs import Message
from smpref.wire.transmission import Transmission, check_credentials, pad

ID_SIZE = 24  # queue, sender, notifier and message IDs (QUEUE-3)
LINK_ID_SIZE = 32  # SHA-256(k) (LINK-2)
#: MSG bodies are padded to this before sealing, as deployed (smp-wire §3.10, QENC-7)
PADDED_RCV_MESSAGE = 16106
NMSG_PADDED = 128


class ProtocolError(Exception):
    """A command fails with one SMP error; ``error`` is an ErrorType value."""

    def __init__(self, error: Any) -> None:
        super().__init__(error)
        self.error = error


def _err(tag: str) -> ProtocolError:
    return ProtocolError(getattr(ErrorType, tag)())


def _cmd_err(name: str) -> ProtocolError:
    return ProtocolError(ErrorType.CMD(error=CommandError[name]))


AUTH = "AUTH"


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A transmission the server sends: to which session, and what."""

    session_id: bytes
    corr_id: bytes
    entity_id: bytes
    message: Message

    def transmission(self) -> Transmission:
        return Transmission(b"", self.corr_id, self.entity_id, self.message.encode())

    def encode(self) -> bytes:
        return self.transmission().encode()


@dataclass
class Session:
    """One client connection: its ID (tls-unique), its X25519 key, its subscriptions.

    ``delivered`` maps a recipient ID to the message ID in flight on this session (sent in MSG,
    not yet acknowledged); ``modes`` records whether the session SUBscribed to or used GET on a
    queue (MSG-3).
    """

    session_id: bytes
    secret: bytes
    modes: dict[bytes, str] = field(default_factory=dict)
    delivered: dict[bytes, bytes] = field(default_factory=dict)
    notifications: set[bytes] = field(default_factory=set)


Handler = Callable[["Server", Session, Transmission, Any], list[Outgoing]]


class Server:
    """The model server. See the module docstring for the theory of operation."""

    def __init__(self, config: ServerConfig, store: QueueStore, clock: Clock,
                 random: Random) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.random = random
        self.sessions: dict[bytes, Session] = {}
        self.subscribers: dict[bytes, bytes] = {}  # recipient ID -> session ID (MSG-2)
        self.notifier_subscribers: dict[bytes, bytes] = {}  # recipient ID -> session ID
        self.sweep_state = SweepState()
        #: what the store reported when a command or a sweep failed (for the server's log)
        self.store_errors: list[str] = []

    # --- sessions --------------------------------------------------------------------------

    def open_session(self, session_id: bytes, secret: bytes) -> Session:
        """Register a connection: its session ID and its X25519 secret from the handshake."""
        session = Session(session_id, secret)
        self.sessions[session_id] = session
        return session

    def close_session(self, session_id: bytes) -> None:
        """Forget a connection; its subscriptions end, its in-flight messages stay queued."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            return
        for rid in session.modes:
            if self.subscribers.get(rid) == session_id:
                del self.subscribers[rid]
        for rid in session.notifications:
            if self.notifier_subscribers.get(rid) == session_id:
                del self.notifier_subscribers[rid]

    # --- the entry point -------------------------------------------------------------------

    def receive(self, session_id: bytes, data: bytes) -> list[Outgoing]:
        """Process one transmission received on a session (TRANS-7, AUTH-2)."""
        session = self.sessions[session_id]
        try:
            tx = Transmission.decode(data)
        except WireError:
            return [self._error(session_id, b"", b"", _err("BLOCK").error)]
        reply = (session_id, tx.corr_id, tx.entity_id)
        if tx.service_signature is not None:
            return [self._error(*reply, _err("SERVICE").error)]
        try:
            message = decode_message(tx.command, kind="command")
            check_credentials(message.DEF, tx, message)
        except UnknownCommandError:
            return [self._error(*reply, _cmd_err("UNKNOWN").error)]
        except CredentialError as exc:
            return [self._error(*reply, _cmd_err(exc.smp_error.split()[1]).error)]
        except WireError:
            return [self._error(*reply, _cmd_err("SYNTAX").error)]
        try:
            try:
                out = _HANDLERS[message.TAG](self, session, tx, message)
            except ProtocolError as exc:
                # An error may follow a change that must last: SEND's quota marker (MSG-6).
                out = [self._error(*reply, exc.error)]
            self.store.commit()
            return out
        except StoreError as exc:
            self.store.rollback()
            self.store_errors.append(str(exc))
            return [self._error(*reply, ErrorType.STORE(message="storage failure"))]

    def _error(self, session_id: bytes, corr_id: bytes, entity_id: bytes,
               error: Any) -> Outgoing:
        return Outgoing(session_id, corr_id, entity_id, ERR(error=error))

    def _reply(self, session: Session, tx: Transmission, message: Message,
               entity_id: bytes | None = None) -> Outgoing:
        entity = tx.entity_id if entity_id is None else entity_id
        return Outgoing(session.session_id, tx.corr_id, entity, message)

    # --- helpers ---------------------------------------------------------------------------

    def today(self) -> int:
        return self.clock.now() // DAY

    def _authorized(self, session: Session, tx: Transmission, key: PublicKey | None) -> bool:
        return verify(key, tx.authorization, tx.authorized_bytes(session.session_id),
                      tx.corr_id, session.secret)

    def _recipient_queue(self, session: Session, tx: Transmission) -> QueueRecord:
        """The queue of a recipient command, authorized by its recipient key (AUTH-2)."""
        queue = self.store.find("recipient", tx.entity_id)
        key = queue.recipient_key if queue else None
        if not self._authorized(session, tx, key) or queue is None:
            raise _err(AUTH)
        return queue

    def _touch(self, queue: QueueRecord) -> QueueRecord:
        """Move ``updated_at`` to today (QUEUE-5); at most one write a day."""
        today = self.today()
        if queue.updated_at == today:
            return queue
        return replace(queue, updated_at=today)

    def _new_id(self, size: int = ID_SIZE) -> bytes:
        while True:  # a collision of 24 random bytes does not happen; stay correct anyway
            candidate = self.random(size)
            if not self.store.id_taken(candidate):
                return candidate

    # --- delivery --------------------------------------------------------------------------

    def _seal_record(self, queue: QueueRecord, record: StoredRecord, *, last: bool) -> bytes:
        """MSG's encBody: RcvMessage padded and boxed with rcvDhSecret, nonce = msgId."""
        body = RcvMessage(
            timestamp=record.timestamp,
            flags=RcvMsgFlags(notification=record.notification, last=last),
            record=ratchet.decode_record(record.data),
        ).encode()
        return secretbox(queue.rcv_dh_secret, record.msg_id, pad(body, PADDED_RCV_MESSAGE))

    def _msg(self, session: Session, queue: QueueRecord, corr_id: bytes) -> Outgoing | None:
        """Deliver the queue's first record to a session, if there is one (MSG-2)."""
        records = self.store.records(queue.recipient_id)
        if not records:
            return None
        first = records[0]
        last = queue.suspended and len(records) == 1  # ROT-4
        session.delivered[queue.recipient_id] = first.msg_id
        message = MSG(msg_id=first.msg_id,
                                       enc_body=self._seal_record(queue, first, last=last))
        return Outgoing(session.session_id, corr_id, queue.recipient_id, message)

    def _push_to_subscriber(self, queue: QueueRecord) -> list[Outgoing]:
        """After a record is added: a subscriber with nothing in flight gets it."""
        sid = self.subscribers.get(queue.recipient_id)
        session = self.sessions.get(sid) if sid else None
        if session is None or queue.recipient_id in session.delivered:
            return []
        out = self._msg(session, queue, b"")
        return [out] if out else []

    def _enqueue(self, queue: QueueRecord, kind: Any, data: bytes, notification: bool
                 ) -> StoredRecord:
        record = StoredRecord(self._new_id(), self.clock.now(), notification, kind, data)
        self.store.append(queue.recipient_id, record)
        return record

    # --- sweeps ----------------------------------------------------------------------------

    def expire(self) -> list[Outgoing]:
        """One whole sweep cycle: every slice, from a fresh start (RET-7)."""
        self.sweep_state = SweepState()
        out: list[Outgoing] = []
        done = False
        while not done:
            more, done = self.sweep()
            out += more
        return out

    def sweep(self, limit: int = 256) -> tuple[list[Outgoing], bool]:
        """One slice of the sweep over at most ``limit`` queues (RET-7); whether the cycle
        ended. The scan phase expires queues (RET-1..RET-6) and messages (RET-5) and measures
        the optional blob bytes by day; a relief phase follows when blobs are above the high
        water mark (QUEUE-9). A queue the store cannot read or write is skipped; the others
        are swept."""
        state = self.sweep_state
        rids = self.store.queue_ids_after(state.cursor, limit)
        out: list[Outgoing] = []
        today, now = self.today(), self.clock.now()
        for rid in rids:
            try:
                queue = self.store.get(rid)
                if queue is not None and state.relieving:
                    self._relieve(queue)
                elif queue is not None:
                    out += self._scan(queue, today, now)
                self.store.commit()
            except StoreError as exc:
                self.store.rollback()
                self.store_errors.append(str(exc))
        if len(rids) == limit:
            state.cursor = rids[-1]
            return out, False
        if not state.relieving and self.store.blob_bytes() > self.config.blob_bytes_high_water:
            self.sweep_state = state.relief_plan(
                self.store.blob_bytes() - self.config.blob_bytes_low_water)
            return out, False
        self.sweep_state = SweepState()
        return out, True

    def _scan(self, queue: QueueRecord, today: int, now: int) -> list[Outgoing]:
        if self._queue_expired(queue, today):
            return self._delete_queue(queue, except_session=None)
        if self.config.message_ttl_seconds:
            self._expire_messages(queue, now - self.config.message_ttl_seconds)
        gain = _optional_bytes(queue)
        if gain:
            by_day = self.sweep_state.optional_by_day
            by_day[queue.updated_at] = by_day.get(queue.updated_at, 0) + gain
        return []

    def _queue_expired(self, queue: QueueRecord, today: int) -> bool:
        """RET-1, RET-2, RET-3: strictly older than the period, never inside it."""
        age = today - queue.updated_at
        if queue.mode is ConnectionMode.Contact:
            return age > self.config.contact_days
        return not queue.secured and age > self.config.unsecured_invitation_days

    def _expire_messages(self, queue: QueueRecord, cutoff: int) -> None:
        """RET-5, QENC-9: drop Message records older than cutoff from the head; keep key
        records; stop at a quota marker or the first younger message. A record in flight is
        not dropped, so that its ACK still succeeds."""
        in_flight = {s.delivered.get(queue.recipient_id) for s in self.sessions.values()}
        for record in self.store.records(queue.recipient_id):
            if record.kind in (RecordKind.Initial, RecordKind.Update):
                continue
            if record.kind is RecordKind.Quota or record.timestamp >= cutoff:
                break
            if record.msg_id in in_flight:
                break
            self.store.remove(queue.recipient_id, record.msg_id)
        self._reopen_if_empty(queue)

    def _reopen_if_empty(self, queue: QueueRecord) -> QueueRecord:
        """MSG-6: the quota holds until the queue is empty."""
        current = self.store.get(queue.recipient_id) or queue
        if not current.can_write and not self.store.records(current.recipient_id):
            current = replace(current, can_write=True)
            self.store.put(current)
        return current

    def _delete_queue(self, queue: QueueRecord, except_session: bytes | None
                      ) -> list[Outgoing]:
        """DEL and expiry: remove the queue; other subscribers get END (CMD-21)."""
        out = []
        rid = queue.recipient_id
        for sessions in (self.subscribers, self.notifier_subscribers):
            sid = sessions.pop(rid, None)
            if sid is not None and sid != except_session and sid in self.sessions:
                entity = rid if sessions is self.subscribers else (
                    queue.notifier.notifier_id if queue.notifier else rid)
                out.append(Outgoing(sid, b"", entity, END()))
        for session in self.sessions.values():
            session.modes.pop(rid, None)
            session.delivered.pop(rid, None)
            session.notifications.discard(rid)
        self.store.delete(rid)
        return out

    # --- blob pressure (QUEUE-9) -----------------------------------------------------------

    def _relieve(self, queue: QueueRecord) -> None:
        """Drop the optional parts of one queue's blob if the relief plan says so (QUEUE-9):
        queues updated before the cutoff day, then those of the cutoff day in ID order while
        its budget lasts; never below the low water mark, never a mandatory part."""
        state = self.sweep_state
        gain = _optional_bytes(queue)
        if not gain or self.store.blob_bytes() <= self.config.blob_bytes_low_water:
            return
        if queue.updated_at > state.cutoff_day:
            return
        if queue.updated_at == state.cutoff_day:
            if state.cutoff_budget <= 0:
                return
            state.cutoff_budget -= gain
        assert queue.link is not None
        self.store.put(replace(queue, link=_link(queue.link.link_id, _mandatory(queue.link.blob),
                                                 queue.link.drop_on_send)))


@dataclass
class SweepState:
    """Where a sweep cycle is (RET-7): its phase, its cursor, and what the scan measured.

    ``optional_by_day``: bytes that dropping optional blob parts would free, by the queues'
    ``updated_at``. A relief phase drops every queue updated before ``cutoff_day`` and, on
    that day, queues in ID order until ``cutoff_budget`` bytes are freed (QUEUE-9).
    """

    cursor: bytes | None = None
    optional_by_day: dict[int, int] = field(default_factory=dict)
    relieving: bool = False
    cutoff_day: int = -1
    cutoff_budget: int = 0

    def relief_plan(self, excess: int) -> SweepState:
        """The relief phase that frees ``excess`` bytes, least recently updated first."""
        freed = 0
        days = sorted(self.optional_by_day)
        for day in days:
            if freed + self.optional_by_day[day] >= excess:
                return SweepState(relieving=True, cutoff_day=day, cutoff_budget=excess - freed)
            freed += self.optional_by_day[day]
        last = days[-1] if days else -1
        return SweepState(relieving=True, cutoff_day=last,
                          cutoff_budget=self.optional_by_day.get(last, 0))


def _optional_bytes(queue: QueueRecord) -> int:
    """What dropping a queue's optional blob parts frees (0 when it has none)."""
    if queue.link is None or len(queue.link.blob.parts) == 1:
        return 0
    return queue.link.blob_size - len(_mandatory(queue.link.blob).encode())


def _mandatory(blob: Any) -> Any:
    """The blob with its optional parts dropped (QUEUE-9)."""
    return LinkBlob(parts=tuple(p for p in blob.parts
                                if p.priority is LinkPartPriority.Mandatory))


def _link(link_id: bytes, blob: Any, drop_on_send: bool = False) -> Link:
    return Link(link_id, blob, len(blob.encode()), drop_on_send)


def _check_blob(config: ServerConfig, mode: Any, blob: Any) -> None:
    """QUEUE-6, QUEUE-8: size limit by queue type; exactly one mandatory part, first."""
    limit = (config.contact_blob_limit if mode is ConnectionMode.Contact
             else config.invitation_blob_limit)
    if len(blob.encode()) > limit:
        raise _err("LARGE_MSG")
    priorities = [p.priority for p in blob.parts]
    if priorities[0] is not LinkPartPriority.Mandatory or priorities.count(
            LinkPartPriority.Mandatory) != 1:
        raise _cmd_err("SYNTAX")


# --- command handlers ------------------------------------------------------------------------


def _new(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    """NEW (CMD-10, CMD-11, CMD-12, QUEUE-1..QUEUE-4, QENC-1)."""
    config = server.config
    authorized = server._authorized(session, tx, cmd.rcv_auth_key)
    if config.basic_auth is not None and cmd.basic_auth != config.basic_auth:
        raise _err(AUTH)
    if not authorized:
        raise _err(AUTH)
    request = cmd.queue_request
    mode = ConnectionMode.Contact if request is None else request.conn_mode  # DIV-5
    link = request.queue_link if request is not None else None
    if link is not None:
        if len(link.link_id) != LINK_ID_SIZE or len(link.sender_id) != ID_SIZE:
            raise _cmd_err("SYNTAX")
        _check_blob(config, mode, link.enc_link_data)
    ntf = cmd.ntf_request
    if ntf is not None and len(ntf.notifier_id) != ID_SIZE:
        raise _cmd_err("SYNTAX")
    chosen = [i for i in (link.link_id if link else None, link.sender_id if link else None,
                          ntf.notifier_id if ntf else None) if i is not None]
    if len(set(chosen)) != len(chosen) or any(server.store.id_taken(i) for i in chosen):
        raise _err(AUTH)  # QUEUE-3
    rid = server._new_id()
    sender_id = link.sender_id if link else server._new_id()
    server_secret = server.random(32)
    owner_key = cmd.rcv_dh_key.raw
    ntf_secret = server.random(32) if ntf is not None else b""
    try:  # QUEUE-10: a low-order DH key is malformed
        rcv_dh_secret = box_key(owner_key, server_secret)
        ntf_dh_secret = box_key(ntf.rcv_ntf_dh_key.raw, ntf_secret) if ntf else b""
    except CryptoError:
        raise _cmd_err("SYNTAX") from None
    state, initial = ratchet.start(owner_key, server.random)
    notifier, ntf_creds = None, None
    if ntf is not None:
        notifier = Notifier(ntf.notifier_id, ntf.ntf_auth_key, ntf_dh_secret)
        ntf_creds = ServerNtfCreds(
            notifier_id=ntf.notifier_id,
            srv_ntf_dh_key=PublicKey(KeyAlgorithm.X25519, x25519_public(ntf_secret)))
    queue = QueueRecord(
        recipient_id=rid,
        recipient_key=cmd.rcv_auth_key,
        rcv_dh_secret=rcv_dh_secret,
        owner_key=owner_key,
        server_dh_public=x25519_public(server_secret),
        sender_id=sender_id,
        mode=mode,
        ratchet=state,
        updated_at=server.today(),
        link=_link(link.link_id, link.enc_link_data) if link else None,
        notifier=notifier,
    )
    server.store.put(queue)
    server._enqueue(queue, RecordKind.Initial, initial, notification=False)
    ids = IDS(
        rcv_id=rid, snd_id=sender_id,
        rcv_public_dh_key=PublicKey(KeyAlgorithm.X25519, queue.server_dh_public),
        queue_mode=mode, link_id=link.link_id if link else None, service_id=None,
        server_ntf_creds=ntf_creds)
    out = [server._reply(session, tx, ids, entity_id=b"")]
    if cmd.sub_mode is SubscriptionMode.Subscribe:
        out += _subscribe(server, session, queue, corr_id=None)
    return out


def _secure(server: Server, queue: QueueRecord, key: PublicKey, *, by_lget: bool
            ) -> QueueRecord:
    """KEY, SKEY and LGET with a key (CMD-13, CMD-14, LINK-7): the same key again is fine,
    another key is AUTH. Securing drops an invitation's link data (LINK-11)."""
    if queue.sender_key is not None:
        if queue.sender_key != key:
            raise _err(AUTH)
        return queue
    link = queue.link
    if link is not None and queue.mode is ConnectionMode.Invitation:
        link = replace(link, drop_on_send=True) if by_lget else None
    secured = replace(server._touch(queue), sender_key=key, link=link)
    server.store.put(secured)
    return secured


def _key(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    _secure(server, queue, cmd.sender_key, by_lget=False)
    return [server._reply(session, tx, OK())]


def _skey(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server.store.find("sender", tx.entity_id)
    if not server._authorized(session, tx, cmd.sender_key) or queue is None:
        raise _err(AUTH)
    if queue.mode is not ConnectionMode.Invitation:
        raise _err(AUTH)
    _secure(server, queue, cmd.sender_key, by_lget=False)
    return [server._reply(session, tx, OK())]


def _lset(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    if queue.link is None:
        if queue.mode is ConnectionMode.Invitation and queue.secured:
            raise _err(AUTH)  # its link data was dropped when it was secured (LINK-5)
        raise _cmd_err("PROHIBITED")
    if queue.mode is ConnectionMode.Invitation and queue.secured:
        raise _err(AUTH)
    _check_blob(server.config, queue.mode, cmd.enc_link_data)
    server.store.put(replace(queue, link=_link(queue.link.link_id, cmd.enc_link_data)))
    return [server._reply(session, tx, OK())]


def _lget(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    k = tx.entity_id
    queue = server.store.find("link", sha256(k)) if len(k) == 32 else None
    if cmd.sender_key is not None:
        if not server._authorized(session, tx, cmd.sender_key) or queue is None:
            raise _err(AUTH)
        if queue.mode is not ConnectionMode.Invitation:
            raise _err(AUTH)  # fails as SKEY on contact queues (LINK-7)
        queue = _secure(server, queue, cmd.sender_key, by_lget=True)
    if queue is None or queue.link is None:
        raise _err(AUTH)
    queue_link = QueueLink(link_id=queue.link.link_id, sender_id=queue.sender_id,
                           enc_link_data=queue.link.blob)
    try:
        sealed = seal_link_response(session.secret, k, tx.corr_id, queue_link.encode())
    except CryptoError:  # a low-order k: nobody holds its secret
        raise _err(AUTH) from None
    return [server._reply(session, tx, LINK(sealed=sealed))]


def _ndel(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    if queue.notifier is not None:
        sid = server.notifier_subscribers.pop(queue.recipient_id, None)
        if sid in server.sessions:
            server.sessions[sid].notifications.discard(queue.recipient_id)
        server.store.put(replace(queue, notifier=None))
    return [server._reply(session, tx, OK())]


def _subscribe(server: Server, session: Session, queue: QueueRecord, corr_id: bytes | None
               ) -> list[Outgoing]:
    """Subscribe a session (MSG-2, MSG-3); corr_id None: no OK (NEW with Subscribe)."""
    rid = queue.recipient_id
    if session.modes.get(rid) == "get":
        raise _cmd_err("PROHIBITED")
    out: list[Outgoing] = []
    previous = server.subscribers.get(rid)
    if previous is not None and previous != session.session_id:
        old = server.sessions.get(previous)
        if old is not None:
            old.modes.pop(rid, None)
            old.delivered.pop(rid, None)
            out.append(Outgoing(previous, b"", rid, END()))
    server.subscribers[rid] = session.session_id
    session.modes[rid] = "sub"
    session.delivered.pop(rid, None)  # a repeated SUB delivers the pending message again
    queue = server._touch(queue)
    server.store.put(queue)
    if corr_id is not None:
        out.append(Outgoing(session.session_id, corr_id, rid, OK()))
    msg = server._msg(session, queue, b"")
    return out + ([msg] if msg else [])


def _sub(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    return _subscribe(server, session, queue, tx.corr_id)


def _get(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    rid = queue.recipient_id
    if session.modes.get(rid) == "sub":
        raise _cmd_err("PROHIBITED")
    session.modes[rid] = "get"
    msg = server._msg(session, queue, tx.corr_id)
    return [msg] if msg else [server._reply(session, tx, OK())]


def _ack(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    rid = queue.recipient_id
    delivered = session.delivered.get(rid)
    if delivered is None or (cmd.msg_id and cmd.msg_id != delivered):
        raise _err("NO_MSG")
    del session.delivered[rid]
    server.store.remove(rid, delivered)
    queue = server._reopen_if_empty(queue)
    if session.modes.get(rid) == "sub":
        msg = server._msg(session, queue, tx.corr_id)
        if msg is not None:
            return [msg]
    return [server._reply(session, tx, OK())]


def _send(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    """SEND (CMD-17, MSG-1, MSG-5, MSG-6, QENC-2, QENC-4)."""
    queue = server.store.find("sender", tx.entity_id)
    if queue is None or queue.sender_key is None:
        # Unsecured: an authorization is an error; the dummy verification keeps the cost.
        if tx.authorization:
            server._authorized(session, tx, None)
            raise _err(AUTH)
        if queue is None:
            raise _err(AUTH)
    elif not tx.authorization or not server._authorized(session, tx, queue.sender_key):
        raise _err(AUTH)
    if queue.suspended:
        raise _err(AUTH)
    if len(cmd.body) > server.config.max_message_length:
        raise _err("LARGE_MSG")
    if not queue.can_write:
        raise _err("QUOTA")
    records = server.store.records(queue.recipient_id)
    counted = sum(r.kind in (RecordKind.Message, RecordKind.Quota) for r in records)
    if counted >= server.config.quota:  # MSG-6
        server._enqueue(queue, RecordKind.Quota, ratchet.quota_marker(queue.ratchet), False)
        server.store.put(replace(queue, can_write=False))
        raise _err("QUOTA")
    state = queue.ratchet
    if state.since_update >= server.config.ratchet_update_interval:
        state, update = ratchet.update(state, queue.owner_key, server.random)
        server._enqueue(queue, RecordKind.Update, update, notification=False)
    state, record_bytes = ratchet.encrypt(state, cmd.body)
    notification = cmd.flags.notification
    stored = server._enqueue(queue, RecordKind.Message, record_bytes, notification)
    link = queue.link
    if link is not None and link.drop_on_send:
        link = None  # LINK-11
    queue = replace(server._touch(queue), ratchet=state, link=link)
    server.store.put(queue)
    out = [server._reply(session, tx, OK())]
    out += server._push_to_subscriber(queue)
    if notification and queue.notifier is not None:
        out += _notify(server, queue, stored)
    return out


def _notify(server: Server, queue: QueueRecord, stored: StoredRecord) -> list[Outgoing]:
    """NMSG to the notifier's subscriber (CMD-34)."""
    sid = server.notifier_subscribers.get(queue.recipient_id)
    if sid is None or sid not in server.sessions or queue.notifier is None:
        return []
    meta = NtfMetadata(msg_id=stored.msg_id, timestamp=stored.timestamp).encode()
    nonce = server.random(24)
    sealed = secretbox(queue.notifier.dh_secret, nonce, pad(meta, NMSG_PADDED))
    message = NMSG(nonce=nonce, enc_metadata=sealed)
    return [Outgoing(sid, b"", queue.notifier.notifier_id, message)]


def _nsub(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server.store.find("notifier", tx.entity_id)
    key = queue.notifier.key if queue and queue.notifier else None
    if not server._authorized(session, tx, key) or queue is None:
        raise _err(AUTH)
    rid = queue.recipient_id
    out = []
    previous = server.notifier_subscribers.get(rid)
    if previous is not None and previous != session.session_id and previous in server.sessions:
        server.sessions[previous].notifications.discard(rid)
        out.append(Outgoing(previous, b"", tx.entity_id, END()))
    server.notifier_subscribers[rid] = session.session_id
    session.notifications.add(rid)
    return [*out, server._reply(session, tx, OK())]


def _off(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    if not queue.suspended:
        server.store.put(replace(queue, suspended=True))
    count = len(server.store.records(queue.recipient_id))
    return [server._reply(session, tx, COUNT(remaining=count))]


def _del(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    queue = server._recipient_queue(session, tx)
    out = server._delete_queue(queue, except_session=session.session_id)
    return [*out, server._reply(session, tx, OK())]


def _ping(server: Server, session: Session, tx: Transmission, cmd: Any) -> list[Outgoing]:
    return [server._reply(session, tx, PONG(), entity_id=b"")]


_HANDLERS: dict[str, Handler] = {
    "NEW": _new, "KEY": _key, "SKEY": _skey, "LSET": _lset, "LGET": _lget, "NDEL": _ndel,
    "SUB": _sub, "SEND": _send, "ACK": _ack, "GET": _get, "OFF": _off, "DEL": _del,
    "NSUB": _nsub, "PING": _ping,
}

