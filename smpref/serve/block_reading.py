"""The reading loop of one SMP connection: its blocks are read at the connection's rate
(:class:`TokenBucket`) and no faster than it reads its answers, their transmissions traced,
shown to the watcher and handed to the engine. A bad block ends a seed connection and is
answered ``ERR BLOCK`` on a deployed one (DEP-9); a watcher may hold a block back (the client
checker's situations)."""

from __future__ import annotations

import asyncio
import logging
import time

from smpref.errors import BlockError, ConnectionClosedError
from smpref.serve import events
from smpref.serve.engine import Receive
from smpref.serve.server_base import Connection, ServerBase
from smpref.serve.watcher import Intervention
from smpref.wire.blocks import decode_batch
from smpref.wire.dialects import Dialect


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


class BlockReading(ServerBase):
    """The part of an SMP server that reads a connection's blocks (a mixin of
    :class:`~smpref.serve.listener.SmpServer`)."""

    async def _serve_smp(self, connection: Connection) -> str:
        """Read blocks and hand their transmissions to the engine until the connection ends;
        return why it ended. The engine's answers are written by the connection's writer."""
        bucket = TokenBucket(self.config.block_rate, self.config.block_burst)
        stream = connection.stream
        # Stopping is also checked here, not only signalled by cancellation: in Python 3.11,
        # asyncio.wait_for can swallow a cancellation that races with a completed read, which
        # kept busy connections open after SIGTERM (found by the SIGTERM-under-load test).
        while not connection.closing and not self._stopping:
            while connection.backlog() > self.config.max_pending // 2 and not connection.closing:
                connection.progress.clear()  # backpressure: the client is not reading
                await connection.progress.wait()
            try:
                block = await stream.read_block()
            except ConnectionClosedError as exc:
                return str(exc)
            connection.received_at = time.monotonic()
            self.blocks_received += 1
            try:  # a block that does not decrypt, or whose batch does not parse
                content = stream.framing.open(block)
                transmissions = decode_batch(content)
            except BlockError as exc:
                if (ended := self._bad_block(connection, exc)) is not None:
                    return ended
                continue  # answered ERR BLOCK; the block takes no token of the rate
            intervention = self._hand_on(connection, block, content, transmissions)
            if intervention is not None:
                await self._intervene(connection, transmissions, intervention)
            await bucket.take()
        return connection.end_reason or ("server stopping" if self._stopping else "closing")

    def _bad_block(self, connection: Connection, error: BlockError) -> str | None:
        """A block that does not decrypt or whose batch does not parse: logged and shown to the
        watcher. A seed connection ends: why is returned. A deployed one is answered ERR BLOCK
        and goes on: None."""
        events.event("bad_block", logging.INFO, conn=connection.number, error=str(error))
        self.watcher.bad_block(connection.number, connection.session_id, str(error))
        if connection.dialect is Dialect.SEED:
            return "bad block"  # the seed design closes (TRANS-15)
        # deployed answers ERR BLOCK with an empty corrId and goes on (DEP-9); through the
        # engine, so that it follows the answers before it
        assert self.engine is not None
        connection.in_engine += 1
        self.engine.submit(Receive(connection, connection.session_id, [], bad_block=True))
        return None

    def _hand_on(self, connection: Connection, block: bytes, content: bytes,
                 transmissions: list[bytes]) -> Intervention | None:
        """Trace a good block's transmissions, show them to the watcher, and give them to the
        engine; when the watcher intervenes, nothing is given yet: the intervention is
        returned for :meth:`_intervene`. ``content``: the block opened, before its padding."""
        if self.trace.active:
            for data in transmissions:
                self.trace.record("in", connection.number, data, connection.dialect,
                                  connection.version)
        # an unencrypted block's padding, which a watcher may judge (ENC-1)
        padding = None if connection.stream.framing.encrypted or not self.watched else \
            block[2 + len(content):]
        intervention = self.watcher.block(connection.number, connection.session_id,
                                          transmissions, padding)
        if intervention is not None:
            return intervention
        if transmissions:
            assert self.engine is not None
            connection.in_engine += len(transmissions)
            self.engine.submit(Receive(connection, connection.session_id, transmissions))
        return None

    async def _intervene(self, connection: Connection, transmissions: list[bytes],
                         intervention: Intervention) -> None:
        """Do what the watcher asked with a block (the client checker's situations): wait its
        delay (the connection's later blocks wait behind it) and say whether the client
        closed its side meanwhile, then give its transmissions to the engine with the
        watcher's refusals and its event to run after them."""
        if intervention.delay > 0:
            await asyncio.sleep(intervention.delay)
            if intervention.waited is not None:
                intervention.waited(connection.stream.reader.at_eof())
        if transmissions:
            assert self.engine is not None
            connection.in_engine += len(transmissions)
            self.engine.submit(Receive(connection, connection.session_id, transmissions,
                                       refuse=intervention.refuse, after=intervention.after))
