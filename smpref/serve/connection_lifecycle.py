"""A connection from TLS to its close: refused at the connection limit or while stopping, the
server pages for SNI on the web port (TRANS-13), the SMP handshake within its timeout, the
reading loop (:mod:`smpref.serve.block_reading`), then a bounded drain of its answers and the
close."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import ssl
import time

from smpref.errors import BlockError, ConnectionClosedError, HandshakeFailedError
from smpref.serve import events
from smpref.serve.block_reading import BlockReading
from smpref.serve.engine import CloseSession, OpenSession
from smpref.serve.pages import serve_page
from smpref.serve.server_base import Connection
from smpref.serve.watcher import Hello
from smpref.transport.handshake import Accepted
from smpref.transport.streams import BlockStream, accept
from smpref.transport.tls import session_id, sni_of
from smpref.transport.versions import advertised, dialect_of_alpn
from smpref.wire.dialects import Dialect


class ConnectionLifecycle(BlockReading):
    """The part of an SMP server that accepts, sets up and closes its connections (a mixin of
    :class:`~smpref.serve.listener.SmpServer`); what a connection reads is
    :class:`~smpref.serve.block_reading.BlockReading`'s."""

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                      web: bool = False) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._connection(reader, writer, web)
        except asyncio.CancelledError:
            # stop() cancels connections wherever they wait (in a handshake, a page, a
            # close). The task must still end normally: asyncio's client_connected_cb
            # callback calls task.exception(), which raises for a cancelled task and gets
            # reported to the loop as an error.
            writer.transport.abort()
        finally:
            self._tasks.discard(task)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                          web: bool) -> None:
        self.connection_count += 1
        number = self.connection_count
        ssl_object = writer.get_extra_info("ssl_object")
        stream = BlockStream(reader, writer)
        if self._stopping or len(self.connections) >= self.config.max_connections:
            events.event("connection_refused", logging.WARNING, conn=number,
                         reason="stopping" if self._stopping else "max_connections")
            await stream.close()
            return
        sni = sni_of(ssl_object)
        if web and sni is not None:
            # the web port: SNI got the web certificate and gets the pages, whatever the ALPN
            # (TRANS-13; Server.hs:212-215)
            await serve_page(self.address, number, reader, writer)
            return
        # the ALPN TLS selected decides the protocol, before any SMP byte (TRANS-11): the
        # seed token the seed design, any other (smp/1, h2, http/1.1) SMP 6-18, none SMP 6
        alpn = ssl_object.selected_alpn_protocol()
        dialect = dialect_of_alpn(alpn)
        self.watcher.tls(number, alpn, sni)
        handshake = await self._handshake(number, stream, ssl_object, dialect, alpn, sni)
        if handshake is None:
            return
        session, accepted = handshake
        assert self.engine is not None
        # a deployed session reads and gets the layouts of its version (DEP-12); the seed
        # design has one version, whose layouts are the current ones
        version = accepted.version if dialect is Dialect.DEPLOYED else None
        connection = Connection(self, number, stream, session, dialect, version)
        connection.reader_task = asyncio.current_task()
        self.connections[session] = connection
        self.engine.submit(OpenSession(session, accepted.session_secret, dialect, version,
                                       accepted.client_key))
        connection.writer_task = asyncio.create_task(connection.write_loop())
        events.event("connected", conn=number, protocol=dialect.value, version=accepted.version,
                     encrypted=stream.framing.encrypted)
        reason = "closed"
        connection.reading = True
        try:
            reason = await self._serve_smp(connection)
        except asyncio.CancelledError:
            reason = connection.end_reason or "server stopping"
        finally:
            connection.reading = False
            await self._close(connection, reason)

    async def _handshake(self, number: int, stream: BlockStream,  # noqa: PLR0917
                         ssl_object: ssl.SSLObject, dialect: Dialect, alpn: str | None,
                         sni: str | None) -> tuple[bytes, Accepted] | None:
        """The SMP handshake (TLS is done): the session and what was accepted, or None when
        it failed (the stream is closed then)."""
        offered = advertised(dialect, alpn)
        hellos: list[bytes] = []
        try:
            session = session_id(ssl_object)
            async with asyncio.timeout(self.config.handshake_timeout):
                accepted = await accept(stream, self.credentials, session, os.urandom,
                                        offered, seen=hellos.append)
        except HandshakeFailedError as exc:
            self._refused_handshake(number, exc.error, exc.detail, alpn, sni)
            self.watcher.hello(Hello(number, session, dialect, offered,
                                     hellos[0] if hellos else None, None, exc.error,
                                     exc.detail))
            await stream.close()
            self.watcher.closed(number, None, f"handshake: {exc.error}")
            return None
        except (TimeoutError, ConnectionClosedError, BlockError, ssl.SSLError, OSError) as exc:
            events.event("handshake_failed", logging.INFO, conn=number,
                         error=type(exc).__name__, detail=str(exc) or type(exc).__name__)
            await stream.close()
            self.watcher.closed(number, None, f"handshake: {type(exc).__name__}")
            return None
        self.watcher.hello(Hello(number, session, dialect, offered, hellos[0],
                                 accepted.version))
        return session, accepted

    def _refused_handshake(self, number: int, error: str, reason: str, alpn: str | None,
                           sni: str | None) -> None:
        """Say why a client's hello was refused, in the log and the trace (TRANS-17)."""
        events.event("handshake_failed", logging.INFO, conn=number, error=error,
                     detail=reason, alpn=alpn or "", sni=sni or "")
        self.trace.handshake(number, error, reason, alpn, sni)

    async def _close(self, connection: Connection, reason: str) -> None:
        """Wait (bounded) for the engine's answers to what this connection sent, flush them,
        and close. Events for it stop at once; its session ends in the model after its last
        transmission."""
        self.connections.pop(connection.session_id, None)
        deadline = time.monotonic() + self.config.drain_timeout
        try:
            while connection.in_engine > 0 and not connection.closing and \
                    time.monotonic() < deadline:
                connection.progress.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                        await connection.progress.wait()
            if connection.writer_task is not None and not connection.closing and \
                    connection.outbox:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                        await connection.flushed.wait()
        finally:
            if self.engine is not None:
                self.engine.submit(CloseSession(connection.session_id))
            if connection.writer_task is not None:
                connection.writer_task.cancel()
                await asyncio.gather(connection.writer_task, return_exceptions=True)
            await connection.stream.close()
            events.event("disconnected", conn=connection.number, reason=reason)
            self.watcher.closed(connection.number, connection.session_id, reason)
