"""An abstract deployed server written from spec/deployed.md, the oracle of the deployed link
machine (:mod:`smpref.testing.deployed_link_machine`).

It knows nothing of :mod:`smpref.model`, of the store or of the wire: a queue is its mode, its
IDs, its sender key, its link (LinkId, fixed part, user part) and its notifier; each command
method applies DEP-3, DEP-4, DEP-5 or DEP-6 to this state and returns what every session must
receive (:class:`Expected`). IDs the server chooses (recipient ID, a messaging link's LinkId,
notifier IDs) are bound when the machine first sees them, and checked ever after. Like
:mod:`smpref.testing.queue_oracle`, it imports nothing of smpref.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Session = int
Mode = Literal["messaging", "contact"]


@dataclass(frozen=True)
class Lnk:
    """LNK as DEP-5 says it answers LGET and LKEY: the sender ID and both parts."""

    sender_id: bytes
    fixed: bytes
    user: bytes


@dataclass(frozen=True)
class Ids:
    """IDS for a deployed NEW (DEP-3): the sender ID when a link chose it, the LinkId when the
    client chose it (a contact link), whether a LinkId is there at all, the mode as sent and
    whether notifier credentials came back."""

    sender_id: bytes | None
    link_id: bytes | None
    has_link: bool
    mode: Mode
    notifier: bool


#: what one session must receive: "OK", "SOK", "ERR <kind>", "NID", ("END", id),
#: ("DELD", id), an Ids or an Lnk
Event = str | tuple[str, bytes] | Ids | Lnk

#: what a deployed NEW with exactly one defect is answered with (DEP-3; the spec orders them,
#: the machine draws one at a time)
NEW_DEFECTS: dict[str, str] = {
    "signed by another key": "ERR AUTH",
    "wrong password": "ERR AUTH",
    "no password": "ERR AUTH",
    "sender ID not derived": "ERR CMD PROHIBITED",
    "corrId used before": "ERR AUTH",  # the derived sender ID is another queue's
    "taken LinkId": "ERR AUTH",
    "low-order DH key": "ERR CMD SYNTAX",
    "low-order notifier DH key": "ERR CMD SYNTAX",
}


@dataclass
class Expected:
    """Every transmission each session must receive after one step, in order per session."""

    events: dict[Session, list[Event]] = field(default_factory=dict)

    def add(self, session: Session, event: Event) -> Expected:
        self.events.setdefault(session, []).append(event)
        return self

    @classmethod
    def one(cls, session: Session, event: Event) -> Expected:
        return cls().add(session, event)


@dataclass(eq=False)
class DQueue:
    """What DEP-3 to DEP-6 say one deployed queue is."""

    mode: Mode
    rid: bytes = b""
    sender_id: bytes = b""
    sender_key: bytes | None = None
    #: the link: its LinkId and both parts, while it has one
    link_id: bytes | None = None
    fixed: bytes = b""
    user: bytes = b""
    #: a secured messaging queue's link data goes at the next SEND (DEP-5)
    drop_at_send: bool = False
    notifier_id: bytes | None = None
    ntf_key: bytes | None = None
    ntf_subscriber: Session | None = None
    deleted: bool = False

    def ids(self) -> list[bytes]:
        """The IDs this queue uses (QUEUE-4): a LinkId only while the link is there."""
        if self.deleted:
            return []
        return [i for i in (self.rid, self.sender_id, self.link_id, self.notifier_id) if i]


class DeployedOracle:
    """The abstract server: one :class:`DQueue` per queue the machine created."""

    def __init__(self) -> None:
        self.queues: list[DQueue] = []

    def in_use(self) -> set[bytes]:
        return {i for queue in self.queues for i in queue.ids()}

    def by_link(self, link_id: bytes) -> DQueue | None:
        return next((q for q in self.queues if not q.deleted and q.link_id == link_id), None)

    # --- NEW ---------------------------------------------------------------------------------

    def new(self, session: Session, mode: Mode, *, sender_id: bytes | None,
            link_id: bytes | None, fixed: bytes, user: bytes, notifier: bool
            ) -> tuple[DQueue, Expected]:
        """DEP-3: IDS; a link's sender ID is the one derived from corrId (the machine derived
        it), a contact link's LinkId the one chosen, a messaging link's chosen by the server."""
        queue = DQueue(mode)
        has_link = sender_id is not None
        if has_link:
            queue.sender_id, queue.fixed, queue.user = sender_id or b"", fixed, user
            queue.link_id = link_id  # None for a messaging link until IDS binds it
        self.queues.append(queue)
        return queue, Expected.one(session, Ids(sender_id, link_id, has_link, mode, notifier))

    @staticmethod
    def refused_new(session: Session, defect: str) -> Expected:
        """A deployed NEW with one defect (:data:`NEW_DEFECTS`): refused, nothing created."""
        return Expected.one(session, NEW_DEFECTS[defect])

    # --- the recipient's commands -------------------------------------------------------------

    def lset(self, queue: DQueue, session: Session, link_id: bytes, fixed: bytes,
             user: bytes) -> Expected:
        """DEP-5: LSET sets the link, then replaces the user part only; another LinkId, one in
        use, a changed fixed part, and a secured messaging queue are AUTH."""
        refused = Expected.one(session, "ERR AUTH")
        if queue.deleted or (queue.mode == "messaging" and queue.sender_key is not None):
            return refused
        if queue.link_id is not None:
            if link_id != queue.link_id or fixed != queue.fixed:
                return refused
        elif link_id in self.in_use():
            return refused
        queue.link_id, queue.fixed, queue.user = link_id, fixed, user
        return Expected.one(session, "OK")

    @staticmethod
    def ldel(queue: DQueue, session: Session) -> Expected:
        """DEP-5: LDEL removes the link; OK also without one."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH")
        queue.link_id, queue.fixed, queue.user, queue.drop_at_send = None, b"", b"", False
        return Expected.one(session, "OK")

    @staticmethod
    def secure(queue: DQueue, session: Session, key: bytes, *, by_sender: bool,
               answer: Event = "OK") -> Expected:
        """KEY (recipient), SKEY and LKEY (sender, messaging queues only): the first key
        secures, the same again is accepted, another is AUTH (QUEUE-11); a messaging queue's
        link data goes at the next SEND (DEP-5)."""
        if queue.deleted or (by_sender and queue.mode == "contact") or (
                queue.sender_key is not None and queue.sender_key != key):
            return Expected.one(session, "ERR AUTH")
        if queue.sender_key is None:
            queue.sender_key = key
            queue.drop_at_send = queue.mode == "messaging" and queue.link_id is not None
        return Expected.one(session, answer)

    def nkey(self, queue: DQueue, session: Session, ntf_key: bytes, *, low_order: bool
             ) -> Expected:
        """DEP-6: NID with a new notifier ID; earlier credentials are replaced and their
        subscriber on another session gets DELD with the old ID. A low-order key is
        CMD SYNTAX."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH")
        if low_order:
            return Expected.one(session, "ERR CMD SYNTAX")
        out = self._notifier_gone(queue, session)
        queue.notifier_id, queue.ntf_key = None, ntf_key  # bound from NID by the machine
        return out.add(session, "NID")

    def ndel(self, queue: DQueue, session: Session) -> Expected:
        """CMD-15, DEP-6: the notifier goes; its subscriber on another session gets DELD."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH")
        out = self._notifier_gone(queue, session)
        queue.notifier_id = queue.ntf_key = None
        return out.add(session, "OK")

    @staticmethod
    def _notifier_gone(queue: DQueue, session: Session) -> Expected:
        out = Expected()
        if queue.ntf_subscriber is not None and queue.ntf_subscriber != session \
                and queue.notifier_id is not None:
            out.add(queue.ntf_subscriber, ("DELD", queue.notifier_id))
        queue.ntf_subscriber = None
        return out

    @staticmethod
    def delete(queue: DQueue, session: Session) -> Expected:
        """DEL (MSG-8, DEP-4): the notifier's subscriber on another session gets DELD."""
        if queue.deleted:
            return Expected.one(session, "ERR AUTH")
        out = Expected()
        if queue.ntf_subscriber is not None and queue.ntf_subscriber != session \
                and queue.notifier_id is not None:
            out.add(queue.ntf_subscriber, ("DELD", queue.notifier_id))
        queue.deleted = True
        queue.ntf_subscriber = None
        return out.add(session, "OK")

    # --- senders, link readers and the notifier ------------------------------------------------

    @staticmethod
    def send(queue: DQueue, session: Session, key: bytes | None, *, notify: bool = False
             ) -> Expected:
        """SEND (MSG-1): unsigned to an unsecured queue, signed by its key to a secured one;
        the first after securing a messaging queue drops its link data (DEP-5); with the
        notification flag, the notifier's subscriber gets NMSG (MSG-7, DEP-6)."""
        if queue.deleted or key != queue.sender_key:
            return Expected.one(session, "ERR AUTH")
        if queue.drop_at_send:
            queue.link_id, queue.fixed, queue.user, queue.drop_at_send = None, b"", b"", False
        out = Expected.one(session, "OK")
        if notify and queue.ntf_subscriber is not None and queue.notifier_id is not None:
            out.add(queue.ntf_subscriber, ("NMSG", queue.notifier_id))
        return out

    def lget(self, link_id: bytes, session: Session) -> Expected:
        """DEP-5: LNK for a contact queue's link; AUTH for a messaging queue's or none."""
        queue = self.by_link(link_id)
        if queue is None or queue.mode == "messaging":
            return Expected.one(session, "ERR AUTH")
        return Expected.one(session, Lnk(queue.sender_id, queue.fixed, queue.user))

    def lkey(self, link_id: bytes, session: Session, key: bytes, *, authorized: bool
             ) -> Expected:
        """DEP-5: LKEY secures a messaging queue as SKEY does and answers LNK (again with the
        same key); with another key, on a contact queue, or unauthorized it is AUTH."""
        queue = self.by_link(link_id)
        if queue is None or not authorized:
            return Expected.one(session, "ERR AUTH")
        answer = Lnk(queue.sender_id, queue.fixed, queue.user)
        return self.secure(queue, session, key, by_sender=True, answer=answer)

    @staticmethod
    def nsub(queue: DQueue, session: Session, key: bytes) -> Expected:
        """NSUB (CMD-23, CMD-33; DEP-4's SOK): the notifier's key subscribes; a subscriber on
        another session gets END."""
        if queue.deleted or queue.notifier_id is None or key != queue.ntf_key:
            return Expected.one(session, "ERR AUTH")
        out = Expected()
        if queue.ntf_subscriber is not None and queue.ntf_subscriber != session:
            out.add(queue.ntf_subscriber, ("END", queue.notifier_id))
        queue.ntf_subscriber = session
        return out.add(session, "SOK")
