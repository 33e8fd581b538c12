"""A Hypothesis state machine that drives the model through random interleavings.

Several sessions create, link, join through links, secure, message, subscribe, read, suspend,
drain, expire and delete queues, subscribe to notifications and send commands with the wrong
credentials, through the wire format (:mod:`smpref.testing.loopback`), while the clock advances
across retention periods.

Before every command, the oracle (:class:`smpref.testing.queue_oracle.SpecServer`, written from
spec/ and independent of the model) says what every session must receive; the machine compares
each transmission the server really sent with it: answers and errors, pushed MSG, END and NMSG,
the record each MSG carries (kind, number, time, ``last`` flag, decrypted body), COUNT's number.
After every step the store must hold what the oracle says (never the other way round), and no
message may be lost or opened twice (MSG-9).

The machine counts what it did (:meth:`QueueMachine.totals`): the tests hold it to depth floors.
It lives in the package, not in tests/, so that ``smpref model fuzz`` and the campaigns can run
it by seed (:func:`run_seed`).
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
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
from smpref.crypto.primitives import box_key, sealed_box, secretbox_open
from smpref.crypto.ratchet import MAX_SKIP
from smpref.errors import CryptoError, RatchetError
from smpref.independent import link_data as independent_link
from smpref.independent.link_response import open_link_response
from smpref.independent.ratchet_mirror import RatchetMirror, open_msg_body
from smpref.model.config import DAY, ServerConfig
from smpref.model.queue_store import MemoryStore
from smpref.testing.determinism import same_draws_everywhere
from smpref.testing.loopback import Loopback, LoopbackConnection
from smpref.testing.queue_oracle import (
    BLOB_DEFECTS,
    NEW_DEFECTS,
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
    SweepCycle,
)
from smpref.testing.unreadable_store import UnreadableQueues
from smpref.wire.blocks import unpad
from smpref.wire.keys import KeyAlgorithm, PublicKey
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
    NDEL,
    NEW,
    NMSG,
    NSUB,
    OFF,
    PING,
    SEND,
    SKEY,
    SUB,
    ConnectionMode,
    ErrorType_CMD,
    LinkBlob,
    LinkData,
    LinkPart,
    LinkPartPriority,
    MsgFlags,
    NtfMetadata,
    NtfRequest,
    OptionalLinkData,
    OptionalPartKind,
    QueueLink,
    QueueRequest,
    SealedSecret,
    SubscriptionMode,
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
#: how a forged record is made from a delivered one (QENC-8): the same again, a byte of its
#: payload or of its header flipped, cut short, its sequence number moved on, its kind changed
FORGERIES = ("replay", "flip-payload", "flip-header", "truncate", "later-seq", "other-kind",
             "gap", "resealed")


def forge(record: bytes, forgery: str, at: int, by: int) -> bytes:
    """A record made from ``record`` (``kind(1) || seq(8) || payload``) by ``forgery``."""
    if forgery == "replay":
        return record
    if forgery == "flip-payload":  # a record without a payload (a quota marker) gets one
        if len(record) <= 9:
            return record + bytes([at % 256])
        i = 9 + at % (len(record) - 9)
        return record[:i] + bytes([record[i] ^ 1 + at % 255]) + record[i + 1:]
    if forgery == "flip-header":
        i = 1 + at % 8
        return record[:i] + bytes([record[i] ^ 1 + at % 255]) + record[i + 1:]
    if forgery == "truncate":
        return record[:at % len(record)]
    if forgery == "later-seq":
        seq = int.from_bytes(record[1:9], "big", signed=True) + by
        return record[:1] + seq.to_bytes(8, "big", signed=True) + record[9:]
    kinds = b"IMUQ"
    other = kinds[(kinds.index(record[0]) + 1 + at % 3) % 4] if record[:1] in (
        b"I", b"M", b"U", b"Q") else kinds[0]
    return bytes([other]) + record[1:]


def _refused_by_spec(forgery: str, record: bytes, forged: bytes, next_seq: int) -> bool:
    """Whether QENC-8 refuses the forged record outright: a replay of anything but a quota
    marker at or beyond the next number, a changed payload or kind of a Message (it no
    longer decrypts), a record cut into its header."""
    kind = record[:1]
    if forgery == "replay":
        return not (kind == b"Q" and int.from_bytes(record[1:9], "big", signed=True) >= next_seq)
    if forgery in ("flip-payload", "other-kind"):
        return kind == b"M" and forged != record
    if forgery == "truncate":
        return len(forged) < 9
    return forgery == "resealed"  # its secret names another number, or does not open


#: smpref's refusal reasons in the second implementation's words (QENC-8): a gap beyond
#: MAX_SKIP is "gap"; a key record missing or a mirror never started cannot open: "tampered"
REASONS = {"malformed": "malformed", "replay": "replay", "gap-too-large": "gap",
           "tampered": "tampered"}

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


class QueueMachine(RuleBasedStateMachine):
    """Random interleavings of every command, from several sessions, with time passing; every
    answer and every pushed transmission is compared with :class:`SpecServer`'s."""

    #: totals over every run, by machine class, read by the depth test (:func:`totals`)
    TOTALS: ClassVar[dict[type, Counter[str]]] = {}
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
        self.trace: list[str] = []
        self.checked: set[str] = set()
        self.stats: Counter[str] = Counter()
        self.counter = 0
        #: queues no rule picks (a low-order link's), which the sweep still walks
        self.strays: list[SpecQueue] = []
        #: the requirement IDs the model reported since the last check (its observer)
        self.reported: set[str] = set()
        self._count_table_rules()

    def _count_table_rules(self) -> None:
        """Count every rule of the model's table the server takes ("table <rule>"), for the
        depth floors, and gather the requirement IDs it reports, which every check compares
        with the oracle's: never what the machine expects (that is the oracle's). An observer
        already there (a campaign's) still sees every report."""
        previous = self.lb.server.observer
        stats = self.stats

        reported = self.reported

        def observe(name: str, requirements: tuple[str, ...]) -> None:
            stats["table " + name] += 1
            reported.update(requirements)
            if previous is not None:
                previous(name, requirements)

        self.lb.server.observer = observe

    def make_loopback(self) -> Loopback:
        """The server under test; subclasses put it over another store
        (:mod:`smpref.testing.differential`)."""
        return Loopback(seed=0, config=MACHINE_CONFIG, store=UnreadableQueues(MemoryStore()))

    @classmethod
    def rule_names(cls) -> list[str]:
        """The names of the machine's rules, its initializers left out (read from the marker
        Hypothesis puts on each rule)."""
        return sorted(
            name
            for name in dir(cls)
            if getattr(getattr(cls, name, None), "hypothesis_stateful_rule", None) is not None
        )

    @classmethod
    def totals(cls) -> Counter[str]:
        """What every run of this machine class did so far: rules fired ("rule <name>"),
        messages sent, delivered and expired, quota answers, drained suspensions, ``last``
        flags, runs, and in how many runs each requirement was checked ("checked <ID>")."""
        return cls.TOTALS.setdefault(cls, Counter())

    def teardown(self) -> None:
        totals = type(self).totals()
        totals.update(self.stats)
        totals["runs"] += 1
        for requirement in self.checked:
            totals["checked " + requirement] += 1

    # --- plumbing --------------------------------------------------------------------------

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

    def _fired(self, name: str) -> None:
        self.stats["rule " + name] += 1

    def _collect(
        self, first: LoopbackConnection | None, replies: list[Reply]
    ) -> dict[bytes, list[Reply]]:
        got: dict[bytes, list[Reply]] = {}
        if first is not None:
            got[first.session_id] = list(replies)
        for connection in self.lb.connections.values():
            if connection.inbox:
                got.setdefault(connection.session_id, []).extend(connection.inbox)
                connection.inbox.clear()
        return got

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
        for sid in set(got) | set(expected.events):
            replies, events = got.get(sid, []), expected.events.get(sid, [])
            shown = [r.tag + (" " + error_of(r) if error_of(r) else "") for r in replies]
            assert len(replies) == len(events), (
                f"{label}: session {sid.hex()[:8]} received {shown}, the spec says {events}"
            )
            if any_order:
                replies = sorted(replies, key=lambda r: (r.tag, bytes(r.transmission.entity_id)))
                events = sorted(
                    events,
                    key=lambda e: (
                        (str(e[0]), e[1] if isinstance(e[1], bytes) else b"")
                        if isinstance(e, tuple)
                        else (str(e), b"")
                    ),
                )
            for reply, event in zip(replies, events, strict=True):
                self._match(label, sid, reply, event)
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
        body = open_msg_body(handle.owner.dh_key.secret, handle.server_dh, msg.msg_id,
                             msg.enc_body)
        assert body is not None, f"{where}: the second implementation cannot open the MSG"
        assert int.from_bytes(body[:8], "big", signed=True) == rec.at, \
            f"{where}: the second implementation reads another time"
        flags = {b"T": True, b"F": False}
        assert (flags.get(body[8:9]), flags.get(body[9:10]), body[10:11]) == \
            (rec.notify, last, b" "), f"{where}: the second implementation reads other flags"
        if again:  # the mirror takes each record once, in order (QENC-5)
            return
        handle.records_seen.append(body[11:])
        verdict, plaintext, reason = handle.independent.receive(body[11:])
        assert verdict != "invalid", \
            f"{where}: the second implementation refuses record {rec.kind}{rec.seq} ({reason})"
        if rec.kind == "M":
            assert plaintext == rec.body, f"{where}: the second implementation reads another body"
        self.stats["records opened twice"] += 1

    @precondition(lambda self: self.FORGES and any(h.records_seen for h in self.handles))
    @rule(q=PICK, which=PICK, forgery=st.sampled_from(FORGERIES),
          at=st.integers(0, 1 << 20),
          by=st.integers(1, 2 * MAX_SKIP))
    def forged_record(self, q: int, which: int, forgery: str, at: int,
                      by: int) -> None:
        """A record the server never sent, made from one it did (QENC-8): the owner's
        mirror must refuse what the spec refuses and keep its state then, and agree with the
        second implementation's mirror on every verdict. Both are copies: the real ones go
        on with the real records."""
        self._fired("forged_record")
        handles = [h for h in self.handles if h.records_seen]
        handle = handles[q % len(handles)]
        assert handle.independent is not None and handle.owner.mirror is not None
        record = handle.records_seen[which % len(handle.records_seen)]
        if forgery == "resealed":
            self._resealed(handle)
        elif forgery != "gap":
            self._forged(handle, record, forge(record, forgery, at, by), forgery)
        if forgery == "gap" or not self.stats["gaps forged"]:  # and the bound, once a run
            self._forge_gaps(handle, at, by)

    def _forge_gaps(self, handle: QueueHandle, at: int, by: int) -> None:
        """The latest record of each kind, renumbered to leave exactly ``by`` records unseen,
        and QENC-8's bound on a gap on both sides of it (MAX_SKIP - 1, MAX_SKIP, MAX_SKIP +
        1)."""
        assert handle.independent is not None
        self.stats["gaps forged"] += 1
        latest = {r[:1]: r for r in handle.records_seen if r[:1] != b"I"}
        for record in latest.values():
            seq = int.from_bytes(record[1:9], "big", signed=True)
            for gap in sorted({by, MAX_SKIP - 1, MAX_SKIP, MAX_SKIP + 1}):
                self._forged(handle, record, forge(
                    record, "later-seq", at, gap + handle.independent.next - seq), "gap")

    def _resealed(self, handle: QueueHandle) -> None:
        """Update records the server never made, numbered next, whose sealed secret (sealed
        to the owner's public key, as anyone can) names the number before or after, does not
        decode, or was changed on the way: QENC-5 and QENC-8 refuse each."""
        assert handle.independent is not None
        rnd = self.lb.client_random
        header = b"U" + handle.independent.next.to_bytes(8, "big", signed=True)
        owner = handle.owner.dh_key.public.raw
        sealed = [sealed_box(owner, SealedSecret(seq=handle.independent.next + delta,
                                                 secret=rnd(32)).encode(), rnd(32))
                  for delta in (-1, 1)]
        garbage = sealed_box(owner, b"not a sealed secret", rnd(32))
        flipped = sealed[0][:-1] + bytes([sealed[0][-1] ^ 1])
        for payload in (*sealed, garbage, flipped):
            self._forged(handle, header, header + payload, "resealed")
        # an Initial record numbered next, its secret naming that number: a key record is
        # missing, not a new start (QENC-8); and to mirrors that have seen nothing yet, a
        # quota marker numbered before the Initial record's 0
        initial = b"I" + header[1:]
        self._forged(handle, initial, initial + sealed_box(owner, SealedSecret(
            seq=handle.independent.next, secret=rnd(32)).encode(), rnd(32)), "resealed")
        early = b"Q" + (-1).to_bytes(8, "big", signed=True)
        self._forged(handle, early, early, "resealed", fresh=True)

    def _forged(self, handle: QueueHandle, record: bytes, forged: bytes, forgery: str, *,
                fresh: bool = False) -> None:
        """Copies of both mirrors take one forged record, and must agree (QENC-8); with
        ``fresh``, new mirrors of the queue's owner that have seen nothing yet."""
        assert handle.independent is not None and handle.owner.mirror is not None
        ours, theirs = copy.deepcopy(handle.owner.mirror), copy.deepcopy(handle.independent)
        if fresh:
            secret = handle.owner.dh_key.secret
            ours, theirs = type(ours)(secret), RatchetMirror(secret)
        before = (ours.next_seq, ours.key)
        why = ""
        try:
            verdict = ours.receive(forged).verdict.value
        except RatchetError as exc:
            verdict, why = "invalid", REASONS.get(exc.reason, "tampered")
        other, _, reason = theirs.receive(forged)
        seq = int.from_bytes(record[1:9], "big", signed=True)
        what = f"forged record ({forgery} of {record[:1].decode()}{seq})"
        assert (verdict, why) == (other, reason), (
            f"{what}: smpref's mirror says {verdict} ({why or 'no reason'}), the second "
            f"implementation {other} ({reason or 'no reason'})")
        refused = _refused_by_spec(forgery, record, forged, theirs.next if fresh else
                                   handle.independent.next)
        if refused:
            assert verdict == "invalid", f"{what}: accepted, the spec refuses it (QENC-8)"
        if verdict == "invalid":
            assert (ours.next_seq, ours.key) == before, f"{what}: a refusal changed the state"
            self.stats["forged records refused"] += 1

    def _ids_of(self, handle: QueueHandle, records: list[Rec]) -> None:
        for rec in records:
            self.owners[rec.uid] = handle

    # --- queues ------------------------------------------------------------------------------

    @precondition(lambda self: len(self.sessions) < MAX_SESSIONS)
    @rule()
    def connect(self) -> None:
        self._fired("connect")
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
        self._fired("create")
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

    @staticmethod
    def _stored_blob(spec: SpecQueue, blob: LinkBlob | None) -> None:
        """What the oracle must know of a queue's blob for QUEUE-9: its size, and its size
        with only its mandatory part (the relief's gain is the difference)."""
        spec.blob = len(blob.encode()) if blob is not None else 0
        spec.mandatory = len(LinkBlob(parts=tuple(
            p for p in blob.parts if p.priority is LinkPartPriority.Mandatory)).encode()
        ) if blob is not None else 0

    def _secured(self, handle: QueueHandle, key: AuthKeyPair, *, by_lget: bool = False) -> None:
        """The owner's side of securing: when this key just secured the queue (the oracle
        says so), an invitation's link data goes at once, or at the first SEND after LGET
        (LINK-11)."""
        if handle.sender_key is not None or handle.spec.sender_key != key.public.raw:
            return
        handle.sender_key = key
        if handle.spec.mode == "invitation":
            if by_lget:
                handle.link_dropped_on_send = True
            else:
                handle.link_data = None  # the oracle drops its blob too
        if not by_lget:  # KEY, SKEY: an invitation's link is gone at once (LGET read it)
            self._read_link_back(handle, "securing")

    @precondition(lambda self: self._live())
    @rule(q=PICK, same_key=st.booleans())
    def key(self, q: int, same_key: bool) -> None:
        self._fired("key")
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
    def skey(self, q: int, s: int, own_key: bool, signed_by_other: bool) -> None:
        """SKEY with the queue's key or a new one, signed by the key it carries or, to check
        AUTH-1, by another."""
        self._fired("skey")
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

    # --- links -------------------------------------------------------------------------------

    @precondition(lambda self: any(h.link for h in self.handles))
    @rule(q=PICK, s=PICK, with_key=st.booleans(), other_key=st.booleans())
    def lget(self, q: int, s: int, with_key: bool, other_key: bool) -> None:
        """LGET of any link, deleted queues' included, from any session (LINK-6, LINK-7):
        it reads that link's queue and no other's."""
        self._fired("lget")
        linked = [h for h in self.handles if h.link is not None]
        self._lget(linked[q % len(linked)], self._session(s), with_key, other_key)

    def _lget(
        self, handle: QueueHandle, session: LoopbackConnection, with_key: bool, other_key: bool
    ) -> None:
        assert handle.link is not None
        rnd = self.lb.client_random
        key = None
        if with_key:
            key = (
                handle.sender_key
                if handle.sender_key and not other_key
                else AuthKeyPair.ed25519(rnd)
            )
        corr, replies = session.request(
            LGET(sender_key=key.public if key else None), handle.link.k, key
        )
        spec = handle.spec
        if spec.deleted or handle.link_data is None:
            expected = Expected.one(session.session_id, "ERR AUTH", "LINK-6")
        elif key is not None:
            expected = self.spec.secure(
                spec, session.session_id, key.public.raw, self.now, allowed=not handle.contact,
                by_lget=True,
            ).cite("LINK-7")
            if expected.events[session.session_id] == ["OK"]:  # answered with the link
                # LGET applies SKEY's rules as LINK-7 says: the model reports LINK-7 for them
                expected = Expected.one(session.session_id, "LINK", "LINK-6").cite(
                    *expected.requirements - {"QUEUE-11"}).note("QUEUE-11")
                self._secured(handle, key, by_lget=True)
        else:
            expected = Expected.one(session.session_id, "LINK", "LINK-6")
        self._check("LGET", self._collect(session, replies), expected)
        if replies[0].tag != "LINK":
            return
        assert handle.link_data is not None
        sealed = replies[0].expect(LINK).sealed
        queue_link = session.client.open_link(handle.link, corr, sealed)
        assert queue_link.sender_id == handle.owner.sender_id
        # the second implementation opens it too: LINK-9 and LINK-10 written again
        again = open_link_response(handle.link.pk, session.client.server_session_public, corr,
                                   sealed)
        assert again is not None, "LGET: the second implementation cannot open LINK"
        assert again == queue_link.encode(), \
            "LGET: the second implementation reads another QueueLink"
        self.stats["links opened twice"] += 1
        data, optional = read_link_blob(handle.link, queue_link.enc_link_data)
        assert data == handle.link_data[0], "LGET: other link data"
        # and the second implementation opens every part (LINK-3, LINK-4)
        parts = [independent_link.open_part(handle.link.pk, part.sealed)
                 for part in queue_link.enc_link_data.parts]
        assert parts == [data.encode(), *(o.encode() for o in optional)], \
            "LGET: the second implementation reads other link data"
        # QUEUE-9: relief drops optional parts when the oracle says so, and only then
        assert optional == handle.link_data[1], (
            f"LGET: {len(optional)} optional parts, the spec says {len(handle.link_data[1])}")
        for other in self.handles:  # never with another link's key (LINK-4)
            if other is not handle and other.link is not None:
                try:
                    read_link_blob(other.link, queue_link.enc_link_data)
                except CryptoError:
                    continue
                raise AssertionError("link data decrypted with another queue's link key")
        self.checked |= {"LINK-4", "QUEUE-9"}

    def _race_for_the_link(self, q: int, s: int, t: int) -> None:
        """Two would-be senders read a link with their own keys, one after the other: the
        first secures an invitation and reads it, the second is refused (LINK-7, QUEUE-11);
        on a contact queue both are refused (LINK-7). An open invitation races first, when
        there is one: the second reader's refusal is the rarer answer."""
        linked = [h for h in self._live() if h.link and h.link_data]
        open_invitations = [h for h in linked if not h.contact and not h.spec.secured]
        if not open_invitations and len(self._live()) < MAX_QUEUES:  # one to race for
            self.create(s=s, contact=False, with_link=True, optional_parts=0, with_ntf=False,
                        subscribe=False, x25519_auth=False)
            linked = [h for h in self._live() if h.link and h.link_data]
            open_invitations = [h for h in linked if not h.contact and not h.spec.secured]
        handle = (open_invitations or linked)[q % len(open_invitations or linked)]
        self._lget(handle, self._session(s), with_key=True, other_key=True)
        self._lget(handle, self._session(t), with_key=True, other_key=True)

    @precondition(lambda self: any(h.link for h in self._live()))
    @rule(q=PICK, s=PICK, how=st.sampled_from(["SKEY", "LGET", "KEY"]))
    def join_by_link(self, q: int, s: int, how: str) -> None:
        """A sender joins through the link as a client does: reads it, secures the queue (SKEY,
        LGET with a key, or the owner's KEY), reads it again, sends, reads it again. What the
        link shows at each point is LINK-11's: an invitation's data goes at securing, or at the
        first SEND after LGET secured it; a contact's stays."""
        self._fired("join_by_link")
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

    @precondition(lambda self: self._live())
    @rule(q=PICK, optional_parts=st.integers(0, 2))
    def lset(self, q: int, optional_parts: int) -> None:
        self._fired("lset")
        self._lset(self._queue(q), optional_parts, b"q" * 200)

    def _lset(self, handle: QueueHandle, optional_parts: int, part: bytes) -> None:
        """LSET of new link data with ``optional_parts`` parts of ``part`` (LINK-5), read
        back."""
        link = handle.link or LinkKeys.generate(self.lb.client_random)
        payload = (
            LinkData(conn_req=b"set %d" % self.counter, user_data=b""),
            [
                OptionalLinkData(kind=OptionalPartKind.Preferences, data=part)
                for _ in range(optional_parts)
            ],
        )
        blob = make_link_blob(link, self.lb.client_random, *payload)
        sid = handle.owner_session.session_id
        expected = self.spec.lset(handle.spec, sid, has_link=handle.link is not None)
        self._as_owner("LSET", handle, LSET(enc_link_data=blob), expected)
        if expected.events[sid] == ["OK"]:
            handle.link_data = payload
            self._stored_blob(handle.spec, blob)
        self._read_link_back(handle, "LSET")

    def _read_link_back(self, handle: QueueHandle, command: str) -> None:
        """After a command that may change a queue's link data, its owner reads the link: it
        holds what the oracle says (``_lget`` compares it with ``handle.link_data``)."""
        if handle.link is not None:
            self._lget(handle, handle.owner_session, with_key=False, other_key=False)
            self.stats["read back " + command] += 1

    def _bad_blob(self, link: LinkKeys, defect: str, *, contact: bool) -> LinkBlob:
        """A link blob with one of :data:`BLOB_DEFECTS` (QUEUE-6, QUEUE-8), for a queue of
        the type ``contact`` says."""
        rnd = self.lb.client_random
        data = LinkData(conn_req=b"refused %d" % self.counter, user_data=b"")
        if defect == "blob too large":  # one byte above QUEUE-6's limit of the queue's type
            return self._blob_of(1 + (MACHINE_CONFIG.contact_blob_limit if contact
                                      else MACHINE_CONFIG.invitation_blob_limit))
        two = make_link_blob(link, rnd, data, [
            OptionalLinkData(kind=OptionalPartKind.Profile, data=b"p")])
        if defect == "optional part first":
            return LinkBlob(parts=two.parts[::-1])
        assert defect == "two mandatory parts"
        return LinkBlob(parts=(two.parts[0], two.parts[0]))

    # --- refusals ----------------------------------------------------------------------------

    @precondition(lambda self: self._live() and self.stats["rule refusals"] < 1)
    @rule(q=PICK, s=PICK, t=PICK, at=PICK, contact=st.booleans())
    def refusals(self, q: int, s: int, t: int, at: int, contact: bool) -> None:
        """A round of what the spec refuses, each answer predicted by the oracle and each
        refusal read back where it could have changed something: a NEW with each defect, an
        LSET with a bad blob, a badly signed LGET, a SEND above (or at) the size limit, a
        sender's command to a deleted queue or to none, two senders racing for one link, LGET
        of a low-order k, an ACK of another message than the one in flight, SKEY with another
        key to a secured queue, SUB after GET, and a queue the store cannot read. One rule,
        once per run, so that the runs keep their steps for the conversations the other floors
        need."""
        self._fired("refusals")
        for defect in sorted(NEW_DEFECTS):
            self._create_refused(s, defect, at, contact)
        self._lset_refused(q, BLOB_DEFECTS[at % len(BLOB_DEFECTS)])
        settable = [h for h in self._live() if h.link and h.link_data and not (
            h.spec.mode == "invitation" and h.spec.secured)]
        if settable:  # and on a queue whose link can be set, every defect of a blob
            for defect in BLOB_DEFECTS:
                self._lset_refused(q, defect, settable)
        if any(h.link for h in self.handles):
            self._lget_badly_signed(q, s)
        for extra in (0, 1 + at % 64):  # at the limit, and above it
            self._send_too_large(q, s, signed=at % 2 == 0, extra=extra)
        if any(h.spec.deleted for h in self.handles):
            for command in ("SEND", "SKEY"):
                self._to_a_deleted_queue(q, s, command)
        self._skey_to_no_queue(s)
        self._sub_after_get(q)
        if len(self._live()) < MAX_QUEUES:  # and the rarer form of NEW, without its request
            self.create(s=s, contact=True, with_link=False, optional_parts=0, with_ntf=False,
                        subscribe=False, x25519_auth=False)
        self._unreadable_queue(q, s, at % 7)
        if any(h.link and h.link_data for h in self._live()) or \
                len(self._live()) < MAX_QUEUES:
            self._race_for_the_link(q, s, t)
        if not self.stats["low-order links"]:
            self._lget_low_order_k(s, LOW_ORDER_POINTS[at % len(LOW_ORDER_POINTS)])
        self._ack_another(q, at)
        self._blob_limits(s)
        secured = [h for h in self._live() if h.sender_key is not None and not h.contact]
        if secured:
            self._skey(secured[q % len(secured)], self._session(s), own_key=False,
                       signed_by_other=False)

    def _ack_another(self, q: int, at: int) -> None:
        """ACK, from a session with a record in flight, of an ID that is not that record's:
        ``ERR NO_MSG``, and the record stays in flight (MSG-4)."""
        pending = [(h, c) for h in self._live() for c in self.sessions
                   if c.session_id in h.spec.in_flight]
        if not pending:
            return
        handle, session = pending[q % len(pending)]
        msg_id = (b"\x00" if at % 2 else b"\xff") * 24
        expected = self.spec.ack(handle.spec, session.session_id, msg_id)
        self._exchange("ACK (another)", session, ACK(msg_id=msg_id), handle.rid,
                       handle.owner.auth_key, expected=expected)

    def _lset_refused(self, q: int, defect: str,
                      among: list[QueueHandle] | None = None) -> None:
        """LSET of a blob the spec refuses (QUEUE-6, QUEUE-8), after the queue's own reasons
        (LINK-5), to the ``q``-th live queue or of ``among``; the link reads back as it was."""
        handle = among[q % len(among)] if among else self._queue(q)
        blob = self._bad_blob(handle.link or LinkKeys.generate(self.lb.client_random), defect,
                              contact=handle.contact)
        sid = handle.owner_session.session_id
        expected = self.spec.lset(handle.spec, sid, has_link=handle.link is not None,
                                  defect=defect)
        self._as_owner("LSET!", handle, LSET(enc_link_data=blob), expected)
        self._read_link_back(handle, "LSET refused")

    def _create_refused(self, s: int, defect: str, at: int, contact: bool) -> None:
        """NEW with one defect the spec names (:data:`NEW_DEFECTS`): refused, nothing created,
        nobody subscribed; the sender ID it chose names no queue afterwards."""
        session, rnd = self._session(s), self.lb.client_random
        auth, signer = AuthKeyPair.ed25519(rnd), None
        link = LinkKeys.generate(rnd)
        blob = make_link_blob(link, rnd, LinkData(conn_req=b"refused", user_data=b""), [])
        link_id, sender_id, notifier_id = link.link_id, rnd(24), rnd(24)
        rcv_dh, ntf_dh = DhKeyPair.generate(rnd).public, DhKeyPair.generate(rnd).public
        password = MACHINE_CONFIG.basic_auth
        low = PublicKey(KeyAlgorithm.X25519, LOW_ORDER_POINTS[at % len(LOW_ORDER_POINTS)])
        live = self._live()
        # the IDs in use, as the oracle knows them (NDEL frees the notifier ID, CMD-15)
        taken = [i for h in live for i in (h.rid, h.owner.sender_id, h.spec.notifier_id)
                 if i]
        linked = [h.link.link_id for h in live if h.link is not None and h.link_data is not None]
        if defect == "taken link ID" and not linked:
            defect = "one ID twice"
        if defect == "signed by another key":
            signer = AuthKeyPair.ed25519(rnd)
        elif defect in ("wrong password", "no password"):
            password = None if defect == "no password" else b"another password"
        elif defect in ("short link ID", "long link ID"):  # each length on both sides
            link_id = rnd(31 if defect.startswith("short") else 33)
        elif defect in ("short sender ID", "long sender ID"):
            sender_id = rnd(23 if defect.startswith("short") else 25)
        elif defect in ("short notifier ID", "long notifier ID"):
            notifier_id = rnd(23 if defect.startswith("short") else 25)
        elif defect in BLOB_DEFECTS:
            blob = self._bad_blob(link, defect, contact=contact)
        elif defect == "taken sender ID":
            sender_id = taken[at % len(taken)]
        elif defect == "taken notifier ID":
            notifier_id = taken[at % len(taken)]
        elif defect == "taken link ID":
            link_id = linked[at % len(linked)]
        elif defect == "one ID twice":
            notifier_id = sender_id
        elif defect == "low-order DH key":
            rcv_dh = low
        else:
            assert defect == "low-order notifier DH key"
            ntf_dh = low
        self.stats["NEW refused: " + defect] += 1
        new = NEW(
            rcv_auth_key=auth.public,
            rcv_dh_key=rcv_dh,
            basic_auth=password,
            sub_mode=SubscriptionMode.Subscribe,
            queue_request=QueueRequest(
                conn_mode=ConnectionMode.Contact if contact else ConnectionMode.Invitation,
                queue_link=QueueLink(link_id=link_id, sender_id=sender_id,
                                     enc_link_data=blob)),
            ntf_request=NtfRequest(notifier_id=notifier_id,
                                   ntf_auth_key=AuthKeyPair.ed25519(rnd).public,
                                   rcv_ntf_dh_key=ntf_dh),
        )
        replies = session.send(new, key=signer or auth)
        self._check(f"NEW! {defect}", self._collect(session, replies),
                    self.spec.refused_new(session.session_id, defect))
        if len(sender_id) == 24 and sender_id not in taken:  # nothing was created (QUEUE-10)
            self._exchange("SEND to a refused NEW", session,
                           SEND(flags=MsgFlags(notification=False), body=self._body()),
                           sender_id, None,
                           expected=Expected.one(session.session_id, "ERR AUTH", "AUTH-3")
                           .note("QUEUE-10"))
            self.stats["read back NEW refused"] += 1

    @staticmethod
    def _blob_of(size: int) -> LinkBlob:
        """A blob of exactly ``size`` encoded bytes: one mandatory part the server cannot
        read (it never decrypts link data)."""
        def blob(sealed: int) -> LinkBlob:
            return LinkBlob(parts=(LinkPart(priority=LinkPartPriority.Mandatory,
                                            sealed=b"x" * sealed),))
        out = blob(size - (len(blob(size).encode()) - size))
        assert len(out.encode()) == size
        return out

    def _blob_limits(self, s: int) -> None:
        """QUEUE-6 at each queue type's limit: a blob of exactly the limit is taken and one
        byte more is not; the queue taken is deleted at once, so that it leaves no blob."""
        session, rnd = self._session(s), self.lb.client_random
        sid = session.session_id
        for mode, limit in ((ConnectionMode.Invitation, MACHINE_CONFIG.invitation_blob_limit),
                            (ConnectionMode.Contact, MACHINE_CONFIG.contact_blob_limit)):
            for size in (limit, limit + 1):
                auth = AuthKeyPair.ed25519(rnd)
                new = NEW(rcv_auth_key=auth.public, rcv_dh_key=DhKeyPair.generate(rnd).public,
                          basic_auth=MACHINE_CONFIG.basic_auth,
                          sub_mode=SubscriptionMode.OnlyCreate,
                          queue_request=QueueRequest(conn_mode=mode, queue_link=QueueLink(
                              link_id=rnd(32), sender_id=rnd(24),
                              enc_link_data=self._blob_of(size))),
                          ntf_request=None)
                label = f"NEW ({mode.name} blob of {size})"
                if size > limit:
                    self._exchange(label, session, new, b"", auth,
                                   expected=Expected.one(sid, "ERR LARGE_MSG", "QUEUE-6"))
                    continue
                queue, expected = self.spec.new(
                    sid, "contact" if mode is ConnectionMode.Contact else "invitation",
                    self.now, False, None)
                replies = self._exchange(label, session, new, b"", auth, expected=expected)
                rid = replies[0].expect(IDS).rcv_id
                self._exchange("DEL", session, DEL(), rid, auth,
                               expected=self.spec.delete(queue, sid, rid))
                self.stats["blobs at the limit"] += 1

    def _lget_low_order_k(self, s: int, point: bytes) -> None:
        """A creator may choose any link ID, SHA-256 of a low-order point too (the server
        cannot know k from it); LGET with that k finds the queue and answers ``ERR AUTH``:
        nobody holds its secret, so no LINK can be sealed to it (LINK-9)."""
        self.stats["low-order links"] += 1
        session, rnd = self._session(s), self.lb.client_random
        auth = AuthKeyPair.ed25519(rnd)
        link = LinkKeys.generate(rnd)
        new = NEW(
            rcv_auth_key=auth.public,
            rcv_dh_key=DhKeyPair.generate(rnd).public,
            basic_auth=MACHINE_CONFIG.basic_auth,
            sub_mode=SubscriptionMode.OnlyCreate,
            queue_request=QueueRequest(conn_mode=ConnectionMode.Invitation, queue_link=QueueLink(
                link_id=hashlib.sha256(point).digest(), sender_id=rnd(24),
                enc_link_data=make_link_blob(link, rnd, LinkData(conn_req=b"k", user_data=b"")))),
            ntf_request=None,
        )
        # no rule picks the queue, nothing is pushed for it; the sweep walks it (RET-7)
        stray, expected = self.spec.new(session.session_id, "invitation", self.now, False, None)
        replies = self._exchange("NEW (low-order link)", session, new, b"", auth,
                                 expected=expected)
        stray.rid = replies[0].expect(IDS).rcv_id
        assert new.queue_request is not None and new.queue_request.queue_link is not None
        self._stored_blob(stray, new.queue_request.queue_link.enc_link_data)
        self.strays.append(stray)
        self._exchange("LGET (low-order k)", session, LGET(sender_key=None), point, None,
                       expected=Expected.one(session.session_id, "ERR AUTH", "LINK-9"))

    def _lget_badly_signed(self, q: int, s: int) -> None:
        """LGET with a key, signed by another: ``ERR AUTH`` (LINK-8), and nothing secured."""
        linked = [h for h in self.handles if h.link is not None]
        handle, session = linked[q % len(linked)], self._session(s)
        assert handle.link is not None
        rnd = self.lb.client_random
        # LINK-8 when the link's queue is found; else no queue has the link (LINK-6)
        found = not handle.spec.deleted and handle.link_data is not None
        self._exchange("LGET*", session, LGET(sender_key=AuthKeyPair.ed25519(rnd).public),
                       handle.link.k, AuthKeyPair.ed25519(rnd),
                       expected=Expected.one(session.session_id, "ERR AUTH",
                                             "LINK-8" if found else "LINK-6"))

    # --- messages ----------------------------------------------------------------------------

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
    def send(self, q: int, s: int, signed: bool, notify: bool) -> None:
        """SEND signed with the queue's sender key, or unsigned (MSG-1)."""
        self._fired("send")
        handle = self._queue(q)
        self._send(handle, self._session(s), handle.sender_key if signed else None, notify)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, count=st.integers(1, 6), notify=st.booleans())
    def send_burst(self, q: int, s: int, count: int, notify: bool) -> None:
        """Several messages in a row, as the sender would send them: quotas, key updates,
        notifications."""
        self._fired("send_burst")
        handle = self._queue(q)
        for _ in range(count):
            self._send(handle, self._session(s), handle.sender_key, notify=notify)

    def _send_too_large(self, q: int, s: int, *, signed: bool, extra: int) -> None:
        """SEND of a body above the limit (MSG-5): ``ERR LARGE_MSG``, nothing stored; with
        ``extra`` 0, a body of exactly the limit, which is a message like any other."""
        handle, session = self._queue(q), self._session(s)
        key = handle.sender_key if signed else None
        if not extra:
            self._send(handle, session, key, notify=False, label="SEND (at the limit)",
                       size=MACHINE_CONFIG.max_message_length)
            return
        expected = self.spec.send_too_large(handle.spec, session.session_id,
                                            key.public.raw if key else None)
        body = b"x" * (MACHINE_CONFIG.max_message_length + extra)
        self._exchange("SEND!", session, SEND(flags=MsgFlags(notification=False), body=body),
                       handle.owner.sender_id, key, expected=expected)

    def _skey_to_no_queue(self, s: int) -> None:
        """SKEY to a sender ID no queue ever had: ``ERR AUTH`` (AUTH-3), as to a deleted one."""
        session, key = self._session(s), AuthKeyPair.ed25519(self.lb.client_random)
        nobody = SpecQueue(mode="invitation", updated_day=0, deleted=True)
        expected = self.spec.secure(nobody, session.session_id, key.public.raw, self.now,
                                    allowed=True)
        self._exchange("SKEY (no queue)", session, SKEY(sender_key=key.public),
                       self.lb.client_random(24), key, expected=expected)

    def _sub_after_get(self, q: int) -> None:
        """A session of a queue's owner that is not its subscriber GETs from it and then
        SUBscribes to it: ``ERR CMD PROHIBITED``, a session that GETs does not subscribe
        (MSG-3)."""
        live = self._live()
        if not live:
            return
        handle = live[q % len(live)]
        others = [c for c in self.sessions if c.session_id != handle.spec.subscriber]
        if not others:
            return
        owner = others[q % len(others)]
        self._exchange("GET", owner, GET(), handle.rid, handle.owner.auth_key,
                       expected=self.spec.get(handle.spec, owner.session_id))
        self._exchange("SUB (after GET)", owner, SUB(), handle.rid, handle.owner.auth_key,
                       expected=self.spec.sub(handle.spec, owner.session_id, handle.rid,
                                              self.now))

    def _to_a_deleted_queue(self, q: int, s: int, command: str) -> None:
        """A sender's command to a queue that is gone: ``ERR AUTH``, as for an ID never used
        (MSG-8, AUTH-3)."""
        gone = [h for h in self.handles if h.spec.deleted]
        handle, session = gone[q % len(gone)], self._session(s)
        key = AuthKeyPair.ed25519(self.lb.client_random)
        if command == "SEND":
            self._send(handle, session, None, notify=False, label="SEND (deleted)")
        else:
            expected = self.spec.secure(handle.spec, session.session_id, key.public.raw,
                                        self.now, allowed=True)
            self._exchange("SKEY (deleted)", session, SKEY(sender_key=key.public),
                           handle.owner.sender_id, key, expected=expected)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK)
    def send_with_wrong_key(self, q: int, s: int) -> None:
        """SEND signed with a key that is not the queue's: ERR AUTH, nothing stored (MSG-1)."""
        self._fired("send_with_wrong_key")
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
    def sub(self, q: int, s: int) -> None:
        self._fired("sub")
        handle, session = self._queue(q), self._session(s)
        expected = self.spec.sub(handle.spec, session.session_id, handle.rid, self.now)
        self._exchange("SUB", session, SUB(), handle.rid, handle.owner.auth_key, expected=expected)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK)
    def get(self, q: int, s: int) -> None:
        self._fired("get")
        handle, session = self._queue(q), self._session(s)
        expected = self.spec.get(handle.spec, session.session_id)
        self._exchange("GET", session, GET(), handle.rid, handle.owner.auth_key, expected=expected)

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, which=st.sampled_from(["in flight", "empty", "below", "above"]))
    def ack(self, q: int, s: int, which: str) -> None:
        """ACK of the record in flight by its ID, with an empty ID (matches any), or with an ID
        no record has (MSG-4)."""
        self._fired("ack")
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
    def read_to_the_end(self, q: int, s: int, suspend: bool) -> None:
        """The owner reads a queue to the end; with ``suspend``, after OFF (ROT-3, ROT-4),
        which a sender has just raced with two messages, so that ``last`` goes to the last
        record and not to the first of several."""
        self._fired("read_to_the_end")
        handle = self._queue(q)
        if suspend and self.stats["rule off"] < 2:
            for _ in range(2):
                self._send(handle, self._session(s), handle.sender_key, notify=False)
            self.off(q)
        self._read_all(handle, s)
        if handle.spec.suspended and not handle.spec.records:
            self.stats["suspended queues drained"] += 1

    @precondition(lambda self: self._live())
    @rule(q=PICK, s=PICK, count=st.integers(1, 6), notify=st.booleans())
    def conversation(self, q: int, s: int, count: int, notify: bool) -> None:
        """What a queue is for: its sender sends a few messages, its owner reads them all."""
        self._fired("conversation")
        handle = self._queue(q)
        for _ in range(count):
            self._send(handle, self._session(s), handle.sender_key, notify=notify)
        self._read_all(handle, s)

    @precondition(lambda self: self._live() and self.stats["rule off"] < 2)
    @rule(q=PICK)
    def off(self, q: int) -> None:
        self._fired("off")
        handle = self._queue(q)
        expected = self.spec.off(handle.spec, handle.owner_session.session_id)
        self._as_owner("OFF", handle, OFF(), expected)
        # read back: a suspended queue takes no message (ROT-3)
        self._send(handle, handle.owner_session, handle.sender_key, notify=False,
                   label="SEND after OFF")
        self.stats["read back OFF"] += 1

    @precondition(lambda self: self._live() and self.stats["rule delete"] < 2)
    @rule(q=PICK, s=PICK, unread=st.integers(0, 3))
    def delete(self, q: int, s: int, unread: int) -> None:
        """DEL, after the sender sent ``unread`` more messages: a queue deleted with messages
        in it, and with its subscriptions, takes them all (MSG-8)."""
        self._fired("delete")
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

    # --- notifications -----------------------------------------------------------------------

    @precondition(lambda self: any(h.spec.ntf_subscriber for h in self._live()))
    @rule(q=PICK, send_first=st.booleans())
    def notifier_reconnects(self, q: int, send_first: bool) -> None:
        """The notification server subscribes again from a new connection: the old one gets
        END (CMD-33), and the next notified message reaches only the new one (MSG-7)."""
        self._fired("notifier_reconnects")
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
    def nsub(self, q: int, s: int, right_key: bool) -> None:
        """NSUB with the notifier key, or another (AUTH-1)."""
        self._fired("nsub")
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

    @precondition(lambda self: self._live() and self.stats["rule ndel"] < 2)
    @rule(q=PICK)
    def ndel(self, q: int) -> None:
        self._fired("ndel")
        handle = self._queue(q)
        expected = self.spec.ndel(handle.spec, handle.owner_session.session_id)
        self._as_owner("NDEL", handle, NDEL(), expected)
        if handle.notifier_key is not None:  # read back: its credentials subscribe no more
            self._nsub(handle, handle.owner_session, right_key=True)
            self.stats["read back NDEL"] += 1

    # --- credentials -------------------------------------------------------------------------

    @precondition(lambda self: self._live())
    @rule(
        q=PICK,
        s=PICK,
        credential=st.sampled_from(["none", "other key", "sender ID"]),
    )
    def unauthorized(self, q: int, s: int, credential: str) -> None:
        """Every recipient command without its key, with another key, or naming the queue by
        its sender ID: refused (TRANS-7, AUTH-1, AUTH-2), and nothing changes."""
        self._fired("unauthorized")
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

    # --- robustness --------------------------------------------------------------------------

    @precondition(lambda self: self.stats["rule garbage"] < 3)
    @rule(s=PICK, data=st.binary(max_size=64))
    def garbage(self, s: int, data: bytes) -> None:
        """Malformed bytes never crash the server and are answered with one ERR."""
        self._fired("garbage")
        session = self._session(s)
        replies = session.send_raw(data)
        self.trace.append(f"GARBAGE -> {[r.tag for r in replies]}")
        # Random bytes are an ERR, unless they happen to spell a PING (b"\x00\x00\x00PING").
        assert len(replies) == 1 and replies[0].tag in ("ERR", "PONG")
        assert not self._collect(None, []), "garbage made the server push to a session"

    @precondition(lambda self: self.stats["rule ping"] < 2)
    @rule(s=PICK)
    def ping(self, s: int) -> None:
        self._fired("ping")
        session = self._session(s)
        self._exchange(
            "PING",
            session,
            PING(),
            b"",
            None,
            expected=Expected.one(session.session_id, "PONG", "CMD-22"),
        )

    # --- time --------------------------------------------------------------------------------

    @precondition(lambda self: self._live() and self.stats["rule advance_and_expire"] < 4)
    @rule(days=st.integers(0, 6), q=PICK, to_the_period=st.booleans())
    def advance_and_expire(self, days: int, q: int, to_the_period: bool) -> None:
        """Time passes and a whole sweep runs: queues past their period go (RET-1..RET-4,
        RET-6) and old messages leave from the head (RET-5). With ``to_the_period``, once per
        run, the time is what brings a queue to exactly its period: the sweep keeps it (RET-3:
        never inside it; RET-1, RET-2: strictly older), and a day later the next removes it."""
        self._fired("advance_and_expire")
        candidates = self._can_expire()
        if not (to_the_period and candidates and not self.stats["to the period"]):
            self._expire_after(days)
            return
        self.stats["to the period"] += 1
        handle = candidates[q % len(candidates)]
        period = (LIMITS.contact_days if handle.spec.mode == "contact"
                  else LIMITS.unsecured_invitation_days)
        self._expire_after(period - (self.now // DAY - handle.spec.updated_day))
        assert not handle.spec.deleted, "the oracle expires a queue at its period"
        self._expire_after(1)
        self.stats["queues expired at the period's end"] += handle.spec.deleted

    def _unreadable_queue(self, q: int, s: int, days: int) -> None:
        """The store cannot read one queue (STORE-11): its owner's GET and a sender's SEND are
        ``ERR STORE`` and change nothing; ``days`` later a whole sweep skips it, reports it and
        sweeps every other queue (RET-7); once it reads again, it is as it was (the
        invariants compare it with the oracle after this step)."""
        store, server = self.lb.store, self.lb.server
        if not isinstance(store, UnreadableQueues) or not self._live():
            return  # another store under the machine (smpref.testing.differential)
        handle, session = self._queue(q), self._session(s)
        reported = len(server.store_errors)
        store.unreadable.add(handle.rid)
        handle.spec.unreadable = True
        try:
            owner = handle.owner_session
            self._exchange("GET (unreadable)", owner, GET(), handle.rid, handle.owner.auth_key,
                           expected=self.spec.unreadable(handle.spec, owner.session_id))
            self._exchange("SEND (unreadable)", session, SEND(
                flags=MsgFlags(notification=False), body=self._body()), handle.owner.sender_id,
                handle.sender_key, expected=self.spec.unreadable(handle.spec,
                                                                 session.session_id))
            self._expire_after(days)
        finally:
            store.unreadable.discard(handle.rid)
            handle.spec.unreadable = False
        errors = server.store_errors[reported:]
        # two commands and at least the scan: each reported, naming the queue's folder
        assert len(errors) >= 3, f"the server reported {len(errors)} store errors, not 3"
        assert all(handle.rid.hex() in error for error in errors), errors
        self.stats["store errors reported"] += len(errors)

    def _can_expire(self) -> list[QueueHandle]:
        """The live queues that expire by date and are not past their period yet."""
        return [h for h in self._live() if (h.spec.mode == "contact" or not h.spec.secured)
                and self.now // DAY - h.spec.updated_day <= (
                    LIMITS.contact_days if h.spec.mode == "contact"
                    else LIMITS.unsecured_invitation_days)]

    def _expire_after(self, days: int) -> None:
        """``days`` pass and a whole sweep runs, predicted by the oracle."""
        self.lb.clock.advance(days * DAY)
        expected = Expected()  # the oracle cites what the sweep does, as it does it
        live = self._live()
        self._swept(live, self.spec.full_sweep(self._spec_queues(), self.now, expected))
        self.lb.expire()
        self._check(f"EXPIRE {days}", self._collect(None, []), expected, any_order=True)
        self._relieved()

    def _spec_queues(self) -> list[SpecQueue]:
        """Every queue the server holds, as the oracle knows them (the sweep walks all)."""
        return [h.spec for h in self.handles] + self.strays

    def _swept(self, live: list[QueueHandle], expired: list[tuple[SpecQueue, Rec]]) -> None:
        """The machine's books after a sweep: queues and messages that expired."""
        for handle in live:
            if handle.spec.deleted:
                self.stats["queues expired"] += 1
        for handle in self.handles:
            mine = [rec for queue, rec in expired if queue is handle.spec]
            handle.expired += [rec.body for rec in mine if rec.body is not None]
            self.stats["messages expired"] += len(mine)

    def _relieved(self) -> None:
        """A queue whose blob the oracle says relief reduced to its mandatory part shows no
        optional part from now on (QUEUE-9): LGET must show exactly that."""
        for handle in self._live():
            if handle.link_data and handle.link_data[1] and \
                    handle.spec.blob == handle.spec.mandatory:
                handle.link_data = (handle.link_data[0], [])
                self.stats["blobs relieved"] += 1

    def _settable(self) -> list[QueueHandle]:
        """The live queues whose owner can still set link data (LINK-5: not a secured
        invitation)."""
        return [h for h in self._live() if h.link and h.link_data and not (
            h.spec.mode == "invitation" and h.spec.secured)]

    @precondition(lambda self: self._settable() and self.stats["rule under_pressure"] < 2)
    @rule(q=PICK, limit=st.integers(1, 3))
    def under_pressure(self, q: int, limit: int) -> None:
        """An owner sets large optional link parts, and the sweep runs a cycle to its end a
        slice at a time: when the blobs are above the high water mark, relief drops optional
        parts, least recently updated queues first, down to the low water mark (QUEUE-9); every
        link then reads back as the oracle says."""
        self._fired("under_pressure")
        settable = self._settable()
        self._lset(settable[q % len(settable)], 2, b"p" * 600)
        self._cycle_to_end(limit, "PRESSURE")

    def _cycle_to_end(self, limit: int, label: str,
                      between: Callable[[], None] | None = None) -> None:
        """Slices of ``limit`` queues until the cycle ends, each predicted by the oracle, with
        ``between`` called after each slice that did not end it; then every link reads back as
        the oracle says."""
        for index in range(64):  # a cycle over a few queues ends well before
            if self._slice(limit, f"{label} {index}"):
                break
            if between is not None:
                between()
        for handle in self._live():
            self._read_link_back(handle, "relief")

    @precondition(lambda self: (self._settable() or len(self._live()) < MAX_QUEUES)
                  and self.stats["rule relief_by_day"] < 1)
    @rule(sets=st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3), st.integers(20, 900)),
                        min_size=2, max_size=4),
          first=PICK, limit=st.integers(1, 3), grow=st.sampled_from([0, 300, 900]))
    def relief_by_day(self, sets: list[tuple[int, int, int]], first: int, limit: int,
                      grow: int) -> None:
        """Owners set optional link parts on different days and subscribe, which moves their
        queues' ``updated_at`` (QUEUE-5; ``sets``: days to wait, how many parts, how large),
        and a fresh sweep cycle runs to its end a slice at a time. When the blobs are above the
        high water mark, relief frees the excess least recently updated first: every queue
        updated before the cutoff day loses its optional parts, and of the cutoff day's, in ID
        order, as many as the budget covers, never below the low water mark (QUEUE-9). The
        sizes often cover the excess only in part, so some queues keep their parts; every link
        then reads back as the oracle says. ``grow``: once relief has started, an owner sets a
        part that large, so that the blobs stay above the low water mark and the plan's
        budget, not the mark, stops the relief."""
        self._fired("relief_by_day")
        for index in range(64):  # a cycle under way ends first: this one starts with a scan
            if self.spec.cycle == SweepCycle() or self._slice(256, f"FINISH {index}"):
                break
        while len(self._live()) < MAX_QUEUES:  # contact queues with links: more to relieve
            self.create(s=first, contact=True, with_link=True, optional_parts=0,
                        with_ntf=False, subscribe=False, x25519_auth=False)
        settable = self._settable()
        for number, (days, parts, size) in enumerate(sets):
            handle = settable[(first + number) % len(settable)]
            if handle.spec.deleted or not handle.link_data:
                continue
            self.lb.clock.advance(days * DAY)
            self._lset(handle, parts, b"r" * size)
            owner = handle.owner_session
            self._exchange("SUB", owner, SUB(), handle.rid, handle.owner.auth_key,
                           expected=self.spec.sub(handle.spec, owner.session_id, handle.rid,
                                                  self.now))
        grown: list[QueueHandle] = []

        def grow_once() -> None:  # the first slice of relief, when there is one
            growing = self._settable()
            if grow and growing and not grown and self.spec.cycle.relieving:
                grown.append(growing[first % len(growing)])
                self._lset(grown[0], 1, b"g" * grow)
                self.stats["relief grown"] += 1

        self._cycle_to_end(limit, "RELIEF", grow_once)

    def _slice(self, limit: int, label: str) -> bool:
        """One slice of the sweep over at most ``limit`` queues, predicted by the oracle first
        (RET-7, QUEUE-9) and checked: what it pushed, whether the cycle ended. Whether it did."""
        expected = Expected()
        live = self._live()
        predicted, done = self.spec.sweep_slice(self._spec_queues(), limit, self.now, expected)
        self._swept(live, predicted)
        ended = self.lb.sweep_slice(limit)
        assert ended == done, f"{label}: the cycle {'ended' if ended else 'goes on'}, the " \
            f"spec says {'it ends' if done else 'it goes on'}"
        self._check(label, self._collect(None, []), expected, any_order=True)
        self._relieved()
        self.stats["sweep slices"] += 1
        return done

    @precondition(lambda self: self._live() and self.stats["rule sweep_slices"] < 4)
    @rule(limit=st.integers(1, 3), slices=st.integers(1, 4), days=st.integers(0, 6))
    def sweep_slices(self, limit: int, slices: int, days: int) -> None:
        """Time passes and the sweep goes on a slice at a time, between other commands
        (RET-7): each slice handles the next ``limit`` queues in ID order, scanning them
        (RET-1..RET-6) or, once the scan left the blobs above the high water mark, relieving
        them (QUEUE-9); what each slice pushes and what LGET shows afterwards are the
        oracle's."""
        self._fired("sweep_slices")
        self.lb.clock.advance(days * DAY)
        for index in range(slices):
            self._slice(limit, f"SLICE {index} of {limit}")
            if self.spec.cycle.relieving:
                self.stats["slices into relief"] += 1

    # --- invariants --------------------------------------------------------------------------

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


@dataclass(frozen=True)
class RunResult:
    """The outcome of one seeded run, as plain data."""

    seed: int
    ok: bool
    steps: int
    trace_digest: str
    seconds: float
    failure: str = ""


def run_seed(
    seed: int,
    *,
    examples: int = 5,
    steps: int = 40,
    machine_class: type[QueueMachine] = QueueMachine,
) -> RunResult:
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
        with same_draws_everywhere():  # the same seed, the same program, in any process
            run_state_machine_as_test(
                machine,
                settings=settings(
                    max_examples=examples,
                    stateful_step_count=steps,
                    deadline=None,
                    database=None,
                    derandomize=False,
                    print_blob=True,
                    suppress_health_check=list(HealthCheck),
                ),
            )
    except Exception as exc:  # a failing run is data, not a crash: the caller reports it
        notes = "\n".join(getattr(exc, "__notes__", []))
        failure = f"{type(exc).__name__}: {exc}\n{notes}"
    machine_class.totals().update(Seeded.totals())
    digest = hashlib.sha256("\n".join(traces).encode()).hexdigest()
    return RunResult(
        seed,
        not failure,
        sum(1 for t in traces if t != "--"),
        digest,
        time.perf_counter() - started,
        failure,
    )
