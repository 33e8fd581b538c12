"""The server-side cases: situations a real server produces rarely, started when the client's
own behaviour makes them possible, one at a time, each judged by what the client does next.

Each case (the catalogue's :data:`~smpref.clientcheck.catalogue.CASES`) waits for its
moment (a subscription, a message in flight, a command), then acts through the server: a
server event in the engine (:mod:`smpref.model.server_events`), an intervention on a block
(:class:`~smpref.serve.watcher.Intervention`: a delayed answer, an ERR instead of the model's
answer, a message pushed with the answers), or the connection closed. From then on the
client's transmissions decide its verdict; what only the end can tell is decided by
:meth:`CaseRunner.finish`. The next case starts once the current one is decided, or
``spacing`` seconds after it started.

Every hook here is called by the :class:`~smpref.clientcheck.judge.Judge` with its lock held.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from smpref.clientcheck.catalogue import CASE_BY_NUMBER, DEFAULT_ORDER, Case
from smpref.model.server import Outgoing, Server
from smpref.model.server_events import deleted_by_operator, message_arrives, subscription_taken
from smpref.model.states import SessionMode
from smpref.serve.watcher import Intervention, ServerEvent
from smpref.wire.dialects import Dialect
from smpref.wire.messages import ERR, MSG, RecordKind
from smpref.wire.schema import parse_error
from smpref.wire.transmission import Transmission

if TYPE_CHECKING:
    from smpref.clientcheck.judge import Connection, Judge
    from smpref.serve.listener import SmpServer

#: seconds a case that only the client can decide holds the next one back
PATIENCE = 5.0
#: seconds in which a command may cross the server's DELD on the wire (case 3)
CROSSING = 1.0
#: the first version whose deletion notice is DELD, not END (DEP-12; simplexmq Transport.hs:198)
DELD_VERSION = 10
#: what a case's message says, so that a client's log shows where it came from
BODY = b"smpref client-check: case %d"


@dataclass
class CaseRun:
    """One case in this check: waiting for its moment, started, or decided."""

    case: Case
    state: str = "waiting"
    verdict: str = "not exercised"
    detail: str = ""
    conn: int = 0
    session_id: bytes = b""
    rid: bytes = b""
    #: message IDs the case put in the queue, by role ("first", "second", "target")
    ids: dict[str, bytes] = field(default_factory=dict)
    started: float = 0.0
    #: when the case's server event ran (END and DELD were sent)
    acted: float = 0.0
    exchange: list[dict[str, Any]] = field(default_factory=list)
    #: what the case still waits for, in its own terms
    wanted: set[bytes] = field(default_factory=set)
    #: case 3: the one try the client gets where deletion comes as END was taken
    tried: bool = False
    #: case 7: the refused SEND was sent again on another connection
    elsewhere: bool = False
    #: blocks the client sent (on any connection) once the case started: a client that went
    #: on without doing what the case asks is at fault; one that stopped may have been done
    later: int = 0

    def decide(self, verdict: str, detail: str, exchange: list[dict[str, Any]] | None = None
               ) -> None:
        if self.state == "decided" and self.verdict == "fail":
            return  # a fault stays a fault
        self.state, self.verdict, self.detail = "decided", verdict, detail
        if exchange is not None:
            self.exchange = exchange


def _subscribed(model: Server, session_id: bytes, *, idle: bool = False) -> list[bytes]:
    """The queues a session is subscribed to (with nothing in flight, when ``idle``)."""
    session = model.sessions.get(session_id)
    if session is None:
        return []
    return [rid for rid, sid in model.subscribers.items()
            if sid == session_id and session.modes.get(rid) is SessionMode.SUBSCRIBED
            and not (idle and rid in session.delivered)]


class CaseRunner:
    """Starts and judges the cases (module docstring). ``numbers``: the cases to run, in
    order (None: all, destructive ones last); ``slow``: how long case 8 holds an answer."""

    def __init__(self, numbers: Sequence[int] | None = None, *, slow: float = 3.0,
                 spacing: float = 1.0) -> None:
        order = list(numbers) if numbers else list(DEFAULT_ORDER)
        self.runs = [CaseRun(CASE_BY_NUMBER[n]) for n in order]
        self.slow = slow
        self.spacing = spacing
        self.judge: Judge | None = None
        self.server: SmpServer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def attach(self, server: SmpServer, loop: asyncio.AbstractEventLoop) -> None:
        self.server, self.loop = server, loop

    # --- which case is next -----------------------------------------------------------------

    def current(self) -> CaseRun | None:
        """The case waiting for its moment, if its turn has come: a case started before it
        is decided, or it has had ``spacing`` seconds (cases 2 and 3, which only the end
        decides) or ``PATIENCE`` seconds (any other)."""
        now = time.monotonic()
        for run in self.runs:
            if run.state == "waiting":
                return run
            if run.state in ("starting", "started", "closed"):
                wait = self.spacing if run.case.number in (2, 3) else \
                    max(PATIENCE, self.spacing)
                if now - run.started < wait:
                    return None
        return None

    def _ready(self, number: int) -> CaseRun | None:
        run = self.current()
        return run if run is not None and run.case.number == number else None

    def waiting_for_client(self) -> bool:
        """A case waits for the client to come back (case 9, after the server closed)."""
        assert self.judge is not None
        with self.judge.lock:
            return any(r.case.number == 9 and r.state == "started" for r in self.runs)

    def _run_event(self, event: ServerEvent) -> None:
        """Run a server event soon (called on the engine's thread or the loop's)."""
        assert self.loop is not None and self.server is not None
        server = self.server

        def spawn() -> None:
            task = asyncio.ensure_future(server.act(event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        self.loop.call_soon_threadsafe(spawn)

    def _start(self, run: CaseRun, c: Connection, rid: bytes = b"") -> None:
        run.state, run.started = "starting", time.monotonic()
        run.conn, run.session_id, run.rid = c.number, c.session_id, rid

    def _locked(self, function: Callable[[Server], list[Outgoing]]) -> ServerEvent:
        """A server event that holds the judge's lock (it runs on the engine's thread)."""
        def event(model: Server) -> list[Outgoing]:
            assert self.judge is not None
            with self.judge.lock:
                return function(model)
        return event

    # --- hooks from the judge ---------------------------------------------------------------

    def on_block(self, c: Connection, heads: list[tuple[int, Transmission]]
                 ) -> Intervention | None:
        """A block from the client (loop): cases 6, 7 and 8 act on it."""
        self._later(c, heads)
        if not heads:
            return None
        if (batch := self._ready(6)) is not None:
            self._start(batch, c)
            return Intervention(after=self._locked(partial(self._batch, run=batch)))
        if (run := self._ready(7)) is not None:
            for index, tx in heads:
                if tx.command.startswith(b"SEND "):
                    self._start(run, c, tx.entity_id)
                    run.state = "started"
                    assert self.judge is not None
                    run.exchange = c.exchange()
                    error = ERR(error=parse_error("INTERNAL"))
                    return Intervention(refuse={index: (tx.corr_id, tx.entity_id, error)})
            return None
        if (run := self._ready(8)) is not None:
            self._start(run, c)
            run.state = "started"
            run.wanted = {tx.corr_id for _, tx in heads}

            def waited(closed: bool) -> None:
                assert self.judge is not None
                with self.judge.lock:
                    if closed:
                        run.decide("fail", f"CLNT-26: the client closed the connection while "
                                   f"the answer was held for {self.slow:g} s")
            return Intervention(delay=self.slow, waited=waited)
        return None

    def _later(self, c: Connection, heads: list[tuple[int, Transmission]]) -> None:
        """A block after a case started: after case 7's ERR it shows whether the client went
        on with the connection, or sent the refused SEND again on another."""
        for run in self.runs:
            if run.state not in ("started", "closed"):
                continue
            if run.case.number == 7 and run.conn == c.number:
                run.decide("pass", "the client went on using the connection after ERR "
                           "INTERNAL for its SEND")
            elif run.case.number == 7 and any(
                    tx.entity_id == run.rid and tx.command.startswith(b"SEND ")
                    for _, tx in heads):
                run.elsewhere = True
            run.later += 1

    def on_answered(self, c: Connection) -> None:
        for run in self.runs:
            if run.case.number == 8 and run.state == "started" and run.conn == c.number \
                    and not run.wanted & set(c.pending):
                run.decide("pass", f"the client waited {self.slow:g} s for the answer, "
                           "without closing or sending the corrId again")

    def on_command(self, c: Connection, tag: str, rid: bytes, acked: bytes) -> None:
        """A command on one of the client's queues (engine, before its step)."""
        for run in self.runs:
            number = run.case.number
            if run.state != "started" or (run.rid != rid and number != 9):
                continue
            if number == 2 and run.conn == c.number:
                if tag in ("SUB", "GET"):
                    run.decide("pass", f"after END the client took the queue up again ({tag})")
                elif tag == "ACK" and time.monotonic() - run.acted > CROSSING:
                    run.decide("fail", "CLNT-20: after END the client acknowledged on the "
                               "queue without subscribing again", c.exchange())
            elif number == 9 and run.conn != c.number and tag == "SUB" and rid in run.wanted:
                run.wanted.discard(rid)
                if not run.wanted:
                    run.decide("pass", "the client connected again and subscribed again to "
                               "every queue it was subscribed to")
            elif number in (1, 4, 5, 6) and tag == "ACK":
                self._acked(run, acked)

    def on_deleted_use(self, c: Connection, tag: str, role: str) -> None:
        """A command naming a queue case 3 deleted, in ``role``: a fault once the client has
        had time to read the deletion (one that crossed it on the wire is not), and only as
        the queue's recipient or notifier (its sender cannot know). Where deletion comes as
        END (below version 10, the seed design) the client cannot tell it from another END,
        which allows taking the queue up again (CLNT-20): one command is allowed, whose
        ERR AUTH tells it the queue is gone."""
        if role not in ("recipient_id", "notifier_id"):
            return
        for run in self.runs:
            if run.case.number != 3 or run.state != "started" or run.conn != c.number or \
                    time.monotonic() - run.acted <= CROSSING:
                continue
            as_end = c.dialect is Dialect.SEED or (c.version or 0) < DELD_VERSION
            if as_end and not run.tried:
                run.tried = True
                continue
            run.decide("fail", f"CLNT-21: after the queue was deleted "
                       f"({'END, then ERR AUTH' if as_end else 'DELD'}) the client sent "
                       f"{tag} to it", c.exchange())

    def _acked(self, run: CaseRun, acked: bytes) -> None:
        target = run.ids.get("target")
        if run.case.number == 1:
            second = run.ids.get("second")
            # messages queued before the second come first; a wrong ID is conv.ack's to judge
            if acked == second:
                run.decide("pass", "the client acknowledged the first message, took what "
                           "came as the ACK's answer and acknowledged the second message")
        elif target is not None and acked == target:
            run.decide("pass", {4: "the client acknowledged the quota marker",
                                5: "the client acknowledged the message with the "
                                   "notification flag",
                                6: "the client read the answer and the message of one block "
                                   "and acknowledged the message"}[run.case.number])

    def on_judged(self, model: Server, connections: list[Connection],
                  step: tuple[int, bytes]) -> None:
        """After a step (engine): cases 1-5 and 9 start when a connection's state allows.
        ``step``: the connection and corrId of the command just judged, whose answer is
        about to go."""
        for c in connections:
            if c.closed is None and self._start_on(model, c, step):
                return

    def _start_on(self, model: Server, c: Connection, step: tuple[int, bytes]) -> bool:
        subscribed = _subscribed(model, c.session_id)
        if not subscribed:
            return False
        session = model.sessions[c.session_id]
        if (second := self._ready(1)) is not None:
            for rid in subscribed:
                if rid in session.delivered:
                    self._start(second, c, rid)
                    second.ids["first"] = session.delivered[rid]
                    self._run_event(self._locked(partial(self._second, run=second)))
                    return True
        idle = _subscribed(model, c.session_id, idle=True)
        for number in (4, 5):
            if idle and (run := self._ready(number)) is not None:
                self._start(run, c, idle[0])
                self._run_event(self._locked(partial(self._fill, run=run)))
                return True
        for number in (2, 3, 9):
            # END and DELD come when nothing is in flight: an ACK that crossed them on the
            # wire is then no ACK of a message the client was given
            choices = subscribed if number == 9 else idle
            others = set(c.pending) - ({step[1]} if step[0] == c.number else set())
            if others:  # only at a quiet moment: no other command of the connection pending
                break
            if choices and (run := self._ready(number)) is not None:
                self._start(run, c, choices[0])
                run.state = "started" if number == 9 else "starting"
                run.exchange = c.exchange()
                if number == 9:
                    run.wanted = set(subscribed)
                    assert self.judge is not None
                    self.judge.ended_by_server.add(c.session_id)
                    assert self.loop is not None and self.server is not None
                    self.loop.call_soon_threadsafe(self.server.disconnect, c.session_id,
                                                   "client-check case 9")
                else:
                    self._run_event(self._locked(partial(self._end, run=run)))
                return True
        return False

    def on_closed(self, c: Connection) -> None:
        for run in self.runs:
            if run.case.number == 7 and run.state == "started" and run.conn == c.number:
                run.state = "closed"  # decided at the end: it may come back

    # --- the events -------------------------------------------------------------------------

    def _queue_ready(self, model: Server, run: CaseRun) -> Any:
        queue = model.store.get(run.rid)
        if queue is None or run.session_id not in model.sessions:
            run.state = "waiting"  # the moment passed: wait for the next one
            return None
        run.state = "started"
        return queue

    def _second(self, model: Server, run: CaseRun) -> list[Outgoing]:
        queue = self._queue_ready(model, run)
        session = model.sessions.get(run.session_id)
        if queue is None or session is None or \
                session.delivered.get(run.rid) != run.ids["first"]:
            run.state = "waiting"
            return []
        out = message_arrives(model, queue, BODY % 1)
        run.ids["second"] = model.store.records(run.rid)[-1].msg_id
        return out

    def _fill(self, model: Server, run: CaseRun) -> list[Outgoing]:
        queue = self._queue_ready(model, run)
        if queue is None:
            return []
        number = run.case.number
        if number == 5:
            out = message_arrives(model, queue, BODY % 5, notification=True)
            run.ids["target"] = model.store.records(run.rid)[-1].msg_id
            return out
        out = []
        for _ in range(model.config.quota + 1):
            queue = model.store.get(run.rid)
            if queue is None or not queue.can_write:
                break
            out += message_arrives(model, queue, BODY % 4)
        markers = [r.msg_id for r in model.store.records(run.rid) if r.kind is RecordKind.Quota]
        if markers:
            run.ids["target"] = markers[-1]
        return out

    def _batch(self, model: Server, run: CaseRun) -> list[Outgoing]:
        idle = _subscribed(model, run.session_id, idle=True)
        queue = model.store.get(idle[0]) if idle else None
        if queue is None:
            run.state = "waiting"
            return []
        run.state, run.rid = "started", queue.recipient_id
        out = message_arrives(model, queue, BODY % 6)
        pushed = [o for o in out if isinstance(o.message, MSG)]
        if pushed:
            assert isinstance(pushed[0].message, MSG)
            run.ids["target"] = pushed[0].message.msg_id
        return out

    def _end(self, model: Server, run: CaseRun) -> list[Outgoing]:
        queue = self._queue_ready(model, run)
        session = model.sessions.get(run.session_id)
        if queue is None or session is None or run.rid in session.delivered or \
                model.subscribers.get(run.rid) != run.session_id:
            run.state = "waiting"  # a message went in flight meanwhile: not the moment
            return []
        run.acted = time.monotonic()
        if run.case.number == 2:
            return subscription_taken(model, queue)
        assert self.judge is not None
        ids = {queue.recipient_id, queue.sender_id}
        if queue.notifier is not None:
            ids.add(queue.notifier.notifier_id)
        if queue.link is not None:
            ids.add(queue.link.link_id)
        self.judge.forget(ids)
        return deleted_by_operator(model, queue)

    # --- the end ----------------------------------------------------------------------------

    def finish(self, still_open: set[int] | None = None) -> None:
        """Decide what the end decides. ``still_open``: the connections the client had open
        when the check was ended (a signal, ``--timeout``): a case waiting on one of them was
        cut short by the check, not failed by the client."""
        assert self.judge is not None
        still_open = still_open or set()
        for run in self.runs:
            if run.state in ("waiting", "starting"):
                run.state = "not exercised"
                run.detail = "its moment never came: " + run.case.when
                continue
            if run.state == "decided":
                continue
            number = run.case.number
            if (number in (1, 4, 5, 6, 8) and run.conn in still_open) or \
                    (number == 9 and still_open - {run.conn}):
                run.state = run.verdict = "not exercised"
                run.detail = ("the check ended while the case waited for the client (its "
                              "connection was still open): run it again with a longer "
                              "--idle or --timeout")
                continue
            if number in (2, 3):
                run.decide("pass", "after END the client left the queue alone" if number == 2
                           else "after DELD the client sent nothing more to the queue")
            elif number == 7 and run.state == "closed" and run.elsewhere:
                run.decide("fail", "CLNT-25: after ERR INTERNAL answered its SEND the client "
                           "closed that connection and sent to the queue again on another: "
                           "it abandoned the connection over one ERR", run.exchange)
            elif number == 7:  # it may have given up, or have been done: the spec cannot say
                run.decide("non-strict", "CLNT-25: the client sent nothing more on the "
                           "connection where ERR INTERNAL answered its SEND: if it gave up "
                           "because of the ERR, that breaks CLNT-25; if it was done anyway, "
                           "it does not", run.exchange)
            elif number == 8:
                run.decide("fail", "CLNT-26: the held answer was never taken")
            elif number == 9:
                missing = ", ".join(sorted(r.hex() for r in run.wanted))
                run.decide("fail", "CLNT-27: after the server closed the connection the "
                           f"client did not subscribe again to {missing}", run.exchange)
            elif number == 1:
                self._unacknowledged(run, "CLNT-19: the second message, delivered after the "
                                     "first was acknowledged, was never acknowledged"
                                     if run.ids.get("second") else
                                     "CLNT-19: the client did not acknowledge the first message")
            elif run.ids.get("target") is None:
                run.state, run.verdict = "not exercised", "not exercised"
                run.detail = "the case could not put its message in the queue"
            else:
                self._unacknowledged(run, f"{run.case.requirements[0]}: the case's message "
                                     f"{run.ids['target'].hex()} was never acknowledged")

    @staticmethod
    def _unacknowledged(run: CaseRun, detail: str) -> None:
        """A case's message left unacknowledged: a fault when the client went on with other
        commands; advice when it sent nothing more (it may have been about to close:
        CLNT-17)."""
        if run.later:
            run.decide("fail", f"{detail}, though the client went on (it sent {run.later} "
                       "more blocks)")
        else:
            run.decide("non-strict", f"{detail}; the client sent nothing more, so it may "
                       "have been about to close (CLNT-17)")
