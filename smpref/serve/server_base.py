"""What every part of :class:`~smpref.serve.listener.SmpServer` shares: its connections
(:class:`Connection`), and the state the parts read and write (:class:`ServerBase`).

SmpServer is assembled from mixins, one concern each (its module doc lists them). Each is
written against :class:`ServerBase`, which declares the attributes ``SmpServer.__init__`` sets
(documented there), so that each part can be read and type-checked on its own.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from pathlib import Path
from typing import Any

from smpref.errors import BlockError
from smpref.model.server import Outgoing, Server
from smpref.serve import events
from smpref.serve.clock import ServerClock
from smpref.serve.engine import Engine
from smpref.serve.proxy import Proxy
from smpref.serve.serve_config import ServeConfig
from smpref.serve.trace import TransmissionTrace
from smpref.serve.watcher import Watcher
from smpref.store.group_commit import GroupCommitStore
from smpref.store.journal import JournalStore
from smpref.text.addresses import server_address
from smpref.transport.credentials import ServerCredentials
from smpref.transport.streams import BlockStream
from smpref.wire.dialects import Dialect


class Connection:
    """One SMP connection: its stream, its outbox, its writer task, and how many of its
    transmissions the engine holds."""

    def __init__(self, server: ServerBase, number: int, stream: BlockStream,  # noqa: PLR0917
                 session: bytes, dialect: Dialect = Dialect.SEED,
                 version: int | None = None) -> None:
        self.server = server
        self.number = number
        self.stream = stream
        self.session_id = session
        #: the protocol its ALPN chose (TRANS-11)
        self.dialect = dialect
        #: the negotiated version when it reads older layouts (version 6, DEP-11), else None
        self.version = version
        self.outbox: list[bytes] = []
        self.in_engine = 0
        self.wakeup = asyncio.Event()
        self.flushed = asyncio.Event()
        self.flushed.set()
        #: set whenever the engine answers or the writer flushes: a waiting reader looks again
        self.progress = asyncio.Event()
        self.closing = False
        self.reading = False
        #: why the server ends this connection (the model raised), when it does
        self.end_reason: str | None = None
        self.reader_task: asyncio.Task[Any] | None = None
        self.writer_task: asyncio.Task[None] | None = None
        #: the loop's clock at the last block received and sent ([INACTIVE_CLIENTS])
        self.received_at = self.sent_at = time.monotonic()
        #: END and DELD waiting for the next pending-events tick, newest first
        self.pending_events: list[Outgoing] = []

    def queue(self, transmissions: list[bytes]) -> None:
        self.outbox.extend(transmissions)
        self.flushed.clear()
        self.wakeup.set()

    def backlog(self) -> int:
        return len(self.outbox) + self.in_engine

    async def write_loop(self) -> None:
        """Send whatever is queued, batched into as few blocks as fit (TRANS-3)."""
        try:
            while True:
                await self.wakeup.wait()
                self.wakeup.clear()
                while self.outbox:
                    pending, self.outbox = self.outbox, []
                    self.server.blocks_sent += self.stream.write(pending)
                    await self.stream.writer.drain()
                    self.sent_at = time.monotonic()
                self.flushed.set()
                self.progress.set()
        except (ConnectionError, OSError, ssl.SSLError, BlockError) as exc:
            events.event("write_failed", logging.DEBUG, conn=self.number, error=str(exc))
            self.closing = True
            self.flushed.set()
            self.progress.set()


class ServerBase:
    """What the parts of an SMP server share: the state ``SmpServer.__init__`` sets (and
    documents), the server's identity (its key hash and address, which the log, the server
    pages and the conformance runner show), and ending a connection from the server's side,
    which its answers, its inactivity check and
    :meth:`~smpref.serve.listener.SmpServer.disconnect` all do."""

    folder: Path
    watcher: Watcher
    watched: bool
    config: ServeConfig
    clock: ServerClock
    store: JournalStore
    group_store: GroupCommitStore
    credentials: ServerCredentials
    model: Server
    proxy: Proxy
    trace: TransmissionTrace
    #: the open SMP connections, by session ID
    connections: dict[bytes, Connection]
    port: int
    web_port: int | None
    blocks_received: int
    blocks_sent: int
    connection_count: int
    engine: Engine | None
    _servers: list[asyncio.Server]
    #: the connections' tasks and the proxied calls': cancelled when the server stops
    _tasks: set[asyncio.Task[Any]]
    _timers: list[asyncio.Task[None]]
    _stopping: bool
    stopped: asyncio.Event
    stop_failures: list[str]

    # --- identity ---------------------------------------------------------------------------

    @property
    def key_hash(self) -> bytes:
        return self.credentials.key_hash

    @property
    def address(self) -> str:
        """``smp://<keyHash>[:<password>]@host:port`` (URI-1, URI-2), keyHash padded as deployed
        prints it; the host is ``advertise`` when set, an IPv6 address in brackets; the server
        password (CMD-10) is in the address when one is configured. It always parses back
        (``smpref uri parse``)."""
        password = self.config.model.basic_auth
        return server_address(self.key_hash, self.config.advertise or self.config.host,
                              self.port, None if password is None else password.decode())

    # --- ending a connection -----------------------------------------------------------------

    def _end(self, connection: Connection, reason: str) -> None:
        """End a connection from the server's side: its reader stops, what is queued is
        flushed, then it closes."""
        if connection.end_reason is None:
            connection.end_reason = reason
            events.event("ending_connection", logging.WARNING, conn=connection.number,
                         reason=reason)
            if connection.reading and connection.reader_task is not None:
                connection.reader_task.cancel()
