"""The nine server-side cases (the catalogue's :data:`~smpref.clientcheck.catalogue.CASES`),
one class each; :data:`CASE_TYPES` maps a case's number to its class.

Each case waits for its moment (a subscription, a message in flight, a command), then acts
through the server: a server event in the engine (:mod:`smpref.model.server_events`), an
intervention on a block (:class:`~smpref.serve.watcher.Intervention`: a delayed answer, an
ERR instead of the model's answer, a message pushed with the answers), or the connection
closed. From then on the client's transmissions decide its verdict; what only the end can
tell is decided by its :meth:`~smpref.clientcheck.case_run.CaseRun.finish`.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from smpref.clientcheck.case_run import CaseRun, CaseState, Moment, subscribed_queues
from smpref.clientcheck.catalogue import CASE_BY_NUMBER
from smpref.clientcheck.verdicts import Verdict
from smpref.errors import ErrorCode
from smpref.model.records import QueueRecord
from smpref.model.server import Outgoing, Server
from smpref.model.server_events import deleted_by_operator, message_arrives, subscription_taken
from smpref.notation.definitions import EntityKind
from smpref.serve.watcher import Intervention
from smpref.wire.dialects import Dialect
from smpref.wire.messages import ERR, MSG, RecordKind
from smpref.wire.schema import error_type
from smpref.wire.transmission import Transmission

if TYPE_CHECKING:
    from smpref.clientcheck.judge_state import Connection

#: seconds in which a command may cross the server's DELD on the wire (case 3)
CROSSING = 1.0
#: the first version whose deletion notice is DELD, not END (DEP-12; simplexmq Transport.hs:198)
DELD_VERSION = 10
#: what a case's message says, so that a client's log shows where it came from
BODY = b"smpref client-check: case %d"


# --- cases 1, 4, 5 and 6: decided by the ACK of the message the case put in the queue -------


@dataclass
class AcknowledgedMessage(CaseRun):
    """A case the client decides by acknowledging a message the case put in its queue."""

    def on_command(self, c: Connection, tag: str, rid: bytes, acked: bytes) -> None:
        if rid == self.rid and tag == "ACK":
            self.acknowledged(acked)

    @abstractmethod
    def acknowledged(self, acked: bytes) -> None:
        """The client acknowledged ``acked`` on the case's queue: decide if it is the case's
        message."""

    def unacknowledged(self, detail: str) -> None:
        """The case's message was left unacknowledged: a fault when the client went on with
        other commands; advice when it sent nothing more (it may have been about to close:
        CLNT-17)."""
        if self.later:
            self.decide(Verdict.FAIL, f"{detail}, though the client went on (it sent "
                        f"{self.later} more blocks)")
        else:
            self.decide(Verdict.NON_STRICT, f"{detail}; the client sent nothing more, so it "
                        "may have been about to close (CLNT-17)")


@dataclass
class SecondMessage(AcknowledgedMessage):
    """Case 1: a second message arrives while the first is delivered and unacknowledged."""

    case = CASE_BY_NUMBER[1]
    #: the message in flight when the case started, and the one it put behind it
    first: bytes = b""
    second: bytes | None = None

    def on_judged(self, moment: Moment) -> bool:
        session = moment.model.sessions[moment.conn.session_id]
        for rid in moment.subscribed:
            if rid in session.delivered:
                self.begin(moment.conn, rid)
                self.first = session.delivered[rid]
                self.stage.soon(self._second)
                return True
        return False

    def _second(self, model: Server) -> list[Outgoing]:
        queue = self.queue_ready(model)
        session = model.sessions.get(self.session_id)
        if queue is None or session is None or session.delivered.get(self.rid) != self.first:
            self.state = CaseState.WAITING
            return []
        out = message_arrives(model, queue, BODY % 1)
        self.second = model.store.records(self.rid)[-1].msg_id
        return out

    def acknowledged(self, acked: bytes) -> None:
        # messages queued before the second come first; a wrong ID is conv.ack's to judge
        if acked == self.second:
            self.decide(Verdict.PASS, "the client acknowledged the first message, took what "
                        "came as the ACK's answer and acknowledged the second message")

    def finish(self, still_open: set[int]) -> None:
        if self.conn in still_open:
            self.cut_short()
        elif self.second:
            self.unacknowledged("CLNT-19: the second message, delivered after the first was "
                                "acknowledged, was never acknowledged")
        else:
            self.unacknowledged("CLNT-19: the client did not acknowledge the first message")


@dataclass
class TargetMessage(AcknowledgedMessage):
    """A case that puts one message (its target) in the queue and waits for its ACK."""

    #: the message the client must acknowledge, once the case put it in the queue
    target: bytes | None = None
    #: the verdict's detail when the client acknowledges the target
    passed: ClassVar[str]

    def acknowledged(self, acked: bytes) -> None:
        if self.target is not None and acked == self.target:
            self.decide(Verdict.PASS, self.passed)

    def finish(self, still_open: set[int]) -> None:
        if self.conn in still_open:
            self.cut_short()
        elif self.target is None:
            self.state, self.verdict = CaseState.NOT_EXERCISED, Verdict.NOT_EXERCISED
            self.detail = "the case could not put its message in the queue"
        else:
            self.unacknowledged(f"{self.case.requirements[0]}: the case's message "
                                f"{self.target.hex()} was never acknowledged")


@dataclass
class IdleQueueMessage(TargetMessage):
    """A case that starts on a subscribed queue with nothing in flight and puts its target
    there (:meth:`put`, on the engine's thread)."""

    def on_judged(self, moment: Moment) -> bool:
        idle = moment.idle()
        if not idle:
            return False
        self.begin(moment.conn, idle[0])
        self.stage.soon(self._when_ready)
        return True

    def _when_ready(self, model: Server) -> list[Outgoing]:
        queue = self.queue_ready(model)
        return [] if queue is None else self.put(model, queue)

    @abstractmethod
    def put(self, model: Server, queue: QueueRecord) -> list[Outgoing]:
        """Put the target in ``queue``, the case's, ready for it; what the server sends."""


@dataclass
class QuotaReached(IdleQueueMessage):
    """Case 4: the queue fills up and the quota marker arrives."""

    case = CASE_BY_NUMBER[4]
    passed = "the client acknowledged the quota marker"

    def put(self, model: Server, queue: QueueRecord) -> list[Outgoing]:
        out: list[Outgoing] = []
        for _ in range(model.config.quota + 1):
            current = model.store.get(self.rid)
            if current is None or not current.can_write:
                break
            out += message_arrives(model, current, BODY % 4)
        markers = [r.msg_id for r in model.store.records(self.rid)
                   if r.kind is RecordKind.Quota]
        if markers:
            self.target = markers[-1]
        return out


@dataclass
class NotificationFlag(IdleQueueMessage):
    """Case 5: a message with the notification flag."""

    case = CASE_BY_NUMBER[5]
    passed = "the client acknowledged the message with the notification flag"

    def put(self, model: Server, queue: QueueRecord) -> list[Outgoing]:
        out = message_arrives(model, queue, BODY % 5, notification=True)
        self.target = model.store.records(self.rid)[-1].msg_id
        return out


@dataclass
class AnswerAndMessage(TargetMessage):
    """Case 6: an answer and a message in one block."""

    case = CASE_BY_NUMBER[6]
    passed = "the client read the answer and the message of one block and acknowledged the message"

    def on_block(self, c: Connection, heads: list[tuple[int, Transmission]]
                 ) -> Intervention | None:
        self.begin(c)
        return Intervention(after=self.stage.locked(self._push))

    def _push(self, model: Server) -> list[Outgoing]:
        idle = subscribed_queues(model, self.session_id, idle=True)
        queue = model.store.get(idle[0]) if idle else None
        if queue is None:
            self.state = CaseState.WAITING
            return []
        self.state, self.rid = CaseState.STARTED, queue.recipient_id
        out = message_arrives(model, queue, BODY % 6)
        pushed = [o.message for o in out if isinstance(o.message, MSG)]
        if pushed:
            assert isinstance(pushed[0], MSG)
            self.target = pushed[0].msg_id
        return out



# --- cases 2 and 3: the server ends a subscription --------------------------------------------


@dataclass
class SubscriptionEnds(CaseRun):
    """A case that ends the client's subscription at a quiet moment (END or DELD), and that
    only the end can pass: the client must leave the queue alone."""

    #: when the case's server event ran (END or DELD was sent)
    acted: float = 0.0

    def on_judged(self, moment: Moment) -> bool:
        # END and DELD come when nothing is in flight: an ACK that crossed them on the wire
        # is then no ACK of a message the client was given
        idle = moment.idle()
        if not moment.quiet or not idle:
            return False
        self.begin(moment.conn, idle[0])
        self.exchange = moment.conn.exchange()
        self.stage.soon(self._end)
        return True

    def _end(self, model: Server) -> list[Outgoing]:
        queue = self.queue_ready(model)
        session = model.sessions.get(self.session_id)
        if queue is None or session is None or self.rid in session.delivered or \
                model.subscribers.get(self.rid) != self.session_id:
            self.state = CaseState.WAITING  # a message went in flight meanwhile: not the moment
            return []
        self.acted = time.monotonic()
        return self.act(model, queue)

    @abstractmethod
    def act(self, model: Server, queue: QueueRecord) -> list[Outgoing]:
        """End the subscription to ``queue``; what the server sends."""

    def hold(self, spacing: float) -> float:
        return spacing  # only the end decides it: the next case need not wait for the client


@dataclass
class EndOfSubscription(SubscriptionEnds):
    """Case 2: END, as if another client took the subscription."""

    case = CASE_BY_NUMBER[2]

    def act(self, model: Server, queue: QueueRecord) -> list[Outgoing]:
        return subscription_taken(model, queue)

    def on_command(self, c: Connection, tag: str, rid: bytes, acked: bytes) -> None:
        if rid != self.rid or c.number != self.conn:
            return
        if tag in ("SUB", "GET"):
            self.decide(Verdict.PASS, f"after END the client took the queue up again ({tag})")
        elif tag == "ACK" and time.monotonic() - self.acted > CROSSING:
            self.decide(Verdict.FAIL, "CLNT-20: after END the client acknowledged on the "
                        "queue without subscribing again", c.exchange())

    def finish(self, still_open: set[int]) -> None:
        self.decide(Verdict.PASS, "after END the client left the queue alone")


@dataclass
class QueueDeleted(SubscriptionEnds):
    """Case 3: the queue is deleted on the server's side (DELD; END below version 10)."""

    case = CASE_BY_NUMBER[3]
    #: the one try the client gets where deletion comes as END was taken
    tried: bool = False

    def act(self, model: Server, queue: QueueRecord) -> list[Outgoing]:
        ids = {queue.recipient_id, queue.sender_id}
        if queue.notifier is not None:
            ids.add(queue.notifier.notifier_id)
        if queue.link is not None:
            ids.add(queue.link.link_id)
        self.stage.forget(ids)
        return deleted_by_operator(model, queue)

    def on_deleted_use(self, c: Connection, tag: str, role: EntityKind) -> None:
        """A command naming the deleted queue, in ``role``: a fault once the client has had
        time to read the deletion (one that crossed it on the wire is not), and only as the
        queue's recipient or notifier (its sender cannot know). Where deletion comes as END
        (below version 10, the seed design) the client cannot tell it from another END, which
        allows taking the queue up again (CLNT-20): one command is allowed, whose ERR AUTH
        tells it the queue is gone."""
        if role not in (EntityKind.RECIPIENT_ID, EntityKind.NOTIFIER_ID) or \
                c.number != self.conn or time.monotonic() - self.acted <= CROSSING:
            return
        as_end = c.dialect is Dialect.SEED or (c.version or 0) < DELD_VERSION
        if as_end and not self.tried:
            self.tried = True
            return
        self.decide(Verdict.FAIL, f"CLNT-21: after the queue was deleted "
                    f"({'END, then ERR AUTH' if as_end else 'DELD'}) the client sent "
                    f"{tag} to it", c.exchange())

    def finish(self, still_open: set[int]) -> None:
        self.decide(Verdict.PASS, "after DELD the client sent nothing more to the queue")


# --- cases 7, 8 and 9: what the server does to the connection --------------------------------


@dataclass
class RefusedSend(CaseRun):
    """Case 7: ERR INTERNAL for a SEND that would have succeeded."""

    case = CASE_BY_NUMBER[7]
    #: the refused SEND was sent again on another connection
    elsewhere: bool = False

    def on_block(self, c: Connection, heads: list[tuple[int, Transmission]]
                 ) -> Intervention | None:
        for index, tx in heads:
            if tx.command.startswith(b"SEND "):
                self.begin(c, tx.entity_id)
                self.state = CaseState.STARTED
                self.exchange = c.exchange()
                error = ERR(error=error_type(ErrorCode.INTERNAL))
                return Intervention(refuse={index: (tx.corr_id, tx.entity_id, error)})
        return None

    def on_later_block(self, c: Connection, heads: list[tuple[int, Transmission]]) -> None:
        """After the ERR, a block shows whether the client went on with the connection, or
        sent the refused SEND again on another."""
        if c.number == self.conn:
            self.decide(Verdict.PASS, "the client went on using the connection after ERR "
                        "INTERNAL for its SEND")
        elif any(tx.entity_id == self.rid and tx.command.startswith(b"SEND ")
                 for _, tx in heads):
            self.elsewhere = True

    def on_closed(self, c: Connection) -> None:
        if c.number == self.conn:
            self.state = CaseState.CLOSED  # decided at the end: it may come back

    def finish(self, still_open: set[int]) -> None:
        if self.state is CaseState.CLOSED and self.elsewhere:
            self.decide(Verdict.FAIL, "CLNT-25: after ERR INTERNAL answered its SEND the "
                        "client closed that connection and sent to the queue again on another: "
                        "it abandoned the connection over one ERR", self.exchange)
        else:  # it may have given up, or have been done: the spec cannot say
            self.decide(Verdict.NON_STRICT, "CLNT-25: the client sent nothing more on the "
                        "connection where ERR INTERNAL answered its SEND: if it gave up "
                        "because of the ERR, that breaks CLNT-25; if it was done anyway, "
                        "it does not", self.exchange)


@dataclass
class SlowAnswer(CaseRun):
    """Case 8: the server holds the answers to a block for ``stage.slow`` seconds."""

    case = CASE_BY_NUMBER[8]
    #: the corrIds of the held block
    wanted: set[bytes] = field(default_factory=set)

    def on_block(self, c: Connection, heads: list[tuple[int, Transmission]]
                 ) -> Intervention | None:
        self.begin(c)
        self.state = CaseState.STARTED
        self.wanted = {tx.corr_id for _, tx in heads}

        def waited(closed: bool) -> None:
            with self.stage.lock:
                if closed:
                    self.decide(Verdict.FAIL, f"CLNT-26: the client closed the connection "
                                f"while the answer was held for {self.stage.slow:g} s")
        return Intervention(delay=self.stage.slow, waited=waited)

    def on_answered(self, c: Connection) -> None:
        if c.number == self.conn and not self.wanted & set(c.pending):
            self.decide(Verdict.PASS, f"the client waited {self.stage.slow:g} s for the "
                        "answer, without closing or sending the corrId again")

    def finish(self, still_open: set[int]) -> None:
        if self.conn in still_open:
            self.cut_short()
        else:
            self.decide(Verdict.FAIL, "CLNT-26: the held answer was never taken")


@dataclass
class ServerCloses(CaseRun):
    """Case 9: the server closes the connection at a quiet moment."""

    case = CASE_BY_NUMBER[9]
    #: the queues the client must subscribe to again
    wanted: set[bytes] = field(default_factory=set)

    def on_judged(self, moment: Moment) -> bool:
        if not moment.quiet:
            return False
        c = moment.conn
        self.begin(c, moment.subscribed[0])
        self.state = CaseState.STARTED
        self.exchange = c.exchange()
        self.wanted = set(moment.subscribed)
        self.stage.close_session(c.session_id, "client-check case 9")
        return True

    def waiting_for_client(self) -> bool:
        return self.state is CaseState.STARTED

    def on_command(self, c: Connection, tag: str, rid: bytes, acked: bytes) -> None:
        if c.number != self.conn and tag == "SUB" and rid in self.wanted:
            self.wanted.discard(rid)
            if not self.wanted:
                self.decide(Verdict.PASS, "the client connected again and subscribed again "
                            "to every queue it was subscribed to")

    def finish(self, still_open: set[int]) -> None:
        if still_open - {self.conn}:
            self.cut_short()
        else:
            missing = ", ".join(sorted(r.hex() for r in self.wanted))
            self.decide(Verdict.FAIL, "CLNT-27: after the server closed the connection the "
                        f"client did not subscribe again to {missing}", self.exchange)


#: each case's class, by its number
CASE_TYPES: dict[int, type[CaseRun]] = {
    cls.case.number: cls for cls in (SecondMessage, EndOfSubscription, QueueDeleted,
                                     QuotaReached, NotificationFlag, AnswerAndMessage,
                                     RefusedSend, SlowAnswer, ServerCloses)}
