"""The model's state machine, its lowest layer: the queues as their owners know them, the
exchanges with the server, and the check of everything every session receives against the
oracle (:class:`smpref.testing.queue_oracle.SpecServer`).

The layers above (:mod:`~smpref.testing.queue_links`, :mod:`~smpref.testing.queue_commands`,
:mod:`~smpref.testing.queue_retention`, :mod:`~smpref.testing.queue_refusals`,
:mod:`~smpref.testing.queue_forgery`) add the rules; :mod:`smpref.testing.queue_machine`
puts them together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import invariant

from smpref.client.core import AuthKeyPair, LinkKeys, OwnedQueue, Reply
from smpref.crypto.primitives import secretbox_open
from smpref.independent.ratchet_mirror import RatchetMirror
from smpref.model.config import DAY, ServerConfig
from smpref.model.queue_store import MemoryStore
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.testing.machine_base import (
    CountedMachine,
    SeedBody,
    compare_sessions,
    drain,
    mirror_takes,
    open_msg_again,
)
from smpref.testing.queue_oracle import (
    NMSG_PADDED,
    RCV_MESSAGE_PADDED,
    Delivery,
    Event,
    Expected,
    Limits,
    Notice,
    Rec,
    SpecQueue,
    SpecServer,
)
from smpref.testing.unreadable_store import UnreadableQueues
from smpref.wire.blocks import unpad
from smpref.wire.messages import (
    COUNT,
    ERR,
    MSG,
    NMSG,
    ErrorType_CMD,
    LinkData,
    LinkPartPriority,
    NtfMetadata,
    OptionalLinkData,
)
from smpref.wire.schema import decode_struct, render_error
from smpref.wire.structs import Message
from smpref.wire.type_codecs import VariantCodec

#: small limits, so that quotas, key updates, pressure and expiry happen in short runs
MACHINE_CONFIG = ServerConfig(
    quota=4,
    message_ttl_seconds=3 * DAY,
    unsecured_invitation_days=5,
    contact_days=9,
    ratchet_update_interval=3,
    # low enough that one queue with two large optional link parts starts the relief
    # (QUEUE-9), and the low water mark above three queues' mandatory parts (about 300 bytes
    # each), so that relief can stop with optional parts left; the blobs' own limits are
    # QUEUE-6's protocol constants, the defaults
    blob_bytes_high_water=2000,
    blob_bytes_low_water=1500,
    # a password, so that NEW without it or with another one is drawn too (QUEUE-10)
    basic_auth=b"machine password",
)
#: X25519 public keys whose shared secret with any key is zero (QUEUE-10, LINK-9): 0, 1 and
#: a point of order 8
LOW_ORDER_POINTS = (
    bytes(32),
    (1).to_bytes(32, "little"),
    bytes.fromhex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
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


#: the oracle's view of MACHINE_CONFIG: the limits its rules depend on
LIMITS = Limits(
    quota=MACHINE_CONFIG.quota,
    message_ttl_seconds=MACHINE_CONFIG.message_ttl_seconds,
    unsecured_invitation_days=MACHINE_CONFIG.unsecured_invitation_days,
    contact_days=MACHINE_CONFIG.contact_days,
    ratchet_update_interval=MACHINE_CONFIG.ratchet_update_interval,
    blob_high_water=MACHINE_CONFIG.blob_bytes_high_water,
    blob_low_water=MACHINE_CONFIG.blob_bytes_low_water,
)

#: at most this many queues and sessions at once: few queues, so each one sees many messages
MAX_QUEUES = 3
MAX_SESSIONS = 4

PICK = st.integers(0, 63)  # an index into the live queues or the sessions, taken modulo


@dataclass
class QueueHandle:
    """One queue as its owner and its senders know it, with the oracle's view of it
    (:class:`smpref.testing.queue_oracle.SpecQueue`)."""

    owner: OwnedQueue
    owner_session: LoopbackConnection
    spec: SpecQueue
    link: LinkKeys | None = None
    link_data: tuple[LinkData, list[OptionalLinkData]] | None = None
    link_dropped_on_send: bool = False  # secured by LGET: the link data goes at the first SEND
    sender_key: AuthKeyPair | None = None
    notifier_key: AuthKeyPair | None = None
    notifier_id: bytes = b""  # as created: NDEL removes it from the queue, not from here
    ntf_secret: bytes | None = None  # opens NMSG metadata (MSG-7)
    sent: list[bytes] = field(default_factory=list)
    delivered: list[bytes] = field(default_factory=list)  # opened by the owner, once each
    #: the server's queue DH key (IDS), and the second implementation's ratchet mirror: every
    #: record is opened by it too (smpref.independent), so a mistake shared by the server's
    #: sealing and the owner's opening shows
    server_dh: bytes = b""
    independent: RatchetMirror | None = None
    #: the number of the next Message or Update record the owner has not opened: a record
    #: above it comes after records that expired unread, a gap (QENC-8)
    mirror_next: int = 1
    #: the records delivered so far, as sealed: what forged records are made from
    records_seen: list[bytes] = field(default_factory=list)
    expired: list[bytes] = field(default_factory=list)

    @property
    def rid(self) -> bytes:
        return self.owner.recipient_id

    @property
    def contact(self) -> bool:
        return self.spec.mode == "contact"


def in_one_order(replies: list[Reply], events: list[Event]) -> tuple[list[Reply], list[Event]]:
    """Replies and events sorted alike, by tag and entity: for what a sweep pushes, whose order
    the spec leaves open."""
    return (sorted(replies, key=lambda r: (r.tag, bytes(r.transmission.entity_id))),
            sorted(events, key=lambda e: (
                (str(e[0]), e[1] if isinstance(e[1], bytes) else b"")
                if isinstance(e, tuple)
                else (str(e), b"")
            )))


class QueueExchanges(CountedMachine):
    """The machine's state and its exchanges: every answer and every pushed transmission is
    compared with :class:`SpecServer`'s prediction, made before the command was sent."""

    #: whether forged records are drawn (the ratchet's mirrors): the store's machine, which
    #: checks the journal store, spends its steps on the store
    FORGES: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.lb = self.make_loopback()
        self.spec = SpecServer(LIMITS)
        self.sessions: list[LoopbackConnection] = [self.lb.connect()]
        self.handles: list[QueueHandle] = []
        self.owners: dict[int, QueueHandle] = {}  # record uid -> its queue
        self.msg_ids: set[bytes] = set()  # every message ID bound so far (IDs are unique)
        self.counter = 0
        #: queues no rule picks (a low-order link's), which the sweep still walks
        self.strays: list[SpecQueue] = []
        #: the requirement IDs the model reported since the last check (its observer), which
        #: every check compares with the oracle's: never what the machine expects (that is the
        #: oracle's)
        self.reported: set[str] = set()
        self.count_table_rows(self.lb, lambda _name, requirements: self.reported.update(
            requirements))

    def make_loopback(self) -> Loopback:
        """The server under test; subclasses put it over another store
        (:mod:`smpref.testing.differential`)."""
        return Loopback(seed=0, config=MACHINE_CONFIG, store=UnreadableQueues(MemoryStore()))

    @property
    def now(self) -> int:
        return self.lb.clock.now()

    def _body(self) -> bytes:
        self.counter += 1
        return b"message %d" % self.counter

    def _live(self) -> list[QueueHandle]:
        return [h for h in self.handles if not h.spec.deleted]

    def _queue(self, index: int) -> QueueHandle:
        live = self._live()
        return live[index % len(live)]

    def _session(self, index: int) -> LoopbackConnection:
        return self.sessions[index % len(self.sessions)]

    def _ids_of(self, handle: QueueHandle, records: list[Rec]) -> None:
        for rec in records:
            self.owners[rec.uid] = handle

    def _collect(
        self, first: LoopbackConnection | None, replies: list[Reply]
    ) -> dict[bytes, list[Reply]]:
        """``first``'s own ``replies``, then what every session was pushed, by session ID."""
        got = {first.session_id: list(replies)} if first is not None else {}
        return drain(((c.session_id, c) for c in self.lb.connections.values()), got)

    def _exchange(
        self,
        label: str,
        session: LoopbackConnection,
        message: Message,
        entity: bytes,
        key: AuthKeyPair | None,
        *,
        expected: Expected,
    ) -> list[Reply]:
        """Send one transmission and check everything every session received against the
        oracle's expectation (which was computed before it was sent)."""
        replies = session.send(message, entity, key)
        self._check(label, self._collect(session, replies), expected)
        return replies

    def _as_owner(
        self, label: str, handle: QueueHandle, message: Message, expected: Expected
    ) -> list[Reply]:
        """A recipient command from the queue's owner, signed with its key."""
        return self._exchange(
            label,
            handle.owner_session,
            message,
            handle.rid,
            handle.owner.auth_key,
            expected=expected,
        )

    def _check(
        self,
        label: str,
        got: dict[bytes, list[Reply]],
        expected: Expected,
        *,
        any_order: bool = False,
    ) -> None:
        self.trace.append(
            f"{label} -> "
            + " ".join(
                f"{sid.hex()[:4]}:{','.join(r.tag + ':' + error_of(r) for r in replies)}"
                for sid, replies in got.items()
            )
        )
        compare_sessions(label, got, expected.events,
                         lambda sid, reply, event: self._match(label, sid, reply, event),
                         name=lambda sid: sid.hex()[:8],
                         show=lambda r: r.tag + (" " + error_of(r) if error_of(r) else ""),
                         arrange=in_one_order if any_order else None)
        # coverage is checked too: every requirement the oracle says decided these events was
        # reported by the model's rules for them, so a lost report fails (issue 30)
        lost = expected.requirements - self.reported
        assert not lost, f"{label}: the model did not report {sorted(lost)}"
        # and a seed session is served by the seed design's rules only: a deployed
        # requirement reported here means the model took a seed queue for a deployed one
        deployed = sorted(r for r in self.reported if r.startswith("DEP-"))
        assert not deployed, f"{label}: the model reported {deployed} for the seed design"
        self.reported.clear()
        self.checked |= expected.requirements | expected.noted

    def _match(self, label: str, sid: bytes, reply: Reply, event: Event) -> None:
        where = f"{label}: session {sid.hex()[:8]}"
        if isinstance(event, Notice):
            assert reply.tag == "NMSG", f"{where} received {reply.tag}, the spec says NMSG"
            self._notice(where, reply, event)
        elif isinstance(event, Delivery):
            assert reply.tag == "MSG", (
                f"{where} received {reply.tag} {error_of(reply)}, the spec says MSG"
            )
            self._open(where, reply, event)
        elif isinstance(event, tuple):
            tag, value = event
            assert reply.tag == tag, (
                f"{where} received {reply.tag} {error_of(reply)}, the spec says {tag}"
            )
            if tag == "COUNT":
                got = reply.expect(COUNT).remaining
                assert got == value, f"{where}: COUNT {got}, the spec says {value}"  # ROT-3
            else:
                assert bytes(reply.transmission.entity_id) == value, (
                    f"{where}: {tag} for another entity"
                )
        elif event.startswith("ERR "):
            assert reply.tag == "ERR" and error_of(reply) == event[4:], (
                f"{where} received {reply.tag} {error_of(reply)}, the spec says {event}"
            )
        else:
            assert reply.tag == event, (
                f"{where} received {reply.tag} {error_of(reply)}, the spec says {event}"
            )

    def _bind(self, where: str, rec: Rec, msg_id: bytes) -> None:
        """A record's message ID is the one the server first shows for it, and then never
        changes; no two records share one."""
        if rec.msg_id is None:
            assert msg_id not in self.msg_ids, f"{where}: a message ID used twice"
            rec.msg_id = msg_id
            self.msg_ids.add(msg_id)
        assert msg_id == rec.msg_id, f"{where}: another record than the spec's"

    def _notice(self, where: str, reply: Reply, notice: Notice) -> None:
        """NMSG: the notifier's subscriber opens it and finds the record's ID and time (MSG-7)."""
        handle = self.owners[notice.rec.uid]
        assert bytes(reply.transmission.entity_id) == notice.notifier_id, (
            f"{where}: NMSG for another notifier"
        )
        assert handle.ntf_secret is not None
        nmsg = reply.expect(NMSG)
        padded = secretbox_open(handle.ntf_secret, nmsg.nonce, nmsg.enc_metadata)
        assert len(padded) == NMSG_PADDED, f"{where}: NMSG padded to {len(padded)}"
        meta = decode_struct(NtfMetadata, unpad(padded))
        self._bind(where, notice.rec, meta.msg_id)
        assert meta.timestamp == notice.rec.at, f"{where}: NMSG with another time"
        self.stats["notifications"] += 1

    def _open(self, where: str, reply: Reply, delivery: Delivery) -> None:
        """A MSG the oracle expects: the owner opens it, and it must be that very record."""
        rec = delivery.rec
        handle = self.owners[rec.uid]
        msg = reply.expect(MSG)
        assert bytes(reply.transmission.entity_id) == handle.rid, f"{where}: MSG of another queue"
        self._bind(where, rec, msg.msg_id)
        assert bool(reply.transmission.corr_id) == delivery.corr, (
            f"{where}: MSG {'pushed' if delivery.corr else 'as an answer'}, the spec says "
            f"{'an answer' if delivery.corr else 'pushed'}"
        )  # MSG-2, MSG-3
        # Each delivery is read afresh (a re-delivery's flags may differ from the first's); the
        # mirror then takes it once (QENC-5, QENC-7).
        body, padded = handle.owner.unseal(msg)
        assert padded == RCV_MESSAGE_PADDED, f"{where}: MSG padded to {padded}"
        _, received, again = handle.owner.open_message(msg)
        record = body.record
        kind = record.kind.value.decode()  # the kind letter of QENC-6
        assert (kind, record.seq) == (rec.kind, rec.seq), (
            f"{where}: record {kind}{record.seq}, the spec says {rec.kind}{rec.seq}"
        )  # QENC-4, QENC-6
        assert body.timestamp == rec.at, f"{where}: stored at {body.timestamp}, not {rec.at}"
        assert body.flags.last == delivery.last, (
            f"{where}: last={body.flags.last}, the spec says {delivery.last}"
        )  # ROT-4
        assert body.flags.notification == rec.notify, f"{where}: notification flag"
        self.checked |= {"QENC-5", "QENC-7", "ROT-4"}
        self.stats["deliveries"] += 1
        if delivery.last:
            self.stats["last flags"] += 1
        self._open_independently(where, handle, msg, rec, delivery.last, again)
        if again:
            return
        assert received.kind is record.kind and received.seq == rec.seq
        # QENC-8: records that expired unread leave a gap, stepped over and named as such
        gap = rec.seq - handle.mirror_next if rec.kind in ("M", "U") else 0
        assert (received.skipped, received.verdict.value) == (
            gap, "acceptable" if gap else "valid"), (
            f"{where}: the owner's mirror skipped {received.skipped} ({received.verdict.value})"
            f", the spec says {gap}")
        if rec.kind in ("M", "U"):
            handle.mirror_next = rec.seq + 1
            self.stats["gaps stepped over"] += gap > 0
        if rec.kind == "M":
            assert received.body == rec.body, f"{where}: the message decrypts to another body"
            assert received.body is not None
            handle.delivered.append(received.body)
            self.stats["messages delivered"] += 1

    def _open_independently(self, where: str, handle: QueueHandle,  # noqa: PLR0917
                            msg: MSG, rec: Rec, last: bool, again: bool) -> None:
        """Open the MSG with the second implementation (smpref.independent), written from
        QENC-5..8 and DEP-7: the body with XSalsa20 through its own HSalsa20, the
        record with its own ratchet mirror. A record that smpref's owner opens but this
        cannot is a mistake both of smpref's sides share (say, the same wrong associated
        data)."""
        assert handle.independent is not None
        body = SeedBody.read(open_msg_again(where, handle.owner.dh_key.secret,
                                            handle.server_dh, msg))
        assert body.timestamp == rec.at, f"{where}: the second implementation reads another time"
        assert (body.notification, body.last, body.separator) == (rec.notify, last, b" "), \
            f"{where}: the second implementation reads other flags"
        if again:  # the mirror takes each record once, in order (QENC-5)
            return
        handle.records_seen.append(body.record)
        plaintext = mirror_takes(where, handle.independent, body.record)
        if rec.kind == "M":
            assert plaintext == rec.body, f"{where}: the second implementation reads another body"
        self.stats["records opened twice"] += 1

    @invariant()
    def the_store_holds_what_the_spec_says(self) -> None:
        """Checked against the oracle, never the other way round: each queue exists exactly
        when the spec says so, with as many records (MSG-9)."""
        for handle in self.handles:
            queue = self.lb.store.get(handle.rid)
            assert (queue is None) == handle.spec.deleted, (
                f"queue {'kept' if queue else 'removed'}, the spec says the opposite"
            )
            if queue is not None:
                stored = len(self.lb.store.records(handle.rid))
                assert stored == len(handle.spec.records), (
                    f"the store holds {stored} records, the spec says {len(handle.spec.records)}"
                )
                if handle.spec.secured:  # QUEUE-11: a secured queue keeps its key
                    assert handle.sender_key is not None
                    assert queue.sender_key == handle.sender_key.public
                if queue.link is not None:  # QUEUE-9: the mandatory part stays first, once
                    priorities = [p.priority for p in queue.link.blob.parts]
                    assert priorities[0] is LinkPartPriority.Mandatory
                    assert priorities.count(LinkPartPriority.Mandatory) == 1

    @invariant()
    def no_message_delivered_twice_or_lost(self) -> None:
        """MSG-9: every message sent is delivered once, or still in the queue, or expired
        (RET-5) or deleted with its queue; the owner opens them in the order they were sent."""
        for handle in self.handles:
            delivered = handle.delivered
            assert len(set(delivered)) == len(delivered), "a message was opened twice"
            sent_iter = iter(handle.sent)
            assert all(any(d == s for s in sent_iter) for d in delivered), (
                "delivered messages are not the sent ones in order"
            )
            if handle.spec.deleted:
                continue
            pending = {r.body for r in handle.spec.records if r.kind == "M"}
            assert not pending & set(handle.expired), "an expired message is still waiting"
            assert set(handle.sent) == set(delivered) | pending | set(handle.expired), (
                "a message is neither delivered, nor waiting, nor expired"
            )
