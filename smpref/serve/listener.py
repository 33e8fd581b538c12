"""The TLS server: connections, handshakes, blocks, limits and the model over the journal store.

Theory of operation
-------------------
One asyncio event loop does the network; one engine thread (:mod:`smpref.serve.engine`) owns
the model and the store, so the loop never waits on the disk. Each connection has a reader
task (:mod:`smpref.serve.block_reading`) and an outbox flushed by a writer task. A received block is
decoded into its transmissions, which go to the engine as one job; the engine runs them through
the model (:meth:`smpref.model.server.Server.receive`) together with whatever else arrived
meanwhile, writes the group's changes to the store in one pass (group commit), and only then
hands the answers back (STORE-7). They are queued on the connections they are for, and the
writer batches everything queued into as few blocks as fit.

Limits (all in :class:`ServeConfig`):

* ``max_connections``: a connection beyond it is closed right after TLS.
* ``block_rate``/``block_burst``: a token bucket per connection; a client that sends faster
  waits (its blocks are read later), it is not cut.
* ``max_pending``: transmissions queued for a connection. The reader stops reading while its own
  outbox and its transmissions in the engine are above half of it; an event pushed to a
  connection whose outbox is full closes that connection (a subscriber that does not read).
  Nothing is lost: an undelivered MSG stays in its queue until acknowledged (MSG-2).
* ``tls_timeout`` and ``handshake_timeout``: the TLS handshake, then the SMP hellos, each
  bounded as deployed bounds them (60 s and 120 s).
* ``inactive_ttl``/``inactive_check_interval``: every interval, a connection with no
  subscription whose last block either way is older than the ttl is closed; connections with
  subscriptions are never closed for being quiet ([INACTIVE_CLIENTS], deployed's default INI).
* ``pending_events_interval``: ``END`` and ``DELD`` for a queue's previous subscriber are
  gathered per connection and sent together, newest first, every interval, as deployed sends
  them (15 s); 0 sends them at once.

Ports: SMP is served on ``port`` whatever server name (SNI) a client sends. On ``web_port``,
as on deployed's ``[WEB] https`` port, a client that sends SNI gets the web certificate and the
server pages, and one that sends none gets SMP (TRANS-13, TRANS-17). A TLS handshake that
fails is logged with its cause and what the client offered (``tls_refused``).

A bad block (does not decrypt, bad batch) closes a seed connection and is answered ``ERR
BLOCK`` on a deployed one, which goes on (DEP-9); a bad handshake closes that connection only;
a bad transmission inside a good block is answered with ``ERR`` by the model. An accepted PRXY
or PFWD is proxied (:mod:`smpref.serve.proxy`) and answered when the relay has answered.

Stopping (:meth:`SmpServer.stop`, SIGTERM in ``smpref serve``): stop accepting, stop reading,
wait for the engine's answers and flush every outbox for up to ``drain_timeout`` seconds, close
the connections, then stop the engine, which commits and closes the store. Every ``OK`` was sent
after its commit, so no acknowledged write can be lost. Whatever fails in a stop is logged and
kept in :attr:`SmpServer.stop_failures`; the stop always finishes.

Parts: :class:`SmpServer` is assembled from mixins, one concern each, over the state they
share (:mod:`smpref.serve.server_base`): a connection from TLS to its close
(:mod:`smpref.serve.connection_lifecycle`), its reading loop (:mod:`smpref.serve.block_reading`),
where answers and events go (:mod:`smpref.serve.answer_routing`) and what runs on a timer
(:mod:`smpref.serve.background_loops`). This module starts and stops the server;
:class:`ServeConfig` lives in :mod:`smpref.serve.serve_config`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from smpref.model.server import Outgoing, Server
from smpref.serve import events
from smpref.serve.background_loops import BackgroundLoops
from smpref.serve.clock import ServerClock
from smpref.serve.connection_lifecycle import ConnectionLifecycle
from smpref.serve.engine import Act, Engine
from smpref.serve.proxy import Proxy
from smpref.serve.serve_config import ServeConfig
from smpref.serve.server_base import Connection
from smpref.serve.trace import TransmissionTrace
from smpref.serve.watcher import ServerEvent, Watcher, guard
from smpref.store.group_commit import GroupCommitStore
from smpref.store.journal import JournalStore
from smpref.transport.credentials import ServerCredentials, load_or_create
from smpref.transport.tls import (
    TlsRefusal,
    report_unfinished_handshakes,
    send_handshake_alerts,
    server_context,
)
from smpref.transport.versions import DEPLOYED_VERSIONS, SEED_ALPN, SMP_ALPN, SMPREF_VERSION

#: what other modules import from here: the server, and its configuration
__all__ = ["ServeConfig", "SmpServer"]


class SmpServer(ConnectionLifecycle, BackgroundLoops):
    """An SMP server over TLS running the reference model over a journal store.

    ``folder`` holds ``credentials/`` (made at first start, TRANS-1) and ``store/`` (the journal
    store, spec/storage.md), which the server locks while it is open (STORE-21). Use
    :meth:`start`, then :meth:`stop`.

    Raises:
        StoreLockedError: another process holds the store.
        StoreError: the store cannot be opened.
    """

    def __init__(self, folder: Path | str, config: ServeConfig | None = None, *,
                 clock: ServerClock | None = None, watcher: Watcher | None = None) -> None:
        self.folder = Path(folder)
        #: the hooks of whoever judges the clients and puts them in situations (the client
        #: checker), guarded; hooks that do nothing when there is no watcher
        self.watcher = guard(watcher)
        #: whether a watcher was given: only then is a block's padding cut out for it
        self.watched = watcher is not None
        self.config = config or ServeConfig()
        self.clock = clock or ServerClock()
        # The store first: its lock keeps a second server away from the folder.
        self.store = JournalStore(self.folder / "store", clock=self.clock,
                                  sync=self.config.store_sync, lock=True,
                                  commit_workers=self.config.commit_workers,
                                  warn=lambda m: events.event("store_warning", logging.WARNING,
                                                              message=m))
        self.group_store = GroupCommitStore(self.store)
        try:
            self.credentials: ServerCredentials = load_or_create(
                self.folder / "credentials", self.config.advertise or self.config.host,
                self.config.sign_algorithm)
        except BaseException:
            self.store.release_lock()
            raise
        # the model answers PRXY and PFWD with calls for the transport when it proxies
        self.model = Server(replace(self.config.model, proxy=self.config.proxy),
                            self.group_store, self.clock, os.urandom)
        self.proxy = Proxy(os.urandom, timeout=self.config.handshake_timeout)
        self.trace = TransmissionTrace(self.config.trace)
        self.connections: dict[bytes, Connection] = {}
        self.port = self.config.port
        #: the bound web port, when there is one
        self.web_port: int | None = None
        self.blocks_received = 0
        self.blocks_sent = 0
        self.connection_count = 0
        self.engine: Engine | None = None
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timers: list[asyncio.Task[None]] = []
        self._stopping = False
        self.stopped = asyncio.Event()
        #: what failed while stopping; empty after a clean stop
        self.stop_failures: list[str] = []

    # --- start and stop ---------------------------------------------------------------------

    async def start(self) -> None:
        """Bind and start accepting; ``port`` is the bound port (useful with port 0).

        Raises:
            OSError: the address cannot be bound (call :meth:`close_store` then).
        """
        config = self.config
        shared = config.web_port is not None and config.web_port == config.port
        self._servers.append(await self._listen(config.port, web=shared))
        self.port = self._servers[0].sockets[0].getsockname()[1]
        if shared:
            self.web_port = self.port
        elif config.web_port is not None:
            try:
                self._servers.append(await self._listen(config.web_port, web=True))
            except OSError:
                self._servers[0].close()
                raise
            self.web_port = self._servers[1].sockets[0].getsockname()[1]
        self.engine = Engine(self.model, self.group_store, asyncio.get_running_loop(),
                             self._deliver, self.watcher)
        self.engine.start()
        self._timers.append(asyncio.create_task(self._sweep_loop()))
        if config.inactive_ttl is not None:
            self._timers.append(asyncio.create_task(self._inactive_loop(config.inactive_ttl)))
        if config.pending_events_interval > 0:
            self._timers.append(asyncio.create_task(self._pending_events_loop()))
        events.event("listening", address=self.address,
                     seed=f"{SEED_ALPN} {SMPREF_VERSION}",
                     deployed=f"{SMP_ALPN} {DEPLOYED_VERSIONS[0]}-{DEPLOYED_VERSIONS[-1]}",
                     store=str(self.folder / "store"), web_port=self.web_port or "",
                     sign_algorithm=self.credentials.algorithm)

    async def _listen(self, port: int, *, web: bool) -> asyncio.Server:
        send_handshake_alerts()
        report_unfinished_handshakes()
        context = server_context(self.credentials, web=web,
                                 on_refused=functools.partial(self._tls_refused, port, web))
        return await asyncio.start_server(
            functools.partial(self._accept, web=web), self.config.host, port, ssl=context,
            ssl_handshake_timeout=self.config.tls_timeout, limit=2**17)

    def _tls_refused(self, port: int, web: bool, refusal: TlsRefusal) -> None:
        """A TLS handshake failed: one line with its cause and what the client offered (OpenSSL
        and asyncio say nothing of it). A connection that closed before any ClientHello (a
        port probe, a load balancer's health check) is an info line, not a warning."""
        level = logging.WARNING if refusal.offer is not None else logging.INFO
        events.event("tls_refused", level, port=port, web=web, **refusal.fields())
        self.watcher.tls_refused(refusal)

    def close_store(self) -> None:
        """Close the store of a server that never started (its lock is released too)."""
        if self.engine is None:
            self.group_store.close()
            self.trace.close()

    async def stop(self) -> None:
        """Stop accepting, drain every connection, stop the engine and close the store (see
        the module doc). Always finishes; what failed is logged and in :attr:`stop_failures`."""
        if self._stopping:
            await self.stopped.wait()
            return
        self._stopping = True
        events.event("stopping", connections=len(self.connections))
        try:
            for listening in self._servers:
                listening.close()
            for timer in self._timers:
                timer.cancel()
            readers = [t for t in self._tasks if not t.done()]
            for task in readers:
                task.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
            await self.proxy.close()
            await self._stop_engine()
        except Exception as exc:  # whatever it is, the stop goes on and says so
            self.stop_failures.append(f"stopping: {exc!r}")
            events.event("stop_failed", logging.ERROR, error=repr(exc))
        finally:
            self.trace.close()
            self.stopped.set()
            events.event("stopped", blocks_received=self.blocks_received,
                         blocks_sent=self.blocks_sent, failures=len(self.stop_failures))

    async def _stop_engine(self) -> None:
        engine = self.engine
        if engine is None:
            self.close_store()
            return
        engine.stop()
        finished = await asyncio.to_thread(engine.finished.wait, 2 * self.config.drain_timeout)
        self.stop_failures += engine.failures
        if not finished:
            self.stop_failures.append("the engine did not stop: the store may not be closed")
            events.event("stop_failed", logging.ERROR, error="engine did not stop")

    # --- what the server does on its own (the client checker's situations) ----------------

    async def act(self, event: ServerEvent) -> list[Outgoing]:
        """Run a server event in the engine (:mod:`smpref.model.server_events`); what it
        pushes is sent, and returned."""
        assert self.engine is not None
        done: asyncio.Future[list[Outgoing]] = asyncio.get_running_loop().create_future()
        self.engine.submit(Act(event, done.set_result))
        return await done

    def disconnect(self, session: bytes, reason: str) -> bool:
        """End the connection of ``session`` from the server's side (what is queued for it is
        flushed first); False when it is not connected."""
        connection = self.connections.get(session)
        if connection is None:
            return False
        self._end(connection, reason)
        return True
