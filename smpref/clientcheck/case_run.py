"""What every server-side case shares: its run's state and verdict, the hooks the runner
(:class:`~smpref.clientcheck.situations.CaseRunner`) calls with their defaults, and what a
case acts through (:class:`Stage`) and starts on (:class:`Moment`).

Each case of :mod:`smpref.clientcheck.server_cases` is a subclass of :class:`CaseRun` that
overrides the hooks it needs; one instance is one run of the case in one check. Every hook is
called with the judge's lock held.
"""

from __future__ import annotations

import enum
import time
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from smpref.clientcheck.verdicts import Verdict
from smpref.model.records import QueueRecord
from smpref.model.server import Server
from smpref.model.states import SessionMode
from smpref.notation.definitions import EntityKind
from smpref.serve.watcher import Intervention, ServerEvent
from smpref.wire.transmission import Transmission

if TYPE_CHECKING:
    from smpref.clientcheck.catalogue import Case
    from smpref.clientcheck.judge_state import Connection

#: seconds a case that only the client can decide holds the next one back
PATIENCE = 5.0


class CaseState(enum.Enum):
    """Where a case run is: waiting for its moment, started, or decided."""

    #: its turn has not come, or its moment has not (the runner offers it each moment)
    WAITING = "waiting"
    #: its server event is on its way: the moment may still pass (back to WAITING)
    STARTING = "starting"
    #: the server acted: the client's transmissions now decide it
    STARTED = "started"
    #: the connection it watched closed: only the end decides it (case 7)
    CLOSED = "closed"
    DECIDED = "decided"
    #: its moment never came, or the check ended before the client could decide it
    NOT_EXERCISED = "not exercised"


class Stage(Protocol):
    """What a case acts through: the runner that holds it. Every method may be called with
    the judge's lock held."""

    @property
    def slow(self) -> float:
        """Seconds case 8 holds an answer."""

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """The judge's lock, for what a case does outside a hook."""

    def locked(self, event: ServerEvent) -> ServerEvent:
        """``event`` holding the judge's lock while it runs (on the engine's thread)."""

    def soon(self, event: ServerEvent) -> None:
        """Run ``event`` on the engine soon, holding the judge's lock."""

    def forget(self, ids: set[bytes]) -> None:
        """Tell the judge that the case deleted the queue with these IDs: their use is the
        case's to judge."""

    def close_session(self, session_id: bytes, reason: str) -> None:
        """Close a session's connection on the server's side (soon), with what the client
        then had in flight not counted against it."""


def subscribed_queues(model: Server, session_id: bytes, *, idle: bool = False) -> list[bytes]:
    """The queues a session is subscribed to (with nothing in flight, when ``idle``)."""
    session = model.sessions.get(session_id)
    if session is None:
        return []
    return [rid for rid, sid in model.subscribers.items()
            if sid == session_id and session.modes.get(rid) is SessionMode.SUBSCRIBED
            and not (idle and rid in session.delivered)]


@dataclass(frozen=True)
class Moment:
    """A connection subscribed to at least one queue, between two steps of the engine: what
    a case waiting for its moment may start on."""

    model: Server
    conn: Connection
    #: the queues the connection's session is subscribed to (never empty)
    subscribed: list[bytes]
    #: the connection and corrId of the command just judged, whose answer is about to go
    step: tuple[int, bytes]

    def idle(self) -> list[bytes]:
        """The subscribed queues with nothing in flight."""
        return subscribed_queues(self.model, self.conn.session_id, idle=True)

    @property
    def quiet(self) -> bool:
        """No command of the connection is pending but the one just judged."""
        just_judged = {self.step[1]} if self.step[0] == self.conn.number else set()
        return not set(self.conn.pending) - just_judged


@dataclass
class CaseRun(ABC):
    """One case in this check: waiting for its moment, started, or decided. A subclass is one
    case (its catalogue entry :attr:`case`); the hooks here do nothing, so that each case
    overrides only those it acts on, and :meth:`finish`, which every case must define (a
    class without it cannot be made)."""

    #: the catalogue's entry: number, title, requirement IDs
    case: ClassVar[Case]

    stage: Stage = field(repr=False, compare=False)
    state: CaseState = CaseState.WAITING
    verdict: Verdict = Verdict.NOT_EXERCISED
    detail: str = ""
    conn: int = 0
    session_id: bytes = b""
    rid: bytes = b""
    started: float = 0.0
    exchange: list[dict[str, Any]] = field(default_factory=list)
    #: blocks the client sent (on any connection) once the case started: a client that went
    #: on without doing what the case asks is at fault; one that stopped may have been done
    later: int = 0

    def decide(self, verdict: Verdict, detail: str,
               exchange: list[dict[str, Any]] | None = None) -> None:
        if self.state is CaseState.DECIDED and self.verdict is Verdict.FAIL:
            return  # a fault stays a fault
        self.state, self.verdict, self.detail = CaseState.DECIDED, verdict, detail
        if exchange is not None:
            self.exchange = exchange

    def begin(self, c: Connection, rid: bytes = b"") -> None:
        """The case's moment came on connection ``c`` (and queue ``rid``): it is starting."""
        self.state, self.started = CaseState.STARTING, time.monotonic()
        self.conn, self.session_id, self.rid = c.number, c.session_id, rid

    def queue_ready(self, model: Server) -> QueueRecord | None:
        """The case's queue, when it and the session are still there as the server event
        runs (the case has started); None when the moment passed (the case waits for the
        next one)."""
        queue = model.store.get(self.rid)
        if queue is None or self.session_id not in model.sessions:
            self.state = CaseState.WAITING
            return None
        self.state = CaseState.STARTED
        return queue

    def cut_short(self) -> None:
        """The check ended while the case waited for the client on a connection still
        open: not the client's fault."""
        self.state, self.verdict = CaseState.NOT_EXERCISED, Verdict.NOT_EXERCISED
        self.detail = ("the check ended while the case waited for the client (its "
                       "connection was still open): run it again with a longer "
                       "--idle or --timeout")

    # --- while waiting for its moment (the runner offers it to the current case only) -------

    def on_block(self, c: Connection, heads: list[tuple[int, Transmission]]
                 ) -> Intervention | None:
        """A block from the client, not empty (on the loop): start on it, and say what the
        server does to it."""
        return None

    def on_judged(self, moment: Moment) -> bool:
        """After a step (on the engine's thread): start on ``moment`` if it is the case's;
        whether it started."""
        return False

    def hold(self, spacing: float) -> float:
        """Seconds the case, started and not decided, holds the next case back."""
        return max(PATIENCE, spacing)

    # --- once started (CLOSED too for :meth:`on_later_block`) --------------------------------

    def on_later_block(self, c: Connection, heads: list[tuple[int, Transmission]]) -> None:
        """A block from the client after the case started, on any connection."""

    def on_command(self, c: Connection, tag: str, rid: bytes, acked: bytes) -> None:
        """A command on the client's queue ``rid`` (engine, before its step); ``acked``: the
        message an ACK acknowledges."""

    def on_answered(self, c: Connection) -> None:
        """The answers to a block of ``c`` were routed to the client."""

    def on_deleted_use(self, c: Connection, tag: str, role: EntityKind) -> None:
        """A command names, in ``role``, a queue a case deleted."""

    def on_closed(self, c: Connection) -> None:
        """The client's connection ``c`` ended."""

    def waiting_for_client(self) -> bool:
        """Whether the case waits for the client to connect again."""
        return False

    # --- the end ------------------------------------------------------------------------------

    @abstractmethod
    def finish(self, still_open: set[int]) -> None:
        """Decide what the end decides, for a case that started and is not decided.
        ``still_open``: the connections the client had open when the check was ended."""
