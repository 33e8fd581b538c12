"""An abstract server written from spec/, the oracle of the queue state machines.

It knows nothing of :mod:`smpref.model`, of the store or of the wire: a queue is a plain list
of abstract records, a subscription is a session name, a message ID is whatever the server
under test chose the first time it delivered the record (bound then, checked ever after). Each
command method applies one spec rule to this state and returns what every session must receive
(:class:`Expected`). The state machine compares that with what the server under test really
sent, so a rule that is wrong in the model and "agrees with itself" cannot pass: the expectation
never comes from the code under test.

What each method implements is named by requirement ID in its docstring; nothing here is
imported from the model, and ``tests/test_architecture.py`` keeps it that way.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["I", "M", "U", "Q"]
Session = bytes

DAY = 86400
#: QENC-7: MSG's RcvMessage is padded to this many bytes before it is sealed
RCV_MESSAGE_PADDED = 16106
#: MSG-7: NMSG's metadata is padded to this many bytes before it is sealed
NMSG_PADDED = 128

#: what a NEW with exactly one defect is answered with, and why (QUEUE-10, QUEUE-3, QUEUE-4,
#: QUEUE-6, QUEUE-8, AUTH-1): the spec orders none of them against another, so the machine
#: draws one at a time
NEW_DEFECTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "signed by another key": ("ERR AUTH", ("AUTH-1", "CMD-10")),
    "wrong password": ("ERR AUTH", ("QUEUE-10",)),
    "no password": ("ERR AUTH", ("QUEUE-10",)),
    "short link ID": ("ERR CMD SYNTAX", ("QUEUE-10",)),
    "long link ID": ("ERR CMD SYNTAX", ("QUEUE-10",)),
    "short sender ID": ("ERR CMD SYNTAX", ("QUEUE-10",)),
    "long sender ID": ("ERR CMD SYNTAX", ("QUEUE-10",)),
    "short notifier ID": ("ERR CMD SYNTAX", ("QUEUE-10",)),
    "long notifier ID": ("ERR CMD SYNTAX", ("QUEUE-10",)),
    "blob too large": ("ERR LARGE_MSG", ("QUEUE-6",)),
    "optional part first": ("ERR CMD SYNTAX", ("QUEUE-8",)),
    "two mandatory parts": ("ERR CMD SYNTAX", ("QUEUE-8",)),
    "taken sender ID": ("ERR AUTH", ("QUEUE-3", "QUEUE-4")),
    "taken notifier ID": ("ERR AUTH", ("QUEUE-3", "QUEUE-4")),
    "taken link ID": ("ERR AUTH", ("QUEUE-3", "QUEUE-4")),
    "one ID twice": ("ERR AUTH", ("QUEUE-3", "QUEUE-4")),
    "low-order DH key": ("ERR CMD SYNTAX", ("QUEUE-10",)),
    "low-order notifier DH key": ("ERR CMD SYNTAX", ("QUEUE-10",)),
}
#: the defects of a link blob, for NEW and LSET alike (QUEUE-6, QUEUE-8)
BLOB_DEFECTS = ("blob too large", "optional part first", "two mandatory parts")


@dataclass(frozen=True)
class Limits:
    """The server configuration the oracle needs (the machine's small limits)."""

    quota: int
    message_ttl_seconds: int
    unsecured_invitation_days: int
    contact_days: int
    ratchet_update_interval: int
    #: QUEUE-9's marks on the total size of stored blobs
    blob_high_water: int
    blob_low_water: int


@dataclass(eq=False)
class Rec:
    """One stored record (QENC-6): its kind, sequence number, body (Message records only), the
    time it was stored and its notification flag. ``msg_id`` is bound at its first delivery."""

    uid: int
    kind: Kind
    seq: int
    at: int
    body: bytes | None = None
    notify: bool = False
    msg_id: bytes | None = None


@dataclass(frozen=True)
class Delivery:
    """A MSG that must reach a session: this record, with this ``last`` flag (ROT-4); ``corr``
    says whether it answers the command (GET, ACK) rather than being pushed (SUB, SEND)."""

    rec: Rec
    last: bool
    corr: bool


@dataclass(frozen=True)
class Notice:
    """An NMSG that must reach the notifier's subscriber: about this record (MSG-7)."""

    rec: Rec
    notifier_id: bytes


#: what one session must receive: "OK", "PONG", "ERR <kind>", ("COUNT", n), ("END", entity),
#: "IDS", "LINK", a Delivery or a Notice
Event = str | tuple[str, object] | Delivery | Notice


@dataclass
class Expected:
    """Every transmission each session must receive after one step, in order per session."""

    events: dict[Session, list[Event]] = field(default_factory=dict)
    #: the requirements whose rules decided these events (what a match confirms); the model
    #: must report each of them for the step (the machine compares, issue 30)
    requirements: set[str] = field(default_factory=set)
    #: requirements a match confirms too, though no rule of the model applies them at this
    #: step: what must not happen (RET-3, MSG-9), and a deleted queue's IDs naming nothing
    #: (MSG-8), which the server can no longer tell from IDs never used (AUTH-3)
    noted: set[str] = field(default_factory=set)

    def add(self, session: Session, event: Event) -> None:
        self.events.setdefault(session, []).append(event)

    def cite(self, *requirements: str) -> Expected:
        self.requirements.update(requirements)
        return self

    def note(self, *requirements: str) -> Expected:
        self.noted.update(requirements)
        return self

    @classmethod
    def one(cls, session: Session, event: Event, *requirements: str) -> Expected:
        out = cls()
        out.add(session, event)
        return out.cite(*requirements)


@dataclass(eq=False)
class SpecQueue:
    """What the spec says one queue is: its columns, its records and who reads it."""

    mode: Literal["invitation", "contact"]
    updated_day: int
    sender_key: bytes | None = None  # the public sender key once secured (QUEUE-11)
    suspended: bool = False  # ROT-3
    deleted: bool = False
    records: list[Rec] = field(default_factory=list)
    next_seq: int = 1  # Initial took 0 (QENC-6)
    since_update: int = 0  # messages that used the current chain (QENC-4)
    can_write: bool = True  # MSG-6
    subscriber: Session | None = None
    getters: set[Session] = field(default_factory=set)
    in_flight: dict[Session, Rec] = field(default_factory=dict)
    notifier_id: bytes | None = None
    ntf_subscriber: Session | None = None
    #: its recipient ID (the sweep walks queues in ID order, RET-7), and its blob as stored:
    #: the size, and the size with its optional parts dropped (QUEUE-6, QUEUE-9); 0 without
    rid: bytes = b""
    blob: int = 0
    mandatory: int = 0
    #: secured by LGET with a key: its link data goes at the next accepted SEND (LINK-11)
    drop_at_send: bool = False
    #: the store cannot read it (STORE-11): commands on it are ``ERR STORE``, a sweep skips it
    unreadable: bool = False

    @property
    def secured(self) -> bool:
        return self.sender_key is not None

    def counted(self) -> int:
        """Records the quota counts: messages and the quota marker (MSG-6)."""
        return sum(r.kind in ("M", "Q") for r in self.records)


@dataclass
class SweepCycle:
    """Where a sweep cycle is (RET-7): the last queue ID a slice handled, what the scan found
    by ``updated_at`` day, and a relief phase's cutoff day and budget (QUEUE-9)."""

    cursor: bytes | None = None
    by_day: dict[int, int] = field(default_factory=dict)
    relieving: bool = False
    cutoff_day: int = -1
    budget: int = 0


class SpecServer:
    """The abstract server: one :class:`SpecQueue` per queue the machine created."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.uids = itertools.count()
        self.cycle = SweepCycle()

    # --- shared steps ------------------------------------------------------------------------

    def _record(
        self,
        queue: SpecQueue,
        kind: Kind,
        now: int,
        body: bytes | None = None,
        notify: bool = False,
    ) -> Rec:
        """Append a record: Initial takes 0, Message and Update the next number, a quota marker
        carries the next number without taking it (QENC-6)."""
        seq = 0 if kind == "I" else queue.next_seq
        if kind in ("M", "U"):
            queue.next_seq += 1
        rec = Rec(next(self.uids), kind, seq, now, body, notify)
        queue.records.append(rec)
        return rec

    @staticmethod
    def _deliver_first(queue: SpecQueue, session: Session, *, corr: bool) -> Delivery | None:
        """The queue's first record goes to the session and is in flight there (MSG-2, MSG-3);
        it carries ``last`` exactly when it is the only record of a suspended queue (ROT-4)."""
        if not queue.records:
            return None
        first = queue.records[0]
        queue.in_flight[session] = first
        return Delivery(first, queue.suspended and len(queue.records) == 1, corr)

    def _push(self, queue: SpecQueue, out: Expected) -> None:
        """A record was added: a subscriber with nothing in flight gets the first record (MSG-2)."""
        sub = queue.subscriber
        if sub is not None and sub not in queue.in_flight:
            delivery = self._deliver_first(queue, sub, corr=False)
            if delivery is not None:
                out.add(sub, delivery)

    @staticmethod
    def _reopen_if_empty(queue: SpecQueue) -> None:
        """MSG-6: QUOTA holds until the queue is empty."""
        if not queue.records:
            queue.can_write = True

    def _remove(
        self, queue: SpecQueue, out: Expected, except_session: Session | None, rid: bytes
    ) -> None:
        """DEL and expiry: END to every other subscriber, recipient and notifier (MSG-8, RET-6)."""
        if queue.subscriber is not None and queue.subscriber != except_session:
            out.add(queue.subscriber, ("END", rid))
        if queue.ntf_subscriber is not None and queue.ntf_subscriber != except_session:
            out.add(queue.ntf_subscriber, ("END", queue.notifier_id))
        queue.deleted = True
        queue.records.clear()
        queue.in_flight.clear()
        queue.subscriber = queue.ntf_subscriber = None

    # --- commands ----------------------------------------------------------------------------

    def new(
        self,
        session: Session,
        mode: Literal["invitation", "contact"],
        now: int,
        subscribe: bool,
        notifier_id: bytes | None,
    ) -> tuple[SpecQueue, Expected]:
        """NEW: IDS; the Initial record is stored at once (QENC-1); with Subscribe, the session
        is subscribed and gets that record (MSG-2)."""
        queue = SpecQueue(mode, now // DAY, notifier_id=notifier_id)
        self._record(queue, "I", now)
        out = Expected.one(session, "IDS", "QUEUE-1", "QENC-1", "QENC-6")
        if subscribe:
            queue.subscriber = session
            self._push(queue, out)
            out.cite("MSG-2")
        return queue, out

    @staticmethod
    def refused_new(session: Session, defect: str) -> Expected:
        """NEW with one defect (:data:`NEW_DEFECTS`): refused, and nothing is created."""
        error, requirements = NEW_DEFECTS[defect]
        return Expected.one(session, error, *requirements)

    @staticmethod
    def lset(queue: SpecQueue, session: Session, *, has_link: bool,
             defect: str | None = None) -> Expected:
        """LSET (LINK-5): a secured invitation's link data is gone (``ERR AUTH``, LINK-11), a
        queue without a link has none to replace (``ERR CMD PROHIBITED``); both are about the
        queue and come before the blob's own defects (QUEUE-6, QUEUE-8)."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        if queue.mode == "invitation" and queue.secured:
            return Expected.one(session, "ERR AUTH", "LINK-5", "LINK-11")
        if not has_link:
            return Expected.one(session, "ERR CMD PROHIBITED", "LINK-5")
        if defect is not None:
            error, requirements = NEW_DEFECTS[defect]
            return Expected.one(session, error, *requirements)
        return Expected.one(session, "OK", "LINK-5")

    @staticmethod
    def unreadable(queue: SpecQueue, session: Session) -> Expected:
        """Any command on a queue the store cannot read: ``ERR STORE``, nothing changes, and
        the server serves every other queue (STORE-11)."""
        assert queue.unreadable
        return Expected.one(session, "ERR STORE", "STORE-11")

    @staticmethod
    def send_too_large(queue: SpecQueue, session: Session, key: bytes | None) -> Expected:
        """SEND of a body above the limit (MSG-5): checked once the sender is authorized and
        before the queue's status, so a suspended or full queue answers it too."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        if key != queue.sender_key:
            return Expected.one(session, "ERR AUTH", "MSG-1")
        return Expected.one(session, "ERR LARGE_MSG", "MSG-5")

    def secure(
        self, queue: SpecQueue, session: Session, key: bytes, now: int, *, allowed: bool,
        by_lget: bool = False,
    ) -> Expected:
        """KEY, SKEY, LGET with a key (QUEUE-11): the first key secures, the same key again is
        accepted and changes nothing, another key is ``ERR AUTH``; ``allowed`` is False where
        the command may not secure this queue at all (SKEY and LGET on a contact queue).
        Securing an invitation drops its link data at once, or at the next SEND when LGET
        secured it (LINK-11)."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        if not allowed or (queue.secured and queue.sender_key != key):
            return Expected.one(session, "ERR AUTH", "QUEUE-11")
        out = Expected.one(session, "OK", "QUEUE-11")
        if not queue.secured:
            queue.sender_key = key
            self._touch(queue, now, out)
            if queue.mode == "invitation" and queue.blob:
                out.cite("LINK-11")
                if by_lget:
                    queue.drop_at_send = True
                else:
                    queue.blob = queue.mandatory = 0
        return out

    @staticmethod
    def _touch(queue: SpecQueue, now: int, out: Expected) -> None:
        """QUEUE-5: ``updated_at`` moves to today, at most once a day."""
        if queue.updated_day != now // DAY:
            queue.updated_day = now // DAY
            out.cite("QUEUE-5")

    def send(
        self,
        queue: SpecQueue,
        session: Session,
        key: bytes | None,
        body: bytes,
        *,
        notify: bool,
        now: int,
    ) -> Expected:
        """SEND (MSG-1, ROT-3, MSG-6, QENC-2, QENC-4, MSG-2, MSG-7)."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        if key != queue.sender_key:
            return Expected.one(session, "ERR AUTH", "MSG-1")
        if queue.suspended:
            return Expected.one(session, "ERR AUTH", "ROT-3")
        if not queue.can_write:
            return Expected.one(session, "ERR QUOTA", "MSG-6")
        out = Expected()
        if queue.counted() >= self.limits.quota:
            self._record(queue, "Q", now)
            queue.can_write = False
            out.add(session, "ERR QUOTA")
            self._push(queue, out)
            return out.cite("MSG-6", "QENC-6")
        if queue.since_update >= self.limits.ratchet_update_interval:
            self._record(queue, "U", now)
            queue.since_update = 0
            out.cite("QENC-4")
        message = self._record(queue, "M", now, body, notify)
        queue.since_update += 1
        self._touch(queue, now, out)
        if queue.drop_at_send:  # LINK-11
            queue.blob = queue.mandatory = 0
            queue.drop_at_send = False
            out.cite("LINK-11")
        out.add(session, "OK")
        self._push(queue, out)
        if notify and queue.ntf_subscriber is not None and queue.notifier_id is not None:
            out.add(queue.ntf_subscriber, Notice(message, queue.notifier_id))
            out.cite("MSG-7")
        return out.cite("MSG-1", "MSG-2", "QENC-2")

    def sub(self, queue: SpecQueue, session: Session, rid: bytes, now: int) -> Expected:
        """SUB (MSG-2, MSG-3, CMD-33)."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        if session in queue.getters:
            return Expected.one(session, "ERR CMD PROHIBITED", "MSG-3")
        out = Expected()
        previous = queue.subscriber
        if previous is not None and previous != session:
            out.add(previous, ("END", rid))
            queue.in_flight.pop(previous, None)
            out.cite("CMD-33")
        queue.subscriber = session
        queue.in_flight.pop(session, None)  # a repeated SUB forgets the record in flight
        self._touch(queue, now, out)
        out.add(session, "OK")
        delivery = self._deliver_first(queue, session, corr=False)
        if delivery is not None:
            out.add(session, delivery)
        return out.cite("MSG-2")

    def get(self, queue: SpecQueue, session: Session) -> Expected:
        """GET (MSG-3)."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        if queue.subscriber == session:
            return Expected.one(session, "ERR CMD PROHIBITED", "MSG-3")
        queue.getters.add(session)
        delivery = self._deliver_first(queue, session, corr=True)
        return Expected.one(session, delivery if delivery is not None else "OK", "MSG-3")

    def ack(self, queue: SpecQueue, session: Session, msg_id: bytes) -> Expected:
        """ACK (MSG-4): removes the record in flight when the ID is its ID, also when another
        session's ACK removed it already; an empty ID clears what is in flight and removes
        nothing. Then the next MSG on a subscription (the same record after an empty ID)."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        in_flight = queue.in_flight.get(session)
        if in_flight is None or (msg_id and msg_id != in_flight.msg_id):
            return Expected.one(session, "ERR NO_MSG", "MSG-4")
        del queue.in_flight[session]
        if msg_id:
            if in_flight in queue.records:
                queue.records.remove(in_flight)
            self._reopen_if_empty(queue)
        if queue.subscriber == session:
            delivery = self._deliver_first(queue, session, corr=True)
            if delivery is not None:
                return Expected.one(session, delivery, "MSG-4", "MSG-2").note("MSG-9")
        return Expected.one(session, "OK", "MSG-4").note("MSG-9")

    def off(self, queue: SpecQueue, session: Session) -> Expected:
        """OFF (ROT-3): suspends; COUNT of every stored record, the one in flight included."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        queue.suspended = True
        return Expected.one(session, ("COUNT", len(queue.records)), "ROT-3", "ROT-4")

    def delete(self, queue: SpecQueue, session: Session, rid: bytes) -> Expected:
        """DEL (MSG-8)."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        out = Expected()
        self._remove(queue, out, session, rid)
        out.add(session, "OK")
        return out.cite("MSG-8")

    def nsub(self, queue: SpecQueue, session: Session) -> Expected:
        """NSUB (CMD-23, CMD-33): subscribes notifications; moves them from another session."""
        if queue.deleted or queue.notifier_id is None:  # its notifier ID names nothing now
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("CMD-15")
        out = Expected()
        if queue.ntf_subscriber is not None and queue.ntf_subscriber != session:
            out.add(queue.ntf_subscriber, ("END", queue.notifier_id))
            out.cite("CMD-33")
        queue.ntf_subscriber = session
        out.add(session, "OK")
        return out.cite("CMD-23")

    def ndel(self, queue: SpecQueue, session: Session) -> Expected:
        """NDEL (CMD-15): the notifier and its subscription are gone; OK also without one."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH", "AUTH-3").note("MSG-8")
        queue.notifier_id = None
        queue.ntf_subscriber = None
        return Expected.one(session, "OK", "CMD-15")

    # --- time --------------------------------------------------------------------------------

    def expires(self, queue: SpecQueue, today: int) -> bool:
        """RET-1..RET-4: strictly older than its period; secured invitations never by date."""
        age = today - queue.updated_day
        if queue.mode == "contact":
            return age > self.limits.contact_days
        return not queue.secured and age > self.limits.unsecured_invitation_days

    def full_sweep(self, queues: list[SpecQueue], now: int, out: Expected
                   ) -> list[tuple[SpecQueue, Rec]]:
        """A whole sweep cycle from a fresh start (RET-7), in the server's default slices."""
        self.cycle = SweepCycle()
        expired: list[tuple[SpecQueue, Rec]] = []
        done = False
        while not done:
            more, done = self.sweep_slice(queues, 256, now, out)
            expired += more
        return expired

    def sweep_slice(self, queues: list[SpecQueue], limit: int, now: int, out: Expected
                    ) -> tuple[list[tuple[SpecQueue, Rec]], bool]:
        """One slice (RET-7): the next ``limit`` queues in ID order after the cursor, scanned
        (RET-1..RET-6, and their optional blob bytes added up by day) or, in the relief phase,
        relieved (QUEUE-9). A slice that handled fewer than ``limit`` ends its phase: a scan
        that leaves the blobs above the high water mark starts relief from the first queue,
        anything else ends the cycle. ``queues``: every queue the server holds (deleted ones
        are passed over). Returns the messages that expired, and whether the cycle ended."""
        cycle = self.cycle
        out.cite("RET-7").note("RET-3")  # and no queue expires inside its period
        batch = sorted((q for q in queues if not q.deleted and (
            cycle.cursor is None or q.rid > cycle.cursor)), key=lambda q: q.rid)[:limit]
        expired: list[tuple[SpecQueue, Rec]] = []
        for queue in batch:
            if queue.unreadable:  # skipped and reported; the sweep goes on (RET-7)
                continue
            if cycle.relieving:
                if self._relieve(queues, queue):
                    out.cite("QUEUE-9")
            else:
                expired += [(queue, rec) for rec in self._scan(queue, now, out)]
        if len(batch) == limit:
            cycle.cursor = batch[-1].rid
            return expired, False
        total = self.blob_bytes(queues)
        if not cycle.relieving and total > self.limits.blob_high_water:
            self.cycle = self._relief_plan(total - self.limits.blob_low_water)
            return expired, False
        self.cycle = SweepCycle()
        return expired, True

    @staticmethod
    def blob_bytes(queues: list[SpecQueue]) -> int:
        """The stored blobs' total size (QUEUE-9)."""
        return sum(q.blob for q in queues if not q.deleted)

    def _relief_plan(self, excess: int) -> SweepCycle:
        """QUEUE-9: D is the first day at which the optional bytes of queues updated on or
        before it reach the excess; every queue before D is relieved, and of D's, in ID order,
        as many as free the rest. When no day reaches it, every queue is."""
        freed, days = 0, sorted(self.cycle.by_day)
        for day in days:
            if freed + self.cycle.by_day[day] >= excess:
                return SweepCycle(relieving=True, cutoff_day=day, budget=excess - freed)
            freed += self.cycle.by_day[day]
        last = days[-1] if days else -1
        return SweepCycle(relieving=True, cutoff_day=last, budget=self.cycle.by_day.get(last, 0))

    def _relieve(self, queues: list[SpecQueue], queue: SpecQueue) -> bool:
        """QUEUE-9: drop a queue's optional parts if it is before the cutoff day, or on it
        while the budget lasts; never once the total is at the low water mark. Whether it
        dropped them."""
        gain = queue.blob - queue.mandatory
        if not gain or self.blob_bytes(queues) <= self.limits.blob_low_water:
            return False
        if queue.updated_day > self.cycle.cutoff_day:
            return False
        if queue.updated_day == self.cycle.cutoff_day:
            if self.cycle.budget <= 0:
                return False
            self.cycle.budget -= gain
        queue.blob = queue.mandatory
        return True

    def _scan(self, queue: SpecQueue, now: int, out: Expected) -> list[Rec]:
        """One queue in a sweep's scan (RET-1..RET-6): the queue expires, or its messages older
        than the TTL leave from the head, key records kept, stopping at a quota marker, a younger
        message or a record in flight; what dropping its optional parts would free is added to
        its day (RET-7). Returns the messages that expired."""
        if self.expires(queue, now // DAY):
            self._remove(queue, out, None, queue.rid)
            out.cite("RET-1", "RET-2", "RET-6")
            return []
        in_flight = {id(r) for r in queue.in_flight.values()}
        expired = []
        for rec in list(queue.records):
            if rec.kind in ("I", "U"):
                continue
            if (
                rec.kind == "Q"
                or now - rec.at <= self.limits.message_ttl_seconds
                or id(rec) in in_flight
            ):
                break
            queue.records.remove(rec)
            expired.append(rec)
            out.cite("RET-5", "QENC-9")
        self._reopen_if_empty(queue)
        if queue.blob > queue.mandatory:
            by_day = self.cycle.by_day
            by_day[queue.updated_day] = by_day.get(queue.updated_day, 0) + queue.blob - \
                queue.mandatory
        return expired
