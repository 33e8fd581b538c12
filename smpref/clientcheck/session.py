"""A client-check session: ``smpref serve`` with the judge watching, until the client is done.

:class:`ClientCheck` starts a server whose every client is judged (:mod:`.judge`) and put in
the chosen cases (:mod:`.situations`), waits for the end (:meth:`ClientCheck.wait`), stops the
server and builds the report (:meth:`ClientCheck.finish`). A check ends when ``idle``
seconds have passed with no connection open after the first one closed (longer while case 9
waits for the client to come back, up to ``reconnect_wait``), when ``timeout`` is reached, or
when :meth:`ClientCheck.stop` is called (SIGINT, SIGTERM in the CLI). A connection whose TLS
handshake failed counts as one that came and closed: a client that never reaches SMP ends the
check ``idle`` seconds later, with a fault (:mod:`.judge`), not at ``timeout``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from smpref.clientcheck.grading import ClientReport, build
from smpref.clientcheck.judge import Judge
from smpref.clientcheck.situations import CaseRunner
from smpref.serve.listener import ServeConfig, SmpServer

#: how often the end conditions are looked at
POLL = 0.1


@dataclass(frozen=True)
class CheckConfig:
    #: the cases to run, in order (None: all, destructive ones last; empty: none)
    cases: Sequence[int] | None = None
    #: how long case 8 holds an answer
    slow: float = 3.0
    #: seconds a case waits before the next one may start, when it is not decided
    spacing: float = 1.0
    #: the check ends after so many seconds with no connection open (after the first)
    idle: float = 5.0
    #: how long case 9 waits for the client to come back
    reconnect_wait: float = 30.0
    #: the check ends after so many seconds in any case (None: no limit)
    timeout: float | None = None


class ClientCheck:
    """A server that checks its clients (module docstring)."""

    def __init__(self, folder: Path | str, serve: ServeConfig | None = None,
                 check: CheckConfig | None = None) -> None:
        self.check = check or CheckConfig()
        numbers = self.check.cases
        self.runner: CaseRunner | None = None if numbers is not None and not numbers else \
            CaseRunner(numbers, slow=self.check.slow, spacing=self.check.spacing)
        self.judge = Judge(cases=self.runner)
        # END and DELD go at once: the cases that move a subscription judge the client's
        # answer to them, and would otherwise wait up to deployed's 15 s each
        serve = replace(serve or ServeConfig(), pending_events_interval=0.0)
        self.server = SmpServer(folder, serve, watcher=self.judge)
        self._stop = asyncio.Event()
        self._started = 0.0
        #: the check ended at ``timeout``
        self.timed_out = False

    @property
    def address(self) -> str:
        return self.server.address

    async def start(self) -> str:
        """Listen; returns the address to give the client."""
        await self.server.start()
        if self.runner is not None:
            self.runner.attach(self.server, asyncio.get_running_loop())
        self._started = time.monotonic()
        return self.server.address

    def stop(self) -> None:
        """End the check now (the report is still written)."""
        self._stop.set()

    async def wait(self) -> None:
        """Until the check ends (module docstring)."""
        config = self.check
        while not self._stop.is_set():
            now = time.monotonic()
            if config.timeout is not None and now - self._started >= config.timeout:
                self.timed_out = True
                return
            quiet = now - self.judge.last_activity
            if self.judge.seen_any() and self.judge.open_connections() == 0:
                waiting = self.runner is not None and self.runner.waiting_for_client()
                if quiet >= (config.reconnect_wait if waiting else config.idle):
                    return
            try:
                async with asyncio.timeout(POLL):
                    await self._stop.wait()
            except TimeoutError:
                continue

    async def finish(self) -> ClientReport:
        """Stop the server, decide what the end decides, and report."""
        with self.judge.lock:
            self.judge.stopping = True
            still_open = {c.number for c in self.judge.connections.values()
                          if c.closed is None and c.negotiated is not None}
        await self.server.stop()
        self.judge.finish(timed_out=self.timed_out)
        runs = []
        if self.runner is not None:
            with self.judge.lock:
                self.runner.finish(still_open)
            runs = self.runner.runs
        return build(self.judge, runs, self.server.address,
                     time.monotonic() - self._started)
