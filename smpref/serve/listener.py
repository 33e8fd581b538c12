"""The TLS server: connections, handshakes, blocks, limits and the model over the journal store.

Theory of operation
-------------------
One asyncio event loop runs everything. Each connection has a reader task (this module's
``_serve_smp``) and an outbox flushed by a writer task. A received block is decoded into its
transmissions, and each goes to the model (:meth:`smpref.model.server.Server.receive`), which
commits the store before it returns (STORE-7); the answers are queued on the connections they
are for, and the writer batches everything queued into as few blocks as fit. Because the model
runs between two awaits, no transmission is ever half processed: a connection cut, a timeout or
SIGTERM stops a reader only while it waits for bytes.

Limits (all in :class:`ServeConfig`):

* ``max_connections``: a connection beyond it is closed right after TLS.
* ``block_rate``/``block_burst``: a token bucket per connection; a client that sends faster
  waits (its blocks are read later), it is not cut.
* ``max_pending``: transmissions queued for a connection. The reader stops reading while its own
  outbox is above half of it; an event pushed to a connection whose outbox is full closes that
  connection (a subscriber that does not read). Nothing is lost: an undelivered MSG stays in
  its queue until acknowledged (MSG-2).
* ``handshake_timeout`` (TLS and SMP handshake), ``idle_timeout`` (no block received).

A bad block (wrong size, does not decrypt, bad batch) or a bad handshake closes that connection
only; a bad transmission inside a good block is answered with ``ERR`` by the model.

Stopping (:meth:`SmpServer.stop`, SIGTERM in ``smpref serve``): stop accepting, stop reading,
flush every outbox for up to ``drain_timeout`` seconds, close the connections, close the store.
Every ``OK`` was sent after its commit, so no acknowledged write can be lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smpref.errors import BlockError, ConnectionClosedError, HandshakeFailedError
from smpref.model.config import ServerConfig
from smpref.model.server import Outgoing, Server
from smpref.serve import events
from smpref.serve.clock import ServerClock
from smpref.serve.pages import serve_page
from smpref.store.journal import JournalStore
from smpref.text.lexical import b64u_encode
from smpref.transport.credentials import ServerCredentials, load_or_create
from smpref.transport.streams import BlockStream, accept
from smpref.transport.tls import HTTP_ALPN, server_context, session_id
from smpref.transport.versions import SMPREF_VERSION


@dataclass(frozen=True)
class ServeConfig:
    """Where and how the server runs; every limit has a default suited to one machine."""

    host: str = "127.0.0.1"
    port: int = 5223
    max_connections: int = 1024
    block_rate: float = 2000.0  # blocks per second per connection
    block_burst: int = 200
    max_pending: int = 4096  # transmissions queued for one connection
    handshake_timeout: float = 30.0
    idle_timeout: float = 900.0
    drain_timeout: float = 10.0
    sweep_interval: float = 60.0
    sweep_slice: int = 256
    pages: bool = True
    #: fsync every commit (STORE-10); False only for benchmarks: an OK is then not durable
    store_sync: bool = True
    model: ServerConfig = field(default_factory=ServerConfig)


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; ``take`` waits for a token."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    async def take(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            await asyncio.sleep((1 - self.tokens) / self.rate)
            self.tokens = 1.0
            self.stamp = time.monotonic()
        self.tokens -= 1


class Connection:
    """One SMP connection: its stream, its outbox and its writer task."""

    def __init__(self, server: SmpServer, number: int, stream: BlockStream,
                 session: bytes) -> None:
        self.server = server
        self.number = number
        self.stream = stream
        self.session_id = session
        self.outbox: list[bytes] = []
        self.wakeup = asyncio.Event()
        self.flushed = asyncio.Event()
        self.flushed.set()
        self.closing = False
        self.writer_task: asyncio.Task[None] | None = None

    def queue(self, transmissions: list[bytes]) -> None:
        self.outbox.extend(transmissions)
        self.flushed.clear()
        self.wakeup.set()

    async def write_loop(self) -> None:
        """Send whatever is queued, batched into as few blocks as fit (smp-wire §3.1)."""
        try:
            while True:
                await self.wakeup.wait()
                self.wakeup.clear()
                while self.outbox:
                    pending, self.outbox = self.outbox, []
                    self.server.blocks_sent += self.stream.write(pending)
                    await self.stream.writer.drain()
                self.flushed.set()
        except (ConnectionError, OSError, ssl.SSLError, BlockError) as exc:
            events.event("write_failed", logging.DEBUG, conn=self.number, error=str(exc))
            self.closing = True
            self.flushed.set()


class SmpServer:
    """An SMP server over TLS running the reference model over a journal store.

    ``folder`` holds ``credentials/`` (made at first start, TRANS-1) and ``store/`` (the journal
    store, spec/storage.md). Use :meth:`start`, then :meth:`stop`.
    """

    def __init__(self, folder: Path | str, config: ServeConfig | None = None, *,
                 clock: ServerClock | None = None) -> None:
        self.folder = Path(folder)
        self.config = config or ServeConfig()
        self.clock = clock or ServerClock()
        self.credentials: ServerCredentials = load_or_create(
            self.folder / "credentials", self.config.host)
        self.store = JournalStore(self.folder / "store", clock=self.clock,
                                  sync=self.config.store_sync,
                                  warn=lambda m: events.event("store_warning", logging.WARNING,
                                                              message=m))
        self.model = Server(self.config.model, self.store, self.clock, os.urandom)
        self.connections: dict[bytes, Connection] = {}
        self.port = self.config.port
        self.blocks_received = 0
        self.blocks_sent = 0
        self.connection_count = 0
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._stopping = False
        self.stopped = asyncio.Event()

    # --- identity ---------------------------------------------------------------------------

    @property
    def key_hash(self) -> bytes:
        return self.credentials.key_hash

    @property
    def address(self) -> str:
        """``smp://<keyHash>[:<password>]@host:port`` (URI-1, URI-2), keyHash padded as deployed
        prints it; the server password (CMD-10) is in the address when one is configured."""
        password = self.config.model.basic_auth
        auth = "" if password is None else ":" + password.decode()
        return (f"smp://{b64u_encode(self.key_hash, padded=True)}{auth}@{self.config.host}:"
                f"{self.port}")

    # --- start and stop ---------------------------------------------------------------------

    async def start(self) -> None:
        """Bind and start accepting; ``port`` is the bound port (useful with port 0)."""
        context = server_context(self.credentials, pages=self.config.pages)
        self._server = await asyncio.start_server(
            self._accept, self.config.host, self.config.port, ssl=context,
            ssl_handshake_timeout=self.config.handshake_timeout, limit=2**17)
        self.port = self._server.sockets[0].getsockname()[1]
        self._sweeper = asyncio.create_task(self._sweep_loop())
        events.event("listening", address=self.address, version=SMPREF_VERSION,
                     store=str(self.folder / "store"))

    async def stop(self) -> None:
        """Stop accepting, drain every connection, close the store (see the module doc)."""
        if self._stopping:
            await self.stopped.wait()
            return
        self._stopping = True
        events.event("stopping", connections=len(self.connections))
        if self._server is not None:
            self._server.close()
        if self._sweeper is not None:
            self._sweeper.cancel()
        readers = [t for t in self._tasks if not t.done()]
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        self.store.close()
        self.stopped.set()
        events.event("stopped", blocks_received=self.blocks_received,
                     blocks_sent=self.blocks_sent)

    # --- connections ------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._connection(reader, writer)
        except asyncio.CancelledError:
            # stop() cancels connections wherever they wait (in a handshake, a page, a
            # close). The task must still end normally: asyncio's client_connected_cb
            # callback calls task.exception(), which raises for a cancelled task and gets
            # reported to the loop as an error.
            writer.transport.abort()
        finally:
            self._tasks.discard(task)

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        self.connection_count += 1
        number = self.connection_count
        ssl_object = writer.get_extra_info("ssl_object")
        stream = BlockStream(reader, writer)
        if self._stopping or len(self.connections) >= self.config.max_connections:
            events.event("connection_refused", logging.WARNING, conn=number,
                         reason="stopping" if self._stopping else "max_connections")
            await stream.close()
            return
        if ssl_object.selected_alpn_protocol() == HTTP_ALPN:
            await serve_page(self.address, number, reader, writer)
            return
        try:
            session = session_id(ssl_object)
            async with asyncio.timeout(self.config.handshake_timeout):
                accepted = await accept(stream, self.credentials, session, os.urandom)
        except (TimeoutError, HandshakeFailedError, ConnectionClosedError, BlockError, ssl.SSLError,
                OSError) as exc:
            events.event("handshake_failed", logging.INFO, conn=number,
                         error=type(exc).__name__, detail=str(exc))
            await stream.close()
            return
        connection = Connection(self, number, stream, session)
        self.connections[session] = connection
        self.model.open_session(session, accepted.session_secret)
        connection.writer_task = asyncio.create_task(connection.write_loop())
        events.event("connected", conn=number, version=accepted.version,
                     encrypted=stream.framing.encrypted)
        reason = "closed"
        try:
            reason = await self._serve_smp(connection)
        except asyncio.CancelledError:
            reason = "server stopping"
        finally:
            await self._close(connection, reason)

    async def _serve_smp(self, connection: Connection) -> str:
        """Read and process blocks until the connection ends; return why it ended."""
        bucket = TokenBucket(self.config.block_rate, self.config.block_burst)
        stream = connection.stream
        # Stopping is also checked here, not only signalled by cancellation: in Python 3.11,
        # asyncio.wait_for can swallow a cancellation that races with a completed read, which
        # kept busy connections open after SIGTERM (found by the SIGTERM-under-load test).
        while not connection.closing and not self._stopping:
            while len(connection.outbox) > self.config.max_pending // 2 and not connection.closing:
                await connection.flushed.wait()  # backpressure: the client is not reading
            try:
                async with asyncio.timeout(self.config.idle_timeout):
                    block = await stream.read_block()
            except TimeoutError:
                return "idle timeout"
            except ConnectionClosedError as exc:
                return str(exc)
            self.blocks_received += 1
            try:
                transmissions = stream.framing.decode(block)
            except BlockError as exc:
                events.event("bad_block", logging.INFO, conn=connection.number, error=str(exc))
                return "bad block"
            for transmission in transmissions:
                try:
                    outgoing = self.model.receive(connection.session_id, transmission)
                except Exception as exc:
                    # The model is total over its input (tests/test_model_totality.py); if it
                    # ever raises, that connection ends and every other one goes on.
                    events.event("internal_error", logging.ERROR, conn=connection.number,
                                 error=repr(exc))
                    return "internal error"
                self._route(outgoing, origin=connection)
            self._log_store_errors()
            await bucket.take()
        return "server stopping" if self._stopping else "closing"

    def _route(self, outgoing: list[Outgoing], origin: Connection | None = None) -> None:
        """Queue each transmission on its connection. Answers to ``origin``'s own commands
        are always queued (its reader waits for them to drain); events pushed to another
        connection whose outbox is full close that connection instead (TRANS-16)."""
        by_session: dict[bytes, list[bytes]] = {}
        for out in outgoing:
            by_session.setdefault(out.session_id, []).append(out.encode())
        for session, transmissions in by_session.items():
            connection = self.connections.get(session)
            if connection is None or connection.closing:
                continue
            if connection is not origin and \
                    len(connection.outbox) + len(transmissions) > self.config.max_pending:
                events.event("slow_client", logging.WARNING, conn=connection.number,
                             pending=len(connection.outbox))
                connection.closing = True
                # abort, not close: a graceful TLS close would wait for the peer to read the
                # backlog it is not reading; its reader task sees the end and cleans up
                connection.stream.writer.transport.abort()
                continue
            connection.queue(transmissions)

    def _log_store_errors(self) -> None:
        if self.model.store_errors:
            for message in self.model.store_errors:
                events.event("store_error", logging.ERROR, message=message)
            self.model.store_errors.clear()

    async def _close(self, connection: Connection, reason: str) -> None:
        self.connections.pop(connection.session_id, None)
        self.model.close_session(connection.session_id)
        # Flush what is queued (answers to commands already committed), then close.
        if connection.writer_task is not None:
            if not connection.closing and connection.outbox:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(connection.flushed.wait(), self.config.drain_timeout)
            connection.writer_task.cancel()
            await asyncio.gather(connection.writer_task, return_exceptions=True)
        await connection.stream.close()
        events.event("disconnected", conn=connection.number, reason=reason)

    # --- retention --------------------------------------------------------------------------

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.sweep_interval)
            self.sweep_slice()

    def sweep_slice(self) -> bool:
        """Run one slice of the model's sweep (RET-7) and send what it pushes."""
        outgoing, finished = self.model.sweep(self.config.sweep_slice)
        self._route(outgoing)
        self._log_store_errors()
        return finished

    def sweep_cycle(self) -> None:
        """Run a whole sweep cycle now (the embedded server's retention cases use this)."""
        self._route(self.model.expire())
        self._log_store_errors()
