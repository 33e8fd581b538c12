"""Where what the engine committed goes: each answer and event onto its connection's outbox, in
order; END and DELD for another connection gathered for the pending-events tick, newest first,
as deployed gathers them; a subscriber whose outbox is full cut (TRANS-16); an accepted PRXY or
PFWD proxied (:mod:`smpref.serve.proxy`) and answered when the relay has answered (DEP-15).

This is the protocol handling of the server that ``make mutate``'s conformance targets judge:
``_deliver``, ``_route`` and ``_gathered`` (``IN_SCOPE`` in mutation/run.py).
"""

from __future__ import annotations

import asyncio
import logging

from smpref.model.server import Outgoing
from smpref.model.sessions import ProxyCall
from smpref.serve import events
from smpref.serve.engine import Act, Job, Receive, Sweep
from smpref.serve.server_base import Connection, ServerBase
from smpref.wire.dialects import Dialect
from smpref.wire.messages import END, DeployedDELD


class AnswerRouting(ServerBase):
    """The part of an SMP server that sends what the engine answers and pushes (a mixin of
    :class:`~smpref.serve.listener.SmpServer`)."""

    def _deliver(self, group: list[Job]) -> None:
        """On the loop: send what a group the engine committed produced, in order."""
        for job in group:
            if isinstance(job, Receive):
                connection: Connection = job.owner
                connection.in_engine -= len(job.transmissions) + int(job.bad_block)
                connection.progress.set()
                if job.error is not None:
                    self._end(connection, job.error)
                self._route(job.outgoing, origin=connection)
                self.watcher.answered(job.session_id, job.transmissions)
            elif isinstance(job, Sweep):
                self._route(job.outgoing)
                # mutant-equivalent-deployed[AddNot]: {callback}
                if job.done is not None:
                    job.done(job)
            elif isinstance(job, Act):
                self._route(job.outgoing)
                # mutant-equivalent-deployed[AddNot]: {callback}
                if job.done is not None:
                    job.done(job.outgoing)

    def _route(self, outgoing: list[Outgoing], origin: Connection | None = None, *,
               # mutant-equivalent-deployed[ReplaceTrueWithFalse]: {when-sent}
               gather: bool = True) -> None:
        """Queue each transmission on its connection. Answers to ``origin``'s own commands
        are always queued (its reader waits for them to drain); events pushed to another
        connection whose outbox is full close that connection instead (TRANS-16). With
        ``gather``, END and DELD for another connection wait for the next pending-events
        tick (:meth:`_gathered`)."""
        # the origin by reference: it may be closing, but its answers are still flushed
        targets: dict[bytes, Connection | None] = {}
        by_session: dict[bytes, list[bytes]] = {}
        for out in outgoing:
            if isinstance(out.message, ProxyCall):  # answered when the relay has (DEP-15)
                self._proxy_call(out, origin)
                continue
            if out.session_id not in targets:
                targets[out.session_id] = origin if origin is not None and \
                    out.session_id == origin.session_id else self.connections.get(out.session_id)
            target = targets[out.session_id]
            # mutant-equivalent-deployed[AddNot, IsNot_Eq]: {when-sent}
            if gather and target is not None and target is not origin and \
                    self._gathered(target, out):
                continue
            by_session.setdefault(out.session_id, []).append(
                out.encode(target.version if target is not None else None))
        # mutant-equivalent-deployed[*]: {trace}
        if self.trace.active:
            self._trace_out(by_session, targets)
        for session, transmissions in by_session.items():
            connection = targets[session]
            if connection is None or connection.closing:
                continue
            # mutant-equivalent-deployed[*]: {slow-client}
            if connection is not origin and \
                    len(connection.outbox) + len(transmissions) > self.config.max_pending:
                events.event("slow_client", logging.WARNING, conn=connection.number,
                             pending=len(connection.outbox))
                # mutant-equivalent-deployed[*]: {slow-client}
                connection.closing = True
                # abort, not close: a graceful TLS close would wait for the peer to read the
                # backlog it is not reading; its reader task sees the end and cleans up
                connection.stream.writer.transport.abort()
                # mutant-equivalent-deployed[ReplaceContinueWithBreak]: {slow-client}
                continue
            connection.queue(transmissions)

    def _trace_out(self, by_session: dict[bytes, list[bytes]],
                   targets: dict[bytes, Connection | None]) -> None:
        """Trace what :meth:`_route` queues, by session (``--trace``)."""
        for session, transmissions in by_session.items():
            target = targets[session]
            for data in transmissions:
                self.trace.record("out", target.number if target else 0, data,
                                  target.dialect if target else Dialect.SEED,
                                  target.version if target else None)

    def _gathered(self, target: Connection, out: Outgoing) -> bool:
        """Whether ``out`` is an END or DELD to wait for the next pending-events tick; it is
        then kept on ``target``, newest first, as deployed keeps it (Server.hs:328)."""
        # mutant-equivalent-deployed[ReplaceComparisonOperator, AddNot, NumberReplacer]: {when-sent}
        if self.config.pending_events_interval <= 0 or out.corr_id or \
                not isinstance(out.message, END | DeployedDELD):
            return False
        target.pending_events.insert(0, out)
        return True

    def _proxy_call(self, call: Outgoing, origin: Connection | None) -> None:
        """Proxy an accepted PRXY or PFWD and queue what comes of it on the connection that
        sent it, as deployed does, whenever it comes (Server.hs forkProxiedCmd)."""
        assert isinstance(call.message, ProxyCall) and origin is not None
        command = call.message.command

        async def run() -> None:
            answer = await self.proxy.call(command, call.entity_id, call.corr_id)
            if not origin.closing:
                self._route([Outgoing(call.session_id, call.corr_id, call.entity_id, answer)],
                            origin)

        task = asyncio.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
