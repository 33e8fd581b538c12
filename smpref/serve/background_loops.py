"""What an SMP server does on a timer: the pending-events tick, which sends each connection's
gathered END and DELD together; the inactivity check, which closes quiet connections without
subscriptions ([INACTIVE_CLIENTS]); and the retention sweep (RET-7)."""

from __future__ import annotations

import asyncio
import time

from smpref.model.server import Outgoing, Server
from smpref.serve.answer_routing import AnswerRouting
from smpref.serve.engine import Act, Sweep


class BackgroundLoops(AnswerRouting):
    """The part of an SMP server that runs on a timer (a mixin of
    :class:`~smpref.serve.listener.SmpServer`; :meth:`~smpref.serve.listener.SmpServer.start`
    starts the loops); it routes what they send as answers are routed."""

    async def _pending_events_loop(self) -> None:
        """Every interval, send each connection's gathered END and DELD together
        (Server.hs:413-436). A connection that closed meanwhile gets nothing."""
        while True:
            await asyncio.sleep(self.config.pending_events_interval)
            for connection in list(self.connections.values()):
                if connection.pending_events:
                    pending, connection.pending_events = connection.pending_events, []
                    self._route(pending, gather=False)

    async def _inactive_loop(self, ttl: float) -> None:
        """Every check interval, close each connection without subscriptions whose last
        block either way is older than ``ttl`` (Server.hs:1064-1071, 1208-1219)."""
        while True:
            await asyncio.sleep(self.config.inactive_check_interval)
            now = time.monotonic()
            quiet = [c for c in self.connections.values()
                     if max(c.received_at, c.sent_at) < now - ttl]
            if not quiet:
                continue
            subscribed = await self._subscribed_sessions()
            for connection in quiet:
                if connection.session_id not in subscribed:
                    self._end(connection, "inactive")

    async def _subscribed_sessions(self) -> set[bytes]:
        """The sessions subscribed to a queue or its notifications, asked of the engine."""
        found: set[bytes] = set()

        def look(model: Server) -> list[Outgoing]:
            found.update(model.subscribers.values(), model.notifier_subscribers.values())
            return []

        assert self.engine is not None
        done: asyncio.Future[list[Outgoing]] = asyncio.get_running_loop().create_future()
        self.engine.submit(Act(look, done.set_result))
        await done
        return found

    # --- retention --------------------------------------------------------------------------

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_interval)
            await self._sweep(self.config.sweep_slice)

    async def _sweep(self, limit: int | None) -> bool:
        """Run a slice of the model's sweep (RET-7), or a whole cycle (``limit`` None), in the
        engine; what it pushes is sent; whether the cycle ended."""
        assert self.engine is not None
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.engine.submit(Sweep(limit, lambda job: done.set_result(job.finished)))
        return await done

    async def sweep_cycle(self) -> None:
        """Run a whole sweep cycle now (the embedded server's retention cases use this)."""
        await self._sweep(None)
