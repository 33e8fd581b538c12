"""The server-side cases' runner: it starts the cases when the client's own behaviour makes
them possible, one at a time, and passes each hook of the judge on to the cases it concerns.

The cases themselves, one class each, are in :mod:`smpref.clientcheck.server_cases`; what
they share, and the hooks' contracts, in :mod:`smpref.clientcheck.case_run`. The next case
starts once the current one is decided, or ``spacing`` seconds after it started (longer for
a case the client decides: :meth:`~smpref.clientcheck.case_run.CaseRun.hold`).

Every hook here is called by the :class:`~smpref.clientcheck.judge.Judge` with its lock held.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from smpref.clientcheck.case_run import CaseRun, CaseState, Moment, subscribed_queues
from smpref.clientcheck.catalogue import DEFAULT_ORDER
from smpref.clientcheck.server_cases import CASE_TYPES
from smpref.model.server import Outgoing, Server
from smpref.notation.definitions import EntityKind
from smpref.serve.watcher import Intervention, ServerEvent
from smpref.wire.transmission import Transmission

if TYPE_CHECKING:
    from smpref.clientcheck.judge import Judge
    from smpref.clientcheck.judge_state import Connection
    from smpref.serve.listener import SmpServer


class CaseRunner:
    """Starts and judges the cases (module docstring). ``numbers``: the cases to run, in
    order (None: all, destructive ones last); ``slow``: how long case 8 holds an answer.
    It is the cases' :class:`~smpref.clientcheck.case_run.Stage`."""

    def __init__(self, numbers: Sequence[int] | None = None, *, slow: float = 3.0,
                 spacing: float = 1.0) -> None:
        order = list(numbers) if numbers else list(DEFAULT_ORDER)
        self.runs: list[CaseRun] = [CASE_TYPES[n](self) for n in order]
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
        is decided, or has held it back for its :meth:`~CaseRun.hold`."""
        now = time.monotonic()
        for run in self.runs:
            if run.state is CaseState.WAITING:
                return run
            if run.state in (CaseState.STARTING, CaseState.STARTED, CaseState.CLOSED) and \
                    now - run.started < run.hold(self.spacing):
                return None
        return None

    def waiting_for_client(self) -> bool:
        """A case waits for the client to come back (case 9, after the server closed)."""
        with self.lock:
            return any(run.waiting_for_client() for run in self.runs)

    def _started(self) -> list[CaseRun]:
        return [run for run in self.runs if run.state is CaseState.STARTED]

    # --- what the cases act through (case_run.Stage) ----------------------------------------

    @property
    def lock(self) -> AbstractContextManager[Any]:
        assert self.judge is not None
        return self.judge.lock

    def locked(self, event: ServerEvent) -> ServerEvent:
        """A server event that holds the judge's lock (it runs on the engine's thread)."""
        def held(model: Server) -> list[Outgoing]:
            with self.lock:
                return event(model)
        return held

    def soon(self, event: ServerEvent) -> None:
        """Run a server event soon, holding the judge's lock (called on the engine's thread
        or the loop's)."""
        assert self.loop is not None and self.server is not None
        server, locked = self.server, self.locked(event)

        def spawn() -> None:
            task = asyncio.ensure_future(server.act(locked))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        self.loop.call_soon_threadsafe(spawn)

    def forget(self, ids: set[bytes]) -> None:
        assert self.judge is not None
        self.judge.forget(ids)

    def close_session(self, session_id: bytes, reason: str) -> None:
        assert self.judge is not None and self.loop is not None and self.server is not None
        self.judge.ended_by_server.add(session_id)
        self.loop.call_soon_threadsafe(self.server.disconnect, session_id, reason)

    # --- hooks from the judge ---------------------------------------------------------------

    def on_block(self, c: Connection, heads: list[tuple[int, Transmission]]
                 ) -> Intervention | None:
        """A block from the client (loop): the cases started see it; the current one may
        start on it (cases 6, 7 and 8)."""
        for run in self.runs:
            if run.state in (CaseState.STARTED, CaseState.CLOSED):
                run.on_later_block(c, heads)
                run.later += 1
        if not heads or (current := self.current()) is None:
            return None
        return current.on_block(c, heads)

    def on_answered(self, c: Connection) -> None:
        for run in self._started():
            run.on_answered(c)

    def on_command(self, c: Connection, tag: str, rid: bytes, acked: bytes) -> None:
        """A command on one of the client's queues (engine, before its step)."""
        for run in self._started():
            run.on_command(c, tag, rid, acked)

    def on_deleted_use(self, c: Connection, tag: str, role: EntityKind) -> None:
        """A command naming a queue case 3 deleted, in ``role``."""
        for run in self._started():
            run.on_deleted_use(c, tag, role)

    def on_judged(self, model: Server, connections: list[Connection],
                  step: tuple[int, bytes]) -> None:
        """After a step (engine): the current case may start on an open connection
        subscribed to a queue (cases 1-5 and 9). ``step``: the connection and corrId of the
        command just judged, whose answer is about to go."""
        run = self.current()
        if run is None:
            return
        for c in connections:
            if c.closed is None and (subscribed := subscribed_queues(model, c.session_id)) \
                    and run.on_judged(Moment(model, c, subscribed, step)):
                return

    def on_closed(self, c: Connection) -> None:
        for run in self._started():
            run.on_closed(c)

    # --- the end ----------------------------------------------------------------------------

    def finish(self, still_open: set[int] | None = None) -> None:
        """Decide what the end decides. ``still_open``: the connections the client had open
        when the check was ended (a signal, ``--timeout``): a case waiting on one of them was
        cut short by the check, not failed by the client."""
        for run in self.runs:
            if run.state in (CaseState.WAITING, CaseState.STARTING):
                run.state = CaseState.NOT_EXERCISED
                run.detail = "its moment never came: " + run.case.when
            elif run.state is not CaseState.DECIDED:
                run.finish(still_open or set())
