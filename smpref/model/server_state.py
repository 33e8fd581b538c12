"""The state of a model server that effects, delivery and the sweep share, with the helpers
they all use. :class:`~smpref.model.server.Server` adds the entry points (receive, sweep) on
top; keeping this below the effects is what lets them import it without a cycle."""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from smpref.crypto.randomness import Random
from smpref.model.config import DAY, ServerConfig
from smpref.model.environment import Clock
from smpref.model.queue_store import QueueStore
from smpref.model.records import QueueRecord
from smpref.model.sessions import Outgoing, Session
from smpref.wire.dialects import Dialect
from smpref.wire.messages import END, DeployedDELD

#: called with the name and requirement IDs of every rule and transition the model takes
Observer = Callable[[str, tuple[str, ...]], None]
#: queue, sender, notifier and message IDs (QUEUE-3)
ID_SIZE = 24


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


class ServerState(abc.ABC):
    """What one model server holds: configuration, store, clock, random source, observer,
    sessions and subscriptions, and where its sweep is."""

    def __init__(self, config: ServerConfig, store: QueueStore, clock: Clock, random: Random,
                 *, observer: Observer | None = None) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.random = random
        self.observer = observer
        self.sessions: dict[bytes, Session] = {}
        self.subscribers: dict[bytes, bytes] = {}  # recipient ID -> session ID (MSG-2)
        self.notifier_subscribers: dict[bytes, bytes] = {}  # recipient ID -> session ID
        self.sweep_state = SweepState()
        #: what the store reported when a command or a sweep failed (for the server's log)
        self.store_errors: list[str] = []

    def observe(self, name: str, requirements: tuple[str, ...]) -> None:
        """Report a rule or transition to the observer, if there is one."""
        if self.observer is not None:
            self.observer(name, requirements)

    # --- sessions --------------------------------------------------------------------------

    def open_session(self, session_id: bytes, secret: bytes,
                     dialect: Dialect = Dialect.SEED, version: int | None = None,
                     peer_key: bytes | None = None) -> Session:
        """Register a connection: its session ID, its X25519 secret from the handshake, the
        protocol it speaks (TRANS-11), the version whose layouts a deployed client reads
        (DEP-12), and the X25519 key its hello carried (DEP-14)."""
        session = Session(session_id, secret, dialect, version, peer_key=peer_key)
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

    # --- what effects share ----------------------------------------------------------------

    def today(self) -> int:
        return self.clock.now() // DAY

    def touch(self, queue: QueueRecord) -> QueueRecord:
        """Move ``updated_at`` to today (QUEUE-5); at most one write a day."""
        today = self.today()
        if queue.updated_at == today:
            return queue
        self.observe("touch", ("QUEUE-5",))
        return replace(queue, updated_at=today)

    def new_id(self, size: int = ID_SIZE) -> bytes:
        """A fresh random ID no queue uses in any role (QUEUE-3, QUEUE-4)."""
        while True:  # a collision of 24 random bytes does not happen; stay correct anyway
            candidate = self.random(size)
            if not self.store.id_taken(candidate):
                return candidate

    def reopen_if_empty(self, queue: QueueRecord) -> QueueRecord:
        """MSG-6: the quota holds until the queue is empty."""
        current = self.store.get(queue.recipient_id) or queue
        if not current.can_write and not self.store.records(current.recipient_id):
            self.observe("quota.reopened", ("MSG-6",))
            current = replace(current, can_write=True)
            self.store.put(current)
        return current

    def delete_queue(self, queue: QueueRecord, except_session: bytes | None) -> list[Outgoing]:
        """DEL and expiry: remove the queue; other subscribers get END (MSG-8), or DELD for a
        deployed queue (DEP-4; simplexmq Server.hs:2045-2064)."""
        out = []
        rid = queue.recipient_id
        for sessions in (self.subscribers, self.notifier_subscribers):
            sid = sessions.pop(rid, None)
            if sid is not None and sid != except_session and sid in self.sessions:
                entity = rid if sessions is self.subscribers else (
                    queue.notifier.notifier_id if queue.notifier else rid)
                if queue.dialect is Dialect.DEPLOYED:
                    self.observe("deleted", ("DEP-4",))
                    out.append(Outgoing(sid, b"", entity, DeployedDELD()))
                else:
                    out.append(self.end(sid, entity, "MSG-8"))
        for session in self.sessions.values():
            session.modes.pop(rid, None)
            session.delivered.pop(rid, None)
            session.notifications.discard(rid)
        self.store.delete(rid)
        return out

    def notifier_gone(self, queue: QueueRecord, except_session: bytes) -> list[Outgoing]:
        """NKEY replacing, or NDEL removing, a queue's notifier credentials: their subscription
        ends. On a deployed queue a subscriber on another session gets ``DELD`` with the old
        notifier ID (``END`` below version 10), as deployed sends it (DEP-6); the seed design
        sends nothing (CMD-15)."""
        rid = queue.recipient_id
        sid = self.notifier_subscribers.pop(rid, None)
        if sid is None or sid not in self.sessions:
            return []
        self.sessions[sid].notifications.discard(rid)
        if queue.dialect is Dialect.DEPLOYED and sid != except_session and \
                queue.notifier is not None:
            self.observe("notifier-deleted", ("DEP-6",))
            return [Outgoing(sid, b"", queue.notifier.notifier_id, DeployedDELD())]
        return []

    def forget_deliveries(self, rids: set[bytes]) -> None:
        """The store lost the uncommitted changes of these queues (a group commit that failed):
        the MSGs pushed from them were not sent, so none is in flight any more, and the next
        SUB, SEND or ACK delivers what the queue holds on disk (MSG-2)."""
        for session in self.sessions.values():
            for rid in rids:
                session.delivered.pop(rid, None)

    def end(self, session_id: bytes, entity_id: bytes, requirement: str) -> Outgoing:
        """END to a session whose subscription another session or a deletion ended."""
        self.observe("end", (requirement,))
        return Outgoing(session_id, b"", entity_id, END())

    @abc.abstractmethod
    def serve_forwarded(self, session: Session, transmission: bytes) -> list[Outgoing]:
        """Serve one transmission a proxy forwarded (DEP-14) on ``session``, a session of its
        own: its answer is addressed to it, events to the sessions they are for. The generic
        step does it (:class:`smpref.model.server.Server`); it is declared here because an
        effect, which sees only this state, serves RFWD with it."""
